package bounded_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// TestDiscoveredToolsFollowReloads: a tool a session discovered is no
// longer listed once a reload removes its server, and is listed again when
// a reload brings the server back; each time the session is told its list
// changed.
func TestDiscoveredToolsFollowReloads(t *testing.T) {
	with := toolboxes("dev", httpServer("peer", echoPeer(t)))
	reg := registry.New()
	m := workbench.NewManager(with, reg, workbench.Options{})
	t.Cleanup(func() { m.Close() })
	p := pipeline.New(pipeline.Options{Registry: reg})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if res, text := callTool(t, cs, "get_tools", map[string]any{"tools": []string{"peer_echo"}}); res.IsError {
		t.Fatalf("get_tools: %s", text)
	}
	listed := func() bool {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == "peer_echo" })
	}
	drain := func() {
		for {
			select {
			case <-changed:
			default:
				return
			}
		}
	}
	if !listed() {
		t.Fatal("the discovered tool is not listed")
	}
	drain()
	m.Reload(ctx, toolboxes("dev"))
	if listed() {
		t.Fatal("the discovered tool of a removed server is still listed")
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed when the discovered tool's server was removed")
	}
	m.Reload(ctx, with)
	m.OpenAll(ctx)
	testtools.EventuallyErr(t, 10*time.Second, "the discovered tool to be listed again", func() error {
		if !listed() {
			return errors.New("the discovered tool is not listed")
		}
		return nil
	})
}
