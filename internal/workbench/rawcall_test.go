package workbench

//lint:file-ignore SA1019 the raw call answers downstream servers that use logging and roots (earlier protocol versions)

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// rawPeer is an SDK server over Streamable HTTP whose tools cover what a
// tool call can come back with. cancelled receives the name of a tool whose
// call was cancelled while it ran.
func rawPeer(t *testing.T) (url string, cancelled chan string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "raw-peer", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
		N    int    `json:"n,omitempty"`
	}
	type echoOut struct {
		Text  string `json:"text"`
		Twice int    `json:"twice"`
	}
	// Content and structuredContent (the SDK fills both from the output).
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Text: in.Text, Twice: 2 * in.N}, nil
		})
	// A tool error: isError with text.
	mcp.AddTool(srv, &mcp.Tool{Name: "fails", Description: "fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool failed")
		})
	// JSON-RPC errors: invalid params, and another.
	srv.AddTool(&mcp.Tool{Name: "rejects", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such thing"}
		})
	srv.AddTool(&mcp.Tool{Name: "breaks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "it broke", Data: json.RawMessage(`{"why":"test"}`)}
		})
	// Requests and notifications to the client during the call.
	srv.AddTool(&mcp.Tool{Name: "asks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, err
			}
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "working"})
			_, serr := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots: " + string(mustJSON(roots.Roots))}},
				StructuredContent: map[string]any{"sampling refused": serr != nil}}, nil
		})
	cancelled = make(chan string, 4)
	srv.AddTool(&mcp.Tool{Name: "sleeps", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				cancelled <- req.Params.Name
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil
			}
		})
	return httpPeer(t, config.StreamableHTTP, srv), cancelled
}

// normalJSON is v's JSON with object keys sorted: a raw call's
// structuredContent keeps the server's key order.
func normalJSON(v any) string {
	var x any
	if err := json.Unmarshal(mustJSON(v), &x); err != nil {
		panic(err)
	}
	return string(mustJSON(x))
}

