package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionCapEvictsTheOldestIdle: live MCP sessions are capped over all
// MCP endpoints; a new session closes the one idle the longest, whose next
// request gets 404 (the client starts over), while the others keep working.
func TestSessionCapEvictsTheOldestIdle(t *testing.T) {
	ts := serve(t, httpapi.Options{MaxSessions: 3})
	open := func(path string) string {
		resp, body := do(t, ts, "POST", path, "", nil)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize on %s: %s %s", path, resp.Status, body)
		}
		return id
	}
	ping := func(path, id string) int {
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Not synchronisation, the sleeps below: they make the sessions idle for
	// different lengths of time, since the cap evicts the one idle the
	// longest.
	a := open("/mcp")
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	b := open("/mcp/bounded")
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	c := open("/mcp/agents")
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	// a is now the most recently used.
	if ping("/mcp", a) != http.StatusOK {
		t.Fatal("ping a")
	}
	d := open("/mcp") // evicts b, idle the longest
	for _, s := range []struct{ path, id, name string }{{"/mcp", a, "a"}, {"/mcp/agents", c, "c"}, {"/mcp", d, "d"}} {
		if code := ping(s.path, s.id); code != http.StatusOK {
			t.Fatalf("session %s after the eviction: %d", s.name, code)
		}
	}
	if code := ping("/mcp/bounded", b); code != http.StatusNotFound {
		t.Fatalf("evicted session b: %d, want 404", code)
	}
	// A closed session frees its place without an eviction.
	req, _ := http.NewRequest("DELETE", ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", a)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if resp, err := ts.Client().Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	open("/mcp")
	if code := ping("/mcp/agents", c); code != http.StatusOK {
		t.Fatalf("session c after a DELETE made room: %d", code)
	}
}

// TestSessionCapWithSDKClients: a real SDK client whose session was evicted
// gets an error, and a new client works.
func TestSessionCapWithSDKClients(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ts := serve(t, httpapi.Options{MCP: srv, MaxSessions: 2})
	ctx := context.Background()
	var streams atomic.Int32 // GET event streams the server accepted
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := ts.Client().Transport.RoundTrip(r)
		if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			streams.Add(1)
		}
		return resp, err
	})}
	connect := func() *mcp.ClientSession {
		// A default client keeps its GET event stream open: that is not
		// activity, so such a session can still be evicted when idle.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: client}, testtools.WithSession())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	first := connect()
	testtools.Eventually(t, 10*time.Second, "the first client's event stream to open", func() bool { return streams.Load() == 1 })
	connect()
	testtools.Eventually(t, 10*time.Second, "the second client's event stream to open", func() bool { return streams.Load() == 2 })
	connect()
	if err := first.Ping(ctx, nil); err == nil {
		t.Fatal("the evicted session still answers")
	}
	// The SDK ends an evicted session in the background.
	testtools.EventuallyErr(t, 10*time.Second, "the evicted session to end", func() error {
		n := 0
		for range srv.Sessions() {
			n++
		}
		if n > 2 {
			return fmt.Errorf("%d live sessions with a cap of 2", n)
		}
		return nil
	})
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSessionCapHoldsUnderConcurrentInitializes: a slot is reserved before
// an initialize runs, so concurrent initializes never overshoot the cap.
func TestSessionCapHoldsUnderConcurrentInitializes(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ts := serve(t, httpapi.Options{MCP: srv, MaxSessions: 5})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(t, ts, "POST", "/mcp", "", nil)
		}()
	}
	wg.Wait()
	for range 20 {
		do(t, ts, "POST", "/mcp", "", nil)
	}
	n := 0
	for range srv.Sessions() {
		n++
	}
	if n > 5 {
		t.Fatalf("%d live sessions with a cap of 5", n)
	}
}

// TestOnlyInitializeMakesRoom: a POST without a session that is not an
// initialize starts no session, so it evicts nobody.
func TestOnlyInitializeMakesRoom(t *testing.T) {
	ts := serve(t, httpapi.Options{MaxSessions: 1})
	resp, _ := do(t, ts, "POST", "/mcp", "", nil)
	id := resp.Header.Get("Mcp-Session-Id")
	for _, body := range []string{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, `{bad`} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		r, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	r, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("the only session after requests that start none: %d", r.StatusCode)
	}
}

