//go:build unix

package workbench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/config"
)

// TestReloadWhileOpening: a client opens the toolbox again and again while
// Reload stops a changed server's old process (it takes a second to exit):
// the new server, started by the client, must not register its tools
// before the old one's leave the registry, which would take the new ones
// with them (it did before server.after).
func TestReloadWhileOpening(t *testing.T) {
	exe, _ := os.Executable()
	slow := &config.Server{Transport: config.Stdio, Command: "/bin/sh",
		Args: []string{"-c", `"$0" -test.run='^$'; sleep 1`, exe}, Env: map[string]string{peerEnv: "1"}}
	m, reg := newManager(t, toolboxConfig("tb", named{"change", slow}))
	open(t, m, "tb")
	if got := toolNames(reg, "tb"); len(got) == 0 {
		t.Fatalf("no tools at start")
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m.Open(ctx, "tb")
			cancel()
		}
	}()
	start := time.Now()
	m.Reload(context.Background(), toolboxConfig("tb", named{"change", peer()}))
	t.Logf("reload took %s", time.Since(start))
	close(stop)
	<-done
	time.Sleep(500 * time.Millisecond)
	t.Logf("servers %+v", m.Servers())
	if got := toolNames(reg, "tb"); len(got) == 0 {
		t.Errorf("after the reload the new server is connected but the registry has none of its tools: %v", got)
	}
}
