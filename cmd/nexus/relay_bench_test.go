package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// BenchmarkRelayProgress measures what Nexus adds to a call whose server
// sends one progress notification before it answers (issue 26: p50 ≤ 1 ms
// beyond the direct path): the same SDK client calls the same server
// directly and through /mcp (a flat name), and each op is the time from
// the call until both the notification and the result have arrived. It
// reports the p50 of each path in µs:
//
//	go test ./cmd/nexus -run '^$' -bench RelayProgress -benchtime 2000x -count 3
func BenchmarkRelayProgress(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ticker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "tick", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 1})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "tick"}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(ts.Close)
	cfg := writeConfig(b, map[string]any{"toolboxes": map[string]any{
		"t": map[string]any{"mcpServers": map[string]any{"ticker": map[string]any{"url": ts.URL, "transport": "http"}}},
	}})
	base := startServe(b, "--no-demo", "--config", cfg, "--log-level", "error")
	ctx := context.Background()
	connect := func(url string, got chan struct{}) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { got <- struct{}{} },
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, testtools.WithSession())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	for _, path := range []struct{ name, url, tool string }{{"direct", ts.URL, "tick"}, {"nexus", base + "/mcp", "t__ticker__tick"}} {
		b.Run(path.name, func(b *testing.B) {
			got := make(chan struct{}, 1)
			cs := connect(path.url, got)
			call := func() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: path.tool, Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "p"}}); err != nil {
					b.Fatal(err)
				}
				select {
				case <-got:
				case <-time.After(10 * time.Second):
					b.Fatal("no progress notification")
				}
			}
			for range 50 { // connections warm, the toolbox open
				call()
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				call()
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
		})
	}
}
