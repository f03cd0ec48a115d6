//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/users"
)

// children counts the running processes whose parent is pid and whose
// executable is exe (the stdio servers a replica started).
func children(t *testing.T, pid int, exe string) int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after the last ")".
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(pid) {
			continue
		}
		if target, err := os.Readlink(filepath.Join(d, "exe")); err == nil && target == exe {
			n++
		}
	}
	return n
}

// logCount counts the lines of r's log that hold every one of parts.
func logCount(r *replica, parts ...string) int {
	b, _ := os.ReadFile(r.logs)
	n := 0
	for line := range strings.Lines(string(b)) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			n++
		}
	}
	return n
}

// writeYAML replaces the configuration file at path, as an operator edits
// it in place.
func writeYAML(t *testing.T, path, yaml string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReplicasReloadConfig: two replicas share one configuration file. An
// operator adds a toolbox with a stdio server to the file and sends SIGHUP
// to one replica: a client connected to the other replica gets
// notifications/tools/list_changed and lists and calls the new tool (each
// replica runs its own stdio server); removing the toolbox ends that
// server's process; an invalid file is refused, with the reason in the
// log, and the configuration in use keeps serving; nexus reload, a process
// of its own, makes both reload. Each replica reloads once per change, the
// one that got the signal too (it receives its own event).
func TestReplicasReloadConfig(t *testing.T) {
	hello := helloServer(t)
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	one := "toolboxes:\n  one:\n    mcpServers:\n      hello:\n        command: " + hello + "\n"
	two := one + "  two:\n    description: added by a reload\n    mcpServers:\n      hello:\n        command: " + hello + "\n"
	writeYAML(t, path, one)
	reps, db := startReplicas(t, 2, "--no-demo", "--config", path)
	a, b := reps[0], reps[1]
	cs, changed := connect(t, b.base()+"/mcp")
	waitForTool(t, cs, "one__hello__greet")
	bPID := b.cmd.Process.Pid
	if n := children(t, bPID, hello); n != 1 {
		t.Fatalf("replica B runs %d hello servers, want 1 (toolbox one's)", n)
	}
	for len(changed) > 0 {
		<-changed
	}
	hangup := func() {
		t.Helper()
		if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}

	// Added.
	writeYAML(t, path, two)
	hangup()
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("the client of replica B got no notifications/tools/list_changed after replica A's reload")
	}
	waitForTool(t, cs, "two__hello__greet")
	if res := call(t, cs, "two__hello__greet", map[string]any{"name": "reload"}); res.IsError || !strings.Contains(text(res), "reload") {
		t.Fatalf("the added tool: %+v", res.Content)
	}
	// A client initializing now reads the new toolbox in the instructions.
	if fresh, _ := connect(t, b.base()+"/mcp"); !strings.Contains(fresh.InitializeResult().Instructions, "- two: added by a reload") {
		t.Errorf("instructions after the reload:\n%s", fresh.InitializeResult().Instructions)
	}
	testtools.EventuallyErr(t, 10*time.Second, "replica B to run the added toolbox's stdio server", func() error {
		if n := children(t, bPID, hello); n != 2 {
			return fmt.Errorf("%d hello servers", n)
		}
		return nil
	})

	// Invalid: refused whole, the reason in the log, the old one serves.
	writeYAML(t, path, two+"  three:\n    mcpServers:\n      broken:\n        args: [x]\n")
	hangup()
	testtools.EventuallyErr(t, 10*time.Second, "replica A to refuse the invalid file", func() error {
		if logCount(a, `msg="configuration not reloaded"`, path, "three", "broken") != 1 {
			return fmt.Errorf("no log line of the refusal naming the file and the server")
		}
		return nil
	})
	for _, r := range reps {
		req, _ := http.NewRequest("POST", r.base()+"/api/tools/two__hello__greet:call", strings.NewReader(`{"name":"still"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("replica %d after the invalid file: the tool answered %d, want 200", r.i, resp.StatusCode)
		}
	}

	// Removed: the stdio server's process ends, the tool is unlisted.
	writeYAML(t, path, one)
	hangup()
	testtools.EventuallyErr(t, 20*time.Second, "replica B to stop the removed toolbox's stdio server", func() error {
		if n := children(t, bPID, hello); n != 1 {
			return fmt.Errorf("%d hello servers", n)
		}
		return nil
	})
	testtools.EventuallyErr(t, 10*time.Second, "the removed tool to be unlisted", func() error {
		if names := toolNames(t, cs); slices.Contains(names, "two__hello__greet") || !slices.Contains(names, "one__hello__greet") {
			return fmt.Errorf("have %v", names)
		}
		return nil
	})
	// nexus reload, from a process of its own, tells both replicas.
	writeYAML(t, path, two)
	if out, errOut, code := runNexus(t, "", "reload", "--db", db); code != 0 || !strings.Contains(out, "told the replicas") {
		t.Fatalf("nexus reload: %d %s %s", code, out, errOut)
	}
	waitForTool(t, cs, "two__hello__greet")
	testtools.EventuallyErr(t, 10*time.Second, "both replicas to reload", func() error {
		for _, r := range reps {
			if n := logCount(r, `msg="configuration reloaded"`); n != 3 {
				return fmt.Errorf("replica %d reloaded %d times", r.i, n)
			}
		}
		return nil
	})
	// Three reloads each: the replica that got the signals did not reload
	// again on its own events, and neither reloaded the invalid file.
	time.Sleep(200 * time.Millisecond)
	for _, r := range reps {
		if n := logCount(r, `msg="configuration reloaded"`); n != 3 {
			t.Errorf("replica %d reloaded %d times, want 3", r.i, n)
		}
	}
}

// TestReplicasForgetRevokedToken: a membership removed and a token revoked
// (by nexus workspaces and nexus tokens, processes of their own on the same
// database) are refused at once by every replica, not after the caches'
// CacheFor: each change is an event, over PostgreSQL LISTEN/NOTIFY and
// over NATS.
func TestReplicasForgetRevokedToken(t *testing.T) {
	engines := map[string][]string{"postgres": nil}
	if nats := os.Getenv("NEXUS_TEST_NATS_URL"); nats != "" {
		engines["nats"] = []string{"--events", nats + "/nexus-forget-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	}
	for name, events := range engines {
		t.Run(name, func(t *testing.T) {
			url := ""
			if len(events) > 0 {
				url = events[1]
			}
			t.Setenv("NEXUS_EVENTS", url) // the commands' engine
			testForget(t, events)
		})
	}
}

func testForget(t *testing.T, events []string) {
	reps, db := startReplicas(t, 2, append([]string{"--no-demo"}, events...)...)
	nexus := func(args ...string) string {
		t.Helper()
		out, errOut, code := runNexus(t, "", append(args, "--db", db)...)
		if code != 0 {
			t.Fatalf("nexus %s: %s", strings.Join(args, " "), errOut)
		}
		return out
	}
	out := nexus("users", "add", "alice")
	token := strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	nexus("workspaces", "set-owner", "team", "-")
	nexus("workspaces", "add-member", "team", "alice")
	// post calls belief_query in workspace team as alice.
	post := func(r *replica) int {
		req, _ := http.NewRequest("POST", r.base()+"/api/tools/belief_query:call",
			strings.NewReader(`{"query":"x","workspaceContext":{"workspaceId":"team"}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, r := range reps {
		if c := post(r); c != http.StatusOK {
			t.Fatalf("replica %d: alice's call in her workspace answered %d", r.i, c) // token and decision cached now
		}
	}
	// refused waits, far less than the caches' 5 s, for every replica to
	// answer want.
	refused := func(what string, want int) {
		t.Helper()
		start := time.Now()
		for _, r := range reps {
			testtools.EventuallyErr(t, time.Second, what, func() error {
				if c := post(r); c != want {
					return fmt.Errorf("replica %d answered %d, want %d", r.i, c, want)
				}
				return nil
			})
		}
		if d := time.Since(start); d >= users.CacheFor/2 {
			t.Errorf("%s took %s, want far less than the caches' %s", what, d, users.CacheFor)
		}
	}
	nexus("workspaces", "remove-member", "team", "alice")
	refused("the removed member to be refused", http.StatusForbidden)

	out = nexus("tokens", "list", "alice", "--json")
	id := out[strings.Index(out, `"id": "`)+7:]
	id = id[:strings.Index(id, `"`)]
	nexus("tokens", "revoke", id)
	refused("the revoked token to be refused", http.StatusUnauthorized)
}

// TestReplicasReloadKeyring: nexus keys rotate tells the replicas, which
// read the keyring again at once.
func TestReplicasReloadKeyring(t *testing.T) {
	dir := t.TempDir()
	reps, db := startReplicas(t, 2, "--no-demo", "--data-dir", dir)
	if _, errOut, code := runNexus(t, "", "keys", "rotate", "--db", db, "--data-dir", dir); code != 0 {
		t.Fatalf("keys rotate: %s", errOut)
	}
	for _, r := range reps {
		testtools.EventuallyErr(t, 5*time.Second, "the replica to read the rotated keyring", func() error {
			if logCount(r, "keyring read again after a rotation", "current_version=2") != 1 {
				return fmt.Errorf("replica %d: no log line of the reload", r.i)
			}
			return nil
		})
	}
}

// TestReloadCommandOnSQLite: nexus reload has nobody to tell on SQLite, and
// says to send SIGHUP instead.
func TestReloadCommandOnSQLite(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	t.Setenv("NEXUS_EVENTS", "")
	_, errOut, code := runNexus(t, "", "reload", "--data-dir", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "send SIGHUP") {
		t.Fatalf("nexus reload on SQLite: exit %d %s", code, errOut)
	}
}

// TestStdioReloadsOnHangup: nexus stdio with --config reads the file again
// on SIGHUP: its client gets notifications/tools/list_changed, the removed
// toolbox's tool is no longer listed, and the added one's is called and
// listed.
func TestStdioReloadsOnHangup(t *testing.T) {
	hello := helloServer(t)
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	writeYAML(t, path, "toolboxes:\n  one:\n    mcpServers:\n      hello:\n        command: "+hello+"\n")
	cmd := exec.Command(binary, "stdio", "--no-demo", "--data-dir", t.TempDir(), "--config", path)
	var stderr syncBuilder
	cmd.Stderr = &stderr
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	defer func() {
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	}()
	// A call connects the toolbox's server (whatever the client's
	// handshake opened).
	if res := call(t, cs, "one__hello__greet", map[string]any{"name": "before"}); res.IsError {
		t.Fatalf("before the reload: %+v", res.Content)
	}
	waitForTool(t, cs, "one__hello__greet")
	for len(changed) > 0 {
		<-changed
	}
	writeYAML(t, path, "toolboxes:\n  two:\n    mcpServers:\n      hello:\n        command: "+hello+"\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/tools/list_changed after SIGHUP")
	}
	testtools.EventuallyErr(t, 10*time.Second, "the removed toolbox's tool to be unlisted", func() error {
		if names := toolNames(t, cs); slices.Contains(names, "one__hello__greet") {
			return fmt.Errorf("have %v", names)
		}
		return nil
	})
	if res := call(t, cs, "two__hello__greet", map[string]any{"name": "stdio"}); res.IsError || !strings.Contains(text(res), "stdio") {
		t.Fatalf("the added tool: %+v", res.Content)
	}
	waitForTool(t, cs, "two__hello__greet")
}

// syncBuilder is a strings.Builder safe for a process's writes and the
// test's reads.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
