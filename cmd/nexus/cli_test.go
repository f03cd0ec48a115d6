package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

var (
	singleDashFlag = regexp.MustCompile(`(?m)(^|[\s\[(|])-([a-z][a-z-]+)`)
	doubleDashFlag = regexp.MustCompile(`--([a-z][a-z-]+)`)
	envVar         = regexp.MustCompile(`NEXUS_[A-Z_]+`)
)

// TestHelpListsEveryFlagInOneStyle: "nexus --help" names every flag of
// every command and every environment variable commands.go reads, and
// every help text writes flags as --flag.
func TestHelpListsEveryFlagInOneStyle(t *testing.T) {
	top, errOut, code := runNexus(t, "", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d %s", code, errOut)
	}
	helps := map[string]string{"nexus --help": top}
	for _, cmd := range [][]string{{"serve"}, {"stdio"}, {"tools", "list"}, {"tools"}, {"call"}} {
		out, errOut, code := runNexus(t, "", append(cmd, "--help")...)
		if code != 0 {
			t.Errorf("%v --help: exit %d", cmd, code)
		}
		helps[strings.Join(cmd, " ")+" --help"] = out + errOut
	}
	for name, text := range helps {
		if m := singleDashFlag.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("%s writes flags with one dash: %q", name, m)
		}
		for _, m := range doubleDashFlag.FindAllStringSubmatch(text, -1) {
			if !strings.Contains(top, "--"+m[1]) {
				t.Errorf("%s has --%s, which nexus --help does not list", name, m[1])
			}
		}
	}
	for _, flag := range []string{"config", "surface", "no-demo", "allow-hosts", "allow-origins", "addr", "data-dir", "db", "log-level", "json", "args"} {
		if !strings.Contains(top, "--"+flag) {
			t.Errorf("nexus --help lacks --%s", flag)
		}
	}
	for _, cmd := range []string{"serve", "stdio", "tools list", "call"} {
		if !strings.Contains(helps[cmd+" --help"], "--db") || !strings.Contains(helps[cmd+" --help"], "--log-level") {
			t.Errorf("%s --help lacks the common flags:\n%s", cmd, helps[cmd+" --help"])
		}
	}
	if !strings.Contains(helps["tools --help"], "--json") {
		t.Errorf("tools --help lacks --json:\n%s", helps["tools --help"])
	}
	src, err := os.ReadFile("commands.go")
	if err != nil {
		t.Fatal(err)
	}
	vars := envVar.FindAllString(string(src), -1)
	vars = append(vars, "NEXUS_CONFIG", "NEXUS_SURFACE", "NEXUS_ADDR", "NEXUS_DATA_DIR", "NEXUS_DB", "NEXUS_LOG_LEVEL", "NEXUS_ALLOW_HOSTS", "NEXUS_ALLOW_ORIGINS")
	for _, v := range vars {
		if !strings.Contains(top, v) {
			t.Errorf("nexus --help lacks %s", v)
		}
	}
}