// TestDecodeResult: a result decoded by decodeResult is what the SDK's
// decoder makes of it, for text-only results (decoded here) and others
// (left to the SDK).
func TestDecodeResult(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"a"}]}`,
		`{"content":[{"type":"text","text":"a","_meta":{"k":1},"annotations":{"audience":["user"],"priority":0.5}},{"type":"text","text":""}],"isError":true}`,
		`{"content":[],"structuredContent":{"b":[1,2],"a":null},"_meta":{"x":"y"}}`,
		`{"structuredContent":null}`,
		`{}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"t"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///x","text":"hi"}}]}`,
		`{"content":[null]}`,
		`{"content":[{"type":"bogus"}]}`,
	} {
		want := new(mcp.CallToolResult)
		werr := json.Unmarshal([]byte(raw), want)
		got, gerr := decodeResult(json.RawMessage(raw))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%s: error %v, the SDK's %v", raw, gerr, werr)
			continue
		}
		if werr != nil {
			continue
		}
		if g, w := normalJSON(got), normalJSON(want); g != w {
			t.Errorf("%s: decoded as\n%s\nthe SDK decodes\n%s", raw, g, w)
		}
		if len(got.Content) != len(want.Content) || (got.Content == nil) != (want.Content == nil) {
			t.Errorf("%s: content %#v, the SDK's %#v", raw, got.Content, want.Content)
		}
		for i := range got.Content {
			if reflect.TypeOf(got.Content[i]) != reflect.TypeOf(want.Content[i]) {
				t.Errorf("%s: content %d is a %T, the SDK's a %T", raw, i, got.Content[i], want.Content[i])
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// rawAndSDK returns two managers of one toolbox "tb" with the server "p"
// at url (with a call timeout of timeout): one making raw tools/call
// requests, one calling through the SDK client ([Options.SDKCalls]), with
// the toolbox opened.
func rawAndSDK(t *testing.T, url string, timeout time.Duration) (raw, sdk *registry.Registry) {
	t.Helper()
	var regs [2]*registry.Registry
	for i, sdkCalls := range []bool{false, true} {
		srv := urlServer(config.StreamableHTTP, url)
		srv.Timeout = timeout
		m, reg := newManager(t, toolboxConfig("tb", named{"p", srv}))
		m.noRaw = sdkCalls
		open(t, m, "tb")
		s := m.toolboxes[0].servers[0]
		s.mu.Lock()
		hasRaw := s.sess != nil && s.sess.raw != nil
		s.mu.Unlock()
		if hasRaw == sdkCalls {
			t.Fatalf("SDKCalls %v: the session takes raw calls: %v", sdkCalls, hasRaw)
		}
		regs[i] = reg
	}
	return regs[0], regs[1]
}

// TestRawCallMatchesSDK: a flat call of a Streamable HTTP server's tool
// through the raw tools/call path returns what it returns through the SDK
// client: content, structuredContent, isError, and the pipeline's errors
// (the downstream's JSON-RPC errors, an unknown tool, a timeout, a
// cancellation, which reaches the server on both paths).
func TestRawCallMatchesSDK(t *testing.T) {
	url, cancelled := rawPeer(t)
	raw, sdk := rawAndSDK(t, url, 300*time.Millisecond)

	cases := []struct {
		tool string
		args any
	}{
		{"tb__p__echo", map[string]any{"text": "héllo \"x\" \u2028", "n": 21}},
		{"tb__p__echo", map[string]any{"text": ""}},
		{"tb__p__fails", nil},
		{"tb__p__rejects", nil},
		{"tb__p__breaks", nil},
		{"tb__p__asks", nil},
		{"tb__p__nope", nil},   // unknown: the pipeline's NOT_FOUND
		{"tb__p__sleeps", nil}, // the server's 300 ms timeout
	}
	for _, c := range cases {
		gotRaw, errRaw := call(t, raw, c.tool, c.args)
		gotSDK, errSDK := call(t, sdk, c.tool, c.args)
		if !reflect.DeepEqual(errView(errRaw), errView(errSDK)) {
			t.Errorf("%s: error through the raw path %+v, through the SDK %+v", c.tool, errView(errRaw), errView(errSDK))
		}
		if rj, sj := normalJSON(gotRaw), normalJSON(gotSDK); rj != sj {
			t.Errorf("%s: result through the raw path\n%s\nthrough the SDK\n%s", c.tool, rj, sj)
		}
		if c.tool == "tb__p__sleeps" {
			for _, path := range []string{"raw", "sdk"} {
				select {
				case <-cancelled:
				case <-time.After(5 * time.Second):
					t.Errorf("%s: the server's call was not cancelled after the timeout (%s path)", c.tool, path)
				}
			}
		}
	}
	// Not equal by being equally wrong:
	if res, _ := call(t, raw, "tb__p__echo", map[string]any{"text": "a", "n": 21}); res == nil || res.IsError ||
		string(mustJSON(res.StructuredContent)) != `{"text":"a","twice":42}` || text(res) != `{"text":"a","twice":42}` {
		t.Errorf("echo: %s", mustJSON(res))
	}
	if res, _ := call(t, raw, "tb__p__fails", nil); res == nil || !res.IsError || text(res) != "the tool failed" {
		t.Errorf("fails: %s", mustJSON(res))
	}
	if _, e := call(t, raw, "tb__p__rejects", nil); e == nil || e.Code != errs.BadRequest {
		t.Errorf("rejects: %+v", e)
	}
	if _, e := call(t, raw, "tb__p__sleeps", nil); e == nil || e.Code != errs.Unavailable || e.Message != "Tool 'sleeps' on server 'p' (toolbox 'tb') timed out after 300ms" {
		t.Errorf("sleeps: %+v", e)
	}
	<-cancelled
	if res, _ := call(t, raw, "tb__p__asks", nil); res == nil || text(res) != "roots: []" || string(mustJSON(res.StructuredContent)) != `{"sampling refused":true}` {
		t.Errorf("asks: %s, want the client's empty roots and sampling refused", mustJSON(res))
	}

	// The caller goes away: the call ends at once, as cancelled, and the
	// server's handler is cancelled too.
	for name, reg := range map[string]*registry.Registry{"raw": raw, "sdk": sdk} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		o := pipeline.New(pipeline.Options{Registry: reg}).Call(ctx, pipeline.Request{Tool: "tb__p__sleeps", Surface: "test"})
		if o.Err == nil || o.Err.Code != errs.Unavailable || o.Err.Message != "Call of tool 'sleeps' on server 'p' (toolbox 'tb') was cancelled" {
			t.Errorf("%s: cancelled call: %+v", name, o.Err)
		}
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the server's call was not cancelled", name)
		}
	}
}

// errView is what a caller sees of a pipeline error.
func errView(e *errs.Error) any {
	if e == nil {
		return nil
	}
	return struct {
		Code    errs.Code
		Message string
	}{e.Code, e.Message}
}

