package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/users"
)

// statelessServer serves a test server over Streamable HTTP with the SDK's
// stateless handler: a server of the sessionless protocol.
func statelessServer(t *testing.T) string {
	srv := newTestServer()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// sessionlessDownstreams are the downstream kinds of the tests, and a
// Streamable HTTP server of the sessionless protocol.
var sessionlessDownstreams = slices.Concat(downstreams, []peerKind{
	{name: "streamable-http-sessionless", start: func(t *testing.T) *config.Server {
		return &config.Server{Transport: config.StreamableHTTP, URL: statelessServer(t)}
	}},
})

// sessionSpy is a RoundTripper that counts the requests and responses
// carrying an Mcp-Session-Id header.
type sessionSpy struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int // requests
	ids  []string
}

func (s *sessionSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.n++
	if id := r.Header.Get(mcpwire.SessionHeader); id != "" {
		s.ids = append(s.ids, "sent "+id)
	}
	s.mu.Unlock()
	resp, err := s.next.RoundTrip(r)
	if resp != nil {
		if id := resp.Header.Get(mcpwire.SessionHeader); id != "" {
			s.mu.Lock()
			s.ids = append(s.ids, "answered "+id)
			s.mu.Unlock()
		}
	}
	return resp, err
}

// checkSessionless fails the test if the spy saw a session id, or no
// request.
func (s *sessionSpy) checkSessionless(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 || len(s.ids) > 0 {
		t.Errorf("%d requests, session ids %v: want requests and no session", s.n, s.ids)
	}
}

// connectSessionless connects client to url with the sessionless protocol
// (testtools.Sessionless) and checks that it negotiated it; the spy sees
// its HTTP requests.
func connectSessionless(t *testing.T, client *mcp.Client, url string) (*mcp.ClientSession, *sessionSpy) {
	t.Helper()
	tr := &http.Transport{}
	spy := &sessionSpy{next: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: spy}}, testtools.Sessionless())
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() {
		cs.Close()
		tr.CloseIdleConnections()
	})
	if v := cs.InitializeResult().ProtocolVersion; v != testtools.SessionlessProtocol || cs.ID() != "" {
		t.Fatalf("connected to %s with protocol %q, session %q: want %s without a session", url, v, cs.ID(), testtools.SessionlessProtocol)
	}
	return cs, spy
}

// allTools lists every tool, page by page.
func allTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

