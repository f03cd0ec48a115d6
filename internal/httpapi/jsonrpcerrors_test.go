package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/streamable"
)

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMCPErrorsAreJSONRPC: every error the SDK's Streamable HTTP handler
// writes itself (as text/plain, with http.Error) reaches the client as a
// JSON-RPC error response with the same HTTP status, on every MCP route.
func TestMCPErrorsAreJSONRPC(t *testing.T) {
	ts := serve(t, httpapi.Options{})
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	deepArr := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := []struct {
		name, method, body, session string
		status, code                int
		id, msg                     string // msg: a part of the message
	}{
		{"malformed JSON", "POST", `{bad`, "", 400, -32700, "null", "Parse error"},
		{"empty batch", "POST", `[]`, "", 400, -32600, "null", "batches are not supported"},
		{"batch", "POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "", 400, -32600, "null", "batches are not supported"},
		{"null", "POST", `null`, "", 400, -32600, "null", "must be a JSON object"},
		{"JSON-RPC 1.0", "POST", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, "", 400, -32600, "1", `"jsonrpc" is "1.0"; it must be "2.0"`},
		{"object id", "POST", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, "", 400, -32600, "null", `"id" must be a string or an integer`},
		{"fractional id", "POST", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "", 400, -32600, "null", `"id" 1.5 is not an integer`},
		{"neither method nor result", "POST", `{"jsonrpc":"2.0","id":17}`, "", 400, -32600, "17", `a request needs "method"`},
		{"nesting 10,000 deep", "POST", deep, "", 400, -32700, "null", "nested deeper than 512 levels"},
		{"array nesting 10,000 deep", "POST", deepArr, "", 400, -32700, "null", "nested deeper than 512 levels"},
		{"not a request", "POST", `"x"`, "", 400, -32600, "null", "must be a JSON object"},
		{"empty body", "POST", ``, "", 400, -32600, "null", "POST requires a non-empty body"},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":7,"method":"nosuch/method"}`, "", 400, -32601, "7", `JSON RPC not handled: "nosuch/method" unsupported`},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, "nosuch", 404, -32600, `"a"`, "session not found"},
		{"unknown session, GET", "GET", ``, "nosuch", 404, -32600, "null", "session not found"},
		{"PUT", "PUT", `{}`, "", 405, -32600, "null", "Method Not Allowed"},
		{"GET without a session", "GET", ``, "", 400, -32600, "null", "GET requires an Mcp-Session-Id header"},
		{"DELETE without a session", "DELETE", ``, "", 400, -32600, "null", "DELETE requires an Mcp-Session-Id header"},
	}
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				req, err := http.NewRequest(tt.method, ts.URL+path, strings.NewReader(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tt.session != "" {
					req.Header.Set("Mcp-Session-Id", tt.session)
				}
				resp, err := ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json (%s)", ct, b)
				}
				var e rpcError
				if err := json.Unmarshal(b, &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil {
					t.Fatalf("not a JSON-RPC error: %v: %s", err, b)
				}
				if e.Error.Code != tt.code || string(e.ID) != tt.id || !strings.Contains(e.Error.Message, tt.msg) ||
					e.Error.Message != strings.TrimSpace(e.Error.Message) {
					t.Errorf("got id %s code %d %q, want id %s code %d naming %q", e.ID, e.Error.Code, e.Error.Message, tt.id, tt.code, tt.msg)
				}
				if tt.method == "PUT" && resp.Header.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
			})
		}
	}
}

// TestMCPSuccessPassesThrough: responses other than plain-text errors are
// untouched by the JSON-RPC error wrapper: the initialize response, a
// standalone SSE stream (flushed before any event), DELETE's 204.
func TestMCPSuccessPassesThrough(t *testing.T) {
	ts := serve(t, httpapi.Options{})
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		resp, body := do(t, ts, "POST", path, "", nil)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion"`) {
			t.Fatalf("POST %s initialize: %d %q %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+path, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		get, err := ts.Client().Do(req)
		if err != nil {
			cancel()
			t.Fatalf("GET %s stream: %v (not flushed?)", path, err)
		}
		line, err := bufio.NewReader(get.Body).ReadString('\n')
		if get.StatusCode != 200 || get.Header.Get("Content-Type") != "text/event-stream" || err != nil || line != ": ok\n" {
			t.Errorf("GET %s stream: %d %q %q %v", path, get.StatusCode, get.Header.Get("Content-Type"), line, err)
		}
		get.Body.Close()
		cancel()
		del, body := do(t, ts, "DELETE", path, "", map[string]string{"Mcp-Session-Id": sid})
		if del.StatusCode != http.StatusNoContent {
			t.Errorf("DELETE %s: %d %s", path, del.StatusCode, body)
		}
	}
}

// TestJSONRPCErrorsRewritesOnlyPlainTextErrors: the wrapper rewrites a
// plain-text error (status >= 400) and nothing else, and lets
// http.ResponseController reach the connection.
func TestJSONRPCErrorsRewritesOnlyPlainTextErrors(t *testing.T) {
	tests := []struct {
		name     string
		h        http.HandlerFunc
		status   int
		ct, body string
	}{
		{"plain-text error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "session not found", 404) },
			404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"session not found"}}`},
		{"plain-text 5xx", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "failed connection", 500) },
			500, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"failed connection"}}`},
		{"JSON error", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"x":1}`))
		}, 400, "application/json", `{"x":1}`},
		{"plain-text success", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("fine"))
		}, 200, "text/plain", "fine"},
		{"implicit 200, then an error status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("a"))
			w.WriteHeader(404)
			w.Write([]byte("b"))
		}, 200, "text/plain", "ab"},
		{"SSE with ResponseController", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			rc := http.NewResponseController(w)
			if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
				t.Errorf("SetWriteDeadline through the wrapper: %v", err)
			}
			w.Write([]byte(": ok\n\n"))
			if err := rc.Flush(); err != nil {
				t.Errorf("Flush: %v", err)
			}
		}, 200, "text/event-stream", ": ok\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewUnstartedServer(streamable.JSONRPCErrors(tt.h))
			ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the superfluous WriteHeader, as without the wrapper
			ts.Start()
			defer ts.Close()
			resp, err := http.Get(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.ct || string(b) != tt.body {
				t.Errorf("got %d %q %q, want %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.status, tt.ct, tt.body)
			}
		})
	}
}
