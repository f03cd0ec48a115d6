package proxy

// The proxy on the wire (raw JSON-RPC over HTTP), its sessions and their
// end, and its parts: path splitting, tool filtering, the SSE tap, raw
// results, tool timeouts.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestNotificationsOnRequestStream checks on the wire that the notifications
// a server sends while handling a request travel on that request's SSE
// stream, before its response.
func TestNotificationsOnRequestStream(t *testing.T) {
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			_, ts := startProxy(t, testConfig(d.start(t)))
			rc := newRawClient(t, ts.URL+"/mcp/servers/tb/s")
			rc.post(t, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
			for _, tc := range []struct {
				tool, method string
			}{{"progress", "notifications/progress"}, {"log", "notifications/message"}} {
				msgs := rc.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":{},"_meta":{"progressToken":7}}}`)
				var methods []string
				for _, m := range msgs {
					if m.Method != "" {
						methods = append(methods, m.Method)
					} else {
						methods = append(methods, "response")
					}
				}
				want := []string{tc.method, tc.method, tc.method, "response"}
				if !slices.Equal(methods, want) {
					t.Errorf("%s: stream carried %v, want %v", tc.tool, methods, want)
				}
			}
		})
	}
}

// rawClient speaks Streamable HTTP by hand, to see the streams.
type rawClient struct {
	url, session string
	hc           *http.Client
}

type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func newRawClient(t *testing.T, url string) *rawClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rc := &rawClient{url: url, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	rc.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	rc.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, rc.url, nil)
		req.Header.Set("Mcp-Session-Id", rc.session)
		if resp, err := rc.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return rc
}

// post sends one message and returns the messages of the response stream.
func (rc *rawClient) post(t *testing.T, body string) []rawMessage {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rc.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if rc.session != "" {
		req.Header.Set("Mcp-Session-Id", rc.session)
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", body, resp.Status, b)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		rc.session = id
	}
	var msgs []rawMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var m rawMessage
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("bad JSON response: %v", err)
		}
		return []rawMessage{m}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var m rawMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("bad SSE data %q: %v", data, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// TestNotFound checks the messages of unknown toolboxes and servers.
func TestNotFound(t *testing.T) {
	_, ts := startProxy(t, testConfig(&config.Server{Transport: config.Stdio, Command: "/nonexistent"}))
	for path, want := range map[string]string{
		"/mcp/servers/nope/s":      `unknown toolbox "nope"`,
		"/mcp/servers/tb/nope":     `unknown server "nope" in toolbox "tb"`,
		"/mcp/servers/tb":          "/mcp/servers/{toolbox}/{server}",
		"/mcp/servers/tb/s/extra/": "/mcp/servers/{toolbox}/{server}",
	} {
		resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error struct{ Message string } }
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(e.Error.Message, want) {
			t.Errorf("POST %s: %s %q, want 404 naming %s", path, resp.Status, b, want)
		}
	}
	// A server that cannot start fails the initialize with a JSON-RPC error.
	_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp/servers/tb/s"}, nil)
	if err == nil || !strings.Contains(err.Error(), `connecting to MCP server "s" of toolbox "tb"`) {
		t.Errorf("initialize with a broken server: %v", err)
	}
}

