package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// connect opens an SDK client session to a Nexus HTTP endpoint, with an
// MCP session (initialize, Mcp-Session-Id: protocol 2025-11-25); changed
// receives tools/list_changed notifications.
func connect(t *testing.T, url string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	return connectWith(t, url, testtools.WithSession())
}

// connectWith is [connect] with the client's session options (such as
// testtools.Sessionless()).
func connectWith(t *testing.T, url string, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestAgentsSurface(t *testing.T) {
	base := startServe(t)
	cs, _ := connect(t, base+"/mcp/agents")
	names := toolNames(t, cs)
	if !slices.Equal(names, []string{"substrate", "tutor", "vkb"}) {
		t.Fatalf("agents: %v", names)
	}
	lt, _ := cs.ListTools(context.Background(), nil)
	schema := lt.Tools[0].InputSchema.(map[string]any)
	if req := schema["required"].([]any); len(req) != 2 || req[0] != "mode" || req[1] != "sessionId" {
		t.Fatalf("agent schema must require mode and sessionId: %v", schema)
	}
	if modes := schema["properties"].(map[string]any)["mode"].(map[string]any)["enum"].([]any); len(modes) != 9 {
		t.Fatalf("substrate modes: %v", modes)
	}

	res := call(t, cs, "substrate", map[string]any{"mode": "belief_create", "sessionId": "agent-s1", "content": "Agents split legacy names on the first underscore",
		"context": map[string]any{"sessionId": "agent-s1", "workspaceId": "agents"}})
	if res.IsError || res.StructuredContent.(map[string]any)["belief"].(map[string]any)["workspace"] != "agents" || res.Meta["io.nexus/sessionId"] != "agent-s1" {
		t.Fatalf("agent call: %s %v", text(res), res.Meta)
	}
	// Legacy agent_<suffix> names are split on the first underscore.
	res = call(t, cs, "substrate_my_vault", map[string]any{"mode": "belief_query", "sessionId": "agent-s1", "query": "legacy names",
		"context": map[string]any{"sessionId": "agent-s1"}})
	if res.IsError || len(res.StructuredContent.(map[string]any)["beliefs"].([]any)) != 1 {
		t.Fatalf("legacy name: %s", text(res))
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"sessionId": "x"}, "mode: is required"},
		{map[string]any{"mode": 5, "sessionId": "x"}, "mode: must be a string"},
		{map[string]any{"mode": "nope", "sessionId": "x"}, `unknown mode "nope" for agent "substrate"`},
		{map[string]any{"mode": "belief_get", "sessionId": "x"}, `missing properties`},
	} {
		// Every refusal is the pipeline's: traced, in the agent's family
		// (valence), with the call's _meta.
		res := call(t, cs, "substrate", tc.args)
		var body struct {
			Success bool   `json:"success"`
			Code    string `json:"error_code"`
			Message string `json:"error_message"`
		}
		if err := json.Unmarshal([]byte(text(res)), &body); err != nil || !res.IsError || body.Code != "BAD_REQUEST" ||
			!strings.Contains(body.Message, tc.want) || res.Meta["io.nexus/requestId"] == nil {
			t.Errorf("%v: %s (meta %v)", tc.args, text(res), res.Meta)
		}
	}
}

func TestBoundedSurface(t *testing.T) {
	base := startServe(t)
	cs, changed := connect(t, base+"/mcp/bounded")
	if names := toolNames(t, cs); !slices.Equal(names, []string{"get_tools", "open_toolbox", "search_tools", "use_tool"}) {
		t.Fatalf("bounded tools: %v", names)
	}
	if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "- nexus:") {
		t.Fatalf("instructions must list the toolboxes: %q", instr)
	}

	ov := call(t, cs, "get_tools", map[string]any{}).StructuredContent.(map[string]any)
	if agents := ov["agents"].([]any); len(agents) != 3 || agents[0].(map[string]any)["name"] != "substrate" {
		t.Fatalf("overview: %v", ov)
	}

	res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_query", "belief_create"}}})
	got := res.StructuredContent.(map[string]any)["tools"].([]any)
	if len(got) != 2 || got[0].(map[string]any)["name"] != "substrate_belief_query" {
		t.Fatalf("get_tools schemas: %s", text(res))
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after discovery")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "substrate_belief_query") || !slices.Contains(names, "substrate_belief_create") {
		t.Fatalf("discovered tools not listed: %v", names)
	}
	res = call(t, cs, "substrate_belief_create", map[string]any{"content": "Bounded discovery adds tools per session"})
	if res.IsError {
		t.Fatalf("discovered tool call: %s", text(res))
	}
	// Another session does not see this session's discoveries.
	other, _ := connect(t, base+"/mcp/bounded")
	if names := toolNames(t, other); len(names) != 4 {
		t.Fatalf("discoveries leaked to another session: %v", names)
	}

	res = call(t, cs, "open_toolbox", map[string]any{"toolbox": "nexus"})
	ob := res.StructuredContent.(map[string]any)
	if ob["toolbox"] != "nexus" || len(ob["tools"].([]any)) != len(localTools) || ob["servers_connected"] != 3.0 || !slices.Contains(ob["server_names"].([]any), any("vkb")) {
		t.Fatalf("open_toolbox: %s", text(res))
	}

	res = call(t, cs, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "nexus", "server": "substrate", "tool": "belief_query"}, "arguments": map[string]any{"query": "bounded discovery"}})
	if res.IsError || len(res.StructuredContent.(map[string]any)["beliefs"].([]any)) != 1 {
		t.Fatalf("use_tool: %s", text(res))
	}
	res = call(t, cs, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "nexus", "server": "substrate", "name": "belief_get"}, "arguments": map[string]any{"belief_id": "nope"}})
	var body map[string]any
	json.Unmarshal([]byte(text(res)), &body)
	if !res.IsError || body["error_code"] != "NOT_FOUND" {
		t.Fatalf("use_tool must return the tool's own error unmodified: %s", text(res))
	}
}