// TestCallTakesJSONPositionally: nexus call TOOL '{...}' uses the JSON
// (flags may follow it); anything else in that place is refused, pointing
// at --args.
func TestCallTakesJSONPositionally(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runNexus(t, "", "call", "belief_query", `{"query":"default HTTP address"}`, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "7777") {
		t.Fatalf("positional JSON: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runNexus(t, "", "call", "--data-dir", dir, "belief_query", `{"query":"SQLite"}`)
	if code != 0 || !strings.Contains(out, "SQLite") {
		t.Fatalf("flags first: exit %d %s", code, out)
	}
	for _, args := range [][]string{
		{"call", "belief_query", "query=SQLite"},
		{"call", "belief_query", `{"query":"a"}`, "extra"},
		{"call", "belief_query", `{"query":"a"}`, "--args", `{"query":"b"}`},
	} {
		out, errOut, code := runNexus(t, "", append(args, "--data-dir", dir)...)
		if code != 2 || !strings.Contains(errOut, "--args") {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and a hint about --args", args, code, errOut, out)
		}
	}
}

// TestCallUnknownToolSaysWhatToDo: an unknown tool points at nexus tools
// list; a downstream tool whose server failed to start says why; a server
// the toolbox does not have is named.
func TestCallUnknownToolSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runNexus(t, "", "call", "no_such_tool", "--data-dir", dir)
	var body struct{ Error struct{ Message string } }
	if json.Unmarshal([]byte(out), &body) != nil {
		t.Errorf("unknown tool: stdout is not JSON: %s", out)
	}
	if code != 1 || body.Error.Message != `unknown tool "no_such_tool"` || !strings.Contains(errOut, "nexus tools list") {
		t.Errorf("unknown tool: exit %d\n%s\n%s", code, out, errOut)
	}
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}}})
	out, errOut, code = runNexus(t, "", "call", "default__broken__x", "--config", cfg, "--data-dir", dir)
	if code != 1 || !strings.Contains(out+errOut, "broken") || !strings.Contains(out+errOut, "no such file or directory") {
		t.Errorf("tool of a server that failed to start: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, "", "call", "default__nosuch__x", "--config", cfg, "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, `no server "nosuch"`) || !strings.Contains(errOut, "broken") {
		t.Errorf("tool of an unknown server: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestDBMustBeAPathOrPostgresURL: a --db (or NEXUS_DB) that is neither a
// file path nor a postgres://, postgresql:// or sqlite: URL is refused by
// every command, naming the accepted forms, before anything is created.
func TestDBMustBeAPathOrPostgresURL(t *testing.T) {
	for _, db := range []string{"mysql://x", "http://x/y", "mysql:x", "sqlite3://x.db"} {
		for _, cmd := range [][]string{{"tools", "list"}, {"call", "belief_query", `{"query":"x"}`}, {"stdio"}, {"maintenance"}, {"serve", "--addr", "127.0.0.1:0"}} {
			cwd := t.TempDir()
			c := exec.Command(binary, append(cmd, "--db", db, "--data-dir", filepath.Join(cwd, "data"))...)
			c.Dir = cwd
			var errb strings.Builder
			c.Stderr = &errb
			testtools.OwnGroup(c)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// It exits at once; one still running after a while is ended.
			if graceful, err := testtools.Stop(t, c, syscall.Signal(0), 30*time.Second); !graceful {
				t.Errorf("%v --db %s: still running", cmd, db)
			} else if err == nil {
				t.Errorf("%v --db %s: exit 0", cmd, db)
			}
			for _, want := range []string{"--db", "postgres://", "postgresql://", "path"} {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("%v --db %s: stderr does not mention %q:\n%s", cmd, db, want, errb.String())
				}
			}
			if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
				t.Errorf("%v --db %s created %s", cmd, db, entries[0].Name())
			}
		}
	}
	// The accepted forms of SQLite.
	dir := t.TempDir()
	for _, db := range []string{filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "b.db")} {
		if out, errOut, code := runNexus(t, "", "call", "tension_list", "{}", "--db", db); code != 0 {
			t.Errorf("--db %s: exit %d %s %s", db, code, out, errOut)
		}
	}
	for _, f := range []string{"a.db", "b.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestServeReportsABusyPortBeforeCreatingTheDatabase: serve listens before
// it opens the store.
func TestServeReportsABusyPortBeforeCreatingTheDatabase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	_, errOut, code := runNexus(t, "", "serve", "--addr", ln.Addr().String(), "--data-dir", data)
	if code == 0 || !strings.Contains(errOut, "listen on "+ln.Addr().String()) || !strings.Contains(errOut, "address already in use") {
		t.Errorf("busy port: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("serve on a busy port created the data directory %s (%v)", data, err)
	}
}

// TestToolsListCreatesNoDatabase: listing the tools neither creates the
// data directory nor a database in it.
func TestToolsListCreatesNoDatabase(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	out, errOut, code := runNexus(t, "", "tools", "list", "--json", "--data-dir", data)
	var tools []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &tools) != nil || len(tools) < len(localTools) {
		t.Fatalf("tools list: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("tools list created %s (%v)", data, err)
	}
	if strings.Contains(errOut, "applied migration") {
		t.Errorf("tools list logs migrations of a store it does not need:\n%s", errOut)
	}
	// An existing database is left as it is.
	if _, errOut, code := runNexus(t, "", "call", "tension_list", "{}", "--data-dir", data); code != 0 {
		t.Fatal(errOut)
	}
	before, _ := os.ReadDir(data)
	if _, errOut, code := runNexus(t, "", "tools", "list", "--data-dir", data); code != 0 {
		t.Fatal(errOut)
	}
	if after, _ := os.ReadDir(data); len(after) != len(before) {
		t.Errorf("tools list changed the data directory: %v -> %v", before, after)
	}
}

// TestStartAndStopAreLogged: serve and stdio log where the database is at
// INFO when they start, and one line when they stop.
func TestStartAndStopAreLogged(t *testing.T) {
	data := t.TempDir()
	dbPath := filepath.Join(data, "nexus.db")
	_, errOut, code := runNexus(t, "", "stdio", "--data-dir", data)
	if code != 0 || !hasLogLine(errOut, "INFO", "database="+dbPath) || !hasLogLine(errOut, "INFO", `msg="nexus stopped"`) {
		t.Errorf("stdio: exit %d\n%s", code, errOut)
	}

	addr := testtools.FreeAddr(t)
	cmd := exec.Command(binary, "serve", "--addr", addr, "--data-dir", data)
	var logs lockedBuffer
	cmd.Stderr = &logs
	testtools.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() { // should it not start
		if !stopped {
			testtools.Stop(t, cmd, os.Interrupt, 20*time.Second)
		}
	}()
	testtools.Eventually(t, 30*time.Second, `nexus serve to log "nexus serving"`, func() bool { return strings.Contains(logs.String(), "nexus serving") })
	stopped = true
	testtools.Stop(t, cmd, os.Interrupt, 20*time.Second)
	if s := logs.String(); !hasLogLine(s, "INFO", "database="+dbPath) || !hasLogLine(s, "INFO", `msg="nexus stopped"`) {
		t.Errorf("serve:\n%s", s)
	}
}

func hasLogLine(logs, level, text string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "level="+level) && strings.Contains(line, text) {
			return true
		}
	}
	return false
}

