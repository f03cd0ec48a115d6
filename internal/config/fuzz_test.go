package config

// Fuzzing Parse, and the names rules that make flat tool names unique.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

// FuzzParse: Parse never panics, and gives either a valid config or an
// error made of *Error values that name the file.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, _ := filepath.Glob(dir + "/*")
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && !strings.HasSuffix(file, ".golden") {
				f.Add(data)
			}
		}
	}
	for _, s := range []string{
		"", "{}", "[]", "null", "toolboxes:", "mcpServers: {}", "toolboxes: {a: {mcpServers: {b: {command: x}}}}",
		"x: &a [*a]\ntoolboxes: *a", "x-a: &a {<<: *a}\ntoolboxes: *a", "toolboxes: {a: {mcpServers: {b: {url: '${A:-${B:-$$}}'}}}}",
		"{\"mcpServers\": {\"s\": {\"command\": \"\\ud83d\\ude00\"}}}", "a: 1\n---\nb: 2", "%YAML 1.2\n---\ntoolboxes: {}",
	} {
		f.Add([]byte(s))
	}
	env := envOf(map[string]string{"HOME": "/home/alice", "A": "a", "EMPTY": ""})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.yaml", data, env)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("cfg %v, err %v", cfg, err)
		}
		if err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != "fuzz.yaml" || ce.Reason == "" {
					t.Fatalf("error %#v", e)
				}
			}
			return
		}
		checkConfig(t, cfg)
	})
}

// FuzzNamesMakeUniqueFlatNames: every toolbox and server name the loader
// accepts is one the registry accepts in a flat name (SPEC section 2: flat
// names are unique for every config; registry.FuzzFlatNamesUnique proves
// the registry's side), and the built-in toolbox name is refused.
func FuzzNamesMakeUniqueFlatNames(f *testing.F) {
	for _, s := range [][2]string{
		{"a", "b"}, {"a__b", "c"}, {"a", "b__c"}, {"a_", "b"}, {"a", "b_"}, {"_a", "b"}, {"a", "_b"},
		{"nexus", "substrate"}, {"Nexus", "substrate"}, {"NEXUS", "vkb"}, {"dev.v1", "api-2"}, {"a-", "b."},
		{strings.Repeat("t", 63), strings.Repeat("s", 63)}, {strings.Repeat("t", 64), "s"}, {"a_b", "c_d"}, {"default", "x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, toolbox, server string) {
		src, _ := json.Marshal(map[string]any{"toolboxes": map[string]any{
			toolbox: map[string]any{"mcpServers": map[string]any{server: map[string]any{"command": "x"}}}}})
		cfg, err := Parse("fuzz.json", src, nil)
		if err != nil {
			return
		}
		checkConfig(t, cfg)
	})
}

// checkConfig checks the invariants of a config Parse returned.
func checkConfig(t *testing.T, cfg *Config) {
	t.Helper()
	if len(cfg.Order) != len(cfg.Toolboxes) {
		t.Fatalf("Order %q for %d toolboxes", cfg.Order, len(cfg.Toolboxes))
	}
	for _, name := range cfg.Order {
		tb := cfg.Toolboxes[name]
		if tb == nil || tb.Name != name || !nameRE().MatchString(name) || registry.CheckName("toolbox", name) != nil || name == registry.BuiltinToolbox {
			t.Fatalf("toolbox %q: %+v", name, tb)
		}
		if len(tb.Order) != len(tb.Servers) {
			t.Fatalf("toolbox %q: Order %q for %d servers", name, tb.Order, len(tb.Servers))
		}
		for _, sname := range tb.Order {
			s := tb.Servers[sname]
			if s == nil || s.Name != sname || !nameRE().MatchString(sname) || (registry.ID{Toolbox: name, Server: sname, Tool: "t"}).Check() != nil {
				t.Fatalf("server %q: %+v", sname, s)
			}
			switch s.Transport {
			case Stdio:
				if s.Command == "" || s.URL != "" || s.Headers != nil {
					t.Fatalf("stdio server %+v", s)
				}
			case StreamableHTTP, SSE:
				if s.URL == "" || s.Command != "" || s.Args != nil || s.Env != nil || s.Cwd != "" {
					t.Fatalf("http server %+v", s)
				}
			default:
				t.Fatalf("transport %q", s.Transport)
			}
			if s.Timeout <= 0 || s.ConnectTimeout <= 0 {
				t.Fatalf("timeouts %+v", s)
			}
			for _, v := range append(append([]string{s.Command, s.URL, s.Cwd}, s.Args...), s.ToolFilters...) {
				if strings.ContainsRune(v, 0) {
					t.Fatalf("NUL in %q", v)
				}
			}
		}
	}
}

func TestBuiltinToolboxIsTheRegistrys(t *testing.T) {
	if BuiltinToolbox != registry.BuiltinToolbox {
		t.Fatalf("config reserves %q, the registry's built-in toolbox is %q", BuiltinToolbox, registry.BuiltinToolbox)
	}
}