// TestUseToolErrorTexts checks seed 003's validation order and error texts
// to the letter.
func TestUseToolErrorTexts(t *testing.T) {
	base := startServe(t)
	cs, _ := connect(t, base+"/mcp/bounded")
	id := func(toolbox, server, tool string) map[string]any {
		return map[string]any{"toolbox": toolbox, "server": server, "tool": tool}
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"toolbox not found", map[string]any{"tool": id("production", "x", "y")}, "Toolbox 'production' not found"},
		{"server not found", map[string]any{"tool": id("nexus", "database", "x")}, "Server 'database' not found in toolbox 'nexus'"},
		{"tool not found", map[string]any{"tool": id("nexus", "substrate", "delete_all")}, "Tool 'delete_all' not found in server 'substrate' (toolbox 'nexus')"},
		{"empty toolbox", map[string]any{"tool": id("", "substrate", "x")}, "Invalid tool identifier: toolbox cannot be empty"},
		{"empty server", map[string]any{"tool": id("nexus", "", "x")}, "Invalid tool identifier: server cannot be empty"},
		{"empty tool", map[string]any{"tool": id("nexus", "substrate", "")}, "Invalid tool identifier: tool cannot be empty"},
		{"missing server", map[string]any{"tool": map[string]any{"toolbox": "nexus", "tool": "x"}}, "Invalid tool identifier: server cannot be empty"},
		{"extra root field", map[string]any{"tool": id("nexus", "substrate", "belief_query"), "extra_field": 1}, "Invalid parameters: Unrecognized key: 'extra_field'"},
		{"extra tool field", map[string]any{"tool": map[string]any{"toolbox": "nexus", "server": "substrate", "tool": "belief_query", "extra_field": 1}}, "Invalid parameters: Unrecognized key: 'extra_field'"},
		{"tool and name", map[string]any{"tool": map[string]any{"toolbox": "nexus", "server": "substrate", "tool": "a", "name": "b"}}, "Invalid tool identifier: give either tool or name, not both"},
		{"missing tool", map[string]any{}, "Invalid parameters: Required: 'tool'"},
		{"arguments not object", map[string]any{"tool": id("nexus", "substrate", "belief_query"), "arguments": []int{1}}, "Invalid parameters: 'arguments' must be an object"},
		// Validation order: the shape first, then toolbox, server, tool.
		{"shape before toolbox", map[string]any{"tool": id("production", "", "x")}, "Invalid tool identifier: server cannot be empty"},
		{"toolbox before server", map[string]any{"tool": id("production", "database", "x")}, "Toolbox 'production' not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, "use_tool", tt.args)
			if !res.IsError || text(res) != tt.want {
				t.Fatalf("got %q (isError %v), want %q", text(res), res.IsError, tt.want)
			}
		})
	}
}

func TestStdioSurfacesFlag(t *testing.T) {
	for surface, want := range map[string]string{"agents": "substrate", "bounded": "use_tool", "flat": "belief_query"} {
		cmd := exec.Command(binary, "stdio", "--surface", surface, "--data-dir", t.TempDir())
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if names := toolNames(t, cs); !slices.Contains(names, want) {
			t.Errorf("--surface %s lists %v", surface, names)
		}
		cs.Close()
	}
	if _, errOut, code := runNexus(t, "", "stdio", "--surface", "wide"); code == 0 || !strings.Contains(errOut, `"wide" is not one of flat, agents, bounded`) {
		t.Errorf("bad --surface: %d %s", code, errOut)
	}
}
