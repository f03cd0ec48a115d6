package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/httpapi"
)

// serveBehindFront mounts the proxy in Nexus's HTTP front, as nexus serve
// does.
func serveBehindFront(t *testing.T, p *Proxy) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(httpapi.Handler(httpapi.Options{Loopback: true, Routes: map[string]http.Handler{"/mcp/servers/": p}}))
	t.Cleanup(ts.Close)
	return ts
}

func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// TestProxyErrorsAreRESTShaped: the proxy's own errors (no such toolbox,
// server or path; shutting down) are the REST error shape, not text.
func TestProxyErrorsAreRESTShaped(t *testing.T) {
	p, direct := startProxy(t, testConfig(&config.Server{Transport: config.Stdio, Command: "/nonexistent"}))
	front := serveBehindFront(t, p)
	check := func(url string, status int, code, msg string) {
		t.Helper()
		resp, b := post(t, url, initializeBody, nil)
		var e struct {
			Error struct{ Code, Message, RequestID string } `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" ||
			e.Error.Code != code || !strings.Contains(e.Error.Message, msg) || e.Error.RequestID == "" || e.Error.RequestID != resp.Header.Get("X-Request-Id") {
			t.Errorf("POST %s: %d %q %s, want %d %s naming %q", url, resp.StatusCode, resp.Header.Get("Content-Type"), b, status, code, msg)
		}
	}
	for _, ts := range []*httptest.Server{direct, front} {
		check(ts.URL+"/mcp/servers/nope/s", 404, "NOT_FOUND", `unknown toolbox "nope"`)
		check(ts.URL+"/mcp/servers/tb/nope", 404, "NOT_FOUND", `unknown server "nope" in toolbox "tb"`)
		check(ts.URL+"/mcp/servers/tb", 404, "NOT_FOUND", "/mcp/servers/{toolbox}/{server}")
		check(ts.URL+"/mcp/servers/tb/s/extra/", 404, "NOT_FOUND", "/mcp/servers/{toolbox}/{server}")
	}
	p.Close()
	check(front.URL+"/mcp/servers/tb/s", 503, "SERVICE_UNAVAILABLE", "shutting down")
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestProxyMCPErrorsAreJSONRPC: the errors the SDK's Streamable HTTP handler
// writes itself on a proxied server's endpoint are JSON-RPC errors with
// their HTTP status, as on Nexus's own MCP routes.
func TestProxyMCPErrorsAreJSONRPC(t *testing.T) {
	p, _ := startProxy(t, testConfig(&config.Server{Transport: config.Stdio, Command: "/nonexistent"}))
	ts := serveBehindFront(t, p)
	url := ts.URL + "/mcp/servers/tb/s"
	tests := []struct {
		name, method, body, session string
		status, code                int
		id, msg                     string
	}{
		{"malformed JSON", "POST", `{bad`, "", 400, -32700, "null", "Parse error"},
		{"empty batch", "POST", `[]`, "", 400, -32600, "null", "batches are not supported"},
		{"JSON-RPC 1.0", "POST", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, "", 400, -32600, "1", `it must be "2.0"`},
		{"object id", "POST", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, "", 400, -32600, "null", "must be a string or an integer"},
		{"nesting 10,000 deep", "POST", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "", 400, -32700, "null", "nested deeper than 512 levels"},
		{"empty body", "POST", ``, "", 400, -32600, "null", "non-empty body"},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":7,"method":"nosuch/method"}`, "", 400, -32601, "7", "nosuch/method"},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "nosuch", 404, -32600, "2", "session not found"},
		{"PUT", "PUT", `{}`, "", 405, -32600, "null", "Method Not Allowed"},
		{"GET without a session", "GET", ``, "", 400, -32600, "null", "Mcp-Session-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.session != "" {
				req.Header.Set("Mcp-Session-Id", tt.session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil ||
				resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %s, want %d and a JSON-RPC error", resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.status)
			}
			if e.Error.Code != tt.code || string(e.ID) != tt.id || !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("got id %s code %d %q, want id %s code %d naming %q", e.ID, e.Error.Code, e.Error.Message, tt.id, tt.code, tt.msg)
			}
		})
	}
}
