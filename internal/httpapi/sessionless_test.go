package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/sdklog"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/users"
)

// whoServer is an MCP server with one tool, "who", answering the user the
// call acts as and whether its session has an id; log (nil: none) receives
// the SDK's logs as a surface's server sends them (sdklog).
func whoServer(log *slog.Logger) *mcp.Server {
	var sl *slog.Logger
	if log != nil {
		sl = sdklog.New(log)
	}
	srv := testServer(sl)
	srv.AddTool(&mcp.Tool{Name: "who", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := "-"
		if u, ok := users.FromContext(ctx); ok {
			name = u.Name
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " session=" + req.Session.ID()}}}, nil
	})
	return srv
}

// bearer sends a bearer token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestSessionlessClients: on every MCP endpoint, an SDK client of the
// sessionless protocol (2026-07-28) negotiates it (server/discover), calls
// tools without a session and as its token's user, and counts against no
// session cap; a client of the session protocol on the same endpoint still
// gets a session; without a token the sessionless client is refused.
func TestSessionlessClients(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	srvs := map[string]*mcp.Server{"/mcp": whoServer(nil), "/mcp/agents": whoServer(nil), "/mcp/bounded": whoServer(nil)}
	var live func() int
	ts := serve(t, httpapi.Options{MCP: srvs["/mcp"], Agents: srvs["/mcp/agents"], Bounded: srvs["/mcp/bounded"],
		Auth: tokens{"good": alice}, AllowedHosts: []string{"127.0.0.1"},
		Metrics: func(l func() int, _ int) http.Handler { live = l; return http.NotFoundHandler() }})
	ctx := context.Background()
	connect := func(path string, opts *mcp.ClientSessionOptions, token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearer(token)}
		return mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + path, HTTPClient: hc}, opts)
	}
	call := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	for path, srv := range srvs {
		cs, err := connect(path, testtools.Sessionless(), "good")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != testtools.SessionlessProtocol || cs.ID() != "" {
			t.Fatalf("%s: negotiated %q with session %q, want the sessionless protocol", path, v, cs.ID())
		}
		for range 3 {
			if got := call(cs); got != "alice session=" {
				t.Fatalf("%s: sessionless call answered %q, want alice without a session", path, got)
			}
		}
		if n := live(); n != 0 {
			t.Fatalf("%s: %d sessions counted for a sessionless client", path, n)
		}
		cs.Close()
		// Each request's session ends as its handler returns, which may
		// be just after the client has read the answer.
		testtools.EventuallyErr(t, 5*time.Second, path+": sessionless requests to leave no session behind", func() error {
			for range srv.Sessions() {
				return errors.New("a sessionless request left a session behind")
			}
			return nil
		})

		// A session-id client of the same endpoint is unaffected.
		ss, err := connect(path, testtools.WithSession(), "good")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v := ss.InitializeResult().ProtocolVersion; v != testtools.SessionProtocol || ss.ID() == "" {
			t.Fatalf("%s: negotiated %q with session %q, want a session", path, v, ss.ID())
		}
		if got := call(ss); got != "alice session="+ss.ID() {
			t.Fatalf("%s: session call answered %q", path, got)
		}
		if n := live(); n != 1 {
			t.Fatalf("%s: %d sessions counted, want the session client's", path, n)
		}
		ss.Close()
		testtools.Eventually(t, 5*time.Second, "the closed session to be forgotten", func() bool { return live() == 0 })

		// No token: refused like any request, sessionless or not.
		if _, err := connect(path, testtools.Sessionless(), ""); err == nil {
			t.Fatalf("%s: a sessionless client without a token connected", path)
		}
		resp, body := post(t, ts, path, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"who","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28"})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHORIZED") {
			t.Fatalf("%s: sessionless call without a token: %s %s", path, resp.Status, body)
		}
	}
}

