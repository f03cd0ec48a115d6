package main

//lint:file-ignore SA1019 a session's log level (earlier protocol versions) follows it across replicas

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// replica is one "nexus serve" process of a test deployment.
type replica struct {
	t    *testing.T
	i    int
	addr string
	args []string
	logs string

	mu  sync.Mutex
	cmd *exec.Cmd
	f   *os.File
}

// start runs the replica's process (again, after kill), appending to its log.
func (r *replica) start() {
	r.t.Helper()
	f, err := os.OpenFile(r.logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(binary, r.args...)
	cmd.Stderr = f
	testtools.OwnGroup(cmd) // the downstream servers it starts with it
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.cmd, r.f = cmd, f
	r.mu.Unlock()
}

// kill ends the replica's process with SIGKILL, as a machine that dies:
// no drain, no goodbye, and the processes it started (its downstream
// servers) die with it.
func (r *replica) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	testtools.SignalGroup(r.cmd, syscall.SIGKILL)
	r.cmd.Wait()
	testtools.EndGroup(r.t, r.cmd)
	r.f.Close()
}

// stop ends the replica's process with SIGINT, as at the end of a test.
func (r *replica) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	testtools.Stop(r.t, r.cmd, os.Interrupt, 20*time.Second)
	r.f.Close()
}

func (r *replica) base() string { return "http://" + r.addr }

// startReplicas starts n "nexus serve" replicas on one new PostgreSQL
// schema, all at the same moment (as a deployment starts them), and returns
// them once each is ready, with the schema's URL.
func startReplicas(t *testing.T, n int, extra ...string) ([]*replica, string) {
	t.Helper()
	db := storetest.PostgresURL(t)
	reps := make([]*replica, n)
	for i := range n {
		addr := testtools.FreeAddr(t)
		r := &replica{t: t, i: i, addr: addr, logs: filepath.Join(t.TempDir(), "replica.log"),
			args: append([]string{"serve", "--addr", addr, "--db", db, "--log-level", "debug", "--drain-timeout", "5s"}, extra...)}
		r.start()
		t.Cleanup(func() {
			r.stop()
			if t.Failed() {
				b, _ := os.ReadFile(r.logs)
				t.Logf("replica %d (%s) logs:\n%s", i, addr, b)
			}
		})
		reps[i] = r
	}
	for _, r := range reps {
		testtools.EventuallyErr(t, 30*time.Second, "a replica to become ready at "+r.base(), func() error { return ready(r.base()) })
	}
	return reps, db
}

// bases are the replicas' base URLs.
func bases(reps []*replica) []string {
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = r.base()
	}
	return out
}

// roundRobin is a load balancer in front of bases with no affinity: each
// request goes to the next replica, as a round-robin balancer sends it. As
// a balancer with health checks does, a request whose replica refuses the
// connection (it is down) goes to the next one; a request a replica drops
// midway (it died) gets 502, with a JSON-RPC error when it was a request,
// and its client retries. It counts the requests each replica got.
func roundRobin(t *testing.T, bases []string) (string, []*atomic.Int64) {
	t.Helper()
	counts := make([]*atomic.Int64, len(bases))
	for i := range bases {
		counts[i] = new(atomic.Int64)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	trace := os.Getenv("NEXUS_TEST_TRACE_BALANCER") != ""
	var next atomic.Uint64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			// A WebSocket lives on the replica it was opened on: the
			// next one that takes a connection, proxied as it is.
			for range len(bases) {
				i := int(next.Add(1) % uint64(len(bases)))
				u, _ := url.Parse(bases[i])
				c, err := net.DialTimeout("tcp", u.Host, time.Second)
				if err != nil {
					continue
				}
				c.Close()
				counts[i].Add(1)
				httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
				return
			}
			http.Error(w, "no replica is up", http.StatusBadGateway)
			return
		}
		// The body is read first and sent from memory: a balancer that
		// streams the incoming body to the replica cuts fast streamed
		// answers now and then (golang/go#40747; README.md, "Running
		// several replicas").
		body, _ := io.ReadAll(r.Body)
		var resp *http.Response
		var err error
		for range len(bases) {
			i := int(next.Add(1) % uint64(len(bases)))
			out, _ := http.NewRequestWithContext(r.Context(), r.Method, bases[i]+r.URL.RequestURI(), bytes.NewReader(body))
			out.Header = r.Header.Clone()
			resp, err = client.Do(out)
			if trace {
				fmt.Fprintf(os.Stderr, "balancer %s -> %d %s %s sid=%s %.100s: %v\n", time.Now().Format("05.000"), i, r.Method, r.URL.Path, r.Header.Get("Mcp-Session-Id"), body, err)
			}
			if err == nil {
				counts[i].Add(1)
				break
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				break // it may have reached the replica: not sent twice
			}
		}
		if err != nil {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(body, &msg) == nil && len(msg.ID) > 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadGateway)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the replica went away: retry"}}`, msg.ID)
				return
			}
			http.Error(w, "the replica went away: retry", http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, rerr := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			if rerr != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL, counts
}

