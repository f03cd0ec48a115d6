package config

// Reading valid files: the formats, Load, order, disabled servers, defaults.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseValidFiles(t *testing.T) {
	workbench := func(path string) *Config {
		return config(path,
			toolbox("dev", "Development tools: GitHub and the local file system",
				with(stdio("github", "npx", "-y", "@modelcontextprotocol/server-github"), func(s *Server) {
					s.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dev"}
					s.ToolFilters = []string{"*"}
				}),
				with(stdio("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp/workspace"), func(s *Server) {
					s.ToolFilters = []string{"read_file", "list_directory", "search_files"}
				}),
			),
			toolbox("prod", "Production: read-only GitHub and the incident API",
				with(stdio("github", "npx", "-y", "@modelcontextprotocol/server-github"), func(s *Server) {
					s.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_prod"}
					s.ToolFilters = []string{"get_*", "list_*", "search_*"}
				}),
				http("incidents", StreamableHTTP, "https://incidents.example.com/mcp"),
			),
		)
	}
	tests := []struct {
		file string
		want *Config
	}{
		{
			// A real Claude Desktop file: globalShortcut and preferences
			// belong to the app; brave-search is disabled (and its
			// variable unset).
			file: "testdata/valid/claude_desktop_config.json",
			want: config("testdata/valid/claude_desktop_config.json",
				toolbox(DefaultToolbox, "Servers from claude_desktop_config.json",
					stdio("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"),
					with(stdio("github", "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"), func(s *Server) {
						s.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktop"}
					}),
					stdio("linear", "npx", "-y", "mcp-remote", "https://mcp.linear.app/sse"),
					stdio("sqlite", "uvx", "mcp-server-sqlite", "--db-path", "/home/alice/test.db"),
				)),
		},
		{
			// Cursor / Claude Code style: url, headers, type, and the keys
			// desktop clients carry that Nexus ignores.
			file: "testdata/valid/cursor_mcp.json",
			want: config("testdata/valid/cursor_mcp.json",
				toolbox(DefaultToolbox, "Servers from cursor_mcp.json",
					with(http("sentry", StreamableHTTP, "https://mcp.sentry.dev/mcp"), func(s *Server) {
						s.Headers = map[string]string{"Authorization": "Bearer sntrys_1"}
					}),
					http("legacy-events", SSE, "http://localhost:8931/sse"),
					http("context7", StreamableHTTP, "https://mcp.context7.com/mcp"),
					with(stdio("memory", "npx", "-y", "@modelcontextprotocol/server-memory"), func(s *Server) {
						s.Description = "knowledge graph memory"
					}),
				)),
		},
		{
			// MCP Workbench: dev and prod both have a server named github.
			file: "testdata/valid/workbench.json",
			want: workbench("testdata/valid/workbench.json"),
		},
		{
			file: "testdata/valid/workbench.yaml",
			want: workbench("testdata/valid/workbench.yaml"),
		},
		{
			// Every Nexus option, anchors and merge keys, an x- key.
			file: "testdata/valid/nexus.yaml",
			want: config("testdata/valid/nexus.yaml",
				toolbox("research", "Search, fetch and remember (core team)",
					&Server{
						Name: "search", Transport: Stdio, Command: "node",
						Args:            []string{"search-server.js", "--port", "8080"},
						Env:             map[string]string{"NODE_ENV": "production"},
						Cwd:             "/home/alice/servers/search",
						ToolFilters:     []string{"search_*", "!search_debug"},
						Eager:           true,
						Timeout:         2 * time.Minute,
						ConnectTimeout:  10 * time.Second,
						BreakerFailures: 3,
						BreakerCooldown: 10 * time.Second,
						Retries:         new(0),
					},
					&Server{
						Name: "fetch", Transport: StreamableHTTP, URL: "https://fetch.example.com/mcp",
						Headers:        map[string]string{"Authorization": "Bearer fetch-secret", "X-Price": "$5"},
						Timeout:        90 * time.Second,
						ConnectTimeout: DefaultConnectTimeout,
					},
					http("events", SSE, "http://127.0.0.1:9000/sse"),
					&Server{
						Name: "notes", Transport: Stdio, Command: "node",
						Args: []string{"notes.js"},
						// The server's own env replaces the merged one
						// (merge keys are shallow).
						Env:            map[string]string{"NOTES_DIR": "/home/alice/notes", "PORT": "8081", "VERBOSE": "true"},
						Timeout:        15 * time.Second,
						ConnectTimeout: DefaultConnectTimeout,
					},
				),
				toolbox("empty", "Nothing here yet"),
			),
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			got, err := parseFile(t, tt.file, testEnv)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			diffConfig(t, got, tt.want)
		})
	}
}

