package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// handServer is a Streamable HTTP MCP server written by hand: it answers
// with fields no SDK type holds, and records what it received, so a test
// can see whether the proxy decoded and re-encoded a message.
type handServer struct {
	mu       sync.Mutex
	bodies   []string // every POSTed body
	sessions []string // the Mcp-Session-Id of every POST but initialize
	deleted  int
}

func (h *handServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if r.Method == http.MethodDelete {
		h.deleted++
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	h.bodies = append(h.bodies, string(body))
	if !strings.Contains(string(body), `"initialize"`) {
		h.sessions = append(h.sessions, r.Header.Get("Mcp-Session-Id"))
	}
	h.mu.Unlock()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(body, &m)
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch m.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "down-session-1")
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"x-unmodeled":{"a":1}},"serverInfo":{"name":"hand","version":"1"},"_meta":{"x-own":true}}`
	case "tools/list":
		result = `{"tools":[{"name":"echo","inputSchema":{"type":"object"},"x-tool-extra":1},{"name":"hidden","inputSchema":{"type":"object"}}]}`
	default:
		// Any method, custom ones included: the params as received, and a
		// field no SDK type has.
		result = `{"content":[{"type":"text","text":"ok"}],"params":` + string(m.Params) + `,"x-result-extra":[1,2,3]}`
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(m.ID)+",\"result\":"+result+"}\n\n")
}

// TestRawPassthrough checks that sessions on a Streamable HTTP server take
// the raw path: a field no SDK type models survives in both directions, a
// custom method is forwarded, the session ids are mapped, tool filters and
// the initialize "_meta" still apply.
func TestRawPassthrough(t *testing.T) {
	h := &handServer{}
	down := httptest.NewServer(h)
	t.Cleanup(down.Close)
	p, ts := startProxy(t, testConfig(&config.Server{Transport: config.StreamableHTTP, URL: down.URL}))

	rc := newRawClient(t, ts.URL+"/mcp/servers/tb/filtered")
	if rc.session == "" || rc.session == "down-session-1" {
		t.Fatalf("upstream session id %q, want one of Nexus's own", rc.session)
	}
	// The initialize result of the first handshake (newRawClient's).
	rc2 := &rawClient{url: rc.url, hc: rc.hc}
	msgs := rc2.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if len(msgs) != 1 {
		t.Fatalf("initialize: %d messages", len(msgs))
	}
	var ir map[string]json.RawMessage
	json.Unmarshal(msgs[0].Result, &ir)
	if !strings.Contains(string(ir["capabilities"]), `"x-unmodeled":{"a":1}`) {
		t.Errorf("capabilities %s lost the unmodeled field", ir["capabilities"])
	}
	if g, w := string(ir["_meta"]), `{"`+MetaKey+`":{"server":"filtered","toolbox":"tb"},"x-own":true}`; g != w {
		t.Errorf("_meta = %s, want %s", g, w)
	}

	res := rc.post(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"},"x-param-extra":{"deep":[1]}}}`)
	if len(res) != 1 || !strings.Contains(string(res[0].Result), `"x-result-extra":[1,2,3]`) ||
		!strings.Contains(string(res[0].Result), `"x-param-extra":{"deep":[1]}`) {
		t.Errorf("tools/call result %s: want the unmodeled fields of params and result", res[0].Result)
	}
	res = rc.post(t, `{"jsonrpc":"2.0","id":6,"method":"custom/method","params":{"k":"v"}}`)
	if len(res) != 1 || !strings.Contains(string(res[0].Result), `"params":{"k":"v"}`) {
		t.Errorf("custom method: %+v, want the server's answer", res)
	}
	res = rc.post(t, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if len(res) != 1 || strings.Contains(string(res[0].Result), "hidden") || !strings.Contains(string(res[0].Result), `"x-tool-extra":1`) {
		t.Errorf("filtered tools/list %s: want echo with its unmodeled field, without hidden", res[0].Result)
	}
	res = rc.post(t, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"hidden"}}`)
	if len(res) != 1 || !strings.Contains(string(res[0].Error), `-32602`) || !strings.Contains(string(res[0].Error), `unknown tool \"hidden\"`) {
		t.Errorf("calling a filtered tool: %+v, want -32602 unknown tool", res)
	}

	h.mu.Lock()
	for _, s := range h.sessions {
		if s != "down-session-1" {
			t.Errorf("the server got session id %q, want its own", s)
		}
	}
	for _, b := range h.bodies {
		if strings.Contains(b, "hidden") {
			t.Errorf("a call of a filtered tool reached the server: %s", b)
		}
	}
	h.mu.Unlock()

	p.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deleted != 2 {
		t.Errorf("Close deleted %d downstream sessions, want 2", h.deleted)
	}
}

