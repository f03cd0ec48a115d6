package workbench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// Proxy overhead (issue 4): a trivial tool on a downstream Streamable HTTP
// server, called by 8 concurrent clients directly, through Nexus's flat
// name and through the bounded surface's use_tool. Run with
//
//	go test ./internal/workbench -run '^$' -bench Proxy -benchtime 20000x -count 5

const proxyClients = 8

// downstream starts an SDK server with a raw echo tool over Streamable HTTP.
func downstream(b *testing.B) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "down", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

// nexus starts Nexus (SQLite store, tracing, sessions, workbench) in front
// of the downstream server and returns its base URL.
func nexus(b *testing.B, downURL string) string {
	st := storetest.OpenTestSQLite(b)
	log := slog.New(slog.DiscardHandler)
	reg := registry.New()
	tw := trace.NewWriter(st, log)
	b.Cleanup(tw.Close)
	p := pipeline.New(pipeline.Options{Registry: reg, Traces: tw, Sessions: conversation.New(st)})
	cfg := &config.Config{Toolboxes: map[string]*config.Toolbox{"bench": {Name: "bench", Servers: map[string]*config.Server{
		"down": {Name: "down", Transport: config.StreamableHTTP, URL: downURL, Timeout: time.Minute, ConnectTimeout: 10 * time.Second},
	}, Order: []string{"down"}}}, Order: []string{"bench"}}
	m := workbench.NewManager(cfg, reg, workbench.Options{Logger: log})
	b.Cleanup(func() { m.Close() })
	if _, err := m.Open(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	cat := &mcpkit.Catalog{Registry: reg, Toolboxes: m}
	bs, err := bounded.New(p, mcpkit.Options{Name: "nexus", Version: "bench", Surface: "bench", Catalog: cat})
	if err != nil {
		b.Fatal(err)
	}
	h := httpapi.Handler(httpapi.Options{Loopback: true, MCP: mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "bench"})), Bounded: bs})
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	return ts.URL
}

// run splits b.N calls of call over clients sessions to url and
// reports throughput and latency percentiles.
func run(b *testing.B, clients int, url string, call func(context.Context, *mcp.ClientSession, int64) (*mcp.CallToolResult, error)) {
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients}}
	b.Cleanup(hc.CloseIdleConnections)
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		if _, err := call(ctx, cs, -1); err != nil {
			b.Fatal(err)
		}
		sessions[i] = cs
	}
	var next atomic.Int64
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i, cs := range sessions {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				t0 := time.Now()
				res, err := call(ctx, cs, n)
				lats[i] = append(lats[i], time.Since(t0))
				if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != fmt.Sprint(n) {
					b.Errorf("call %d: %v %v", n, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lats...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-us")
}

func echo(name string) func(context.Context, *mcp.ClientSession, int64) (*mcp.CallToolResult, error) {
	return func(ctx context.Context, cs *mcp.ClientSession, n int64) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": fmt.Sprint(n)}})
	}
}

func BenchmarkProxyDirect(b *testing.B) {
	run(b, proxyClients, downstream(b), echo("echo"))
}

func BenchmarkProxyFlat(b *testing.B) {
	run(b, proxyClients, nexus(b, downstream(b))+"/mcp", echo("bench__down__echo"))
}

// BenchmarkProxyFlatLabeled is BenchmarkProxyFlat with pprof labels: the
// goroutines Nexus starts (its HTTP server's connections, the workbench's
// SDK client session) carry proc=nexus, the downstream server's proc=down,
// so that a profile tells Nexus's share apart:
//
//	go test ./internal/workbench -run '^$' -bench FlatLabeled -benchtime 20000x -cpuprofile cpu.out
//	go tool pprof -top -cum -tagfocus proc=nexus workbench.test cpu.out
func BenchmarkProxyFlatLabeled(b *testing.B) {
	var down, url string
	pprof.Do(context.Background(), pprof.Labels("proc", "down"), func(context.Context) { down = downstream(b) })
	pprof.Do(context.Background(), pprof.Labels("proc", "nexus"), func(context.Context) { url = nexus(b, down) + "/mcp" })
	run(b, proxyClients, url, echo("bench__down__echo"))
}

// The latency variants use one client, so that percentiles show the time
// a call spends in Nexus rather than queueing for the two cores.

func BenchmarkProxyLatencyDirect(b *testing.B) {
	run(b, 1, downstream(b), echo("echo"))
}

func BenchmarkProxyLatencyFlat(b *testing.B) {
	run(b, 1, nexus(b, downstream(b))+"/mcp", echo("bench__down__echo"))
}

func BenchmarkProxyUseTool(b *testing.B) {
	run(b, proxyClients, nexus(b, downstream(b))+"/mcp/bounded", func(ctx context.Context, cs *mcp.ClientSession, n int64) (*mcp.CallToolResult, error) {
		if n < 0 {
			// The warm-up call: seed 003's use_tool reaches a toolbox the
			// session opened.
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": "bench"}})
		}
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "use_tool", Arguments: map[string]any{
			"tool": map[string]any{"toolbox": "bench", "server": "down", "tool": "echo"}, "arguments": map[string]any{"text": fmt.Sprint(n)}}})
	})
}
