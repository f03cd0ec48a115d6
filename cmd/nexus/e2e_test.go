package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

var localTools = []string{"belief_create", "belief_create_batch", "belief_get", "belief_query", "belief_supersede", "entity_get", "entity_search", "tension_list", "tension_resolve",
	"session_start", "session_end", "session_get", "session_list", "session_rename", "session_delete", "session_find_by_room", "exchange_add", "exchange_list", "exchange_search",
	"pattern_record", "pattern_reinforce", "pattern_list", "pattern_search", "insight_extract", "insight_list",
	"tn_session_start", "tn_session_ask", "tn_session_end", "tn_session_history", "tn_session_resume", "tn_session_export",
	"tn_session_sync_status", "tn_session_cancel_pending",
	"tn_course_search", "tn_course_get", "tn_course_prereqs", "tn_course_requisites", "tn_course_outline", "tn_course_instructor", "tn_course_schedule", "tn_course_similar", "tn_course_institutions", "tn_course_equivalent_elsewhere", "tn_course_materials", "tn_course_grades", "tn_course_section_get", "tn_course_section_list",
	"tn_transfer_resolve", "tn_transfer_search", "tn_transfer_details",
	"tn_user_quota", "tn_user_subscription", "tn_user_preferences_get", "tn_user_preferences_set",
	"tn_user_byok_add", "tn_user_byok_list", "tn_user_byok_delete"}

// exercise drives a connected session through a create, a query and an error.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		if props["context"] == nil || props["workspaceContext"] == nil {
			t.Errorf("%s: listed schema lacks context/workspaceContext", tool.Name)
		}
	}
	for _, want := range localTools {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (has %v)", want, names)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_create", Arguments: map[string]any{
		"content": "Langara CPSC 1150 transfers to SFU as CMPT 120", "domain_path": []string{"transfer", "sfu"},
		"entities": []map[string]any{{"name": "SFU", "type": "organization"}},
		"context":  map[string]any{"workspaceId": "e2e"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("belief_create: %v %v", err, res)
	}
	sc := res.StructuredContent.(map[string]any)
	if sc["success"] != true || sc["belief"].(map[string]any)["workspace"] != "e2e" {
		t.Fatalf("belief_create structured content: %v", sc)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || fromText["success"] != true {
		t.Fatalf("text content is not the JSON result: %s", text)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_query", Arguments: map[string]any{"query": "CPSC 1150 transfer", "context": map[string]any{"workspaceId": "e2e"}}})
	if err != nil || res.IsError {
		t.Fatalf("belief_query: %v %v", err, res)
	}
	if n := len(res.StructuredContent.(map[string]any)["beliefs"].([]any)); n != 1 {
		t.Fatalf("belief_query found %d", n)
	}

	// Calls of one MCP session that name no session share one conversation,
	// returned in _meta and readable through the vkb.
	sid, _ := res.Meta["io.nexus/sessionId"].(string)
	res2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "session_get", Arguments: map[string]any{"session_id": sid}})
	if err != nil || res2.IsError || sid == "" || res2.Meta["io.nexus/sessionId"] != sid {
		t.Fatalf("transport session: %q %v %v", sid, err, res2)
	}
	res2, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "exchange_add", Arguments: map[string]any{"session_id": sid, "role": "user", "content": "hello"}})
	if err != nil || res2.IsError || res2.StructuredContent.(map[string]any)["exchange"].(map[string]any)["seq"] != 1.0 {
		t.Fatalf("exchange_add: %v %v", err, res2)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_get", Arguments: map[string]any{"belief_id": 42}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatal("wrong type accepted")
	}
	body := res.StructuredContent.(map[string]any)
	if body["success"] != false || body["error_code"] != "BAD_REQUEST" || !strings.Contains(body["error_message"].(string), "belief_id") {
		t.Fatalf("error body: %v", body)
	}
}

func TestStdioWithSDKClient(t *testing.T) {
	cmd := exec.Command(binary, "stdio", "--data-dir", t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	exercise(t, cs)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if strings.Contains(stderr.String(), `"jsonrpc"`) {
		t.Error("protocol traffic on stderr")
	}
}

func TestHTTPWithSDKClient(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testHTTP(t, startServe(t)) })
	t.Run("postgres", func(t *testing.T) { testHTTP(t, startServe(t, "--db", storetest.PostgresURL(t))) })
}

func testHTTP(t *testing.T, base string) {
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// With a session: its calls that name no session share one
	// conversation (sessionless clients: TestSessionlessOverHTTP).
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.InitializeResult().Instructions == "" {
		t.Error("no instructions at initialize")
	}
	exercise(t, cs)
}

func TestHTTPRejectsRebindingAndBadRequests(t *testing.T) {
	base := startServe(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	tests := []struct {
		name       string
		host       string
		origin     string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"foreign host", "evil.example.com", "", init, http.StatusForbidden, "invalid Host"},
		{"foreign origin", "", "https://evil.example.com", init, http.StatusForbidden, "invalid Origin"},
		{"localhost origin", "", "http://localhost:3000", init, http.StatusOK, "protocolVersion"},
		{"malformed json-rpc", "", "", `{"jsonrpc":"2.0","id":1,"method":`, http.StatusBadRequest, ""},
		{"oversized", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, http.StatusRequestEntityTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantBody) {
				t.Fatalf("status %d body %q, want %d containing %q", resp.StatusCode, b, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runNexus(t, "", "tools", "list", "--json", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("tools list: %d %s", code, errOut)
	}
	var tools []map[string]any
	if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != len(localTools) { // the flat surface's tools, not the bounded meta-tools
		t.Fatalf("tools list --json: %v %s", err, out)
	}

	// The demo knowledge base is loaded into a new database.
	out, _, code = runNexus(t, "", "call", "belief_query", "--args", `{"query":"default HTTP address"}`, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "7777") {
		t.Fatalf("demo query: %d %s", code, out)
	}
	out, _, code = runNexus(t, "", "call", "tension_list", "--args", `{}`, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "8080") {
		t.Fatalf("demo tension: %d %s", code, out)
	}

	out, _, code = runNexus(t, "", "call", "belief_get", "--args", `{"belief_id":"nope"}`, "--data-dir", dir)
	if code == 0 || !strings.Contains(out, `"error_code": "NOT_FOUND"`) {
		t.Fatalf("tool error must exit non-zero with the error body: %d %s", code, out)
	}
	out, _, code = runNexus(t, `{"query":"SQLite"}`, "call", "belief_query", "--args", "-", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "SQLite") {
		t.Fatalf("--args - : %d %s", code, out)
	}
	for _, args := range [][]string{{"serve", "--help"}, {"stdio", "--help"}, {"call", "--help"}, {"tools", "--help"}, {"--help"}} {
		out, errOut, code := runNexus(t, "", args...)
		if code != 0 || !strings.Contains(out+errOut, "Usage") {
			t.Errorf("%v: exit %d, output %q", args, code, out+errOut)
		}
	}
	if _, errOut, code := runNexus(t, "", "bogus"); code != 2 || !strings.Contains(errOut, `unknown command "bogus"`) {
		t.Errorf("unknown command: %d %s", code, errOut)
	}
}

func TestStdioRejectsOversizedMessages(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", MaxStdioMessage+1) + "\"}}\n"
	_, errOut, code := runNexus(t, big, "stdio", "--data-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "longer than the 4194304-byte limit") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}
