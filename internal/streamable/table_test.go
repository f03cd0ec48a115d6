package streamable_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/streamable"
)

// whoServer is an MCP server whose tool "who" answers the calling
// session's client name and negotiated protocol version, and sends a log
// message at level info on the way (the session's level decides whether it
// reaches the client).
func whoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{
		//lint:ignore SA1019 logging is served to the protocol versions that have it
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}},
	})
	s.AddTool(&mcp.Tool{Name: "who", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		//lint:ignore SA1019 logging is served to the protocol versions that have it
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "a log line"})
		p := req.Session.InitializeParams()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: p.ClientInfo.Name + " " + p.ProtocolVersion}}}, nil
	})
	return s
}

// post sends body to url on session id ("" for none) and returns the status,
// the session id answered and the body.
func post(t *testing.T, url, id, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestSessionsRestoredFromTheStore: two replicas (two tables over one
// store); a session begun on the first is served by the second as its
// client left it: restored from its stored state through the SDK's
// session API, with the client's initialize parameters, the negotiated
// version and its log level, and no initialize replayed; a DELETE there
// ends it in the store too, and an id the store does not know is 404.
func TestSessionsRestoredFromTheStore(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	kept := mcpsession.New(st, time.Hour)
	replica := func() string {
		srv := whoServer()
		ts := httptest.NewServer(streamable.New(streamable.Options{Store: kept}).Endpoint(srv, nil))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	a, b := replica(), replica()

	const params = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ada","version":"1"}}`
	status, id, body := post(t, a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+params+`}`)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	// What the surfaces' middleware stores when a session initializes
	// (mcpkit), and a log level set on the first replica.
	ctx := context.Background()
	if err := kept.Save(ctx, mcpsession.Session{ID: id, Surface: "test", Params: json.RawMessage(params)}); err != nil {
		t.Fatal(err)
	}
	if err := kept.SetLogLevel(ctx, id, "debug"); err != nil {
		t.Fatal(err)
	}

	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who"}}`
	status, _, body = post(t, b, id, call)
	if status != http.StatusOK || !strings.Contains(body, `"text":"ada 2025-06-18"`) {
		t.Fatalf("a call of the session on the second replica: %d %s", status, body)
	}
	if !strings.Contains(body, "a log line") {
		t.Errorf("no log message at info reached a session restored at level debug: %s", body)
	}
	// The restored session is the second replica's own from now on.
	if _, _, body = post(t, b, id, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}`); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("setLevel: %s", body)
	}
	if _, _, body = post(t, b, id, call); strings.Contains(body, "a log line") {
		t.Errorf("a log message at info after the level was set to error: %s", body)
	}

	req, _ := http.NewRequest(http.MethodDelete, b, nil)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if _, ok, err := kept.Load(ctx, id); err != nil || ok {
		t.Fatalf("the deleted session is still in the store (%v, %v)", ok, err)
	}
	if status, _, body := post(t, b, id, call); status != http.StatusNotFound || !strings.Contains(body, "session not found") {
		t.Fatalf("a call of the deleted session: %d %s", status, body)
	}
	if status, _, body := post(t, b, "nosuch", call); status != http.StatusNotFound || !strings.Contains(body, `"id":2`) {
		t.Fatalf("an unknown session: %d %s", status, body)
	}
}
