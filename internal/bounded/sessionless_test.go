package bounded_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionlessKeepsNothing: a sessionless client of the bounded surface
// (each request on a session of its own) discovers nothing that outlives
// its request: get_tools says so, tools/list stays the meta-tools, the
// surface keeps no state; a name get_tools gave is still callable, resolved
// on each request, and a name it would not give is unknown.
func TestSessionlessKeepsNothing(t *testing.T) {
	reg := registry.New()
	err := reg.Add(registry.Tool{
		ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "notes", Tool: "write"}, Source: registry.Local, Family: registry.Workbench,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler:     func(context.Context, *registry.Call) (any, error) { return "written", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions()})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, testtools.Sessionless())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": []string{"notes_write"}}})
	if err != nil || res.IsError {
		t.Fatalf("get_tools: %v %v", err, res)
	}
	if body := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(body, `"name":"notes_write"`) || !strings.Contains(body, "no session") {
		t.Fatalf("get_tools: %s", body)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"get_tools", "open_toolbox", "search_tools", "use_tool"}) {
		t.Fatalf("tools/list: %v", names)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_write", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "written") {
		t.Fatalf("notes_write by name: %v %v", err, res)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_read", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Fatalf("an unknown tool answered: %v", res.Content)
	}
	if n := s.Sessions(); n != 0 {
		t.Fatalf("the surface keeps %d sessions for a sessionless client", n)
	}
	if n := p.Transports(); n != 0 {
		t.Fatalf("%d transport sessions bound by sessionless calls", n)
	}
}
