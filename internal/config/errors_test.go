package config

// Invalid files: the errors, their text and values, and the limits.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/invalid")

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
			want: []string{`c.yaml:2:1: servers: unknown key "servers" (known keys: $schema, access, chat, embeddings, model, naming, tensions, toolboxes, vaults; keys starting with x- are ignored)`}},
		{name: "mcpServers beside toolboxes", src: "toolboxes: {}\nmcpServers: {}\n",
			want: []string{`c.yaml:2:1: mcpServers: a file with toolboxes lists its servers under each toolbox (toolboxes.NAME.mcpServers), not at the top`}},
		{name: "unknown desktop top-level key", file: "mcp.json", src: `{"mcpServers": {}, "inputs": []}`,
			want: []string{`mcp.json:1:20: inputs: unknown key "inputs" (known keys: $schema, globalShortcut, mcpServers, naming, preferences)`}},
		{name: "unknown toolbox key", src: "toolboxes:\n  dev:\n    descripton: x\n    mcpServers: {}\n    servers: {}\n",
			want: []string{
				`c.yaml:3:5: toolboxes.dev.descripton: unknown key "descripton" (did you mean "description"?)`,
				`c.yaml:5:5: toolboxes.dev.servers: unknown key "servers" (known keys: description, mcpServers, naming)`,
			}},
		{name: "unknown server key", src: srv("command: x", "Args: [a]", "envFile: .env"),
			want: []string{
				at(6, 9, `.Args: unknown key "Args" (did you mean "args"?)`),
				at(7, 9, `.envFile: unknown key "envFile" (known keys: alwaysAllow, args, autoApprove, breakerCooldown, breakerFailures, command, connectTimeout, cwd, description, disabled, eager, env, headers, maxIdleConnections, retries, timeout, toolFilters, transport, type, url)`),
			}},
		{name: "unknown desktop server key", file: "mcp.json", src: `{"mcpServers": {"s": {"command": "x", "comand": "y"}}}`,
			want: []string{`mcp.json:1:39: mcpServers.s.comand: unknown key "comand" (did you mean "command"?)`}},
		{name: "ignored keys", file: "mcp.json", src: `{"$schema": "x", "globalShortcut": "", "preferences": {"a": 1},
			"mcpServers": {"s": {"command": "x", "alwaysAllow": ["t"], "autoApprove": {"any": 1}, "description": 5, "disabled": false}}}`,
			want: nil},

		// shape of the file
		{name: "empty file", src: "",
			want: []string{"c.yaml: the file is empty: give toolboxes or vaults (the Nexus format; toolboxes alone: the MCP Workbench format) or mcpServers (the desktop-client format)"}},
		{name: "only comments", src: "# nothing\n",
			want: []string{"c.yaml: the file is empty: give toolboxes or vaults (the Nexus format; toolboxes alone: the MCP Workbench format) or mcpServers (the desktop-client format)"}},
		{name: "neither format", src: "toolbox:\n  dev: {}\n",
			want: []string{
				`c.yaml:1:1: toolbox: unknown key "toolbox" (did you mean "toolboxes"?)`,
				"c.yaml:1:1: no toolboxes, vaults or mcpServers: give toolboxes or vaults (the Nexus format; toolboxes alone: the MCP Workbench format) or mcpServers (the desktop-client format)",
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
			golden := strings.TrimSuffix(f, filepath.Ext(f)) + ".golden"
			testtools.Golden(t, golden, []byte(perr.Error()+"\n"), *update)
		})
	}
	if n == 0 {
		t.Fatal("no files in testdata/invalid")
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
