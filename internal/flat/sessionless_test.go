package flat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionlessCallsBindNothing: calls of a sessionless client (each
// request on a session of its own, without an id) bind no transport
// session in the pipeline: each call that names no session is a one-off,
// and one that names a session in _meta is in it.
func TestSessionlessCallsBindNothing(t *testing.T) {
	reg := registry.New()
	err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "t", Tool: "write"}, Source: registry.Local,
		Family: registry.Workbench, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *registry.Call) (any, error) { return "ok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions()})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t"}))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, testtools.Sessionless())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != testtools.SessionlessProtocol {
		t.Fatalf("negotiated %s", v)
	}
	call := func(meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{}, Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %v", err, res)
		}
		return res.Meta[mcpkit.MetaSession].(string)
	}
	seen := map[string]bool{}
	for range 5 {
		s := call(nil)
		if seen[s] {
			t.Fatalf("two sessionless calls in conversation %s, want one-offs", s)
		}
		seen[s] = true
	}
	if n := p.Transports(); n != 0 {
		t.Fatalf("%d transport sessions bound by sessionless calls", n)
	}
	for range 3 {
		if s := call(mcp.Meta{mcpkit.MetaSession: "01J00000000000000000000000"}); s != "01J00000000000000000000000" {
			t.Fatalf("a call naming its conversation got %s", s)
		}
	}
	if n := p.Transports(); n != 0 {
		t.Fatalf("%d transport sessions bound by sessionless calls", n)
	}
}
