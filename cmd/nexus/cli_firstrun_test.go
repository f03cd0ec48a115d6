package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// helpArgs are every command and subcommand, each of which answers --help
// and -h.
var helpArgs = [][]string{
	{}, {"serve"}, {"stdio"}, {"tools"}, {"tools", "list"}, {"call"}, {"maintenance"}, {"import"},
	{"users"}, {"users", "add"}, {"users", "list"}, {"users", "set"},
	{"tokens"}, {"tokens", "add"}, {"tokens", "list"}, {"tokens", "revoke"},
	{"workspaces"}, {"workspaces", "list"}, {"workspaces", "add-member"}, {"workspaces", "remove-member"}, {"workspaces", "set-owner"},
	{"keys"}, {"keys", "rotate"}, {"reload"}, {"version"},
}

// TestCLIEveryCommandAnswersHelp: every command and subcommand answers
// --help and -h with its help on standard output, nothing on standard
// error, and exit 0, without creating anything.
func TestCLIEveryCommandAnswersHelp(t *testing.T) {
	for _, cmd := range helpArgs {
		for _, h := range []string{"--help", "-h"} {
			cwd := t.TempDir()
			c := exec.Command(binary, append(append([]string{}, cmd...), h, "--data-dir", filepath.Join(cwd, "data"))...)
			c.Dir = cwd
			var out, errb strings.Builder
			c.Stdout, c.Stderr = &out, &errb
			err := c.Run()
			name := strings.Join(append(append([]string{"nexus"}, cmd...), h), " ")
			if err != nil || !strings.Contains(out.String(), "Usage") || errb.Len() > 0 {
				t.Errorf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, out.String(), errb.String())
			}
			if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
				t.Errorf("%s created %s", name, entries[0].Name())
			}
		}
	}
}

// TestCLIUnknownFlagIsShort: an unknown flag is named (as --flag) with one
// line pointing to the command's --help, on standard error, instead of the
// whole help that would push the error off the screen.
func TestCLIUnknownFlagIsShort(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"call", "tension_list"}, {"users", "add", "bob"}, {"workspaces", "list"}, {"keys", "rotate"}, {"import", "auto", "x.json"}} {
		out, errOut, code := runNexus(t, "", append(append([]string{}, cmd...), "--bogus")...)
		name := strings.Join(cmd, " ")
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) > 2 || !strings.Contains(errOut, "--bogus") ||
			!strings.Contains(errOut, `"nexus `+strings.Fields(name)[0]) || !strings.Contains(errOut, `--help"`) {
			t.Errorf("nexus %s --bogus: exit %d\nstdout:\n%s\nstderr (%d lines):\n%s", name, code, out, len(lines), errOut)
		}
	}
}

// TestCLIDBInMissingDirectory: a --db file whose directory does not exist
// is refused naming the path and the cause.
func TestCLIDBInMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing", "dir")
	db := filepath.Join(dir, "x.db")
	_, errOut, code := runNexus(t, "", "call", "tension_list", "{}", "--db", db)
	if code != 1 || !strings.Contains(errOut, db) || !strings.Contains(errOut, "the directory "+dir+" does not exist") {
		t.Errorf("--db %s: exit %d\n%s", db, code, errOut)
	}
}

// TestCLIHelpListsModelVariables: "nexus --help" names every environment
// variable the server's model and its users' credentials read (the model's
// NEXUS_LLM_*, NEXUS_KEYRING, NEXUS_ALLOW_LOOPBACK_MODEL_URLS), not only
// those the commands read themselves.
func TestCLIHelpListsModelVariables(t *testing.T) {
	help, _, code := runNexus(t, "", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	vars := map[string]bool{}
	for _, f := range []string{"../../internal/llm/env.go", "../../internal/app/app.go", "../../internal/tutor/tutor.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(NEXUS_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
			vars[m[1]] = true
		}
	}
	for _, v := range []string{"NEXUS_LLM_PROVIDER", "NEXUS_LLM_MODEL", "NEXUS_LLM_API_KEY", "NEXUS_LLM_BASE_URL", "NEXUS_KEYRING", "NEXUS_ALLOW_LOOPBACK_MODEL_URLS"} {
		if !vars[v] {
			t.Errorf("%s is no longer read where this test looks: update the test", v)
		}
	}
	for v := range vars {
		if !strings.Contains(help, v) {
			t.Errorf("nexus --help does not mention %s", v)
		}
	}
}