// TestReplicasServeOneSession: two replicas on one PostgreSQL database behind
// a round-robin balancer serve one MCP session as if they were one server:
// the session started on one replica is re-created on the other from the
// store, its calls keep one conversation, and on the bounded surface a tool
// discovered through one replica is listed and callable through the other.
func TestReplicasServeOneSession(t *testing.T) {
	reps, db := startReplicas(t, 2, "--no-demo")
	bases := bases(reps)
	front, counts := roundRobin(t, bases)
	ctx := context.Background()

	t.Run("flat", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp")
		var sessions []string
		for i := range 6 {
			if names := toolNames(t, cs); !slices.Contains(names, "belief_query") {
				t.Fatalf("request %d: tools/list lacks belief_query: %v", i, names)
			}
			res := call(t, cs, "belief_query", map[string]any{"query": "replicas"})
			if res.IsError {
				t.Fatalf("request %d: belief_query: %+v", i, res.Content)
			}
			sessions = append(sessions, res.Meta[mcpkit.MetaSession].(string))
		}
		for _, s := range sessions[1:] {
			if s != sessions[0] {
				t.Errorf("the session's calls got conversations %v across replicas, want one", sessions)
				break
			}
		}
	})

	t.Run("bounded", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp/bounded")
		res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}})
		if res.IsError {
			t.Fatalf("get_tools: %+v", res.Content)
		}
		for i := range 4 { // both replicas, twice
			if names := toolNames(t, cs); !slices.Contains(names, "substrate_belief_create") {
				t.Fatalf("listing %d: the discovered tool is missing: %v", i, names)
			}
			res := call(t, cs, "substrate_belief_create", map[string]any{"content": "Replica " + string(rune('A'+i)) + " serves a discovered tool"})
			if res.IsError {
				t.Fatalf("call %d of the discovered tool: %+v", i, res.Content)
			}
		}
	})

	t.Run("discovered while both replicas hold it", func(t *testing.T) {
		// Both replicas serve the session before it discovers a tool on
		// one of them: the other learns it over the event bus (its copy
		// lists and calls it, and tells the client its list changed).
		changed := make(chan struct{}, 8)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sync", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front + "/mcp/bounded"}, testtools.WithSession())
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for range 4 {
			if names := toolNames(t, cs); slices.Contains(names, "substrate_belief_query") {
				t.Fatalf("listed before discovery: %v", names)
			}
		}
		res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_query"}}})
		if res.IsError {
			t.Fatalf("get_tools: %+v", res.Content)
		}
		for i := range 4 { // both replicas, twice
			if names := toolNames(t, cs); !slices.Contains(names, "substrate_belief_query") {
				t.Fatalf("listing %d after discovery: %v", i, names)
			}
			if res := call(t, cs, "substrate_belief_query", map[string]any{"query": "replicas"}); res.IsError {
				t.Fatalf("call %d of the discovered tool: %+v", i, res.Content)
			}
		}
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Error("no notifications/tools/list_changed after the discovery")
		}
	})

	t.Run("log levels set through both replicas", func(t *testing.T) {
		// Each level set through one replica is applied on the other's
		// copy without being stored or told again: the replicas do not
		// echo levels back and forth, and the store ends on the last one.
		cs, _ := connect(t, front+"/mcp")
		toolNames(t, cs)
		toolNames(t, cs) // both replicas hold the session
		levels := []mcp.LoggingLevel{"debug", "info", "warning", "error", "notice"}
		var last mcp.LoggingLevel
		for i := range 20 {
			last = levels[i%len(levels)]
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: last}); err != nil {
				t.Fatal(err)
			}
		}
		conn, err := sql.Open("pgx", db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Settled: the stored level stays the last one for a while.
		stable := 0
		testtools.EventuallyErr(t, 10*time.Second, "the stored log level to settle on "+string(last), func() error {
			var got string
			if err := conn.QueryRow(`SELECT log_level FROM mcp_sessions WHERE id = $1`, cs.ID()).Scan(&got); err != nil {
				return err
			}
			if got != string(last) {
				stable = 0
				return fmt.Errorf("stored %q", got)
			}
			if stable++; stable < 10 {
				return errors.New("not settled yet")
			}
			return nil
		})
	})

	t.Run("trace cursor from another replica", func(t *testing.T) {
		// A page of traces read from one replica goes on from another: the
		// cursor's key is the installation's, kept in the store.
		a, b := bases[0], bases[1]
		code, body := restDo(t, "GET", a+"/api/traces?limit=2", "", "")
		cursor := jsonPath(t, body, "nextCursor")
		if code != 200 || cursor == "" {
			t.Fatalf("the first page from replica 0: %d %.300s", code, body)
		}
		first := body
		code, body = restDo(t, "GET", b+"/api/traces?limit=2&cursor="+cursor, "", "")
		if code != 200 || !strings.Contains(body, `"items":[{`) || body == first {
			t.Fatalf("the next page from replica 1 with replica 0's cursor: %d %.300s", code, body)
		}
		// A cursor is still checked there: another query's is refused.
		if code, body := restDo(t, "GET", b+"/api/traces?limit=2&tool=belief_create&cursor="+cursor, "", ""); code != 400 {
			t.Fatalf("replica 0's cursor with other filters on replica 1: %d %.300s", code, body)
		}
	})

	t.Run("concurrent first requests", func(t *testing.T) {
		// Many requests of one session reach a replica that does not hold
		// it at the same moment: it is re-created once, and all succeed.
		cs, _ := connect(t, front+"/mcp")
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_query", Arguments: map[string]any{"query": "concurrent"}})
				if err != nil || res.IsError {
					t.Errorf("a concurrent call: %v %+v", err, res)
				}
			}()
		}
		wg.Wait()
	})

	t.Run("ended session", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp")
		id := cs.ID()
		call(t, cs, "belief_query", map[string]any{"query": "x"})
		cs.Close() // DELETE, through one replica
		// Every replica forgets it: the one that served the DELETE at once,
		// the others when the event reaches them.
		for _, base := range bases {
			testtools.EventuallyErr(t, 5*time.Second, base+" to forget the deleted session", func() error {
				req, _ := http.NewRequest("POST", base+"/mcp", stringsReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					return fmt.Errorf("a deleted session answered %d, want 404", resp.StatusCode)
				}
				return nil
			})
		}
	})

	for i, c := range counts {
		if c.Load() == 0 {
			t.Errorf("replica %d got no requests", i)
		}
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestReplicasServeToolboxes: each replica runs its own stdio downstream
// servers, and HTTP downstream servers are shared; a toolbox opened
// through one replica is usable through every replica, on the flat and the
// bounded surfaces, by one session whose requests alternate between them.
func TestReplicasServeToolboxes(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "development", "mcpServers": map[string]any{
			"hello":   map[string]any{"command": helloServer(t)},
			"sleeper": map[string]any{"url": sleepServer(t), "transport": "http"},
		}},
	}})
	reps, _ := startReplicas(t, 2, "--no-demo", "--config", cfg)
	front, counts := roundRobin(t, bases(reps))

	t.Run("flat", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp")
		for i := range 4 {
			if res := call(t, cs, "dev__hello__greet", map[string]any{"name": fmt.Sprint("flat ", i)}); res.IsError || text(res) != fmt.Sprint("Hi flat ", i) {
				t.Fatalf("call %d of a stdio server's tool: %s", i, text(res))
			}
			if res := call(t, cs, "dev__sleeper__sleep", map[string]any{"ms": 1}); res.IsError || text(res) != "slept" {
				t.Fatalf("call %d of an HTTP server's tool: %s", i, text(res))
			}
		}
	})
	t.Run("bounded", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp/bounded")
		if res := call(t, cs, "open_toolbox", map[string]any{"toolbox": "dev"}); res.IsError {
			t.Fatalf("open_toolbox: %s", text(res))
		}
		for i := range 4 {
			res := call(t, cs, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "dev", "server": "hello", "tool": "greet"}, "arguments": map[string]any{"name": fmt.Sprint("bounded ", i)}})
			if res.IsError || text(res) != fmt.Sprint("Hi bounded ", i) {
				t.Fatalf("use_tool %d: %s", i, text(res))
			}
		}
		if res := call(t, cs, "get_tools", map[string]any{"tools": []string{"hello_greet"}}); res.IsError {
			t.Fatalf("get_tools: %s", text(res))
		}
		for i := range 4 {
			if res := call(t, cs, "hello_greet", map[string]any{"name": "discovered"}); res.IsError || text(res) != "Hi discovered" {
				t.Fatalf("call %d of the discovered downstream tool: %s", i, text(res))
			}
		}
	})
	t.Run("sessionless", func(t *testing.T) {
		// No initialize opens the toolboxes: a sessionless tools/list does,
		// on whichever replica it reaches.
		flat := connectSessionless(t, front+"/mcp")
		for i := range 2 {
			if names := toolNames(t, flat); !slices.Contains(names, "dev__hello__greet") {
				t.Fatalf("listing %d: %v", i, names)
			}
			if res := call(t, flat, "dev__hello__greet", map[string]any{"name": "sessionless"}); res.IsError || text(res) != "Hi sessionless" {
				t.Fatalf("call %d: %s", i, text(res))
			}
		}
		bounded := connectSessionless(t, front+"/mcp/bounded")
		for i := range 2 {
			if res := call(t, bounded, "hello_greet", map[string]any{"name": "by name"}); res.IsError || text(res) != "Hi by name" {
				t.Fatalf("call %d of a downstream tool by its get_tools name: %s", i, text(res))
			}
		}
	})
	for i, c := range counts {
		if c.Load() == 0 {
			t.Errorf("replica %d got no requests", i)
		}
	}
}