// TestSessionLifecycle checks that a downstream process lives as long as its
// upstream session, and that Close ends every one.
func TestSessionLifecycle(t *testing.T) {
	p, ts := startProxy(t, testConfig(downstreams[0].start(t)))
	url := ts.URL + "/mcp/servers/tb/s"
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	pid := func(cs *mcp.ClientSession) int {
		n, err := strconv.Atoi(text(t, call(t, cs, "pid", nil)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	alive := func(pid int) bool { return syscall.Kill(pid, 0) == nil }

	a, b := connect(t, client, url), connect(t, client, url)
	pa, pb := pid(a), pid(b)
	if pa == pb || !alive(pa) || !alive(pb) {
		t.Fatalf("sessions share process %d/%d, want one each", pa, pb)
	}
	a.Close() // DELETE: the downstream session and process end
	testtools.Eventually(t, 10*time.Second, "the first process to end", func() bool { return !alive(pa) })
	if !alive(pb) {
		t.Fatal("closing one session ended the other's process")
	}
	c := connect(t, client, url)
	pc := pid(c)
	p.Close()
	for _, n := range []int{pb, pc} {
		if alive(n) {
			t.Errorf("process %d survived Close", n)
		}
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a request after Close: %s, want 503", resp.Status)
	}
}

// TestDownstreamExit checks that the upstream session ends with the
// downstream server.
func TestDownstreamExit(t *testing.T) {
	_, ts := startProxy(t, testConfig(downstreams[0].start(t)))
	cs := connect(t, mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil), ts.URL+"/mcp/servers/tb/s")
	pid, err := strconv.Atoi(text(t, call(t, cs, "pid", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testtools.Eventually(t, 10*time.Second, "calls to fail", func() bool {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pid"})
		return err != nil
	})
}

// TestNoLeaks runs sessions of every kind, closes everything and checks that
// no goroutine is left behind.
func TestNoLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("sessions", func(t *testing.T) {
		for _, d := range downstreams {
			t.Run(d.name, func(t *testing.T) {
				_, ts := startProxy(t, testConfig(d.start(t)))
				var ev events
				cs := connect(t, newClient(&ev), ts.URL+"/mcp/servers/tb/s")
				call(t, cs, "ask", nil)
				p := &mcp.CallToolParams{Name: "progress"}
				p.SetProgressToken(1)
				if _, err := cs.CallTool(context.Background(), p); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
				connect(t, newClient(&ev), ts.URL+"/mcp/servers/tb/s") // left open for Close
			})
		}
	})
	testtools.EventuallyErr(t, 15*time.Second, "the goroutines of the sessions to end", func() error {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if n := runtime.NumGoroutine(); n > before {
			return goroutinesLeft{before, n}
		}
		return nil
	})
}

// goroutinesLeft is a count of goroutines above the count before; its text,
// made when it is reported, holds the stacks of the goroutines then.
type goroutinesLeft struct{ before, after int }

func (g goroutinesLeft) Error() string {
	buf := make([]byte, 1<<20)
	return fmt.Sprintf("%d goroutines before, %d after:\n%s", g.before, g.after, buf[:runtime.Stack(buf, true)])
}

func TestSplitPath(t *testing.T) {
	for path, want := range map[string][2]string{
		"/mcp/servers/dev/x":         {"dev", "x"},
		"/mcp/servers/dev/x/":        {"dev", "x"},
		"/api/mcp/servers/dev/x":     {"dev", "x"},
		"dev/x":                      {"dev", "x"},
		"/dev/x":                     {"dev", "x"},
		"/mcp/servers/dev":           {},
		"/mcp/servers//x":            {},
		"/mcp/servers/dev/x/y":       {},
		"/mcp/servers/dev%2Fx/y":     {"dev%2Fx", "y"},
		"/mcp/servers/a/b/":          {"a", "b"},
		"":                           {},
		"/mcp/servers/":              {},
		"/mcp/servers/dev/x/mcp/etc": {},
	} {
		tb, s, ok := splitPath(path)
		if got := [2]string{tb, s}; got != want || ok != (want != [2]string{}) {
			t.Errorf("splitPath(%q) = %q, %q, %v, want %q", path, tb, s, ok, want)
		}
	}
}

func TestFilterToolList(t *testing.T) {
	raw := json.RawMessage(`{"tools":[{"name":"a","x":1},{"name":"get_b"},{"name":"c"}],"nextCursor":"n","_meta":{"k":true}}`)
	got, err := filterToolList(raw, []string{"get_*", "a", "!a"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"k":true},"nextCursor":"n","tools":[{"name":"get_b"}]}`
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("filtered = %s, want %s", got, want)
	}
}

// oneByte reads one byte at a time.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestSSETap(t *testing.T) {
	in := "id: a_0\nretry: 100\ndata: \n\n" + // priming
		"event: message\nid: a_1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		": comment\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\r\ndata: \"params\":{\"level\":\"info\",\"data\":\"x\"}}\r\n\r\n" +
		"id: a_3\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		"id: a_4\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9}}\r\r" +
		"id: a_5\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"b\":1,  \"a\":[]}}\n\n" +
		"data: {\"partial\""
	want := "id: a_0\nretry: 100\ndata: \n\n" +
		"id: a_1\n\n" +
		"id: a_3\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n" +
		"id: a_4\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9}}\r\r" +
		"id: a_5\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"b\":1,  \"a\":[]}}\n\n" +
		"data: {\"partial\""
	for _, chunked := range []bool{false, true} {
		var notified []string
		var r io.Reader = strings.NewReader(in)
		if chunked {
			r = oneByte{r}
		}
		slot := &rawSlot{}
		tap := &sseTap{body: io.NopCloser(r), slot: slot, notify: func(method string, params json.RawMessage) {
			notified = append(notified, method+" "+string(params))
		}}
		got, err := io.ReadAll(tap)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("chunked %v: filtered\n%q\nwant\n%q", chunked, got, want)
		}
		wantNotified := []string{
			`notifications/progress {"progressToken":1,"progress":1}`,
			`notifications/message {"level":"info","data":"x"}`,
		}
		if !slices.Equal(notified, wantNotified) {
			t.Errorf("chunked %v: notified %q, want %q", chunked, notified, wantNotified)
		}
		if g, w := string(slot.result()), `{"b":1,  "a":[]}`; g != w {
			t.Errorf("chunked %v: captured %s, want %s", chunked, g, w)
		}
	}
}

// TestRawResults checks that results reach the client byte for byte as the
// downstream server wrote them.
func TestRawResults(t *testing.T) {
	s := newTestServer()
	ref := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ref.Close()
	direct := newRawClient(t, ref.URL)
	calls := []string{
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"<\u00e9>"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://bin"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
	}
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			_, ts := startProxy(t, testConfig(d.start(t)))
			proxied := newRawClient(t, ts.URL+"/mcp/servers/tb/s")
			for _, c := range calls {
				want, got := direct.post(t, c), proxied.post(t, c)
				if len(want) != 1 || len(got) != 1 {
					t.Fatalf("%s: %d messages through the proxy, %d directly", c, len(got), len(want))
				}
				if !bytes.Equal(got[0].Result, want[0].Result) || !bytes.Equal(got[0].Error, want[0].Error) {
					t.Errorf("%s:\nthrough the proxy %s%s\ndirectly          %s%s", c, got[0].Result, got[0].Error, want[0].Result, want[0].Error)
				}
			}
		})
	}
}

// TestToolTimeout checks that a configured Timeout bounds tools/call and
// cancels the downstream call.
func TestToolTimeout(t *testing.T) {
	for _, d := range downstreams[:2] { // the SDK path and the raw passthrough
		t.Run(d.name, func(t *testing.T) {
			srv := d.start(t)
			srv.Timeout = 200 * time.Millisecond
			_, ts := startProxy(t, testConfig(srv))
			cs := connect(t, mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil), ts.URL+"/mcp/servers/tb/s")
			start := time.Now()
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
			if err == nil || !strings.Contains(err.Error(), "tool call timed out after 200ms") {
				t.Fatalf("slow: %v, want a timeout", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the timeout took %v", d)
			}
			testtools.Eventually(t, 10*time.Second, "the downstream call to be cancelled", func() bool { return text(t, call(t, cs, "cancelled", nil)) == "true" })
		})
	}
}
