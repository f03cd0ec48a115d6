package bounded_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// peer starts a real SDK server over Streamable HTTP whose tools answer
// "<server>:<tool>".
func peer(t *testing.T, server string, tools ...string) string {
	s := mcp.NewServer(&mcp.Implementation{Name: server, Version: "1"}, nil)
	for _, name := range tools {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: server + ":" + name}}}, nil
		})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestUseToolEdgeCases covers seed 003's edge cases with real downstream
// servers: tool names with "__", "-" and ".", a server named like its tool,
// and the same tool name on two servers (and in two toolboxes).
func TestUseToolEdgeCases(t *testing.T) {
	srv := func(name, url string) *config.Server {
		return &config.Server{Name: name, Transport: config.StreamableHTTP, URL: url, Timeout: 10 * time.Second, ConnectTimeout: 10 * time.Second}
	}
	fs := peer(t, "filesystem", "read__file", "get-user", "v1.list", "ping")
	db := peer(t, "database", "ping", "database")
	cfg := &config.Config{Order: []string{"dev", "prod"}, Toolboxes: map[string]*config.Toolbox{
		"dev":  {Name: "dev", Order: []string{"filesystem", "database"}, Servers: map[string]*config.Server{"filesystem": srv("filesystem", fs), "database": srv("database", db)}},
		"prod": {Name: "prod", Order: []string{"database"}, Servers: map[string]*config.Server{"database": srv("database", db)}},
	}}
	reg := registry.New()
	m := workbench.NewManager(cfg, reg, workbench.Options{})
	t.Cleanup(func() { m.Close() })
	p := pipeline.New(pipeline.Options{Registry: reg})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// Seed 003: a toolbox is opened before use_tool reaches it.
	for _, tb := range []string{"dev", "prod"} {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": tb}}); err != nil || res.IsError {
			t.Fatalf("open_toolbox %s: %v %v", tb, err, res)
		}
	}
	for _, tc := range []struct{ toolbox, server, tool, want string }{
		{"dev", "filesystem", "read__file", "filesystem:read__file"},
		{"dev", "filesystem", "get-user", "filesystem:get-user"},
		{"dev", "filesystem", "v1.list", "filesystem:v1.list"},
		{"dev", "filesystem", "ping", "filesystem:ping"},
		{"dev", "database", "ping", "database:ping"},
		{"dev", "database", "database", "database:database"},
		{"prod", "database", "ping", "database:ping"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
			"tool": map[string]any{"toolbox": tc.toolbox, "server": tc.server, "tool": tc.tool}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; res.IsError || got != tc.want {
			t.Errorf("%s/%s/%s: %q (isError %v), want %q", tc.toolbox, tc.server, tc.tool, got, res.IsError, tc.want)
		}
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
		"tool": map[string]any{"toolbox": "prod", "server": "filesystem", "tool": "ping"}}})
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Server 'filesystem' not found in toolbox 'prod'" {
		t.Errorf("server of another toolbox: %q", got)
	}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
		"tool": map[string]any{"toolbox": "dev", "server": "filesystem", "tool": "read_file"}}})
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Tool 'read_file' not found in server 'filesystem' (toolbox 'dev')" {
		t.Errorf("near-miss tool name: %q", got)
	}
	// open_toolbox lists original names with their servers.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": "dev"}})
	text := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{`"name":"read__file"`, `"name":"v1.list"`, `"servers_connected":2`, `"server_names":["filesystem","database"]`} {
		if !strings.Contains(text, want) {
			t.Errorf("open_toolbox lacks %s: %s", want, text)
		}
	}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": "staging"}})
	if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != "Toolbox 'staging' not found. Available toolboxes: nexus, dev, prod" {
		t.Errorf("unknown toolbox: %q", got)
	}
}