// TestReplicasServeADiscoveryAtOnce: a tool a session discovers through one
// replica is callable and listed through another at once, although no event
// has told that replica (none will: each replica's events stay in its
// process), and it held the session from before: get_tools stores the tool
// before it answers, and the other replica reads the store.
func TestReplicasServeADiscoveryAtOnce(t *testing.T) {
	reps, _ := startReplicas(t, 2, "--no-demo", "--events", "local")
	p := &pinned{bases: bases(reps)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pinned", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: p.bases[0] + "/mcp/bounded", HTTPClient: &http.Client{Transport: p}}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p.to.Store(1)
	if names := toolNames(t, cs); slices.Contains(names, "substrate_belief_query") { // replica 1 holds the session now
		t.Fatalf("listed before discovery: %v", names)
	}

	p.to.Store(0)
	if res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_query"}}}); res.IsError {
		t.Fatalf("get_tools: %+v", res.Content)
	}
	p.to.Store(1)
	if res := call(t, cs, "substrate_belief_query", map[string]any{"query": "replicas"}); res.IsError {
		t.Fatalf("replica 1 called a tool discovered through replica 0: %s", text(res))
	}

	p.to.Store(0)
	if res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}}); res.IsError {
		t.Fatalf("get_tools: %+v", res.Content)
	}
	p.to.Store(1)
	if names := toolNames(t, cs); !slices.Contains(names, "substrate_belief_create") {
		t.Fatalf("replica 1 does not list a tool discovered through replica 0: %v", names)
	}
}

