package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/rest"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// openApp opens a real Nexus core (store, registry, local servers,
// pipeline, metrics) as serve does: SQLite in a temporary directory, or
// PostgreSQL when dbURL is set, and configPath's toolboxes when set.
func openApp(t *testing.T, dbURL, configPath string) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), DBURL: dbURL, ConfigPath: configPath,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatalf("open app: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// front serves a as serve mounts it: the flat MCP surface, REST and
// /metrics behind the guard, with at most maxSessions MCP sessions.
func front(t *testing.T, a *app.App, maxSessions int) *httptest.Server {
	t.Helper()
	api := rest.Handler(rest.Options{Registry: a.Registry, Pipeline: a.Pipeline, Store: a.Store, Version: app.Version})
	h := httpapi.Handler(httpapi.Options{
		MCP:      mcpkit.Must(flat.New(a.Pipeline, mcpkit.Options{Name: "nexus", Version: app.Version, Surface: "mcp-flat-http"})),
		Routes:   map[string]http.Handler{"/api/": api},
		Loopback: true, MaxSessions: maxSessions, Health: a.Health,
		Metrics: a.Metrics.Handler,
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// scrape reads GET /metrics over HTTP and parses the Prometheus text format.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: Content-Type %q, not the Prometheus text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// series maps each sample of family name to its value, keyed by its label
// values in label-name order joined by "|" (a histogram's value is its
// sample count).
func series(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	f := fams[name]
	if f == nil {
		return out
	}
	for _, m := range f.Metric {
		labels := m.GetLabel()
		sort.Slice(labels, func(i, j int) bool { return labels[i].GetName() < labels[j].GetName() })
		var vals []string
		for _, l := range labels {
			vals = append(vals, l.GetValue())
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		case m.Histogram != nil:
			v = float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			v = m.Untyped.GetValue()
		}
		out[strings.Join(vals, "|")] = v
	}
	return out
}

// equal fails the test unless got has exactly the series of want.
func equal(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// restCall calls tool over REST and returns the HTTP status.
func restCall(t *testing.T, base, tool, args string) int {
	t.Helper()
	res, err := http.Post(base+"/api/tools/"+tool+":call", "application/json", strings.NewReader(args))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// Calls through the real pipeline, over REST and MCP, are counted by tool,
// surface and outcome, exactly; an unknown name is "(unknown)" and never a
// label of its own. The store's pool, the Go runtime and the process are
// there too.
func TestToolCallMetrics(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			url := ""
			if db == "postgres" {
				url = storetest.PostgresURL(t)
			}
			a := openApp(t, url, "")
			ts := front(t, a, 0)

			cases := []struct {
				name, tool, args string
				times, status    int
				label, outcome   string // the expected labels
			}{
				{"ok", "belief_query", `{"query":"metrics"}`, 3, 200, "belief_query", "ok"},
				{"ok, a write", "belief_create", `{"content":"Prometheus scrapes /metrics"}`, 1, 200, "belief_create", "ok"},
				{"argument of the wrong type", "belief_query", `{"query":5}`, 2, 400, "belief_query", "BAD_REQUEST"},
				{"arguments not an object", "belief_query", `[1]`, 1, 400, "belief_query", "BAD_REQUEST"},
				{"unknown argument", "belief_create", `{"content":"x","colour":"red"}`, 1, 400, "belief_create", "BAD_REQUEST"},
				{"unknown tool", "no_such_tool", `{}`, 1, 404, metrics.UnknownTool, "NOT_FOUND"},
				{"another unknown tool", "belief_qeury", `{"query":"x"}`, 2, 404, metrics.UnknownTool, "NOT_FOUND"},
			}
			wantCalls, wantDurations := map[string]float64{}, map[string]float64{}
			for _, tc := range cases {
				for range tc.times {
					if got := restCall(t, ts.URL, tc.tool, tc.args); got != tc.status {
						t.Fatalf("%s: %s answered %d, want %d", tc.name, tc.tool, got, tc.status)
					}
				}
				// Labels in name order: outcome, surface, tool.
				wantCalls[tc.outcome+"|rest|"+tc.label] += float64(tc.times)
				wantDurations["rest|"+tc.label] += float64(tc.times)
				equal(t, "after "+tc.name+": nexus_tool_calls_total", series(scrape(t, ts.URL), "nexus_tool_calls_total"), wantCalls)
			}

			// The same tool over MCP is a series of its own surface.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "belief_query", Arguments: map[string]any{"query": "x"}})
			if err != nil || res.IsError {
				t.Fatalf("MCP call: %v %v", err, res)
			}
			wantCalls["ok|mcp-flat-http|belief_query"]++
			wantDurations["mcp-flat-http|belief_query"]++

			fams := scrape(t, ts.URL)
			equal(t, "nexus_tool_calls_total", series(fams, "nexus_tool_calls_total"), wantCalls)
			equal(t, "nexus_tool_call_duration_seconds sample counts", series(fams, "nexus_tool_call_duration_seconds"), wantDurations)
			for _, m := range fams["nexus_tool_call_duration_seconds"].Metric {
				if m.Histogram.GetSampleSum() <= 0 {
					t.Errorf("duration histogram %v: sum %v", m.Label, m.Histogram.GetSampleSum())
				}
			}
			for _, name := range []string{"no_such_tool", "belief_qeury"} {
				for _, f := range fams {
					for _, m := range f.Metric {
						for _, l := range m.Label {
							if l.GetValue() == name {
								t.Errorf("the unknown name %q is a label value of %s", name, f.GetName())
							}
						}
					}
				}
			}

			// The store's pool: its cap and live connections, by db_name.
			maxOpen := map[string]float64{"sqlite": 8, "postgres": 32}[db]
			equal(t, "go_sql_max_open_connections", series(fams, "go_sql_max_open_connections"), map[string]float64{metrics.DBName: maxOpen})
			for _, name := range []string{"go_sql_open_connections", "go_sql_in_use_connections", "go_sql_idle_connections",
				"go_sql_wait_count_total", "go_sql_wait_duration_seconds_total"} {
				if _, ok := series(fams, name)[metrics.DBName]; !ok {
					t.Errorf("no %s{db_name=%q}", name, metrics.DBName)
				}
			}
			if open := series(fams, "go_sql_open_connections")[metrics.DBName]; open < 1 || open > maxOpen {
				t.Errorf("go_sql_open_connections = %v after calls, want 1..%v", open, maxOpen)
			}
			for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_start_time_seconds", "process_resident_memory_bytes"} {
				if fams[name] == nil {
					t.Errorf("no %s", name)
				}
			}
		})
	}
}

// The live MCP sessions and their cap are read from the HTTP front at
// scrape time.
func TestSessionGauges(t *testing.T) {
	a := openApp(t, "", "")
	ts := front(t, a, 5)
	gauges := func() map[string]float64 {
		fams := scrape(t, ts.URL)
		return map[string]float64{"live": series(fams, "nexus_mcp_sessions_live")[""], "max": series(fams, "nexus_mcp_sessions_max")[""]}
	}
	equal(t, "no session", gauges(), map[string]float64{"live": 0, "max": 5})

	var sessions []*mcp.ClientSession
	for i := range 3 {
		// Clients with sessions: a sessionless client has none to count.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, testtools.WithSession())
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
		equal(t, fmt.Sprintf("after %d sessions", i+1), gauges(), map[string]float64{"live": float64(i + 1), "max": 5})
	}
	// A client that ends its session (DELETE) frees its place.
	if err := sessions[0].Close(); err != nil {
		t.Fatal(err)
	}
	equal(t, "after one session ended", gauges(), map[string]float64{"live": 2, "max": 5})
}

// A downstream server over Streamable HTTP (a real SDK server in process)
// is up once its toolbox opens; when its session drops it is down and
// counted as restarted once however many attempts fail; it is up again once
// it answers. A server never opened is down with no restarts. A downstream
// result marked isError is the outcome TOOL_ERROR.
func TestDownstreamServers(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "down", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var unavailable atomic.Bool // the server answers 503 to everything
	var refused atomic.Int32    // connection attempts (initialize requests) answered 503
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unavailable.Load() {
			if body, _ := io.ReadAll(r.Body); strings.Contains(string(body), `"method":"initialize"`) {
				refused.Add(1)
			}
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(peer.Close) // after the app closes: cleanups run last-in first-out

	cfg := filepath.Join(t.TempDir(), "nexus.yaml")
	yaml := fmt.Sprintf("toolboxes:\n  tb:\n    mcpServers:\n      down:\n        url: %s/mcp\n"+
		"  spare:\n    mcpServers:\n      never:\n        url: http://127.0.0.1:1/mcp\n", peer.URL)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	a := openApp(t, "", cfg)
	ts := front(t, a, 0)
	state := func() (up, restarts map[string]float64) {
		fams := scrape(t, ts.URL)
		return series(fams, "nexus_downstream_server_up"), series(fams, "nexus_downstream_restarts_total")
	}
	// Labels in name order: server, toolbox.
	check := func(wantUp, wantRestarts float64) bool {
		up, restarts := state()
		return fmt.Sprint(up) == fmt.Sprint(map[string]float64{"down|tb": wantUp, "never|spare": 0}) &&
			fmt.Sprint(restarts) == fmt.Sprint(map[string]float64{"down|tb": wantRestarts, "never|spare": 0})
	}
	eventually := func(what string, wantUp, wantRestarts float64) {
		t.Helper()
		testtools.EventuallyErr(t, 20*time.Second, "the series of a server "+what, func() error {
			if check(wantUp, wantRestarts) {
				return nil
			}
			up, restarts := state()
			return fmt.Errorf("up %v, restarts %v; want down|tb up %v, restarts %v", up, restarts, wantUp, wantRestarts)
		})
	}

	eventually("configured, not opened", 0, 0)
	if _, err := a.Workbench.Open(context.Background(), "tb"); err != nil {
		t.Fatal(err)
	}
	eventually("opened", 1, 0)
	if got := restCall(t, ts.URL, "tb__down__fail", `{}`); got != http.StatusOK {
		t.Fatalf("tb__down__fail answered %d", got)
	}
	if got := series(scrape(t, ts.URL), "nexus_tool_calls_total")["TOOL_ERROR|rest|tb__down__fail"]; got != 1 {
		t.Errorf(`nexus_tool_calls_total{outcome="TOOL_ERROR",surface="rest",tool="tb__down__fail"} = %v, want 1`, got)
	}

	// The server goes away: its sessions end and it answers 503 meanwhile,
	// so that every restart attempt fails.
	unavailable.Store(true)
	for ss := range srv.Sessions() {
		ss.Close()
	}
	eventually("dropped", 0, 1)
	testtools.Eventually(t, 20*time.Second, "three failed restart attempts (backoff from 250 ms)", func() bool { return refused.Load() >= 3 })
	eventually("still down after failed attempts", 0, 1)

	unavailable.Store(false)
	eventually("back", 1, 1)
}

// /metrics is behind the guard like every route: a foreign Host or Origin
// is refused; the index lists it; only GET is served.
func TestMetricsRouteGuarded(t *testing.T) {
	a := openApp(t, "", "")
	ts := front(t, a, 0)
	do := func(method, host, origin string) (int, string) {
		req, err := http.NewRequest(method, ts.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, method, host, origin string
		status                     int
		body                       string
	}{
		{"loopback", "GET", "", "", 200, "nexus_mcp_sessions_max 10000"},
		{"localhost with a port", "GET", "localhost:7777", "", 200, "# TYPE nexus_mcp_sessions_live gauge"},
		{"DNS rebinding", "GET", "attacker.example", "", 403, `"code":"FORBIDDEN"`},
		{"foreign origin", "GET", "", "https://attacker.example", 403, `"code":"FORBIDDEN"`},
		{"not GET", "POST", "", "", 405, `"code":"BAD_REQUEST"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(tc.method, tc.host, tc.origin)
			if status != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("%s /metrics (Host %q, Origin %q): %d %.300s; want %d with %s", tc.method, tc.host, tc.origin, status, body, tc.status, tc.body)
			}
		})
	}

	res, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var index struct {
		Endpoints []httpapi.Endpoint `json:"endpoints"`
	}
	if err := json.NewDecoder(res.Body).Decode(&index); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range index.Endpoints {
		found = found || e.Path == "/metrics"
	}
	if !found {
		t.Errorf("GET / does not list /metrics: %v", index.Endpoints)
	}
}
