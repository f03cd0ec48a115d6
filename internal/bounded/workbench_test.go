package bounded_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// echoSchema declares seed 000's three context names as the tool's own
// arguments, with definitions unlike Nexus's.
const echoSchema = `{
  "type": "object",
  "properties": {
    "context": {"type": "string", "description": "free-text context of the tool"},
    "sessionId": {"type": "string", "description": "the tool's own session id"},
    "workspaceContext": {"type": "object", "description": "the tool's own workspace", "properties": {"team": {"type": "string"}}},
    "x": {"type": "number"}
  },
  "additionalProperties": false
}`

// echoPeer is a real SDK server over Streamable HTTP with one tool, echo,
// that answers the raw arguments it received (as text, and as structured
// content under "args").
func echoPeer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name: "echo", Title: "Echo", Description: "answers its arguments",
		InputSchema:  json.RawMessage(echoSchema),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"args":{"type":"object"}}}`),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Echo (annotated)"},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
			StructuredContent: map[string]any{"args": args}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// hub is Nexus over cfg: a workbench manager, the pipeline, and SDK clients
// of the bounded and flat surfaces.
type hub struct {
	m              *workbench.Manager
	reg            *registry.Registry
	bounded, flat  *mcp.ClientSession
	boundedSurface *bounded.Surface
}

func newHub(t *testing.T, cfg *config.Config) *hub {
	t.Helper()
	reg := registry.New()
	m := workbench.NewManager(cfg, reg, workbench.Options{})
	t.Cleanup(func() { m.Close() })
	p := pipeline.New(pipeline.Options{Registry: reg})
	s, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}})
	if err != nil {
		t.Fatal(err)
	}
	h := &hub{m: m, reg: reg, boundedSurface: s}
	h.bounded = connectInMemory(t, s.Server())
	h.flat = connectInMemory(t, mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t"})))
	return h
}

func connectInMemory(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectTB(t, srv)
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

func httpServer(name, url string) *config.Server {
	return &config.Server{Name: name, Transport: config.StreamableHTTP, URL: url, Timeout: 10 * time.Second, ConnectTimeout: 10 * time.Second}
}

// oneToolbox is a configuration of toolboxes, each given as name and
// servers (in order).
func toolboxes(tbs ...any) *config.Config {
	cfg := &config.Config{Toolboxes: map[string]*config.Toolbox{}}
	var cur *config.Toolbox
	for _, v := range tbs {
		switch v := v.(type) {
		case string:
			cur = &config.Toolbox{Name: v, Description: "the " + v + " toolbox", Servers: map[string]*config.Server{}}
			cfg.Toolboxes[v] = cur
			cfg.Order = append(cfg.Order, v)
		case *config.Server:
			cur.Servers[v.Name] = v
			cur.Order = append(cur.Order, v.Name)
		}
	}
	return cfg
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, s)
	}
	return v
}

// TestDeclaredContextArgumentsReachTheTool: a downstream tool that declares
// context, sessionId and workspaceContext itself gets them exactly as sent,
// through its flat name and through use_tool, and every listing shows the
// tool's own definitions (SPEC section 4).
func TestDeclaredContextArgumentsReachTheTool(t *testing.T) {
	h := newHub(t, toolboxes("tb", httpServer("srv", echoPeer(t))))
	sent := map[string]any{"context": "free text", "sessionId": "abc", "x": 1.0}
	sentAll := map[string]any{"context": "free text", "sessionId": "abc", "workspaceContext": map[string]any{"team": "blue"}, "x": 1.0}

	// The bounded surface opens the toolbox (the flat surface's own opening
	// is tested in the workbench package).
	res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "tb"})
	if res.IsError {
		t.Fatalf("open_toolbox: %s", body)
	}
	var tool map[string]any
	for _, v := range decode(t, body)["tools"].([]any) {
		if v.(map[string]any)["name"] == "echo" {
			tool = v.(map[string]any)
		}
	}
	if tool == nil {
		t.Fatalf("open_toolbox lists no echo: %s", body)
	}
	wantProps := decode(t, echoSchema)["properties"].(map[string]any)
	props := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	for _, name := range []string{"context", "sessionId", "workspaceContext"} {
		if !reflect.DeepEqual(props[name], wantProps[name]) {
			t.Errorf("open_toolbox lists %s as %v, want the tool's own %v", name, props[name], wantProps[name])
		}
	}

	// Flat surface: listed with the tool's own definitions, called unchanged.
	lt, err := h.flat.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Tool
	for _, lt := range lt.Tools {
		if lt.Name == "tb__srv__echo" {
			listed = lt
		}
	}
	if listed == nil {
		t.Fatal("tools/list lacks tb__srv__echo")
	}
	b, _ := json.Marshal(listed.InputSchema)
	props = decode(t, string(b))["properties"].(map[string]any)
	for _, name := range []string{"context", "sessionId", "workspaceContext"} {
		if !reflect.DeepEqual(props[name], wantProps[name]) {
			t.Errorf("tools/list lists %s as %v, want the tool's own %v", name, props[name], wantProps[name])
		}
	}
	for _, args := range []map[string]any{sent, sentAll} {
		res, got := callTool(t, h.flat, "tb__srv__echo", args)
		if res.IsError || !reflect.DeepEqual(decode(t, got), args) {
			t.Errorf("flat: the tool received %s (isError %v), want %v", got, res.IsError, args)
		}
		// use_tool passes the arguments as given.
		res, got = callTool(t, h.bounded, "use_tool", map[string]any{
			"tool": map[string]any{"toolbox": "tb", "server": "srv", "tool": "echo"}, "arguments": args})
		if res.IsError || !reflect.DeepEqual(decode(t, got), args) {
			t.Errorf("use_tool: the tool received %s (isError %v), want %v", got, res.IsError, args)
		}
	}
}

// TestOpenToolboxErrors: a toolbox none of whose servers connects is an
// error in the Workbench's words; a partial failure is a success with
// server_errors; an unknown toolbox names the available ones.
func TestOpenToolboxErrors(t *testing.T) {
	gone := "http://127.0.0.1:1/mcp" // nothing listens on port 1
	h := newHub(t, toolboxes(
		"down", httpServer("gone", gone), httpServer("also-gone", gone),
		"mixed", httpServer("gone", gone), httpServer("echo", echoPeer(t))))

	res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "down"})
	if want := "Error opening toolbox 'down': Failed to connect to MCP server 'gone': connect: "; !res.IsError || !strings.HasPrefix(body, want) {
		t.Errorf("no server connects: %q (isError %v), want it to start with %q", body, res.IsError, want)
	}

	res, body = callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "mixed"})
	if res.IsError {
		t.Fatalf("partial failure: %s", body)
	}
	ob := decode(t, body)
	if errs, _ := ob["server_errors"].(map[string]any); errs["gone"] == nil || errs["echo"] != nil {
		t.Errorf("partial failure: server_errors %v", ob["server_errors"])
	}
	if tools, _ := ob["tools"].([]any); len(tools) != 1 {
		t.Errorf("partial failure: tools %v", ob["tools"])
	}

	res, body = callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "staging"})
	if want := "Toolbox 'staging' not found. Available toolboxes: nexus, down, mixed"; !res.IsError || body != want {
		t.Errorf("unknown toolbox: %q (isError %v), want %q", body, res.IsError, want)
	}
	// use_tool keeps seed 003's text.
	res, body = callTool(t, h.bounded, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "staging", "server": "s", "tool": "t"}})
	if want := "Toolbox 'staging' not found"; !res.IsError || body != want {
		t.Errorf("use_tool, unknown toolbox: %q, want %q", body, want)
	}
}

// TestOpenToolboxResult: servers_connected is the number of servers
// connected (the Workbench's contract), server_names their names, and each
// tool is the downstream tool as listed plus toolbox and server, servers in
// configuration order.
func TestOpenToolboxResult(t *testing.T) {
	// zeta before alpha: configuration order, not name order.
	h := newHub(t, toolboxes("tb", httpServer("zeta", peer(t, "zeta", "b", "a")), httpServer("alpha", echoPeer(t))))
	res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "tb"})
	if res.IsError {
		t.Fatalf("open_toolbox: %s", body)
	}
	ob := decode(t, body)
	if ob["servers_connected"] != 2.0 {
		t.Errorf("servers_connected = %v, want the number 2", ob["servers_connected"])
	}
	if !reflect.DeepEqual(ob["server_names"], []any{"zeta", "alpha"}) {
		t.Errorf("server_names = %v", ob["server_names"])
	}
	var order []string
	for _, v := range ob["tools"].([]any) {
		tool := v.(map[string]any)
		order = append(order, tool["server"].(string)+"/"+tool["name"].(string))
		if tool["toolbox"] != "tb" {
			t.Errorf("%v: toolbox %v", tool["name"], tool["toolbox"])
		}
	}
	// The SDK server lists its tools sorted by name.
	if want := []string{"zeta/a", "zeta/b", "alpha/echo"}; !reflect.DeepEqual(order, want) {
		t.Errorf("tools in order %v, want %v", order, want)
	}
	echo := ob["tools"].([]any)[2].(map[string]any)
	if echo["title"] != "Echo" || echo["description"] != "answers its arguments" {
		t.Errorf("echo: title %v, description %v", echo["title"], echo["description"])
	}
	if ann, _ := echo["annotations"].(map[string]any); ann["readOnlyHint"] != true || ann["title"] != "Echo (annotated)" {
		t.Errorf("echo: annotations %v", echo["annotations"])
	}
	if !reflect.DeepEqual(echo["outputSchema"], decode(t, `{"type":"object","properties":{"args":{"type":"object"}}}`)) {
		t.Errorf("echo: outputSchema %v", echo["outputSchema"])
	}

	// The built-in toolbox counts its servers too.
	res, body = callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "nexus"})
	if ob := decode(t, body); res.IsError || ob["servers_connected"] != float64(len(ob["server_names"].([]any))) {
		t.Errorf("open_toolbox nexus: %s", body)
	}
}