// TestRawCallSessionGone: when the server forgets the session (it
// restarted), a raw call's 404 hands the call to the SDK client, which
// ends the session, and the server is reconnected: calls succeed again,
// still raw.
func TestRawCallSessionGone(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "forgetful", Version: "1"}, nil)
	textTool(srv, "greet", "hello")
	var h atomic.Pointer[http.Handler]
	swap := func() {
		var next http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		h.Store(&next)
	}
	swap()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		// The forgotten session's server side lives on in srv.
		for ss := range srv.Sessions() {
			ss.Close()
		}
	})
	m, reg := newManager(t, toolboxConfig("tb", named{"p", urlServer(config.StreamableHTTP, ts.URL)}))
	open(t, m, "tb")
	if got := mustCall(t, reg, "tb__p__greet", nil); got != "hello" {
		t.Fatalf("greet: %q", got)
	}
	s := m.toolboxes[0].servers[0]
	first, _ := s.session()

	swap() // a new handler knows no session: 404
	if _, e := call(t, reg, "tb__p__greet", nil); e == nil || e.Code != errs.Unavailable {
		t.Fatalf("call on a forgotten session: %+v, want UNAVAILABLE", e)
	}
	testtools.EventuallyErr(t, 10*time.Second, "the server to be reconnected", func() error {
		res, e := call(t, reg, "tb__p__greet", nil)
		if e != nil {
			return e
		}
		if text(res) != "hello" {
			return fmt.Errorf("greet: %q", text(res))
		}
		return nil
	})
	if sess, _ := s.session(); sess == first || sess == nil || sess.raw == nil {
		t.Fatalf("after the reconnection: session %p (was %p), raw %v", sess, first, sess != nil && sess.raw != nil)
	}
}

// TestSessionlessOnlyServer: a Streamable HTTP server that refuses the
// handshake protocol is connected with the SDK's default (sessionless)
// protocol, and its tools are called through the SDK client.
func TestSessionlessOnlyServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "new-only", Version: "1"}, nil)
	textTool(srv, "greet", "hello")
	// Stateless: the SDK's handler answers server/discover.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
				refused.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"use server/discover"}}`, m.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m, reg := newManager(t, toolboxConfig("tb", named{"p", urlServer(config.StreamableHTTP, ts.URL)}))
	open(t, m, "tb")
	if got := mustCall(t, reg, "tb__p__greet", nil); got != "hello" {
		t.Fatalf("greet: %q", got)
	}
	sess, _ := m.toolboxes[0].servers[0].session()
	if refused.Load() == 0 || sess == nil || sess.raw != nil {
		t.Fatalf("initialize refused %d times; session %v, raw calls %v", refused.Load(), sess != nil, sess != nil && sess.raw != nil)
	}
	if v := sess.cs.InitializeResult().ProtocolVersion; downstream.RawOK(v) {
		t.Fatalf("protocol %s, want the sessionless one", v)
	}
}

// TestRawCallStateless: a stateless Streamable HTTP server (no session id)
// is connected with the handshake protocol too, and takes raw calls.
func TestRawCallStateless(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	textTool(srv, "greet", "hello")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	m, reg := newManager(t, toolboxConfig("tb", named{"p", urlServer(config.StreamableHTTP, ts.URL)}))
	open(t, m, "tb")
	sess, _ := m.toolboxes[0].servers[0].session()
	if sess == nil || sess.raw == nil || sess.raw.ID != "" || sess.raw.Version != mcpwire.LatestHandshake() {
		t.Fatalf("session %+v", sess)
	}
	for range 3 {
		if got := mustCall(t, reg, "tb__p__greet", nil); got != "hello" {
			t.Fatalf("greet: %q", got)
		}
	}
}

// TestRawCallResumesAClosedStream: a server that ends a call's stream
// before its result (SEP-1699) has it resumed from the last event id, as
// the SDK client would, and the call gets its result; the call is not sent
// twice.
func TestRawCallResumesAClosedStream(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "polling", Version: "1"}, nil)
	var calls atomic.Int32
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			if req.Extra == nil || req.Extra.CloseSSEStream == nil {
				return nil, errors.New("the stream cannot be closed: no event store")
			}
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			time.Sleep(50 * time.Millisecond) // not synchronisation: the result comes after the stream closed
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after the break"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(ts.Close)
	reg := registry.New()
	m := NewManager(toolboxConfig("tb", named{"p", urlServer(config.StreamableHTTP, ts.URL)}), reg, Options{})
	t.Cleanup(func() { m.Close() })
	open(t, m, "tb")
	res, err := call(t, reg, "tb__p__slow", nil)
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "after the break" {
		t.Fatalf("call: %+v %v", res, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server ran the call %d times, want 1", n)
	}
}