// TestRawBadInput sends bad requests to a session of the raw passthrough
// and to a session of the SDK path and checks that they get the same
// answers (HTTP status, Content-Type, JSON-RPC code, id and message), with
// and without the HTTP front.
func TestRawBadInput(t *testing.T) {
	httpSrv := downstreams[1].start(t)
	stdioSrv := downstreams[0].start(t)
	cfg := &config.Config{Toolboxes: map[string]*config.Toolbox{"tb": {
		Name:    "tb",
		Servers: map[string]*config.Server{"raw": httpSrv, "sdk": stdioSrv},
	}}}
	p, direct := startProxy(t, cfg)
	front := serveBehindFront(t, p)
	for _, ts := range []struct {
		name  string
		url   string
		front bool
	}{{"direct", direct.URL, false}, {"behind the front", front.URL, true}} {
		front := ts.front
		t.Run(ts.name, func(t *testing.T) {
			raw := newRawClient(t, ts.url+"/mcp/servers/tb/raw")
			sdk := newRawClient(t, ts.url+"/mcp/servers/tb/sdk")
			tests := []struct {
				name, method, body string
				hdr                map[string]string
			}{
				{name: "malformed JSON", method: "POST", body: `{bad`},
				{name: "batch", method: "POST", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
				{name: "empty batch", method: "POST", body: `[]`},
				{name: "not an object", method: "POST", body: `"x"`},
				{name: "JSON-RPC 1.0", method: "POST", body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`},
				{name: "object id", method: "POST", body: `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
				{name: "nesting", method: "POST", body: strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
				{name: "empty body", method: "POST", body: ``},
				{name: "wrong content type", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr: map[string]string{"Content-Type": "text/plain"}},
				{name: "no SSE in Accept", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr: map[string]string{"Accept": "application/json"}},
				{name: "Last-Event-ID on POST", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr: map[string]string{"Last-Event-ID": "1"}},
				{name: "unsupported protocol version", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}},
				{name: "unknown method", method: "POST", body: `{"jsonrpc":"2.0","id":7,"method":"nosuch/method"}`},
				{name: "unknown session", method: "POST", body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, hdr: map[string]string{"Mcp-Session-Id": "nosuch"}},
				{name: "PUT", method: "PUT", body: `{}`},
				{name: "GET without SSE in Accept", method: "GET", hdr: map[string]string{"Accept": "application/json"}},
				{name: "initialize again", method: "POST", body: `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`},
			}
			type answer struct {
				Status      int
				ContentType string
				ID          string
				Code        int
				Message     string
			}
			do := func(t *testing.T, rc *rawClient, method, body string, hdr map[string]string) answer {
				req, _ := http.NewRequest(method, rc.url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				req.Header.Set("Mcp-Session-Id", rc.session)
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := rc.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				a := answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
				var e struct {
					ID    json.RawMessage `json:"id"`
					Error *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if strings.HasPrefix(a.ContentType, "text/event-stream") {
					// The last data of the stream: the response.
					for line := range strings.Lines(string(b)) {
						if data, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(data) != "" {
							b = []byte(data)
						}
					}
				}
				if json.Unmarshal(b, &e) != nil || e.Error == nil {
					t.Errorf("%s: %d %s, want a JSON-RPC error", rc.url, resp.StatusCode, b)
					return a
				}
				a.ID, a.Code, a.Message = string(e.ID), e.Error.Code, e.Error.Message
				return a
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got, want := do(t, raw, tt.method, tt.body, tt.hdr), do(t, sdk, tt.method, tt.body, tt.hdr)
					if !front {
						// Without the front, which reads bodies and checks
						// them (jsonrpcmsg) for every MCP route, a body
						// the SDK refuses is refused in its words on the
						// SDK path, in jsonrpcmsg's on the raw one.
						got.ID, got.Code, got.Message = "", 0, ""
						want.ID, want.Code, want.Message = "", 0, ""
					}
					// The raw path's own messages may name more (the value
					// refused, the methods allowed): each says at least what
					// the SDK's says, before its parenthesis.
					said, _, _ := strings.Cut(want.Message, " (")
					if !strings.Contains(got.Message, said) {
						t.Errorf("raw passthrough said %q, the SDK path %q", got.Message, want.Message)
					}
					got.Message, want.Message = "", ""
					if got != want {
						t.Errorf("raw passthrough answered %+v, the SDK path %+v", got, want)
					}
				})
			}
		})
	}
}

// TestRawSessionEnds checks the ends of a raw session: the client's DELETE
// deletes the downstream session; a downstream session that ends on its own
// ends the upstream one (404, and the client can initialize again); an idle
// session is closed after the session timeout.
func TestRawSessionEnds(t *testing.T) {
	srv := newTestServer()
	down := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(down.Close)
	t.Cleanup(func() { closeSessions(srv) })
	downSessions := func() int {
		n := 0
		for range srv.Sessions() {
			n++
		}
		return n
	}
	cfg := testConfig(&config.Server{Transport: config.StreamableHTTP, URL: down.URL})
	_, ts := startProxy(t, cfg)
	url := ts.URL + "/mcp/servers/tb/s"
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)

	a := connect(t, client, url)
	call(t, a, "echo", map[string]any{"text": "hi"})
	if n := downSessions(); n != 1 {
		t.Fatalf("%d downstream sessions, want 1", n)
	}
	a.Close()
	testtools.Eventually(t, 10*time.Second, "the downstream session to be deleted", func() bool { return downSessions() == 0 })

	b := connect(t, client, url)
	closeSessions(srv)
	testtools.Eventually(t, 10*time.Second, "calls to fail", func() bool {
		_, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		return err != nil
	})
	c := connect(t, client, url)
	if got := text(t, call(t, c, "echo", map[string]any{"text": "again"})); got != "echo: again" {
		t.Errorf("a new session after the server's end: echo = %q", got)
	}

	p := New(cfg, Options{Logger: testLogger(t), Stderr: devNull(t), SessionTimeout: 300 * time.Millisecond})
	its := httptest.NewServer(p)
	t.Cleanup(func() {
		p.Close()
		its.Close()
	})
	before := downSessions()
	rc := newRawClient(t, its.URL+"/mcp/servers/tb/s")
	if n := downSessions(); n != before+1 {
		t.Fatalf("%d downstream sessions, want %d", n, before+1)
	}
	testtools.Eventually(t, 10*time.Second, "the idle session to end", func() bool { return downSessions() == before })
	req, _ := http.NewRequest(http.MethodPost, rc.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", rc.session)
	resp, err := rc.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request in the idle session: %s, want 404", resp.Status)
	}
}

// TestRawAllow checks that the access check (Options.Allow) applies to the
// raw passthrough's every request, the initialize and those of a session.
func TestRawAllow(t *testing.T) {
	srv := downstreams[1].start(t)
	var mu sync.Mutex
	allowed := true
	p := New(testConfig(srv), Options{Logger: testLogger(t), Stderr: devNull(t), Allow: func(*http.Request, string, string) bool {
		mu.Lock()
		defer mu.Unlock()
		return allowed
	}})
	ts := httptest.NewServer(p)
	t.Cleanup(func() {
		p.Close()
		ts.Close()
	})
	url := ts.URL + "/mcp/servers/tb/s"
	cs := connect(t, mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil), url)
	call(t, cs, "echo", map[string]any{"text": "in"})
	mu.Lock()
	allowed = false
	mu.Unlock()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a call once refused: %v, want 403 Forbidden", err)
	}
	resp, _ := post(t, url, initializeBody, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("an initialize once refused: %s, want 403", resp.Status)
	}
}
