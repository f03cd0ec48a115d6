//go:build unix

package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// setRestart shortens the restart backoff for a test.
func setRestart(t *testing.T, first time.Duration) {
	old := restartMin
	restartMin = first
	t.Cleanup(func() { restartMin = old })
}

// peerPID asks the peer server for its process id.
func peerPID(t testing.TB, reg *registry.Registry, tool string) int {
	t.Helper()
	pid, err := strconv.Atoi(mustCall(t, reg, tool, nil))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether process pid no longer exists (exited and reaped).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Killing a stdio server in the middle of a call fails that call clearly,
// fails the next calls fast while the server is down, and restarts it.
func TestKillStdioServerMidCall(t *testing.T) {
	setRestart(t, time.Second)
	m, reg := newManager(t, toolboxConfig("tb", named{"peer", peer()}, named{"hello", example("hello")}))
	open(t, m, "tb")
	pid := peerPID(t, reg, "tb__peer__pid")

	started := filepath.Join(t.TempDir(), "started") // the peer creates it when the call is in flight
	args, _ := json.Marshal(map[string]any{"ms": 30000, "started": started})
	done := make(chan *pipeline.Outcome, 1)
	go func() {
		done <- pipeline.New(pipeline.Options{Registry: reg}).Call(context.Background(),
			pipeline.Request{Tool: "tb__peer__sleep", Args: args})
	}()
	testtools.Eventually(t, 10*time.Second, "the call to be in flight", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var o *pipeline.Outcome
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not end when its server died")
	}
	if o.Err == nil || o.Err.Code != errs.Unavailable ||
		o.Err.Message != "Server 'peer' (toolbox 'tb') is unavailable: its process exited (signal: killed) during the call of tool 'sleep'; restarting" {
		t.Fatalf("call in flight: %v", o.Err)
	}
	t.Logf("call in flight: %s", o.Err.Message)

	// While it is down: fail fast, with the cause; the other server answers.
	start := time.Now()
	_, err := call(t, reg, "tb__peer__pid", nil)
	if err == nil || err.Code != errs.Unavailable || !strings.Contains(err.Message, "Server 'peer' (toolbox 'tb') is unavailable: its process exited") {
		t.Errorf("call while down: %v", err)
	} else {
		t.Logf("call while down (%s): %s", time.Since(start), err.Message)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("a call to a down server took %s", d)
	}
	if got := mustCall(t, reg, "tb__hello__greet", map[string]any{"name": "F"}); got != "Hi F" {
		t.Errorf("greet = %q", got)
	}

	// It comes back by itself, as a new process; the dead one was reaped.
	var pid2 int
	testtools.Eventually(t, 10*time.Second, "the killed server to restart", func() bool {
		res, err := call(t, reg, "tb__peer__pid", nil)
		if err != nil {
			return false
		}
		pid2, _ = strconv.Atoi(text(res))
		return true
	})
	if pid2 == pid {
		t.Errorf("same pid %d after a restart", pid)
	}
	testtools.Eventually(t, 5*time.Second, "the killed process to be reaped", func() bool { return gone(pid) })
	if got := mustCall(t, reg, "tb__peer__sleep", map[string]any{"ms": 10}); got != "slept 10 ms" {
		t.Errorf("sleep after restart = %q", got)
	}
	o2 := open(t, m, "tb")
	if len(o2.ServersConnected) != 2 {
		t.Errorf("after restart: connected %v, errors %v", o2.ServersConnected, o2.ServerErrors)
	}
}

// Many calls over every transport, restarts, list_changed refreshes and
// Close leave no goroutine and no process behind; Close stops a pending
// restart.
func TestNoLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last
	setRestart(t, 100*time.Millisecond)

	streamable := mcp.NewServer(&mcp.Implementation{Name: "streamable"}, nil)
	textTool(streamable, "echo", "streamable")
	sse := mcp.NewServer(&mcp.Implementation{Name: "sse"}, nil)
	textTool(sse, "echo", "sse")
	cfg := toolboxConfig("tb",
		named{"hello", example("hello")},
		named{"peer", peer()},
		named{"streamable", urlServer(config.StreamableHTTP, httpPeer(t, config.StreamableHTTP, streamable))},
		named{"sse", urlServer(config.SSE, httpPeer(t, config.SSE, sse))})
	m, reg := newManager(t, cfg)
	o := open(t, m, "tb")
	if len(o.ServersConnected) != 4 {
		t.Fatalf("connected %v, errors %v", o.ServersConnected, o.ServerErrors)
	}

	calls := func(n int) {
		var wg sync.WaitGroup
		p := pipeline.New(pipeline.Options{Registry: reg})
		var mu sync.Mutex
		var failures []string
		for i := range n {
			for _, req := range []pipeline.Request{
				{Tool: "tb__hello__greet", Args: []byte(`{"name":"x"}`)},
				{Tool: "tb__peer__sleep", Args: []byte(`{"ms":1}`)},
				{Tool: "tb__streamable__echo"},
				{Tool: "tb__sse__echo"},
			} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if o := p.Call(context.Background(), req); o.Err != nil || o.MCP.IsError {
						mu.Lock()
						failures = append(failures, req.Tool+strconv.Itoa(i))
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Errorf("%d calls failed: %v", len(failures), failures)
		}
	}
	calls(50)

	var pids []int
	for range 3 {
		pid := peerPID(t, reg, "tb__peer__pid")
		pids = append(pids, pid)
		syscall.Kill(pid, syscall.SIGKILL)
		testtools.Eventually(t, 10*time.Second, "the killed server to restart", func() bool {
			res, err := call(t, reg, "tb__peer__pid", nil)
			return err == nil && text(res) != strconv.Itoa(pid)
		})
	}
	textTool(streamable, "late", "l")
	textTool(sse, "late", "l")
	testtools.Eventually(t, 10*time.Second, "list_changed to be followed", func() bool {
		_, a := reg.Lookup("tb__streamable__late")
		_, b := reg.Lookup("tb__sse__late")
		return a && b
	})
	calls(25)

	// Kill the peer with a long backoff ahead, then Close: the pending
	// restart is abandoned.
	restartMin = time.Hour
	pid := peerPID(t, reg, "tb__peer__pid")
	pids = append(pids, pid)
	syscall.Kill(pid, syscall.SIGKILL)
	testtools.Eventually(t, 5*time.Second, "the peer's death to be noticed", func() bool {
		_, err := call(t, reg, "tb__peer__pid", nil)
		return err != nil
	})
	start := time.Now()
	m.Close()
	t.Logf("Close took %s", time.Since(start))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %s", d)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d is still there", pid)
		}
	}
	if _, err := call(t, reg, "tb__hello__greet", map[string]any{"name": "x"}); err == nil || err.Code != errs.Unavailable ||
		err.Message != "Server 'hello' (toolbox 'tb') is unavailable: the workbench is shutting down" {
		t.Errorf("call after Close: %v", err)
	}
	if _, err := m.Open(context.Background(), "tb"); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("Open after Close: %v", err)
	}
}
