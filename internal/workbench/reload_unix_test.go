//go:build unix

package workbench

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestReload: a reload keeps an unchanged server's process, ends a removed
// server's process and drops its tools, restarts a changed server (a new
// process), and connects an added server at once once a client has opened
// every toolbox; a client of the flat surface lists the new tools.
func TestReload(t *testing.T) {
	cfg := toolboxConfig("tb", named{"keep", peer()}, named{"gone", peer()}, named{"change", peer()})
	m, reg := newManager(t, cfg)
	cs := flatSurface(t, m, reg) // OpenAll at initialize
	for _, s := range []string{"keep", "gone", "change"} {
		waitForList(t, cs, "tb__"+s+"__pid", true)
	}
	keep := peerPID(t, reg, "tb__keep__pid")
	gonePID := peerPID(t, reg, "tb__gone__pid")
	changed := peerPID(t, reg, "tb__change__pid")

	next := toolboxConfig("tb", named{"keep", peer()}, named{"change", func() *config.Server {
		s := peer()
		s.ToolFilters = []string{"pid"}
		return s
	}()})
	addToolbox(next, "more", named{"hello", example("hello")})
	ch := m.Reload(context.Background(), next)
	if !slices.Equal(ch.Removed, []string{"tb/gone"}) || !slices.Equal(ch.Restarted, []string{"tb/change"}) ||
		!slices.Equal(ch.Added, []string{"more/hello"}) || len(ch.Connecting) != 2 {
		t.Fatalf("changes %+v", ch)
	}
	if !gone(gonePID) {
		t.Errorf("the removed server's process %d still runs after Reload returned", gonePID)
	}
	if !gone(changed) {
		t.Errorf("the changed server's old process %d still runs after Reload returned", changed)
	}
	if _, err := call(t, reg, "tb__gone__pid", nil); err == nil || err.Code != errs.NotFound {
		t.Errorf("a removed server's tool: %v, want NOT_FOUND", err)
	}
	waitForList(t, cs, "more__hello__greet", true)
	waitForList(t, cs, "tb__change__pid", true)
	waitForList(t, cs, "tb__gone__pid", false)
	if pid := peerPID(t, reg, "tb__keep__pid"); pid != keep {
		t.Errorf("the unchanged server was restarted: pid %d, was %d", pid, keep)
	}
	if pid := peerPID(t, reg, "tb__change__pid"); pid == changed {
		t.Errorf("the changed server kept its process %d", pid)
	}
	if _, err := call(t, reg, "tb__change__sleep", map[string]any{"ms": 1}); err == nil {
		t.Errorf("the changed server's filter is not applied: sleep is still served")
	}
	if got := mustCall(t, reg, "more__hello__greet", map[string]any{"name": "reload"}); got == "" {
		t.Errorf("greet answered nothing")
	}
	names := []string{}
	for _, tb := range m.Toolboxes() {
		names = append(names, tb.Name)
	}
	if !slices.Equal(names, []string{"tb", "more"}) {
		t.Errorf("toolboxes after reload: %v", names)
	}

	// Back to nothing: every process ends.
	hello := m.Servers()
	m.Reload(context.Background(), &config.Config{})
	if len(reg.List()) != 0 || len(m.Servers()) != 0 {
		t.Errorf("after reloading an empty configuration: %d tools, servers %v (were %v)", len(reg.List()), m.Servers(), hello)
	}
}

// TestReloadLazy: a server added to a toolbox nobody opened is not
// started by the reload; it starts when its toolbox is opened.
func TestReloadLazy(t *testing.T) {
	m, reg := newManager(t, toolboxConfig("tb", named{"a", example("hello")}))
	ch := m.Reload(context.Background(), toolboxConfig("tb", named{"a", example("hello")}, named{"b", example("hello")}))
	if len(ch.Connecting) != 0 || !slices.Equal(ch.Added, []string{"tb/b"}) {
		t.Fatalf("changes %+v", ch)
	}
	for _, s := range m.Servers() {
		if s.Connected {
			t.Errorf("%s/%s connected before its toolbox was opened", s.Toolbox, s.Server)
		}
	}
	o := open(t, m, "tb")
	if len(o.ServersConnected) != 2 || len(reg.List()) != 2 {
		t.Errorf("opened %+v, registry %d tools", o, len(reg.List()))
	}
}

// waitForList waits until the flat surface lists (or no longer lists) name.
func waitForList(t *testing.T, cs *mcp.ClientSession, name string, want bool) {
	t.Helper()
	testtools.Eventually(t, 10*time.Second, "the flat surface's listing of "+name, func() bool {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == name }) == want
	})
}

// TestReloadWhileInUse: reloads back and forth while clients open
// toolboxes, resolve and call tools and read the servers' states: every
// call answers or fails cleanly, and the last configuration is the one
// served (run with -race).
func TestReloadWhileInUse(t *testing.T) {
	a := toolboxConfig("tb", named{"hello", example("hello")})
	b := toolboxConfig("tb", named{"hello", example("hello")}, named{"peer", peer()})
	m, reg := newManager(t, a)
	p := pipeline.New(pipeline.Options{Registry: reg, Resolve: m.Resolve})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				m.Open(ctx, "tb")
				p.Call(ctx, pipeline.Request{Tool: "tb__hello__greet", Args: []byte(`{"name":"x"}`)})
				p.Call(ctx, pipeline.Request{Tool: "tb__peer__pid"})
				m.Servers()
				m.Toolboxes()
				cancel()
			}
		})
	}
	for i := range 6 {
		next := a
		if i%2 == 0 {
			next = b
		}
		m.Reload(context.Background(), next)
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	open(t, m, "tb")
	if got := toolNames(reg, "tb"); !slices.Equal(got, []string{"tb__hello__greet"}) {
		t.Errorf("after the last reload: %v", got)
	}
}