// TestCLIOneShotCommandsAreQuiet: commands that run once (call, users,
// maintenance, ...) write nothing to standard error on a new database unless
// something is wrong; --log-level info brings their log back.
func TestCLIOneShotCommandsAreQuiet(t *testing.T) {
	for _, cmd := range [][]string{{"call", "tension_list", "{}"}, {"users", "add", "bob"}, {"maintenance"}, {"workspaces", "list"}} {
		out, errOut, code := runNexus(t, "", append(cmd, "--data-dir", t.TempDir())...)
		if code != 0 || errOut != "" {
			t.Errorf("nexus %s on a new database: exit %d, standard error:\n%s\nstdout:\n%s", strings.Join(cmd, " "), code, errOut, out)
		}
	}
	_, errOut, code := runNexus(t, "", "call", "tension_list", "{}", "--data-dir", t.TempDir(), "--log-level", "info")
	if code != 0 || !hasLogLine(errOut, "INFO", "applied migration") {
		t.Errorf("--log-level info: exit %d\n%s", code, errOut)
	}
}

// TestCLIServeStartLineNamesTheUIAndDownstream: the line serve logs when it
// is ready names the web UI's address beside /mcp, and counts the local
// tools and the downstream servers whose tools come on top.
func TestCLIServeStartLineNamesTheUIAndDownstream(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}}})
	addr := testtools.FreeAddr(t)
	cmd := exec.Command(binary, "serve", "--addr", addr, "--data-dir", t.TempDir(), "--config", cfg)
	var logs lockedBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	testtools.Eventually(t, 30*time.Second, `nexus serve to log "nexus serving"`, func() bool { return strings.Contains(logs.String(), "nexus serving") })
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "nexus serving") {
			line = l
		}
	}
	for _, want := range []string{"ui=http://" + addr + "/ ", "mcp=http://" + addr + "/mcp", "local_tools=", "downstream_servers=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("the start line lacks %s:\n%s", want, line)
		}
	}
}

// TestCLIREADMESaysWhatGoRunPrints: the README does not promise that go run
// prints nothing while it compiles: it prints the modules it downloads.
func TestCLIREADMESaysWhatGoRunPrints(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	if strings.Contains(text, "prints nothing while it compiles") || !strings.Contains(text, "go: downloading") {
		t.Error(`README: say what go run prints on a first run ("go: downloading ..." for each module, then nothing while it compiles)`)
	}
}

// TestCLIImportReplacesDemoData: on a new database with the demo data,
// importing real BC Transfer Guide rows leaves no made-up record beside
// them: tn_transfer_resolve for Langara CPSC 1050 to SFU answers the real
// SFU CMPT 1XX only, not the demo's SFU CMPT 118.
func TestCLIImportReplacesDemoData(t *testing.T) {
	dir := t.TempDir()
	resolve := `{"sourceInstitution":"LANG","sourceCourses":["CPSC 1050"],"targetInstitution":"SFU"}`
	out, errOut, code := runNexus(t, "", "call", "tn_transfer_resolve", resolve, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "CMPT 118") {
		t.Fatalf("the demo's rule before the import: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, "", "import", "bctg-transfers", filepath.Join("..", "..", "internal", "tutor", "testdata", "bctg_langara_excerpt.json"), "--data-dir", dir)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "demo") {
		t.Errorf("the import's summary does not say that demo records went:\n%s", out)
	}
	out, errOut, code = runNexus(t, "", "call", "tn_transfer_resolve", resolve, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "CMPT 1XX") || strings.Contains(out, "CMPT 118") || strings.Contains(out, "demo data") {
		t.Errorf("after importing real rows: exit %d\n%s\n%s", code, out, errOut)
	}
}