// TestSessionless: a client of the sessionless protocol reaches every kind
// of downstream server through the passthrough without a session, and sees
// what a direct sessionless connection to the server (to an in-process
// copy of it over Streamable HTTP when the server has only sessions) sees:
// the server's identity, capabilities and instructions on discovery, its
// tools, its results. Tool filters apply.
func TestSessionless(t *testing.T) {
	for _, d := range sessionlessDownstreams {
		t.Run(d.name, func(t *testing.T) {
			srv := d.start(t)
			_, ts := startProxy(t, testConfig(srv))
			cs, spy := connectSessionless(t, newClient(&events{}), ts.URL+"/mcp/servers/tb/s")
			ref := srv.URL
			if d.name != "streamable-http-sessionless" {
				ref = statelessServer(t)
			}
			direct, _ := connectSessionless(t, newClient(&events{}), ref)

			got, want := cs.InitializeResult(), direct.InitializeResult()
			if !reflect.DeepEqual(got.ServerInfo, testImpl) {
				t.Errorf("serverInfo = %s, want %s", mustJSON(t, got.ServerInfo), mustJSON(t, testImpl))
			}
			if got.Instructions != testInstructions {
				t.Errorf("instructions = %q, want %q", got.Instructions, testInstructions)
			}
			if g, w := mustJSON(t, got.Capabilities), mustJSON(t, want.Capabilities); g != w {
				t.Errorf("capabilities = %s, want %s", g, w)
			}

			if g, w := mustJSON(t, allTools(t, cs)), mustJSON(t, allTools(t, direct)); g != w {
				t.Errorf("tools:\n%s\nwant\n%s", g, w)
			}
			args := map[string]any{"text": "hi"}
			if g, w := mustJSON(t, call(t, cs, "echo", args)), mustJSON(t, call(t, direct, "echo", args)); g != w {
				t.Errorf("echo: %s, want %s", g, w)
			}
			if g, w := mustJSON(t, call(t, cs, "fail", nil)), mustJSON(t, call(t, direct, "fail", nil)); g != w {
				t.Errorf("fail: %s, want %s", g, w)
			}
			var client mcp.InitializeParams
			if err := json.Unmarshal([]byte(text(t, call(t, cs, "client", nil))), &client); err != nil {
				t.Fatal(err)
			}
			if client.ClientInfo == nil || client.ClientInfo.Name != "test-upstream" {
				t.Errorf("the server sees client %s, want the upstream client", mustJSON(t, client.ClientInfo))
			}
			var directClient mcp.InitializeParams
			if err := json.Unmarshal([]byte(text(t, call(t, direct, "client", nil))), &directClient); err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, client.Capabilities), mustJSON(t, directClient.Capabilities); g != w {
				t.Errorf("the server sees client capabilities %s, want %s (as directly)", g, w)
			}

			filtered, fspy := connectSessionless(t, newClient(&events{}), ts.URL+"/mcp/servers/tb/filtered")
			for _, tool := range allTools(t, filtered) {
				if tool.Name == "hidden" {
					t.Error("the filtered server lists hidden")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := filtered.CallTool(ctx, &mcp.CallToolParams{Name: "hidden"}); err == nil || !strings.Contains(err.Error(), `unknown tool "hidden"`) {
				t.Errorf("calling a filtered tool: %v, want unknown tool", err)
			}
			spy.checkSessionless(t)
			fspy.checkSessionless(t)
		})
	}
}

// TestSessionlessRecorded: every tools/call of a sessionless client is
// recorded as on the session paths, with the caller's context, whichever
// way the server is reached (kept session or raw).
func TestSessionlessRecorded(t *testing.T) {
	for _, d := range sessionlessDownstreams {
		t.Run(d.name, func(t *testing.T) {
			var (
				mu  sync.Mutex
				got []pipeline.Passthrough
			)
			p := New(testConfig(d.start(t)), Options{Logger: testLogger(t), Stderr: devNull(t),
				Record: func(ctx context.Context, c pipeline.Passthrough) {
					if ctx.Value(callerKey{}) != "ada" {
						t.Errorf("a call of %s recorded without its caller's context", c.Tool)
					}
					mu.Lock()
					got = append(got, c)
					mu.Unlock()
				}})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, "ada")))
			}))
			t.Cleanup(func() {
				p.Close()
				ts.Close()
			})
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, _ := connectSessionless(t, client, ts.URL+"/mcp/servers/tb/s")
			call(t, cs, "echo", map[string]any{"text": "hello"})
			if res := call(t, cs, "fail", nil); !res.IsError {
				t.Fatal("fail: want a result marked isError")
			}
			ctx := context.Background()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
				t.Fatal("nope: want the server's error")
			}
			filtered, _ := connectSessionless(t, client, ts.URL+"/mcp/servers/tb/filtered")
			if _, err := filtered.CallTool(ctx, &mcp.CallToolParams{Name: "hidden"}); err == nil {
				t.Fatal("hidden: want the proxy's unknown tool")
			}

			mu.Lock()
			defer mu.Unlock()
			type outcome struct {
				server, tool string
				err          errs.Code
				isError      bool
			}
			var outcomes []outcome
			for _, c := range got {
				outcomes = append(outcomes, outcome{c.Server, c.Tool, c.Err, c.IsError})
				if c.Toolbox != "tb" || c.Duration <= 0 || c.Start.IsZero() || c.ResultBytes <= 0 {
					t.Errorf("record %+v: want toolbox, start, duration and the answer's size", c)
				}
			}
			want := []outcome{{"s", "echo", "", false}, {"s", "fail", "", true}, {"s", "nope", errs.BadRequest, false}, {"filtered", "hidden", errs.BadRequest, false}}
			if !slices.Equal(outcomes, want) {
				t.Fatalf("recorded %+v, want %+v", outcomes, want)
			}
			if got[0].ArgsBytes != len(`{"text":"hello"}`) {
				t.Errorf("echo's arguments recorded as %d bytes, want %d", got[0].ArgsBytes, len(`{"text":"hello"}`))
			}
		})
	}
}