func TestWorkbenchJSONAndYAMLAgree(t *testing.T) {
	j, err := parseFile(t, "testdata/valid/workbench.json", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	y, err := parseFile(t, "testdata/valid/workbench.yaml", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	y.Path = j.Path
	if !reflect.DeepEqual(j, y) {
		t.Errorf("workbench.json and workbench.yaml differ")
	}
}

func TestLoad(t *testing.T) {
	for k, v := range testEnv {
		t.Setenv(k, v)
	}
	cfg, err := Load("testdata/valid/workbench.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Toolboxes["prod"].Servers["github"].Env["GITHUB_PERSONAL_ACCESS_TOKEN"]; got != "ghp_prod" {
		t.Errorf("env from the process: got %q", got)
	}

	if _, err := Load("testdata/no-such-file.yaml"); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "testdata/no-such-file.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestOrder: toolboxes and servers keep file order, in YAML and JSON, far
// from any sorted order.
func TestOrder(t *testing.T) {
	names := []string{"zeta", "alpha", "mu", "beta", "omega", "delta", "a1", "Z9", "kappa", "b.c", "x-y", "e_f"}
	var y, j strings.Builder
	y.WriteString("toolboxes:\n")
	j.WriteString(`{"toolboxes": {`)
	for i, tb := range names {
		fmt.Fprintf(&y, "  %s:\n    mcpServers:\n", tb)
		if i > 0 {
			j.WriteString(",")
		}
		fmt.Fprintf(&j, "%q: {\"mcpServers\": {", tb)
		for k := range names {
			s := names[(k+i)%len(names)]
			fmt.Fprintf(&y, "      %s: {command: run}\n", s)
			if k > 0 {
				j.WriteString(",")
			}
			fmt.Fprintf(&j, "%q: {\"command\": \"run\"}", s)
		}
		j.WriteString("}}")
	}
	j.WriteString("}}")
	for file, src := range map[string]string{"order.yaml": y.String(), "order.json": j.String()} {
		cfg, err := Parse(file, []byte(src), nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !reflect.DeepEqual(cfg.Order, names) {
			t.Errorf("%s: toolbox order %q", file, cfg.Order)
		}
		for i, tb := range names {
			want := append(append([]string(nil), names[i:]...), names[:i]...)
			if got := cfg.Toolboxes[tb].Order; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s: server order %q, want %q", file, tb, got, want)
			}
		}
	}

	// Desktop format too.
	cfg, err := Parse("mcp.json", []byte(`{"mcpServers": {"z": {"command": "a"}, "a": {"command": "b"}, "m": {"url": "http://h/"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Toolboxes["default"].Order; !reflect.DeepEqual(got, []string{"z", "a", "m"}) {
		t.Errorf("desktop order %q", got)
	}
}

func TestDisabled(t *testing.T) {
	src := `{"mcpServers": {
	  "on": {"command": "a", "disabled": false},
	  "off": {"command": "b", "disabled": true},
	  "off-and-broken": {"url": "ftp://${UNSET}", "command": "x", "typo": 1, "disabled": true},
	  "off__bad name": {"disabled": true}
	}}`
	cfg, err := Parse("mcp.json", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := cfg.Toolboxes["default"]
	if !reflect.DeepEqual(tb.Order, []string{"on"}) || len(tb.Servers) != 1 {
		t.Errorf("servers %q", tb.Order)
	}
	// Nexus format too.
	cfg, err = Parse("c.yaml", []byte("toolboxes:\n  t:\n    mcpServers:\n      x: {disabled: true}\n      y: {command: c}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Toolboxes["t"].Order; !reflect.DeepEqual(got, []string{"y"}) {
		t.Errorf("servers %q", got)
	}
}

func TestJSONReadAsYAML(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"tabs", "{\n\t\"mcpServers\": {\n\t\t\"s\": {\n\t\t\t\"command\": \"x\"\n\t\t}\n\t}\n}", "x"},
		{"CRLF", "{\r\n  \"mcpServers\": {\"s\": {\"command\": \"x\"}}\r\n}\r\n", "x"},
		{"BOM", "\ufeff{\"mcpServers\": {\"s\": {\"command\": \"x\"}}}", "x"},
		{"escaped slash", `{"mcpServers": {"s": {"command": "a\/b"}}}`, "a/b"},
		{"unicode escapes", `{"mcpServers": {"s": {"command": "caf\u00e9 \ud83d\ude00 \\ud83d"}}}`, "café 😀 \\ud83d"},
		{"escaped backslash before u", `{"mcpServers": {"s": {"command": "\\ud83d\\ude00"}}}`, `\ud83d\ude00`},
		{"colon and hash in strings", `{"mcpServers": {"s": {"command": "a: #b"}}}`, "a: #b"},
		{"one line, no spaces", `{"mcpServers":{"s":{"command":"x","args":["1",2,true]}}}`, "x"},
	}
	for _, tt := range tests {
		cfg, err := Parse("mcp.json", []byte(tt.src), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := cfg.Toolboxes["default"].Servers["s"].Command; got != tt.want {
			t.Errorf("%s: command %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLoadResolvesRelativeCwdFromTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nexus.yaml")
	if err := os.WriteFile(path, []byte("toolboxes:\n  dev:\n    mcpServers:\n      a: {command: srv, cwd: tools}\n      b: {command: srv, cwd: /abs}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Toolboxes["dev"].Servers["a"].Cwd; got != filepath.Join(dir, "tools") {
		t.Errorf("relative cwd = %q", got)
	}
	if got := cfg.Toolboxes["dev"].Servers["b"].Cwd; got != "/abs" {
		t.Errorf("absolute cwd = %q", got)
	}
}

// TestServerDefaultsDecidedOnce: a Server made in code (not loaded) gets the
// same defaults and transport the loader would give it.
func TestServerDefaultsDecidedOnce(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		kind string
	}{
		{Server{Command: "x"}, Stdio}, {Server{URL: "http://h/mcp"}, StreamableHTTP},
		{Server{URL: "http://h/sse", Transport: SSE}, SSE}, {Server{}, ""},
	} {
		if got := tc.s.TransportKind(); got != tc.kind {
			t.Errorf("%+v: transport %q, want %q", tc.s, got, tc.kind)
		}
		if tc.s.CallTimeout() != DefaultTimeout || tc.s.DialTimeout() != DefaultConnectTimeout {
			t.Errorf("%+v: timeouts %v/%v", tc.s, tc.s.CallTimeout(), tc.s.DialTimeout())
		}
	}
	s := Server{Timeout: time.Second, ConnectTimeout: 2 * time.Second}
	if s.CallTimeout() != time.Second || s.DialTimeout() != 2*time.Second {
		t.Errorf("set timeouts: %v/%v", s.CallTimeout(), s.DialTimeout())
	}
}

func ExampleParse() {
	src := []byte(`
toolboxes:
  dev:
    description: Development tools
    mcpServers:
      github:
        command: npx
        args: [-y, "@modelcontextprotocol/server-github"]
        env: {GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}"}
      docs:
        url: https://docs.example.com/mcp
        timeout: 2m
`)
	env := func(name string) (string, bool) {
		if name == "GITHUB_TOKEN" {
			return "ghp_example", true
		}
		return "", false
	}
	cfg, err := Parse("nexus.yaml", src, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tb := range cfg.Order {
		for _, name := range cfg.Toolboxes[tb].Order {
			s := cfg.Toolboxes[tb].Servers[name]
			fmt.Println(tb, name, s.Transport, s.Timeout)
		}
	}

	_, err = Parse("nexus.yaml", src, nil)
	fmt.Println(err)
	// Output:
	// dev github stdio 1m0s
	// dev docs streamable-http 2m0s
	// nexus.yaml:9:45: toolboxes.dev.mcpServers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN: environment variable GITHUB_TOKEN is not set (write ${GITHUB_TOKEN:-default} to give a default)
}

// TestNaming: a toolbox's naming is its own, else the file's, else
// prefixed; its servers are marked plain when it is plain; any other value
// is an error naming both choices.
func TestNaming(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	cfg, err := Parse("c.yaml", []byte(`naming: plain
toolboxes:
  a: {mcpServers: {s: {command: x}}}
  b: {naming: prefixed, mcpServers: {s: {command: x}}}
`), env)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Toolboxes["a"], cfg.Toolboxes["b"]; a.Naming != NamingPlain || !a.Servers["s"].Plain || b.Naming != NamingPrefixed || b.Servers["s"].Plain {
		t.Errorf("a: %s %v, b: %s %v; want plain true, prefixed false", a.Naming, a.Servers["s"].Plain, b.Naming, b.Servers["s"].Plain)
	}
	cfg, err = Parse("d.json", []byte(`{"mcpServers": {"s": {"command": "x"}}}`), env)
	if err != nil || cfg.Toolboxes[DefaultToolbox].Naming != NamingPrefixed {
		t.Errorf("default naming: %v %v", cfg, err)
	}
	_, err = Parse("e.yaml", []byte("toolboxes:\n  a: {naming: short, mcpServers: {}}\n"), env)
	if err == nil || !strings.Contains(err.Error(), `toolboxes.a.naming: must be prefixed (tools and prompts named toolbox__server__name) or plain (their own names), not "short"`) {
		t.Errorf("a bad naming: %v", err)
	}
}
