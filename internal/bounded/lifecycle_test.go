package bounded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionStateEndsWithTheSession: all sessions share one server, each
// keeps its own discoveries, and when a session ends its state on the
// surface and its binding in the pipeline go with it.
func TestSessionStateEndsWithTheSession(t *testing.T) {
	reg := registry.New()
	err := reg.Add(registry.Tool{
		ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "notes", Tool: "write"}, Source: registry.Local, Family: registry.Workbench,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler:     func(context.Context, *registry.Call) (any, error) { return "ok", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions()})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 20
	var clients []*mcp.ClientSession
	for i := range n {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Server().Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cs)
		if i%2 == 0 { // half of them discover notes_write
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": map[string]any{"notes": []string{"write"}}}})
			if err != nil || res.IsError {
				t.Fatalf("get_tools: %v %v", err, res)
			}
		}
	}
	for i, cs := range clients {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := 4 + 1 - i%2; len(lt.Tools) != want {
			t.Fatalf("session %d lists %d tools, want %d", i, len(lt.Tools), want)
		}
		if i%2 == 1 {
			// A session lists only what it discovered (it could call
			// notes_write by name, as search_tools' hits are called).
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_write", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("session %d: its discovered tool: %v %v", i, err, res)
		}
	}
	if s.Sessions() != n || p.Transports() != n/2 { // only sessions that called a tool are bound
		t.Fatalf("%d session states and %d pipeline bindings for %d sessions", s.Sessions(), p.Transports(), n)
	}
	for _, cs := range clients {
		cs.Close()
	}
	// Ended sessions are swept when a new one arrives: then only the new
	// session's state is left.
	testtools.EventuallyErr(t, 10*time.Second, "the ended sessions to be swept", func() error {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Server().Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		states, bindings := s.Sessions(), p.Transports()
		cs.Close()
		if states != 1 || bindings != 1 {
			return fmt.Errorf("after every session ended and a new one came: %d session states, %d pipeline bindings", states, bindings)
		}
		return nil
	})
}
