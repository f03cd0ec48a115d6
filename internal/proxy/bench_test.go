package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// In-process benchmarks of the passthrough route, for profiling (the
// cross-process benchmark is cmd/nexus's TestProxyCrossProcess):
//
//	go test ./internal/proxy -run '^$' -bench Passthrough -benchtime 20000x -cpuprofile cpu.out
//
// A trivial echo tool on a Streamable HTTP server (the raw passthrough) and
// on a stdio child (the SDK path), 8 clients, the proxy behind the HTTP
// front as "nexus serve" mounts it.

func benchEchoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "down", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
	return s
}

// labeled starts ts with the pprof label proc=name, which the goroutines
// of its connections (and the HTTP client connections their handlers
// dial) inherit: a profile then tells the processes apart
// (go tool pprof -tagfocus proc=nexus).
func labeled(name string, ts *httptest.Server) *httptest.Server {
	pprof.Do(context.Background(), pprof.Labels("proc", name), func(context.Context) { ts.Start() })
	return ts
}

func benchPassthrough(b *testing.B, direct bool, clients int) {
	benchProtocol(b, direct, clients, "2025-11-25", false, Options{})
}

// benchProtocol is benchPassthrough with clients of protocol, the server
// stateless (the sessionless protocol) or not, and the proxy's options o.
func benchProtocol(b *testing.B, direct bool, clients int, protocol string, stateless bool, o Options) {
	s := benchEchoServer()
	down := labeled("down", httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})))
	b.Cleanup(down.Close)
	url := down.URL
	if !direct {
		p := New(testConfig(&config.Server{Transport: config.StreamableHTTP, URL: down.URL}), o)
		front := labeled("nexus", httptest.NewUnstartedServer(httpapi.Handler(httpapi.Options{Loopback: true, SessionRoutes: map[string]http.Handler{"/mcp/servers/": p}})))
		b.Cleanup(func() {
			p.Close()
			front.Close()
		})
		url = front.URL + "/mcp/servers/tb/s"
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients}}
	b.Cleanup(hc.CloseIdleConnections)
	var sessions []*mcp.ClientSession
	for range clients {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
			// The same protocol directly and through the passthrough.
			&mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		sessions = append(sessions, cs)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, cs := range sessions {
		wg.Go(func() {
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("proc", "client")))
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				want := fmt.Sprint(n)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": want}})
				if err != nil || res.Content[0].(*mcp.TextContent).Text != want {
					b.Errorf("call %d: %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkPassthroughDirect(b *testing.B) { benchPassthrough(b, true, 8) }

func BenchmarkPassthroughRaw(b *testing.B) { benchPassthrough(b, false, 8) }

func BenchmarkPassthroughLatencyDirect(b *testing.B) { benchPassthrough(b, true, 1) }

func BenchmarkPassthroughLatencyRaw(b *testing.B) { benchPassthrough(b, false, 1) }

// Sessionless clients (2026-07-28): on a server of the sessionless
// protocol (forwarded raw) and on a server of sessions (a kept session).
func BenchmarkPassthroughSessionlessRaw(b *testing.B) {
	benchProtocol(b, false, 8, mcpwire.Sessionless, true, Options{})
}

func BenchmarkPassthroughSessionlessKept(b *testing.B) {
	benchProtocol(b, false, 8, mcpwire.Sessionless, false, Options{})
}
