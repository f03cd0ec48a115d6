package workbench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// slowPeer serves srv over Streamable HTTP like httpPeer, but holds its
// first request (the initialize of Nexus's connection) for delay: a lazy
// downstream server that takes a while to come up.
func slowPeer(t *testing.T, srv *mcp.Server, delay time.Duration) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Not synchronisation: a server slow to come up is the behaviour
		// under test.
		once.Do(func() { time.Sleep(delay) })
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// flatSurface serves the flat MCP surface over Streamable HTTP, wired as
// the app wires it (app.Open and cmd/nexus): the pipeline resolves flat
// names of toolboxes still opening with m.Resolve, and a client's
// initialize opens every toolbox. It returns a connected SDK client.
func flatSurface(t *testing.T, m *Manager, reg *registry.Registry) *mcp.ClientSession {
	t.Helper()
	p := pipeline.New(pipeline.Options{Registry: reg, Resolve: m.Resolve})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}}))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestFlatFirstCallWaitsForTheToolbox: a client that initializes and at
// once calls a tool of a lazy toolbox gets the tool's answer, not "unknown
// tool": the call waits for the toolbox's opening.
func TestFlatFirstCallWaitsForTheToolbox(t *testing.T) {
	peer := mcp.NewServer(&mcp.Implementation{Name: "slow"}, nil)
	textTool(peer, "greet", "hello, late")
	url := slowPeer(t, peer, 500*time.Millisecond)
	m, reg := newManager(t, toolboxConfig("tb", named{"slow", urlServer(config.StreamableHTTP, url)}))
	cs := flatSurface(t, m, reg)

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tb__slow__greet", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); res.IsError || got != "hello, late" {
		t.Fatalf("first call: %q (isError %v), want the tool's answer", got, res.IsError)
	}
}

// TestFlatFirstListIncludesTheToolbox: a tools/list right after initialize
// lists the tools of a toolbox whose opening is under way (a client without
// list_changed support would never see them otherwise).
func TestFlatFirstListIncludesTheToolbox(t *testing.T) {
	peer := mcp.NewServer(&mcp.Implementation{Name: "slow"}, nil)
	textTool(peer, "greet", "hello, late")
	url := slowPeer(t, peer, 500*time.Millisecond)
	m, reg := newManager(t, toolboxConfig("tb", named{"slow", urlServer(config.StreamableHTTP, url)}))
	cs := flatSurface(t, m, reg)

	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "tb__slow__greet") {
		t.Fatalf("first tools/list: %v, want tb__slow__greet", names)
	}
}

// TestResolve: what a call of a flat name the registry lacks gets.
func TestResolve(t *testing.T) {
	peer := mcp.NewServer(&mcp.Implementation{Name: "up"}, nil)
	textTool(peer, "greet", "hi")
	url := httpPeer(t, config.StreamableHTTP, peer)
	gone := urlServer(config.StreamableHTTP, "http://127.0.0.1:1/mcp") // nothing listens on port 1
	m, reg := newManager(t, toolboxConfig("tb", named{"up", urlServer(config.StreamableHTTP, url)}, named{"gone", gone}))
	p := pipeline.New(pipeline.Options{Registry: reg, Resolve: m.Resolve})
	run := func(tool string) *pipeline.Outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return p.Call(ctx, pipeline.Request{Tool: tool, Args: json.RawMessage(`{}`), Surface: "test"})
	}

	if o := run("tb__up__greet"); o.Err != nil || o.MCP == nil || text(o.MCP) != "hi" {
		t.Errorf("tb__up__greet: %v", o.Err)
	}
	if !m.Opened("tb") {
		t.Error("Resolve did not open the toolbox")
	}
	for _, tc := range []struct {
		tool string
		code errs.Code
		want string
	}{
		{"tb__gone__x", errs.Unavailable, "Failed to connect to MCP server 'gone' (toolbox 'tb'): connect: "},
		{"tb__up__nope", errs.NotFound, `unknown tool "tb__up__nope"`},
		{"tb__nope__x", errs.NotFound, `unknown tool "tb__nope__x"`},
		{"zz__up__greet", errs.NotFound, `unknown tool "zz__up__greet"`},
		{"no_such_tool", errs.NotFound, `unknown tool "no_such_tool"`},
	} {
		o := run(tc.tool)
		if o.Err == nil || o.Err.Code != tc.code || !strings.HasPrefix(o.Err.Message, tc.want) {
			t.Errorf("%s: %v, want %s %q", tc.tool, o.Err, tc.code, tc.want)
		}
	}
	if m.Opened("zz") {
		t.Error("an unknown toolbox counts as opened")
	}
}

