package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/registry"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/invalid")

// envOf returns a lookup function over m.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// testEnv is the environment of the files under testdata/valid.
var testEnv = map[string]string{
	"GITHUB_TOKEN":      "ghp_desktop",
	"HOME":              "/home/alice",
	"SENTRY_TOKEN":      "sntrys_1",
	"GITHUB_DEV_TOKEN":  "ghp_dev",
	"GITHUB_PROD_TOKEN": "ghp_prod",
	"FETCH_TOKEN":       "fetch-secret",
}

// stdio and http build expected servers with the defaults.
func stdio(name, command string, args ...string) *Server {
	return &Server{Name: name, Transport: Stdio, Command: command, Args: args,
		Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
}

func http(name, transport, u string) *Server {
	return &Server{Name: name, Transport: transport, URL: u,
		Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
}

func with(s *Server, f func(*Server)) *Server { f(s); return s }

func toolbox(name, description string, servers ...*Server) *Toolbox {
	tb := &Toolbox{Name: name, Description: description, Servers: map[string]*Server{}}
	for _, s := range servers {
		tb.Servers[s.Name] = s
		tb.Order = append(tb.Order, s.Name)
	}
	return tb
}

func config(path string, toolboxes ...*Toolbox) *Config {
	c := &Config{Path: path, Toolboxes: map[string]*Toolbox{}}
	for _, tb := range toolboxes {
		c.Toolboxes[tb.Name] = tb
		c.Order = append(c.Order, tb.Name)
	}
	return c
}

func parseFile(t *testing.T, path string, env map[string]string) (*Config, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, data, envOf(env))
}

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
					stdio("memory", "npx", "-y", "@modelcontextprotocol/server-memory"),
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
						Args:           []string{"search-server.js", "--port", "8080"},
						Env:            map[string]string{"NODE_ENV": "production"},
						Cwd:            "/home/alice/servers/search",
						ToolFilters:    []string{"search_*", "!search_debug"},
						Eager:          true,
						Timeout:        2 * time.Minute,
						ConnectTimeout: 10 * time.Second,
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

// diffConfig fails with the first difference between got and want.
func diffConfig(t *testing.T, got, want *Config) {
	t.Helper()
	if got.Path != want.Path {
		t.Errorf("Path = %q, want %q", got.Path, want.Path)
	}
	if !reflect.DeepEqual(got.Order, want.Order) {
		t.Errorf("Order = %q, want %q", got.Order, want.Order)
	}
	if len(got.Toolboxes) != len(want.Toolboxes) {
		t.Errorf("%d toolboxes, want %d", len(got.Toolboxes), len(want.Toolboxes))
	}
	for name, wtb := range want.Toolboxes {
		gtb := got.Toolboxes[name]
		if gtb == nil {
			t.Errorf("toolbox %s missing", name)
			continue
		}
		if gtb.Name != wtb.Name || gtb.Description != wtb.Description {
			t.Errorf("toolbox %s: name, description = %q, %q; want %q, %q", name, gtb.Name, gtb.Description, wtb.Name, wtb.Description)
		}
		if !reflect.DeepEqual(gtb.Order, wtb.Order) {
			t.Errorf("toolbox %s: Order = %q, want %q", name, gtb.Order, wtb.Order)
		}
		if len(gtb.Servers) != len(wtb.Servers) {
			t.Errorf("toolbox %s: %d servers, want %d", name, len(gtb.Servers), len(wtb.Servers))
		}
		for sname, ws := range wtb.Servers {
			if gs := gtb.Servers[sname]; !reflect.DeepEqual(gs, ws) {
				t.Errorf("toolbox %s, server %s:\n got %+v\nwant %+v", name, sname, gs, ws)
			}
		}
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

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"SET": "value", "EMPTY": "", "DOLLAR": "$X", "B": "bee"})
	tests := []struct {
		in, want string
		missing  []string
		err      string
	}{
		{in: "plain", want: "plain"},
		{in: "${SET}", want: "value"},
		{in: "a-${SET}-b", want: "a-value-b"},
		{in: "${SET}${SET}", want: "valuevalue"},
		{in: "${UNSET:-fallback}", want: "fallback"},
		{in: "${SET:-fallback}", want: "value"},
		{in: "${UNSET:-}", want: ""},
		{in: "${EMPTY:-fallback}", want: "", missing: nil},                         // set to "" counts as set
		{in: "${UNSET:-a:-b c}", want: "a:-b c"},                                   // the default is text
		{in: "${UNSET:-${B}}", want: "bee"},                                        // ... that may expand
		{in: "${UNSET:-${ALSO_UNSET:-deep}}", want: "deep"},                        // nested defaults
		{in: "${SET:-${NEVER}}", want: "value"},                                    // an unused default looks nothing up
		{in: "${UNSET:-${NEVER}}", missing: []string{"NEVER"}},                     // a used one does
		{in: "${UNSET}", missing: []string{"UNSET"}},                               // unset, no default
		{in: "${U1}/${U2}/${U1}", missing: []string{"U1", "U2"}},                   // each once, in order
		{in: "$$", want: "$"},                                                      // $$ escapes
		{in: "$${SET}", want: "${SET}"},                                            // ... so this is literal
		{in: "$$$${SET}", want: "$${SET}"},                                         // pairs
		{in: "$$${SET}", want: "$value"},                                           // $$ then ${SET}
		{in: "${UNSET:-$$5}", want: "$5"},                                          // $$ in a default
		{in: "cost $5, $HOME and $ alone $", want: "cost $5, $HOME and $ alone $"}, // other $ kept
		{in: "${DOLLAR}", want: "$X"},                                              // values are not expanded again
		{in: "${lower_case9}", missing: []string{"lower_case9"}},
		{in: "x${SET}}", want: "xvalue}"}, // a } outside is text
		{in: "${", err: `a ${ is not closed with }`},
		{in: "${SET", err: `a ${ is not closed with }`},
		{in: "${SET:-abc", err: `a ${ is not closed with }`},
		{in: "${SET:-${X:-y}", err: `a ${ is not closed with }`},
		{in: "${}", err: `"${}": a variable name is letters, digits and '_', not starting with a digit`},
		{in: "${1A}", err: `"${1A}": a variable name is letters, digits and '_', not starting with a digit`},
		{in: "${A B}", err: `"${A B}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A-b}", err: `"${A-b}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A:b}", err: `"${A:b}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A:=b}", err: `"${A:=b}" is not supported`},
		{in: "${input:token}", err: `"${input:token}" is not supported`},
	}
	for _, tt := range tests {
		got, missing, err := Expand(tt.in, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("Expand(%q) missing = %q, want %q", tt.in, missing, tt.missing)
		}
		if len(tt.missing) == 0 && got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestExpansionEverywhere: every string value is expanded, keys are not.
func TestExpansionEverywhere(t *testing.T) {
	src := `
toolboxes:
  tb:
    description: "${V} toolbox"
    mcpServers:
      s1:
        command: ${V}-cmd
        args: ["${V}", "${UNSET:-dflt}", "$$V"]
        env: {"${K}": "${V}"}
        cwd: /srv/${V}
        toolFilters: ["${V}_*"]
        timeout: ${SECS}s
        connectTimeout: ${UNSET:-5s}
        transport: ${T:-stdio}
      s2:
        url: https://${V}.example.com/mcp
        headers: {"X-Key": "${V}"}
        type: ${TYPE}
`
	cfg, err := Parse("e.yaml", []byte(src), envOf(map[string]string{"V": "v", "K": "k", "SECS": "7", "TYPE": "sse"}))
	if err != nil {
		t.Fatal(err)
	}
	tb := cfg.Toolboxes["tb"]
	s1, s2 := tb.Servers["s1"], tb.Servers["s2"]
	want1 := &Server{Name: "s1", Transport: Stdio, Command: "v-cmd", Args: []string{"v", "dflt", "$V"},
		Env: map[string]string{"${K}": "v"}, Cwd: "/srv/v", ToolFilters: []string{"v_*"},
		Timeout: 7 * time.Second, ConnectTimeout: 5 * time.Second}
	want2 := &Server{Name: "s2", Transport: SSE, URL: "https://v.example.com/mcp",
		Headers: map[string]string{"X-Key": "v"}, Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
	if tb.Description != "v toolbox" {
		t.Errorf("description %q", tb.Description)
	}
	if !reflect.DeepEqual(s1, want1) {
		t.Errorf("s1:\n got %+v\nwant %+v", s1, want1)
	}
	if !reflect.DeepEqual(s2, want2) {
		t.Errorf("s2:\n got %+v\nwant %+v", s2, want2)
	}
}

// TestErrors: each case gives the complete error text, line by line.
func TestErrors(t *testing.T) {
	env := envOf(map[string]string{"SET": "v"})
	// srv wraps server lines into a file with toolbox dev and server s
	// (the server's keys start on line 5, column 9).
	srv := func(lines ...string) string {
		return "toolboxes:\n  dev:\n    mcpServers:\n      s:\n        " + strings.Join(lines, "\n        ") + "\n"
	}
	const p = "c.yaml:%d:%d: toolboxes.dev.mcpServers.s"
	at := func(line, col int, rest string) string { return fmt.Sprintf(p, line, col) + rest }
	tests := []struct {
		name string
		file string // default c.yaml
		src  string
		want []string
	}{
		// command and url
		{name: "both command and url", src: srv("command: gh", "url: https://x"),
			want: []string{at(5, 9, ": give either command or url, not both")}},
		{name: "neither command nor url", src: srv("args: [a]"),
			want: []string{at(5, 9, ": give command (to start a stdio server) or url (to reach an HTTP server)")}},
		{name: "empty server", src: srv("{}")[:len(srv("{}"))-12] + " {}\n",
			want: []string{"c.yaml:4:10: toolboxes.dev.mcpServers.s: give command (to start a stdio server) or url (to reach an HTTP server)"}},
		{name: "null command counts as absent", src: srv("command:", "url: http://h/"), want: nil},
		{name: "empty command", src: srv(`command: ""`),
			want: []string{at(5, 18, `.command: is empty`)}},
		{name: "empty url", src: srv(`url: ""`),
			want: []string{at(5, 14, `.url: is empty`)}},
		{name: "url not http", src: srv("url: ftp://h/x"),
			want: []string{at(5, 14, ".url: must be an absolute http:// or https:// URL")}},
		{name: "url relative", src: srv("url: /mcp"),
			want: []string{at(5, 14, ".url: must be an absolute http:// or https:// URL")}},
		{name: "url without host", src: srv("url: 'http:///mcp'"),
			want: []string{at(5, 14, ".url: has no host")}},
		{name: "url never echoed", src: srv("url: 'https://h/%zz?key=${SET}'"),
			want: []string{at(5, 14, ".url: is not a valid URL")}},

		// transport
		{name: "unknown transport", src: srv("url: http://h/", "transport: websocket"),
			want: []string{at(6, 20, `.transport: unknown transport "websocket": use stdio, http (or streamable-http, streamableHttp) or sse`)}},
		{name: "sse with a command", src: srv("command: x", "type: sse"),
			want: []string{at(5, 9, ": transport sse needs a url, and this server gives a command")}},
		{name: "http with a command", src: srv("command: x", "transport: streamableHttp"),
			want: []string{at(5, 9, ": transport streamable-http needs a url, and this server gives a command")}},
		{name: "stdio with a url", src: srv("url: http://h/", "transport: stdio"),
			want: []string{at(5, 9, ": transport stdio needs a command, and this server gives a url")}},
		{name: "type and transport disagree", src: srv("url: http://h/", "type: sse", "transport: http"),
			want: []string{at(6, 15, `.type: says "sse" but transport says "http": give one`)}},
		{name: "type and transport agree", src: srv("url: http://h/", "type: http", "transport: streamable-http"), want: nil},
		{name: "stdio keys with a url", src: srv("url: http://h/", "args: [a]", "env: {A: b}", "cwd: /"),
			want: []string{
				at(6, 9, ".args: args is for stdio servers (command), and this server gives a url"),
				at(7, 9, ".env: env is for stdio servers (command), and this server gives a url"),
				at(8, 9, ".cwd: cwd is for stdio servers (command), and this server gives a url"),
			}},
		{name: "headers with a command", src: srv("command: x", "headers: {A: b}"),
			want: []string{at(6, 9, ".headers: headers are for HTTP servers (url), and this server gives a command")}},

		// values
		{name: "args not a list", src: srv("command: x", "args: -y"),
			want: []string{at(6, 15, ".args: must be a list of strings, not a string")}},
		{name: "arg not a string", src: srv("command: x", "args: [a, {b: c}, null]"),
			want: []string{
				at(6, 19, ".args[1]: must be a string, not a mapping"),
				at(6, 27, ".args[2]: must be a string, not null"),
			}},
		{name: "env not a mapping", src: srv("command: x", "env: [A=b]"),
			want: []string{at(6, 14, ".env: must be a mapping of environment variable names to strings, not a list")}},
		{name: "env value null", src: srv("command: x", "env: {A: null, B: [1]}"),
			want: []string{at(6, 18, ".env.A: must be a string, not null"), at(6, 27, ".env.B: must be a string, not a list")}},
		{name: "env name with =", src: srv("command: x", "env: {'A=B': c}"),
			want: []string{at(6, 15, `.env["A=B"]: "A=B" is not a valid environment variable name`)}},
		{name: "header name", src: srv("url: http://h/", "headers: {'Bad Name': x, 'X-Ok': \"a\\nb\"}"),
			want: []string{
				at(6, 19, `.headers["Bad Name"]: "Bad Name" is not a valid HTTP header name`),
				at(6, 42, ".headers.X-Ok: an HTTP header value cannot contain a line break or NUL byte"),
			}},
		{name: "NUL in an arg", src: srv("command: x", `args: ["a\0b"]`),
			want: []string{at(6, 16, ".args[0]: contains a NUL byte")}},
		{name: "tool filters", src: srv("command: x", `toolFilters: ["[", "!", "", ok, "!ok*"]`),
			want: []string{
				at(6, 23, `.toolFilters[0]: tool filter "[" is not a valid glob`),
				at(6, 28, ".toolFilters[1]: a tool filter is empty: give a tool name or glob (get_*), or !name to exclude"),
				at(6, 33, ".toolFilters[2]: a tool filter is empty: give a tool name or glob (get_*), or !name to exclude"),
			}},
		{name: "tool filters not a list", src: srv("command: x", "toolFilters: get_*"),
			want: []string{at(6, 22, ".toolFilters: must be a list of strings, not a string")}},
		{name: "eager not a bool", src: srv("command: x", "eager: yes"),
			want: []string{at(6, 16, ".eager: must be true or false, not a string")}},
		{name: "disabled not a bool", src: srv("command: x", `disabled: "true"`),
			want: []string{at(6, 19, ".disabled: must be true or false, not a string")}},
		{name: "timeout without unit", src: srv("command: x", "timeout: 30"),
			want: []string{at(6, 18, `.timeout: "30" is not a duration: give a number with a unit, like "30s" or "2m"`)}},
		{name: "timeout zero", src: srv("command: x", "timeout: 0s"),
			want: []string{at(6, 18, `.timeout: must be more than 0 ("0s")`)}},
		{name: "connectTimeout negative", src: srv("command: x", "connectTimeout: -1m"),
			want: []string{at(6, 25, `.connectTimeout: must be more than 0 ("-1m")`)}},
		{name: "server not a mapping", src: "toolboxes:\n  dev:\n    mcpServers:\n      s: npx server\n",
			want: []string{"c.yaml:4:10: toolboxes.dev.mcpServers.s: must be a server (a mapping with command or url), not a string"}},
		{name: "server null", src: "toolboxes:\n  dev:\n    mcpServers:\n      s:\n",
			want: []string{"c.yaml:4:9: toolboxes.dev.mcpServers.s: must be a server (a mapping with command or url), not null"}},

		// expansion
		{name: "unset variable", src: srv("url: https://h/?key=${API_KEY}"),
			want: []string{at(5, 14, ".url: environment variable API_KEY is not set (write ${API_KEY:-default} to give a default)")}},
		{name: "unset variables in an arg and env", src: srv("command: x", "args: [--token, '${TOKEN}']", "env: {HOME: '${HOME}/${USER}'}"),
			want: []string{
				at(6, 25, ".args[1]: environment variable TOKEN is not set (write ${TOKEN:-default} to give a default)"),
				at(7, 21, ".env.HOME: environment variable HOME is not set (write ${HOME:-default} to give a default)"),
				at(7, 21, ".env.HOME: environment variable USER is not set (write ${USER:-default} to give a default)"),
			}},
		{name: "unset variable in a description",
			src:  "toolboxes:\n  dev:\n    description: ${WHO}'s tools\n    mcpServers: {}\n",
			want: []string{"c.yaml:3:18: toolboxes.dev.description: environment variable WHO is not set (write ${WHO:-default} to give a default)"}},
		{name: "unclosed variable", src: srv("command: ${SET"),
			want: []string{at(5, 18, ".command: a ${ is not closed with }: write $$ for a literal $")}},
		{name: "bad variable name", src: srv("command: ${9LIVES}"),
			want: []string{at(5, 18, `.command: "${9LIVES}": a variable name is letters, digits and '_', not starting with a digit (write $$ for a literal $)`)}},

		// names
		{name: "__ in a toolbox name", src: "toolboxes:\n  my__box:\n    mcpServers: {}\n",
			want: []string{`c.yaml:2:3: toolboxes.my__box: toolbox name "my__box" contains "__": Nexus names flat tools toolbox__server__tool, so "__" inside a toolbox or server name would make tool names ambiguous`}},
		{name: "__ in a server name", src: "toolboxes:\n  dev:\n    mcpServers:\n      git__hub: {command: x}\n",
			want: []string{`c.yaml:4:7: toolboxes.dev.mcpServers.git__hub: server name "git__hub" contains "__": Nexus names flat tools toolbox__server__tool, so "__" inside a toolbox or server name would make tool names ambiguous`}},
		{name: "reserved toolbox name", src: "toolboxes:\n  nexus:\n    mcpServers:\n      substrate: {command: x}\n",
			want: []string{`c.yaml:2:3: toolboxes.nexus: toolbox name "nexus" is reserved: it is the built-in toolbox of Nexus's own servers (substrate, vkb); choose another name`}},
		{name: "toolbox name ending with _", src: "toolboxes:\n  dev_:\n    mcpServers: {}\n",
			want: []string{`c.yaml:2:3: toolboxes.dev_: toolbox name "dev_" ends with "_": Nexus names flat tools toolbox__server__tool, and a name ending with "_" would make tool names ambiguous (server "b_" with tool "c" and server "b" with tool "_c" would both be a__b___c)`}},
		{name: "server name ending with _", file: "mcp.json", src: `{"mcpServers": {"github_": {"command": "x"}}}`,
			want: []string{`mcp.json:1:17: mcpServers.github_: server name "github_" ends with "_": Nexus names flat tools toolbox__server__tool, and a name ending with "_" would make tool names ambiguous (server "b_" with tool "c" and server "b" with tool "_c" would both be a__b___c)`}},
		{name: "space in a toolbox name", src: "toolboxes:\n  my box:\n    mcpServers: {}\n",
			want: []string{`c.yaml:2:3: toolboxes["my box"]: toolbox name "my box" is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit`}},
		{name: "leading dash in a server name", file: "mcp.json", src: `{"mcpServers": {"-x": {"command": "x"}}}`,
			want: []string{`mcp.json:1:17: mcpServers.-x: server name "-x" is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit`}},
		{name: "64-character name", file: "mcp.json", src: `{"mcpServers": {"` + strings.Repeat("a", 64) + `": {"command": "x"}}}`,
			want: []string{`mcp.json:1:17: mcpServers.` + strings.Repeat("a", 64) + `: server name "` + strings.Repeat("a", 64) + `" is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit`}},
		{name: "63-character name and dots", file: "mcp.json", src: `{"mcpServers": {"` + strings.Repeat("a", 61) + `.b": {"command": "x"}, "_a": {"command": "x", "disabled": true}}}`,
			want: nil},
		{name: "empty name", file: "mcp.json", src: `{"mcpServers": {"": {"command": "x"}}}`,
			want: []string{`mcp.json:1:17: mcpServers[""]: server name "" is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit`}},
		{name: "duplicate server", src: "toolboxes:\n  dev:\n    mcpServers:\n      s: {command: x}\n      s: {command: y}\n",
			want: []string{`c.yaml:5:7: toolboxes.dev.mcpServers.s: duplicate key "s" (first at line 4, column 7)`}},
		{name: "duplicate key in JSON", file: "c.json", src: "{\"mcpServers\": {\"s\": {\"command\": \"x\",\n \"command\": \"y\"}}}",
			want: []string{`c.json:2:2: mcpServers.s.command: duplicate key "command" (first at line 1, column 23)`}},

		// unknown keys, at each level
		{name: "unknown top-level key", src: "toolboxes: {}\nservers: {}\n",
			want: []string{`c.yaml:2:1: servers: unknown key "servers" (known keys: $schema, toolboxes; keys starting with x- are ignored)`}},
		{name: "mcpServers beside toolboxes", src: "toolboxes: {}\nmcpServers: {}\n",
			want: []string{`c.yaml:2:1: mcpServers: a file with toolboxes lists its servers under each toolbox (toolboxes.NAME.mcpServers), not at the top`}},
		{name: "unknown desktop top-level key", file: "mcp.json", src: `{"mcpServers": {}, "inputs": []}`,
			want: []string{`mcp.json:1:20: inputs: unknown key "inputs" (known keys: $schema, globalShortcut, mcpServers, preferences)`}},
		{name: "unknown toolbox key", src: "toolboxes:\n  dev:\n    descripton: x\n    mcpServers: {}\n    servers: {}\n",
			want: []string{
				`c.yaml:3:5: toolboxes.dev.descripton: unknown key "descripton" (did you mean "description"?)`,
				`c.yaml:5:5: toolboxes.dev.servers: unknown key "servers" (known keys: description, mcpServers)`,
			}},
		{name: "unknown server key", src: srv("command: x", "Args: [a]", "envFile: .env"),
			want: []string{
				at(6, 9, `.Args: unknown key "Args" (did you mean "args"?)`),
				at(7, 9, `.envFile: unknown key "envFile" (known keys: alwaysAllow, args, autoApprove, command, connectTimeout, cwd, description, disabled, eager, env, headers, timeout, toolFilters, transport, type, url)`),
			}},
		{name: "unknown desktop server key", file: "mcp.json", src: `{"mcpServers": {"s": {"command": "x", "comand": "y"}}}`,
			want: []string{`mcp.json:1:39: mcpServers.s.comand: unknown key "comand" (did you mean "command"?)`}},
		{name: "ignored keys", file: "mcp.json", src: `{"$schema": "x", "globalShortcut": "", "preferences": {"a": 1},
			"mcpServers": {"s": {"command": "x", "alwaysAllow": ["t"], "autoApprove": {"any": 1}, "description": 5, "disabled": false}}}`,
			want: nil},

		// shape of the file
		{name: "empty file", src: "",
			want: []string{"c.yaml: the file is empty: give toolboxes (the Nexus or MCP Workbench format) or mcpServers (the desktop-client format)"}},
		{name: "only comments", src: "# nothing\n",
			want: []string{"c.yaml: the file is empty: give toolboxes (the Nexus or MCP Workbench format) or mcpServers (the desktop-client format)"}},
		{name: "neither format", src: "toolbox:\n  dev: {}\n",
			want: []string{
				`c.yaml:1:1: toolbox: unknown key "toolbox" (did you mean "toolboxes"?)`,
				"c.yaml:1:1: no toolboxes or mcpServers: give toolboxes (the Nexus or MCP Workbench format) or mcpServers (the desktop-client format)",
			}},
		{name: "top level a list", file: "c.json", src: `[{"mcpServers": {}}]`,
			want: []string{"c.json:1:1: must be a mapping with toolboxes or mcpServers, not a list"}},
		{name: "toolboxes a list", src: "toolboxes: [dev]\n",
			want: []string{"c.yaml:1:12: toolboxes: must be a mapping of toolbox names to toolboxes, not a list"}},
		{name: "toolbox without mcpServers", src: "toolboxes:\n  dev:\n    description: x\n",
			want: []string{"c.yaml:3:5: toolboxes.dev.mcpServers: missing: a toolbox lists its servers under mcpServers (an empty mapping {} is allowed)"}},
		{name: "toolbox with null mcpServers", src: "toolboxes:\n  dev:\n    mcpServers:\n",
			want: []string{"c.yaml:3:5: toolboxes.dev.mcpServers: missing: a toolbox lists its servers under mcpServers (an empty mapping {} is allowed)"}},
		{name: "two documents", src: "toolboxes: {}\n---\ntoolboxes: {}\n",
			want: []string{"c.yaml:2: a second YAML document (after ---): a configuration file holds one"}},
		{name: "key not a string", src: "toolboxes:\n  [a]: {mcpServers: {}}\n",
			want: []string{"c.yaml:2:3: toolboxes: keys must be strings, not a list"}},
		{name: "merge of a string", src: "toolboxes:\n  dev:\n    <<: x\n    mcpServers: {}\n",
			want: []string{"c.yaml:3:9: toolboxes.dev: a merge key (<<) must be given a mapping or a list of mappings, not a string"}},
		{name: "self-merging anchor", src: "x-a: &a {<<: *a}\ntoolboxes: *a\n",
			want: []string{"c.yaml:1:6: toolboxes: merge keys (<<) nested more than 16 deep (do they merge each other?)"}},

		// syntax errors carry a line (and column)
		{name: "YAML syntax", src: "toolboxes:\n  dev: [a, b\n  prod: {}\n",
			want: []string{"c.yaml:3:7: syntax error: did not find expected ',' or ']' (while parsing a flow sequence that starts at line 2, column 8)"}},
		{name: "YAML tab indent", src: "toolboxes:\n\tdev: {}\n",
			want: []string{"c.yaml:2:1: syntax error: found character that cannot start any token (while scanning for the next token)"}},
		{name: "JSON missing comma", file: "c.json", src: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {\"command\": \"y\"}\n  }\n}\n",
			want: []string{"c.json:4:5: syntax error: did not find expected ',' or '}' (while parsing a flow mapping that starts at line 2, column 17)"}},
		{name: "JSON unclosed", file: "c.json", src: "{\"mcpServers\": {\"a\": {\"command\": \"x\"}\n",
			want: []string{"c.json:2:1: syntax error: did not find expected ',' or '}' (while parsing a flow mapping that starts at line 1, column 16)"}},
		{name: "JSON bad escape", file: "c.json", src: "{\n\"mcpServers\": {\"a\": {\"command\": \"x\\q\"}}}",
			want: []string{"c.json:2:35: syntax error: found unknown escape character (while scanning a quoted scalar that starts at line 2, column 33)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "c.yaml"
			}
			cfg, err := Parse(file, []byte(tt.src), env)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want\n%s", strings.Join(tt.want, "\n"))
			}
			if cfg != nil {
				t.Errorf("a config beside the error")
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestInvalidFiles: the files under testdata/invalid give the errors in
// their .golden files (go test -update rewrites them).
func TestInvalidFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := Parse(filepath.Base(f), data, envOf(map[string]string{"HOME": "/home/alice"}))
			if perr == nil {
				t.Fatal("no error")
			}
			got := perr.Error() + "\n"
			golden := strings.TrimSuffix(f, filepath.Ext(f)) + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("errors:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
	if n == 0 {
		t.Fatal("no files in testdata/invalid")
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

func TestErrorValues(t *testing.T) {
	_, err := Parse("dir/config.yaml", []byte("toolboxes:\n  dev:\n    mcpServers:\n      github: {command: x, url: 'http://h/'}\n      b: {}\n"), nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not an *Error: %v", err)
	}
	want := &Error{File: "dir/config.yaml", Line: 4, Column: 15, Path: "toolboxes.dev.mcpServers.github", Reason: "give either command or url, not both"}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("got %+v, want %+v", e, want)
	}
	if got := len(strings.Split(err.Error(), "\n")); got != 2 {
		t.Errorf("%d errors, want 2 (all are reported)", got)
	}
}

// TestErrorsNeverShowSecrets: values that come from the environment are
// not repeated in errors.
func TestErrorsNeverShowSecrets(t *testing.T) {
	src := srvFile(`url: "ftp://${SECRET}@h/"`, `headers: {"X": "${SECRET}\n"}`)
	_, err := Parse("c.yaml", []byte(src), envOf(map[string]string{"SECRET": "hunter2"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
}

func srvFile(lines ...string) string {
	return "toolboxes:\n  dev:\n    mcpServers:\n      s:\n        " + strings.Join(lines, "\n        ") + "\n"
}

func TestLimits(t *testing.T) {
	// Aliases that would expand to 2*10^6 values stop at the budget.
	src := `x-a: &a [` + strings.Repeat("s, ", 99) + `s]
x-b: &b {command: c, args: *a}
x-c: &c {s0: *b, s1: *b, s2: *b, s3: *b, s4: *b, s5: *b, s6: *b, s7: *b, s8: *b, s9: *b}
`
	var b strings.Builder
	b.WriteString(src)
	b.WriteString("x-d: &d {mcpServers: *c}\ntoolboxes:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "  t%d: *d\n", i)
	}
	start := time.Now()
	_, err := Parse("big.yaml", []byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), "expands, through YAML aliases, to more than") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}

	// Errors stop at maxErrors, with a count of the rest.
	b.Reset()
	b.WriteString("toolboxes:\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, "  t%d: {mcpServers: {s: {}}}\n", i)
	}
	_, err = Parse("many.yaml", []byte(b.String()), nil)
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != maxErrors+1 || lines[maxErrors] != "many.yaml: 50 more errors not shown" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
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

func TestBuiltinToolboxIsTheRegistrys(t *testing.T) {
	if BuiltinToolbox != registry.BuiltinToolbox {
		t.Fatalf("config reserves %q, the registry's built-in toolbox is %q", BuiltinToolbox, registry.BuiltinToolbox)
	}
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
		if tb == nil || tb.Name != name || !nameRE.MatchString(name) || registry.CheckName("toolbox", name) != nil || name == registry.BuiltinToolbox {
			t.Fatalf("toolbox %q: %+v", name, tb)
		}
		if len(tb.Order) != len(tb.Servers) {
			t.Fatalf("toolbox %q: Order %q for %d servers", name, tb.Order, len(tb.Servers))
		}
		for _, sname := range tb.Order {
			s := tb.Servers[sname]
			if s == nil || s.Name != sname || !nameRE.MatchString(sname) || (registry.ID{Toolbox: name, Server: sname, Tool: "t"}).Check() != nil {
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