// pinned sends each request to the replica the test chose (bases[to]).
type pinned struct {
	bases []string
	to    atomic.Int32
}

func (p *pinned) RoundTrip(r *http.Request) (*http.Response, error) {
	u, err := url.Parse(p.bases[p.to.Load()])
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, ""
	return http.DefaultTransport.RoundTrip(r)
}

// TestRestoredSessionOpensToolboxes: a session that began on one replica
// and reaches another for the first time with its tools/list is restored
// there from the store, without an initialize: its listing opens that
// replica's toolboxes first, as the initialize did on the first, so that it
// names the downstream servers' tools too.
func TestRestoredSessionOpensToolboxes(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev": map[string]any{"description": "development", "mcpServers": map[string]any{
			"hello": map[string]any{"command": helloServer(t)},
		}},
	}})
	reps, _ := startReplicas(t, 2, "--no-demo", "--config", cfg)
	b := bases(reps)
	post := func(base, session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	resp, body := post(b[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize on the first replica: %s %s", resp.Status, body)
	}
	if resp, body := post(b[0], id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	resp, body = post(b[1], id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"dev__hello__greet"`) || !strings.Contains(body, `"belief_query"`) {
		t.Fatalf("tools/list of the restored session on the second replica: %s\n%s", resp.Status, body)
	}
}
