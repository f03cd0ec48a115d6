package flat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionBindingsEndWithHTTPSessions: over Streamable HTTP, each MCP
// session keeps its own conversation and workspace, and the pipeline forgets
// a session's binding when the client ends it.
func TestSessionBindingsEndWithHTTPSessions(t *testing.T) {
	reg := registry.New()
	err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "t", Tool: "write"}, Source: registry.Local,
		Family: registry.Workbench, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *registry.Call) (any, error) { return "ok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions()})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t"}))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	ctx := context.Background()
	call := func(cs *mcp.ClientSession, args map[string]any) (session, workspace string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %v", err, res)
		}
		return res.Meta[mcpkit.MetaSession].(string), res.Meta[mcpkit.MetaWorkspace].(string)
	}
	const n = 10
	var clients []*mcp.ClientSession
	seen := map[string]bool{}
	for i := range n {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cs)
		ws := map[bool]string{true: "alpha", false: "beta"}[i%2 == 0]
		first, _ := call(cs, map[string]any{"context": map[string]any{"workspaceId": ws}})
		again, gotWS := call(cs, map[string]any{})
		if again != first || gotWS != ws || seen[first] {
			t.Fatalf("client %d: session %s then %s in %q (want one session of its own in %q)", i, first, again, gotWS, ws)
		}
		seen[first] = true
	}
	if p.Transports() != n {
		t.Fatalf("%d bindings for %d sessions", p.Transports(), n)
	}
	for _, cs := range clients {
		cs.Close()
	}
	// Ended sessions are swept when a new one arrives.
	testtools.EventuallyErr(t, 10*time.Second, "the bindings of the ended sessions to be swept", func() error {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		call(cs, map[string]any{})
		n := p.Transports()
		cs.Close()
		if n != 1 {
			return fmt.Errorf("%d bindings for one live session after %d ended", n, len(clients))
		}
		return nil
	})
}
