package proxy

import (
	"context"
	"testing"
	"time"
)

// TestCloseSession: the HTTP front ends a proxied session to make room
// under its cap through Proxy.CloseSession, on the raw path (Streamable
// HTTP downstream servers) and the SDK path (stdio, SSE) alike: the
// session's next request fails, and another session keeps working.
func TestCloseSession(t *testing.T) {
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			p, ts := startProxy(t, testConfig(d.start(t)))
			url := ts.URL + "/mcp/servers/tb/s"
			closed, kept := connect(t, newClient(&events{}), url), connect(t, newClient(&events{}), url)
			call(t, closed, "echo", map[string]any{"text": "before"})
			p.CloseSession("/mcp/servers/tb/s", closed.ID())
			p.CloseSession("/mcp/servers/tb/nosuch", kept.ID()) // another endpoint: nothing
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := closed.Ping(ctx, nil); err == nil {
				t.Fatal("a closed session still answers")
			}
			if err := kept.Ping(ctx, nil); err != nil {
				t.Fatalf("the other session: %v", err)
			}
		})
	}
}