// asUsers serves p with the user named by the X-Test-User header.
func asUsers(t *testing.T, p *Proxy) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Test-User"); id != "" {
			r = r.WithContext(users.WithUser(r.Context(), &users.User{ID: id, Name: id}))
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// userTransport sends requests as a user of asUsers.
type userTransport struct {
	user string
	next http.RoundTripper
}

func (u userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-User", u.user)
	return u.next.RoundTrip(r)
}

// connectAs connects a sessionless client as user.
func connectAs(t *testing.T, url, user string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c-" + user, Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: userTransport{user, tr}}}, testtools.Sessionless())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		tr.CloseIdleConnections()
	})
	return cs
}

// keptCount is the number of kept sessions of the endpoint tb/s.
func keptCount(p *Proxy) int {
	p.mu.Lock()
	ep := p.endpoints["tb/s"]
	p.mu.Unlock()
	if ep == nil {
		return 0
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return len(ep.kept)
}

// TestKeptSessions: a server with sessions only (stdio here: one process
// per downstream session) serves sessionless clients on a session kept per
// user: a user's requests share one, two users never do; it is closed when
// idle, and by Proxy.Close, which leaves no goroutine behind; a new user
// beyond the bound takes the place of the session idle longest.
func TestKeptSessions(t *testing.T) {
	pidOf := func(cs *mcp.ClientSession) int {
		n, err := strconv.Atoi(text(t, call(t, cs, "pid", nil)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Run("per user", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent()
		t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last
		p := New(testConfig(downstreams[0].start(t)), Options{Logger: testLogger(t), Stderr: devNull(t)})
		t.Cleanup(func() { p.Close() })
		url := asUsers(t, p).URL + "/mcp/servers/tb/s"
		ada, ada2, bob := connectAs(t, url, "ada"), connectAs(t, url, "ada"), connectAs(t, url, "bob")
		a, a2, b := pidOf(ada), pidOf(ada2), pidOf(bob)
		if a != a2 {
			t.Errorf("one user's clients reached processes %d and %d: want one kept session", a, a2)
		}
		if a == b {
			t.Errorf("two users share the downstream process %d", a)
		}
		// A user's first requests, at once, open one session.
		pids := make([]string, 4)
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		var wg sync.WaitGroup
		for i := range pids {
			wg.Go(func() {
				ctx := context.Background()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "carl", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: userTransport{"carl", tr}}}, testtools.Sessionless())
				if err != nil {
					t.Errorf("connect: %v", err)
					return
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pid"})
				if err != nil || len(res.Content) == 0 {
					t.Errorf("pid: %v", err)
					return
				}
				pids[i] = res.Content[0].(*mcp.TextContent).Text
			})
		}
		wg.Wait()
		if pids[0] == strconv.Itoa(a) || pids[0] == strconv.Itoa(b) || slices.ContainsFunc(pids, func(pid string) bool { return pid != pids[0] }) {
			t.Errorf("one user's concurrent first calls reached processes %v (ada %d, bob %d): want one of its own", pids, a, b)
		}
		if n := keptCount(p); n != 3 {
			t.Errorf("%d kept sessions, want 3", n)
		}
		p.Close()
		if n := keptCount(p); n != 0 {
			t.Errorf("%d kept sessions after Close, want 0", n)
		}
	})
	t.Run("idle", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent()
		t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last
		p := New(testConfig(downstreams[0].start(t)), Options{Logger: testLogger(t), Stderr: devNull(t), SessionTimeout: 50 * time.Millisecond})
		t.Cleanup(func() { p.Close() })
		url := asUsers(t, p).URL + "/mcp/servers/tb/s"
		cs := connectAs(t, url, "ada")
		first := pidOf(cs)
		testtools.Eventually(t, 30*time.Second, "the idle kept session to close", func() bool { return keptCount(p) == 0 })
		if next := pidOf(cs); next == first {
			t.Errorf("after the idle timeout the user still reaches process %d", first)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		p := New(testConfig(downstreams[0].start(t)), Options{Logger: testLogger(t), Stderr: devNull(t), MaxKeptSessions: 1})
		t.Cleanup(func() { p.Close() })
		url := asUsers(t, p).URL + "/mcp/servers/tb/s"
		ada := connectAs(t, url, "ada")
		first := pidOf(ada)
		bob := connectAs(t, url, "bob")
		pidOf(bob)
		if n := keptCount(p); n != 1 {
			t.Errorf("%d kept sessions, want the bound, 1", n)
		}
		if again := pidOf(ada); again == first {
			t.Errorf("ada still reaches process %d: want its session closed for bob's", first)
		}
	})
}

// TestSessionlessDiscoverMarked: the server/discover result a sessionless
// client gets through the passthrough carries MetaKey, whichever way the
// server is reached (the SDK's client keeps only serverInfo of a discover
// result's _meta, so the request is made by hand).
func TestSessionlessDiscoverMarked(t *testing.T) {
	for _, d := range sessionlessDownstreams {
		t.Run(d.name, func(t *testing.T) {
			_, ts := startProxy(t, testConfig(d.start(t)))
			body := `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{` +
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
				`"io.modelcontextprotocol/clientCapabilities":{}}}}`
			req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp/servers/tb/s", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set(mcpwire.VersionHeader, testtools.SessionlessProtocol)
			req.Header.Set(mcpwire.MethodHeader, "server/discover")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Header.Get(mcpwire.SessionHeader) != "" {
				t.Errorf("answered with session %q", resp.Header.Get(mcpwire.SessionHeader))
			}
			if mcpwire.MediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
				_, lines, ok := mcpwire.NextEvent(data, true)
				if !ok {
					t.Fatalf("no event in %s", data)
				}
				data = mcpwire.EventData(lines)
			}
			var msg struct {
				Result struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"result"`
			}
			if err := json.Unmarshal(data, &msg); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if g, w := string(msg.Result.Meta[MetaKey]), `{"server":"s","toolbox":"tb"}`; g != w {
				t.Errorf("_meta[%q] = %s, want %s (response %s)", MetaKey, g, w, data)
			}
		})
	}
}

// TestSessionlessProgress: a sessionless client's progress notifications
// reach it on its request's stream, as directly, whichever way the server
// is reached (a kept session forwards them to the request they belong to).
func TestSessionlessProgress(t *testing.T) {
	for _, d := range sessionlessDownstreams {
		t.Run(d.name, func(t *testing.T) {
			_, ts := startProxy(t, testConfig(d.start(t)))
			var ev events
			cs, _ := connectSessionless(t, newClient(&ev), ts.URL+"/mcp/servers/tb/s")
			var refEv events
			direct, _ := connectSessionless(t, newClient(&refEv), statelessServer(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, c := range []*mcp.ClientSession{cs, direct} {
				p := &mcp.CallToolParams{Name: "progress"}
				p.SetProgressToken("tok-1")
				res, err := c.CallTool(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if text(t, res) != "tok-1" {
					t.Errorf("the server saw progress token %q", text(t, res))
				}
			}
			for _, e := range []*events{&ev, &refEv} {
				testtools.Eventually(t, 10*time.Second, "3 progress notifications", func() bool { return len(e.snapshot().progress) == 3 })
			}
			if g, w := strings.Join(ev.snapshot().progress, ","), strings.Join(refEv.snapshot().progress, ","); g != w {
				t.Errorf("progress = %q, want %q (as directly)", g, w)
			}
		})
	}
}
