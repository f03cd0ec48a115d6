package workbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// hangingPeer is an HTTP server that accepts every request and never
// answers (until the test ends).
func hangingPeer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	return ts.URL
}

// countingPeer serves srv over Streamable HTTP like httpPeer and counts the
// requests it gets.
func countingPeer(t *testing.T, srv *mcp.Server) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, &n
}

// TestBrokenServerDoesNotStallNewSessions: with one downstream server that
// never answers, the first session's tools/list waits for its first
// connection attempt, at most about its connect timeout; a session that
// starts after that attempt failed lists the other server's tools at once,
// and so does one that starts while a retry of the broken server runs.
func TestBrokenServerDoesNotStallNewSessions(t *testing.T) {
	const connectTimeout = 2 * time.Second
	mute := urlServer(config.StreamableHTTP, hangingPeer(t))
	mute.ConnectTimeout = connectTimeout
	good := mcp.NewServer(&mcp.Implementation{Name: "good"}, nil)
	textTool(good, "greet", "hi")
	goodURL := httpPeer(t, config.StreamableHTTP, good)
	cfg := toolboxConfig("tb", named{"mute", mute})
	addToolbox(cfg, "ok", named{"good", urlServer(config.StreamableHTTP, goodURL)})
	m, reg := newManager(t, cfg)

	p := pipeline.New(pipeline.Options{Registry: reg, Resolve: m.Resolve})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: m}}))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	// session connects a client and lists its tools; it reports how long
	// that took.
	session := func(what string) time.Duration {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		var names []string
		for _, tool := range lt.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, "ok__good__greet") {
			t.Errorf("%s: tools/list %v, want ok__good__greet", what, names)
		}
		t.Logf("%s: initialize and tools/list took %s", what, elapsed)
		return elapsed
	}

	if d := session("first session"); d > connectTimeout+3*time.Second {
		t.Errorf("first session: tools/list took %s, want about the connect timeout (%s) at most", d, connectTimeout)
	}
	if o := m.toolbox("tb").servers[0].status(); o.connected || o.down == nil {
		t.Fatalf("the mute server: %+v, want failed", o)
	}
	// Past the mute server's retry time, the next session may start a retry.
	failed := m.toolbox("tb").servers[0]
	testtools.Eventually(t, 10*time.Second, "the mute server's retry time", func() bool {
		failed.mu.Lock()
		defer failed.mu.Unlock()
		return !failed.retryAt.IsZero() && time.Now().After(failed.retryAt)
	})
	if d := session("second session"); d > connectTimeout/4 {
		t.Errorf("second session: tools/list took %s, want well under the connect timeout (%s)", d, connectTimeout)
	}
	mu := m.toolbox("tb").servers[0]
	mu.mu.Lock()
	retrying := mu.attempt != nil
	mu.mu.Unlock()
	if !retrying {
		t.Error("the second session, after the retry delay, started no retry of the mute server")
	}
	if d := session("third session"); d > connectTimeout/4 {
		t.Errorf("third session: tools/list took %s, want well under the connect timeout (%s)", d, connectTimeout)
	}
}

// TestResolveConnectsOnlyTheNamedServer: resolving a flat name whose server
// part names no server of the toolbox starts no connection and answers at
// once; a name of a configured server connects that server only; a name the
// connected server does not have answers at once.
func TestResolveConnectsOnlyTheNamedServer(t *testing.T) {
	a := mcp.NewServer(&mcp.Implementation{Name: "a"}, nil)
	textTool(a, "greet", "from a")
	aURL, aHits := countingPeer(t, a)
	b := mcp.NewServer(&mcp.Implementation{Name: "b"}, nil)
	textTool(b, "greet", "from b")
	bURL, bHits := countingPeer(t, b)
	m, _ := newManager(t, toolboxConfig("tb",
		named{"a", urlServer(config.StreamableHTTP, aURL)}, named{"b", urlServer(config.StreamableHTTP, bURL)}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, name := range []string{"tb__typo__x", "tb__a", "tb__a__", "tb__"} {
		start := time.Now()
		err := m.Resolve(ctx, name)
		if e := errs.From(err); e == nil || e.Code != errs.NotFound {
			t.Errorf("Resolve(%q) = %v, want NOT_FOUND", name, err)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("Resolve(%q) took %s", name, d)
		}
	}
	// Not synchronisation: a window in which connections that must not
	// start would reach the servers (nothing signals what does not happen).
	time.Sleep(300 * time.Millisecond)
	if a, b := aHits.Load(), bHits.Load(); a != 0 || b != 0 {
		t.Errorf("unknown names reached the servers: %d requests to a, %d to b", a, b)
	}

	if err := m.Resolve(ctx, "tb__a__greet"); err != nil {
		t.Fatalf("Resolve(tb__a__greet) = %v", err)
	}
	if st := m.toolbox("tb").servers[0].status(); !st.connected {
		t.Errorf("a is not connected after Resolve: %+v", st)
	}
	start := time.Now()
	if err := m.Resolve(ctx, "tb__a__nope"); err != nil && errs.From(err).Code != errs.NotFound {
		t.Errorf("Resolve(tb__a__nope) = %v", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Resolve(tb__a__nope) took %s", d)
	}
	time.Sleep(300 * time.Millisecond) // not synchronisation: as above, a window for b to be reached
	if n := bHits.Load(); n != 0 {
		t.Errorf("resolving a's tools reached b (%d requests)", n)
	}
}