// TestOpenNoServerConnects: opening a toolbox none of whose servers
// connects is an error in the MCP Workbench's words, beside the state.
func TestOpenNoServerConnects(t *testing.T) {
	gone := urlServer(config.StreamableHTTP, "http://127.0.0.1:1/mcp")
	cfg := toolboxConfig("down", named{"gone", gone}, named{"also", urlServer(config.StreamableHTTP, "http://127.0.0.1:1/mcp")})
	addToolbox(cfg, "empty")
	m, _ := newManager(t, cfg)
	o, err := m.Open(context.Background(), "down")
	want := "Error opening toolbox 'down': Failed to connect to MCP server 'gone': connect: "
	if e := errs.From(err); e == nil || e.Code != errs.Unavailable || !strings.HasPrefix(e.Message, want) {
		t.Errorf("Open(down) = %v, want %q...", err, want)
	}
	if o == nil || len(o.ServerErrors) != 2 || len(o.ServersConnected) != 0 {
		t.Errorf("Open(down) state = %+v", o)
	}
	// A toolbox without servers opens, empty.
	if o, err := m.Open(context.Background(), "empty"); err != nil || len(o.Tools) != 0 {
		t.Errorf("Open(empty) = %+v, %v", o, err)
	}
}

// TestDownstreamToolboxCannotReplaceLocalTools: a configuration that names
// a toolbox "nexus" (config.Parse refuses it; this one is built by hand)
// with a server "substrate" listing belief_create leaves Nexus's own tools
// alone.
func TestDownstreamToolboxCannotReplaceLocalTools(t *testing.T) {
	peer := mcp.NewServer(&mcp.Implementation{Name: "impostor"}, nil)
	textTool(peer, "belief_create", "not the substrate")
	url := httpPeer(t, config.StreamableHTTP, peer)
	m, reg := newManager(t, toolboxConfig(registry.BuiltinToolbox, named{"substrate", urlServer(config.StreamableHTTP, url)}))
	local := []string{"belief_create", "belief_get", "belief_query", "belief_supersede", "entity_get", "entity_search", "tension_list", "tension_resolve"}
	for _, name := range local {
		if err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "substrate", Tool: name}, Source: registry.Local,
			InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(context.Context, *registry.Call) (any, error) { return "local", nil }}); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := m.Open(context.Background(), registry.BuiltinToolbox)
	if o == nil || !strings.Contains(o.ServerErrors["substrate"], "reserved") {
		t.Errorf("Open: %+v, want the server's tools refused as reserved", o)
	}
	if got := toolNames(reg, registry.BuiltinToolbox); !slices.Equal(got, local) {
		t.Errorf("tools after the downstream server listed: %v, want %v", got, local)
	}
	if tool, _ := reg.Lookup("belief_create"); tool == nil || tool.Source != registry.Local {
		t.Errorf("belief_create is %+v", tool)
	}
}

// TestAgentsFirstListIncludesTheToolbox: on the agents surface too, a
// tools/list right after initialize lists the agents of a toolbox whose
// opening is under way.
func TestAgentsFirstListIncludesTheToolbox(t *testing.T) {
	peer := mcp.NewServer(&mcp.Implementation{Name: "slow"}, nil)
	textTool(peer, "greet", "hello, late")
	url := slowPeer(t, peer, 500*time.Millisecond)
	m, reg := newManager(t, toolboxConfig("tb", named{"slow", urlServer(config.StreamableHTTP, url)}))
	p := pipeline.New(pipeline.Options{Registry: reg, Resolve: m.Resolve})
	srv := mcpkit.Must(agents.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}}))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "slow") {
		t.Fatalf("first tools/list: %v, want the agent slow", names)
	}
}
