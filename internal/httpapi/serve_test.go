package httpapi_test

// Tests of the handler over real connections: every route behind one guard
// (Host, Origin, CORS, body deadline), the index, and the SDK logger.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/sdklog"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func testServer(logger *slog.Logger) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{Logger: logger})
}

// serve runs Handler(o) on a loopback listener, with the three MCP surfaces
// and a REST-like route when o has none.
func serve(t *testing.T, o httpapi.Options) *httptest.Server {
	t.Helper()
	if o.MCP == nil {
		o.MCP = testServer(nil)
	}
	if o.Agents == nil {
		o.Agents = testServer(nil)
	}
	if o.Bounded == nil {
		o.Bounded = testServer(nil)
	}
	if o.Routes == nil {
		o.Routes = map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"got":` + strings.TrimSpace(string(b)) + `}`))
		})}
	}
	ts := httptest.NewServer(httpapi.Handler(o))
	t.Cleanup(ts.Close)
	return ts
}

// do sends method path with body (initialize when "" and method is POST),
// the given Host (if any) and extra headers.
func do(t *testing.T, ts *httptest.Server, method, path, host string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader(initialize)
	}
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if host != "" {
		req.Host = host
	}
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

func port(ts *httptest.Server) string {
	_, p, _ := net.SplitHostPort(ts.Listener.Addr().String())
	return p
}

var routes = []string{"/mcp", "/mcp/agents", "/mcp/bounded", "/api/tools"}

// Issue 6: --allow-hosts had no effect on the MCP routes (the SDK's own
// localhost check rejected the Host after the guard accepted it).
func TestAllowedHostOnEveryRoute(t *testing.T) {
	ts := serve(t, httpapi.Options{Loopback: true, AllowedHosts: []string{"nexus.internal"}})
	for _, path := range routes {
		for _, host := range []string{"nexus.internal:" + port(ts), "NEXUS.internal", "127.0.0.1:" + port(ts)} {
			resp, body := do(t, ts, "POST", path, host, nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("POST %s with Host %s: %d %s", path, host, resp.StatusCode, body)
			}
		}
		resp, body := do(t, ts, "POST", path, "other.internal:"+port(ts), nil)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "invalid Host header") {
			t.Errorf("POST %s with a Host not allowed: %d %s", path, resp.StatusCode, body)
		}
	}
}

// Issue 7: bound beyond loopback, the Host must be an allowed host name and
// the Origin an allowed origin (or the origin of that allowed host).
func TestPublicListenerChecksHostAndOrigin(t *testing.T) {
	ts := serve(t, httpapi.Options{Loopback: false, AllowedHosts: []string{"nexus.example.com"},
		AllowedOrigins: []string{"https://app.example.com"}})
	p := port(ts)
	tests := []struct {
		name, host, origin string
		want               int
	}{
		{"attacker host and matching origin", "attacker.example:" + p, "http://attacker.example:" + p, 403},
		{"attacker host", "attacker.example:" + p, "", 403},
		{"ip literal not listed", "10.1.2.3:" + p, "", 403},
		{"allowed host", "nexus.example.com", "", 200},
		{"allowed host with port", "nexus.example.com:" + p, "", 200},
		{"loopback host", "127.0.0.1:" + p, "", 200},
		{"same origin as an allowed host", "nexus.example.com", "https://nexus.example.com", 200},
		{"allowed origin", "nexus.example.com", "https://app.example.com", 200},
		{"foreign origin", "nexus.example.com", "https://evil.example.com", 403},
		{"loopback origin not listed", "nexus.example.com", "http://localhost:3000", 403},
		{"null origin", "nexus.example.com", "null", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range routes {
				hdr := map[string]string{}
				if tt.origin != "" {
					hdr["Origin"] = tt.origin
				}
				resp, body := do(t, ts, "POST", path, tt.host, hdr)
				if resp.StatusCode != tt.want {
					t.Errorf("POST %s: %d %s, want %d", path, resp.StatusCode, body, tt.want)
				}
			}
		})
	}
	t.Run("no allowed hosts: only loopback hosts", func(t *testing.T) {
		ts := serve(t, httpapi.Options{Loopback: false})
		if resp, body := do(t, ts, "GET", "/healthz", "nexus.example.com", nil); resp.StatusCode != 403 {
			t.Errorf("GET /healthz: %d %s", resp.StatusCode, body)
		}
		if resp, body := do(t, ts, "GET", "/healthz", "localhost:"+port(ts), nil); resp.StatusCode != 200 {
			t.Errorf("GET /healthz from loopback: %d %s", resp.StatusCode, body)
		}
	})
}

// Issue 8: a stalled request body gets 408 and the connection is closed,
// after BodyTimeout rather than never.
func TestStalledBodyGets408(t *testing.T) {
	ts := serve(t, httpapi.Options{Loopback: true, BodyTimeout: 200 * time.Millisecond})
	for _, path := range []string{"/mcp", "/api/tools"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			conn.SetDeadline(start.Add(5 * time.Second))
			io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no response after %v: %v", time.Since(start), err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("status %d %s, want 408", resp.StatusCode, body)
			}
			if !resp.Close {
				t.Error("the response does not close the connection")
			}
			// The server closes its end: a read ends with EOF, not the deadline.
			if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("read after the response: %d, %v; want EOF", n, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	t.Run("the deadline ends with the body", func(t *testing.T) {
		// A handler that runs longer than BodyTimeout after reading the
		// body (an SSE stream) is neither cut off nor cancelled.
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			select {
			case <-time.After(600 * time.Millisecond):
				w.Write([]byte("done"))
			case <-r.Context().Done(): // the server's background read failed
				w.Write([]byte("cancelled"))
			}
		})
		ts := serve(t, httpapi.Options{Loopback: true, BodyTimeout: 200 * time.Millisecond,
			Routes: map[string]http.Handler{"/api/": slow}})
		for range 2 { // twice on the same connection: the deadline is cleared
			resp, body := do(t, ts, "POST", "/api/slow", "", nil)
			if resp.StatusCode != 200 || body != "done" {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		}
	})
	t.Run("a large body that arrives in time", func(t *testing.T) {
		ts := serve(t, httpapi.Options{Loopback: true, BodyTimeout: 2 * time.Second})
		big := `{"x":"` + strings.Repeat("a", 500_000) + `"}`
		resp, err := ts.Client().Post(ts.URL+"/api/echo", "application/json", strings.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) != len(big)+len(`{"got":}`) {
			t.Fatalf("%d, %d bytes", resp.StatusCode, len(b))
		}
	})
}

func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, p := range strings.Split(v, ",") {
			out = append(out, strings.ToLower(strings.TrimSpace(p)))
		}
	}
	return out
}

// Issue 9: browsers can call Nexus: a real preflight, then the request, whose
// Mcp-Session-Id the page can read.
func TestCORS(t *testing.T) {
	const origin = "https://app.example.com"
	ts := serve(t, httpapi.Options{Loopback: true, AllowedOrigins: []string{origin}})
	for _, path := range routes {
		t.Run(path, func(t *testing.T) {
			resp, body := do(t, ts, "OPTIONS", path, "", map[string]string{"Origin": origin,
				"Access-Control-Request-Method":  "POST",
				"Access-Control-Request-Headers": "content-type,mcp-protocol-version,mcp-session-id,mcp-method,mcp-name,last-event-id,authorization,accept"})
			if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
				t.Fatalf("preflight: %d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("preflight Access-Control-Allow-Origin %q", got)
			}
			for _, m := range []string{"get", "post", "delete", "options"} {
				if !slices.Contains(headerList(resp.Header, "Access-Control-Allow-Methods"), m) {
					t.Errorf("preflight allows methods %q, not %s", resp.Header.Get("Access-Control-Allow-Methods"), m)
				}
			}
			for _, h := range []string{"content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id", "authorization", "accept"} {
				if !slices.Contains(headerList(resp.Header, "Access-Control-Allow-Headers"), h) {
					t.Errorf("preflight allows headers %q, not %s", resp.Header.Get("Access-Control-Allow-Headers"), h)
				}
			}
			if !slices.Contains(headerList(resp.Header, "Vary"), "origin") {
				t.Errorf("preflight Vary %q", resp.Header.Values("Vary"))
			}

			resp, body = do(t, ts, "POST", path, "", map[string]string{"Origin": origin})
			if resp.StatusCode != 200 {
				t.Fatalf("POST: %d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("POST Access-Control-Allow-Origin %q", got)
			}
			if !slices.Contains(headerList(resp.Header, "Vary"), "origin") {
				t.Errorf("POST Vary %q", resp.Header.Values("Vary"))
			}
			if strings.HasPrefix(path, "/mcp") {
				// What a browser lets the page read: exposed headers only.
				if !slices.Contains(headerList(resp.Header, "Access-Control-Expose-Headers"), "mcp-session-id") {
					t.Errorf("Mcp-Session-Id is not exposed: %q", resp.Header.Get("Access-Control-Expose-Headers"))
				}
				if resp.Header.Get("Mcp-Session-Id") == "" {
					t.Error("no Mcp-Session-Id")
				}
			}

			resp, body = do(t, ts, "OPTIONS", path, "", map[string]string{"Origin": "https://evil.example.com",
				"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight of a disallowed origin: %d %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("same origin gets no CORS headers it does not need", func(t *testing.T) {
		resp, _ := do(t, ts, "GET", "/healthz", "", nil)
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin %q without an Origin", got)
		}
	})
	t.Run("a preflight asking for another header", func(t *testing.T) {
		resp, body := do(t, ts, "OPTIONS", "/mcp", "", map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-secret"})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "x-secret") {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
	})
}

// Issue 17: GET / points to the endpoints; unknown paths are still 404.
func TestIndex(t *testing.T) {
	ts := serve(t, httpapi.Options{Loopback: true, Endpoints: []httpapi.Endpoint{{Path: "/api/tools", Description: "the tools"}}})
	resp, body := do(t, ts, "GET", "/", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /: %d %s", resp.StatusCode, body)
	}
	var index struct {
		Endpoints []struct{ Path, Description string }
	}
	if err := json.Unmarshal([]byte(body), &index); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range index.Endpoints {
		if e.Description == "" {
			t.Errorf("%s has no description", e.Path)
		}
		paths = append(paths, e.Path)
	}
	for _, p := range []string{"/mcp", "/mcp/agents", "/mcp/bounded", "/api/tools", "/healthz"} {
		if !slices.Contains(paths, p) {
			t.Errorf("GET / does not list %s: %s", p, body)
		}
	}
	for _, p := range []string{"/nope", "/index.html", "/mcp/nope"} {
		resp, body := do(t, ts, "GET", p, "", nil)
		if resp.StatusCode != 404 {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, body := do(t, ts, "POST", "/healthz", "", nil); resp.StatusCode != 405 || !json.Valid([]byte(body)) {
		t.Errorf("POST /healthz: %d %s", resp.StatusCode, body)
	}
}

// checkLogs fails the test for a record at min or above.
func checkLogs(t *testing.T, c *logtest.Capture, min slog.Level) {
	t.Helper()
	debug := 0
	for _, r := range c.Records() {
		if r.Level < min {
			debug++
			continue
		}
		var attrs []string
		r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a.String()); return true })
		t.Errorf("logged at %s: %s %v", r.Level, r.Message, attrs)
	}
	if debug == 0 {
		t.Error("nothing was logged at all (the test exercises nothing)")
	}
}

// Issue 17: the SDK logs "server session connected" with the session id at
// Info, and errors when a client goes away; through sdklog.New, a normal
// session (connect, a stream the client closes, a request it abandons) logs
// nothing above Debug.
func TestSDKLoggerQuietOnNormalSessions(t *testing.T) {
	// Clients with a session and sessionless ones alike.
	for _, opts := range []*mcp.ClientSessionOptions{testtools.WithSession(), testtools.Sessionless()} {
		t.Run(opts.ProtocolVersion, func(t *testing.T) { sdkLoggerQuiet(t, opts) })
	}
}

func sdkLoggerQuiet(t *testing.T, opts *mcp.ClientSessionOptions) {
	c := &logtest.Capture{}
	log := sdklog.New(slog.New(c))
	srv := testServer(log)
	started, release := make(chan struct{}, 1), make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done(): // the client's notifications/cancelled
		case <-release: // or the end of the test, should it not arrive
		}
		return nil, nil, context.Canceled
	})
	ts := serve(t, httpapi.Options{Loopback: true, MCP: srv, Logger: slog.New(c)})
	t.Cleanup(func() { close(release) }) // before the server closes

	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		done <- err
	}()
	<-started
	cancel() // the client abandons the call
	<-done
	ts.CloseClientConnections() // and goes away without DELETE
	cs.Close()
	// Not synchronisation: a window for records the server would log late,
	// as it notices the closed connections, and which must not be above
	// Debug. Nothing signals them: the session may end (and log so) or stay
	// until it times out, as the client left without a DELETE.
	time.Sleep(200 * time.Millisecond)
	checkLogs(t, c, slog.LevelInfo)
	// No record above Debug carries a session id.
	for _, r := range c.Records() {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "session_id" && r.Level > slog.LevelDebug {
				t.Errorf("%s logged at %s with session_id", r.Message, r.Level)
			}
			return true
		})
	}
}

// A body over the limit gets 413, and the client can read it: the connection
// is closed gracefully, not reset under its feet.
func TestOversizedBodyGets413(t *testing.T) {
	ts := serve(t, httpapi.Options{Loopback: true, MaxBodyBytes: 1024, BodyTimeout: 2 * time.Second})
	body := strings.Repeat("a", 100_000)
	for _, tt := range []struct{ name, head, body string }{
		{"content-length", "Content-Length: 100000\r\n", body},
		{"chunked", "Transfer-Encoding: chunked\r\n", "186a0\r\n" + body + "\r\n0\r\n\r\n"},
		{"expect 100-continue", "Content-Length: 100000\r\nExpect: 100-continue\r\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 {
				conn, err := net.Dial("tcp", ts.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				io.WriteString(conn, "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\n"+tt.head+"\r\n"+tt.body)
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					conn.Close()
					t.Fatalf("no response: %v", err)
				}
				io.ReadAll(resp.Body)
				conn.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
					t.Fatalf("status %d, close %v", resp.StatusCode, resp.Close)
				}
			}
		})
	}
}