// TestInstructionsNameOnlyServedTools: each surface's instructions name
// only tools that surface serves.
func TestInstructionsNameOnlyServedTools(t *testing.T) {
	meta := []string{"get_tools", "open_toolbox", "search_tools", "use_tool"}
	for _, surface := range []string{"flat", "agents", "bounded"} {
		cmd := exec.Command(binary, "stdio", "--surface", surface, "--data-dir", t.TempDir())
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		instr := cs.InitializeResult().Instructions
		names := toolNames(t, cs)
		cs.Close()
		cancel()
		if !strings.Contains(instr, "nexus") || !strings.Contains(instr, "substrate") {
			t.Errorf("%s: instructions do not describe the toolboxes: %s", surface, instr)
		}
		for _, m := range meta {
			if mentions, serves := strings.Contains(instr, m), slices.Contains(names, m); mentions != serves {
				t.Errorf("%s: instructions mention %s: %v, the surface serves it: %v\n%s", surface, m, mentions, serves, instr)
			}
		}
	}
}

// TestCallPrintsJSONAndExitStatus: nexus call prints JSON whatever the
// outcome (an error whose body is plain text, such as an unknown tool,
// becomes REST's {"error": {code, message, requestId}}), and exits 1 on
// any error, a tool's own isError result included.
func TestCallPrintsJSONAndExitStatus(t *testing.T) {
	dir := t.TempDir()
	useTool := func(args string) string {
		return `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_query"},"arguments":` + args + `}`
	}
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		contains []string // in stdout
		restCode string   // the REST error object's code, when that is the shape
	}{
		{"unknown tool", []string{"nosuch_tool", "{}"}, 1, []string{`unknown tool \"nosuch_tool\"`}, "NOT_FOUND"},
		{"unknown tool, no arguments", []string{"nosuch_tool"}, 1, nil, "NOT_FOUND"},
		{"unknown toolbox", []string{"nobox__srv__tool", "{}"}, 1, nil, "NOT_FOUND"},
		{"a tool's error", []string{"belief_query", "{}"}, 1, []string{`"error_code": "BAD_REQUEST"`}, ""},
		{"a tool's result", []string{"belief_query", `{"query":"SQLite"}`}, 0, []string{"SQLite"}, ""},
		// use_tool's outcome is the tool's, in the tool's own shape.
		{"use_tool: the tool's error", []string{"use_tool", useTool(`{"query":5}`)}, 1, []string{`"error_code": "BAD_REQUEST"`, `"success": false`}, ""},
		{"use_tool: the tool's result", []string{"use_tool", useTool(`{"query":"SQLite"}`)}, 0, []string{"SQLite"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runNexus(t, "", append(append([]string{"call"}, tt.args...), "--data-dir", dir)...)
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("stdout is not JSON (%v): %s", err, out)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.code, out, errOut)
			}
			for _, want := range tt.contains {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %s:\n%s", want, out)
				}
			}
			if tt.restCode == "" {
				return
			}
			e, _ := v["error"].(map[string]any)
			if e["code"] != tt.restCode || e["message"] == "" || e["requestId"] == "" || e["requestId"] == nil {
				t.Errorf("stdout is not {\"error\": {code %s, message, requestId}}: %s", tt.restCode, out)
			}
			if !strings.Contains(errOut, "nexus tools list") {
				t.Errorf("no hint on stderr: %s", errOut)
			}
		})
	}
}

// TestCallTakesAnyJSONPositionally: positional arguments are judged as
// --args judges them: any JSON value (or malformed JSON) goes to the
// pipeline, whose answer is the same either way; "null" is no arguments.
func TestCallTakesAnyJSONPositionally(t *testing.T) {
	dir := t.TempDir()
	for _, args := range []string{`[]`, `null`, ` null `, `5`, `"x"`, `true`, `{"query":`, `[1,`} {
		out, errOut, code := runNexus(t, "", "call", "belief_query", args, "--data-dir", dir)
		wantOut, wantErr, wantCode := runNexus(t, "", "call", "belief_query", "--args", args, "--data-dir", dir)
		if code != wantCode || out != wantOut || code != 1 {
			t.Errorf("%s: exit %d, stdout %q; with --args: exit %d, stdout %q\nstderr: %s\n--args stderr: %s", args, code, out, wantCode, wantOut, errOut, wantErr)
		}
	}
	out, _, _ := runNexus(t, "", "call", "belief_query", "[]", "--data-dir", dir)
	if !strings.Contains(out, "got an array") {
		t.Errorf("[]: %s", out)
	}
}