// TestSessionRoutesShareTheCap: sessions of further MCP endpoints (the
// per-server proxy) count against the same cap and are ended through their
// own endpoint (streamable.SessionCloser).
func TestSessionRoutesShareTheCap(t *testing.T) {
	proxied := mcp.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, nil)
	var closed []string
	ph := closingRoute{
		Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return proxied }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true}),
		close: func(path, id string) {
			closed = append(closed, path)
			for ss := range proxied.Sessions() {
				if ss.ID() == id {
					ss.Close()
				}
			}
		},
	}
	ts := serve(t, httpapi.Options{MaxSessions: 2, SessionRoutes: map[string]http.Handler{"/mcp/servers/": ph}})
	resp, _ := do(t, ts, "POST", "/mcp/servers/tb/s", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize on the proxy route: %s", resp.Status)
	}
	// Not synchronisation, the sleeps: the sessions are idle for different
	// lengths of time, since the cap evicts the one idle the longest.
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	do(t, ts, "POST", "/mcp", "", nil)
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	// The cap is reached: the proxied session, idle the longest, goes.
	do(t, ts, "POST", "/mcp", "", nil)
	n := 0
	for range proxied.Sessions() {
		n++
	}
	if n != 0 || len(closed) != 1 || closed[0] != "/mcp/servers/tb/s" {
		t.Fatalf("%d proxied sessions left, closed through the route at %q; the oldest session should have been evicted through its route", n, closed)
	}
}

// closingRoute is a session route that ends its sessions when told to.
type closingRoute struct {
	http.Handler
	close func(path, id string)
}

// CloseSession implements streamable.SessionCloser.
func (c closingRoute) CloseSession(path, id string) { c.close(path, id) }

var _ streamable.SessionCloser = closingRoute{}

// TestIdleSessionsEnd: a session of an MCP surface ends once idle for
// Options.SessionTimeout (the rule of the SDK's own timeout, kept by the
// limiter): requests keep it alive, a request in flight longer than the
// timeout too, and after that long without one its next request gets 404.
func TestIdleSessionsEnd(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(600 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	const timeout = 300 * time.Millisecond
	ts := serve(t, httpapi.Options{MCP: srv, SessionTimeout: timeout})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// Requests more often than the timeout keep the session.
	for range 8 {
		time.Sleep(timeout / 3) // the idle time being tested
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("ping of a session in use: %v", err)
		}
	}
	// A call in flight for twice the timeout does not count as idle.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}); err != nil {
		t.Fatalf("a call longer than the idle timeout: %v", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping right after a long call: %v", err)
	}
	// Idle for longer than the timeout: the session has ended.
	testtools.EventuallyErr(t, 10*time.Second, "the idle session to end", func() error {
		for range srv.Sessions() {
			return errors.New("a session is still live")
		}
		return nil
	})
	if err := cs.Ping(ctx, nil); err == nil {
		t.Fatal("an idle session still answers after its timeout")
	}
}

// TestSessionRequestsChecked: the front serves sessions on the SDK's
// transports and applies the transport's HTTP rules to each request of a
// session itself, as JSON-RPC errors naming what is wrong; a request it
// refuses leaves the session as it was.
func TestSessionRequestsChecked(t *testing.T) {
	ts := serve(t, httpapi.Options{})
	resp, body := do(t, ts, "POST", "/mcp", "", nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	send := func(method, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := new(strings.Builder)
		io.Copy(b, resp.Body)
		return resp.StatusCode, b.String()
	}
	const ping = `{"jsonrpc":"2.0","id":"p","method":"ping"}`
	for _, tt := range []struct {
		name, method string
		hdr          map[string]string
		status       int
		want         string
	}{
		{"Content-Type", "POST", map[string]string{"Content-Type": "text/plain"}, 415, `{"jsonrpc":"2.0","id":"p","error":{"code":-32600,"message":"Content-Type must be 'application/json'"}}`},
		{"Accept of a POST", "POST", map[string]string{"Accept": "application/json"}, 400, `"message":"Accept must contain both 'application/json' and 'text/event-stream'"`},
		{"Accept of a GET", "GET", map[string]string{"Accept": "application/json"}, 400, `"message":"Accept must contain 'text/event-stream' for GET requests"`},
		{"protocol version", "POST", map[string]string{"Mcp-Protocol-Version": "2020-01-01"}, 400, `Unsupported protocol version \"2020-01-01\"`},
		{"an unknown session", "POST", map[string]string{"Mcp-Session-Id": id + "x"}, 404, `"id":"p","error":{"code":-32600,"message":"session not found`},
	} {
		status, body := send(tt.method, ping, tt.hdr)
		if status != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, status, body, tt.status, tt.want)
		}
	}
	if status, body := send("POST", ping, nil); status != http.StatusOK || !strings.Contains(body, `"id":"p","result":{}`) {
		t.Fatalf("ping after the refused requests: %d %s", status, body)
	}
	if status, _ := send("DELETE", "", nil); status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _ := send("POST", ping, nil); status != http.StatusNotFound {
		t.Fatalf("ping after DELETE: %d, want 404", status)
	}
}