// post sends one JSON-RPC message as a Streamable HTTP POST with headers.
func post(t *testing.T, ts *httptest.Server, path, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestSessionlessRequests: what the front does with requests without a
// session, on the wire: a sessionless request is served (with the new
// protocol's _meta in its result), bad input gets a JSON-RPC error naming
// the problem, and a legacy POST without Mcp-Session-Id other than
// initialize is served as a one-off.
func TestSessionlessRequests(t *testing.T) {
	logs := &logtest.Capture{}
	ts := serve(t, httpapi.Options{MCP: whoServer(slog.New(logs)), Logger: slog.New(logs)})
	defer func() { checkLogs(t, logs, slog.LevelWarn) }()
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"who","arguments":{}%s}}`
	meta := func(v string) string {
		return fmt.Sprintf(`,"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`, v)
	}
	// The headers of a tools/call of "who" in the new protocol (SEP-2575:
	// the method and the name are in headers too).
	newCall := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "who"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range h {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name, body string
		hdr        map[string]string
		status     int
		want       string // in the body
	}{
		{"sessionless call", fmt.Sprintf(call, meta("2026-07-28")), newCall, 200, `"text":"local session="`},
		{"server/discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}, 200, `"2026-07-28"`},
		{"no Mcp-Method header", fmt.Sprintf(call, meta("2026-07-28")), map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 400, `missing required Mcp-Method header`},
		{"new protocol, no _meta", fmt.Sprintf(call, ""), newCall, 400, `missing or invalid _meta field \"io.modelcontextprotocol/protocolVersion\"`},
		{"header and _meta differ", fmt.Sprintf(call, meta("2025-11-25")), newCall, 400, `does not match`},
		{"_meta without the header", fmt.Sprintf(call, meta("2026-07-28")), nil, 400, `header is required`},
		{"unknown new version", fmt.Sprintf(call, meta("2099-01-01")), with(newCall, "Mcp-Protocol-Version", "2099-01-01"), 400, `"requested":"2099-01-01"`},
		{"unsupported old version", fmt.Sprintf(call, ""), map[string]string{"Mcp-Protocol-Version": "2020-01-01"}, 400, `Unsupported protocol version`},
		{"legacy call without a session", fmt.Sprintf(call, ""), map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, 200, `"text":"local session="`},
		{"legacy ping without a session", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil, 200, `"result":{}`},
		{"with a session of the new protocol", fmt.Sprintf(call, meta("2026-07-28")), with(newCall, "Mcp-Session-Id", "nosuch"), 200, `"text":"local session="`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, ts, "/mcp", tt.body, tt.hdr)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("%s %s, want %d with %s", resp.Status, body, tt.status, tt.want)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("a session id for a request without a session: %s", resp.Header.Get("Mcp-Session-Id"))
			}
			if resp.StatusCode >= 400 {
				var msg struct {
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if json.Unmarshal([]byte(body), &msg) != nil || msg.Error.Code == 0 {
					t.Fatalf("not a JSON-RPC error: %s", body)
				}
			}
		})
	}
	// Sessionless is POST only: GET and DELETE of the new protocol are 405,
	// of the old one without a session still 400.
	for _, m := range []string{"GET", "DELETE"} {
		if resp, body := do(t, ts, m, "/mcp", "", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Accept": "text/event-stream"}); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("%s of the sessionless protocol: %s %s", m, resp.Status, body)
		}
		if resp, body := do(t, ts, m, "/mcp", "", map[string]string{"Accept": "text/event-stream"}); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s without a session: %s %s", m, resp.Status, body)
		}
	}
}

// fastWho is a fast path (streamable.ToolCalls) for whoServer's tool that
// answers "fast" (a session's call) or "fast sessionless", so that a test
// sees which way a call went.
type fastWho struct{}

var _ streamable.ToolCalls = fastWho{}

func (fastWho) Serves(name string) bool { return name == "who" }

func (fastWho) Call(context.Context, *mcp.ServerSession, string, json.RawMessage, mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"fast"}]}`), nil
}

func (fastWho) CallSessionless(context.Context, string, json.RawMessage, mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"fast sessionless"}]}`), nil
}

func (fastWho) Relays(string) bool { return false }

func (fastWho) ServesSessionless(name string) bool { return name == "who" }

func (fastWho) Implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "who", Version: "1"}
}

// TestFastPathServesSessionlessCalls: the flat surface's fast path serves
// the tools/call of sessions and of sessionless clients (the SDK's client
// by default), the latter's result marked complete and naming the server
// as the SDK's stateless handler's; a one-off POST of an earlier protocol
// without a session, and a sessionless call whose _meta the fast path
// leaves to the SDK (a log level), are the stateless handler's.
func TestFastPathServesSessionlessCalls(t *testing.T) {
	ts := serve(t, httpapi.Options{MCP: whoServer(nil), MCPCalls: fastWho{}})
	ctx := context.Background()
	for _, tc := range []struct {
		opts *mcp.ClientSessionOptions
		want string
	}{{testtools.WithSession(), "fast"}, {testtools.Sessionless(), "fast sessionless"}} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != tc.want {
				t.Fatalf("protocol %s: the call answered %q, want %q", tc.opts.ProtocolVersion, got, tc.want)
			}
			if info, _ := res.Meta[mcp.MetaKeyServerInfo].(map[string]any); tc.want == "fast sessionless" && info["name"] != "who" {
				t.Fatalf("a sessionless result's _meta %v does not name the server", res.Meta)
			}
		}
		cs.Close()
	}
	// A one-off POST of an earlier version without a session is the SDK's too.
	resp, body := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"who","arguments":{}}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "local session=") {
		t.Fatalf("one-off call: %s %s", resp.Status, body)
	}
	// The raw answer of the fast path, and a log level left to the SDK.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}%s}`
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "who"}
	resp, body = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"who","arguments":{},`+fmt.Sprintf(meta, "")+`}}`, hdr)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" ||
		!strings.Contains(body, `"resultType":"complete"`) || !strings.Contains(body, `"io.modelcontextprotocol/serverInfo":{"name":"who","version":"1"}`) ||
		!strings.Contains(body, "fast sessionless") {
		t.Fatalf("sessionless call: %s %v %s", resp.Status, resp.Header, body)
	}
	resp, body = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"who","arguments":{},`+fmt.Sprintf(meta, `,"io.modelcontextprotocol/logLevel":"debug"`)+`}}`, hdr)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "fast") || !strings.Contains(body, "local session=") {
		t.Fatalf("sessionless call with a log level: %s %s", resp.Status, body)
	}
	// What the SDK refuses stays refused: the name not repeated in its
	// header, no client capabilities.
	delete(hdr, "Mcp-Name")
	resp, body = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"who","arguments":{},`+fmt.Sprintf(meta, "")+`}}`, hdr)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "fast") || !strings.Contains(body, "Mcp-Name") {
		t.Fatalf("sessionless call without Mcp-Name: %s %s", resp.Status, body)
	}
	hdr["Mcp-Name"] = "who"
	resp, body = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"who","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, hdr)
	if strings.Contains(body, "fast") || !strings.Contains(body, "clientCapabilities") {
		t.Fatalf("sessionless call without capabilities: %s %s", resp.Status, body)
	}
}
