package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestVaultEndToEnd: a vault configured, Nexus serving it over HTTP: REST
// calls a mode and refuses a path trick with the original's shape, the
// agents surface answers an SDK client in both protocol eras (with and
// without a session), nexus call reaches the same tools, and two clients
// racing to edit one note: one wins, the other gets a CONFLICT, nothing is
// lost.
func TestVaultEndToEnd(t *testing.T) {
	notes := t.TempDir()
	if err := os.WriteFile(filepath.Join(notes, "Plan.md"), []byte("# Plan\n\nStart.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(conf, []byte("vaults:\n  notes: {path: "+notes+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := startServeIn(t, dir, "--config", conf)

	code, body := restDo(t, "POST", base+"/api/tools/readContent:call", "", `{"filePath": "Plan.md"}`)
	if code != 200 || !strings.Contains(body, `"success":true`) || !strings.Contains(body, "Start.") {
		t.Fatalf("REST readContent: %d %s", code, body)
	}
	code, body = restDo(t, "POST", base+"/api/tools/readContent:call", "", `{"filePath": "../../etc/passwd"}`)
	if code != 400 || !strings.Contains(body, "leaves the vault") {
		t.Errorf("REST with a path out of the vault: %d %s", code, body)
	}
	code, body = restDo(t, "POST", base+"/api/tools/readContent:call", "", `{"filePath": 7}`)
	if code != 400 || !strings.Contains(body, "filePath") {
		t.Errorf("REST with a bad argument: %d %s", code, body)
	}

	// The agents surface, with a session and without (2026-07-28).
	cs, _ := connect(t, base+"/mcp/agents")
	res := call(t, cs, "contentManager", map[string]any{"mode": "readContent", "sessionId": "s-20261127100000", "filePath": "Plan.md"})
	var read struct {
		Success bool
		Data    struct{ Content, Hash string }
	}
	if err := json.Unmarshal([]byte(text(res)), &read); err != nil || !read.Success || read.Data.Hash == "" {
		t.Fatalf("agents readContent: %s", text(res))
	}
	sl := connectSessionless(t, base+"/mcp/agents")
	if res := call(t, sl, "vaultManager", map[string]any{"mode": "listDirectory", "sessionId": "s-20261127100000", "path": "/"}); res.IsError || !strings.Contains(text(res), "Plan.md") {
		t.Fatalf("sessionless listDirectory: %s", text(res))
	}
	if res := call(t, sl, "contentManager", map[string]any{"mode": "readContent", "sessionId": "s-1", "filePath": "a\x00.md"}); !res.IsError || !strings.Contains(text(res), "NUL") {
		t.Errorf("sessionless NUL path: %s", text(res))
	}

	// Two clients edit the note they both read, at once.
	other, _ := connect(t, base+"/mcp/agents")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]bool, 2)
	for i, c := range []*mcp.ClientSession{cs, other} {
		wg.Go(func() {
			r := call(t, c, "contentManager", map[string]any{"mode": "appendContent", "sessionId": "s-20261127100000",
				"filePath": "Plan.md", "content": "\nEdit " + string(rune('A'+i)), "expectedHash": read.Data.Hash})
			outs[i], errs[i] = text(r), r.IsError
		})
	}
	wg.Wait()
	if errs[0] == errs[1] {
		t.Fatalf("both edits had the same outcome: %v %v", outs, errs)
	}
	loser := outs[0]
	if errs[1] {
		loser = outs[1]
	}
	if !strings.Contains(loser, "CONFLICT") || !strings.Contains(loser, read.Data.Hash) {
		t.Errorf("the losing edit: %s", loser)
	}
	b, _ := os.ReadFile(filepath.Join(notes, "Plan.md"))
	if got := string(b); strings.Count(got, "Edit ") != 1 || !strings.HasPrefix(got, "# Plan\n\nStart.\n") {
		t.Errorf("the note after the race: %q", got)
	}

	// nexus call --vault: a folder served without a configuration file.
	out, stderr, code3 := runNexus(t, "", "call", "--vault", notes, "--data-dir", t.TempDir(), "readContent", `{"filePath": "Plan.md"}`)
	if code3 != 0 || !strings.Contains(out, "Start.") {
		t.Errorf("nexus call --vault readContent: %d %s %s", code3, out, stderr)
	}

	// nexus call, against the same configuration (its own process).
	var code2 int
	out, stderr, code2 = runNexus(t, "", "call", "--config", conf, "--data-dir", t.TempDir(), "searchContent", `{"query": "plan"}`)
	if code2 != 0 || !strings.Contains(out, "Plan.md") {
		t.Errorf("nexus call searchContent: %d %s %s", code2, out, stderr)
	}
}
