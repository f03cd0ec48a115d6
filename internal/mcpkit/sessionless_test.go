package mcpkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionlessRequests: over a stateless Streamable HTTP handler every
// request is [Sessionless] (and over a stateful one none is), and a
// sessionless tools/list runs the opening itself, since no initialize
// started one, and answers once it has ended.
func TestSessionlessRequests(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		var opened, sessionless atomic.Int32
		srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		srv.AddReceivingMiddleware(OpenOnInitialize(func(context.Context) {
			opened.Add(1)
		}))
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" && Sessionless(req) {
					sessionless.Add(1)
				}
				return next(ctx, method, req)
			}
		})
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
		opts := testtools.WithSession()
		if stateless {
			opts = testtools.Sessionless()
		}
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, opts)
		if err != nil {
			t.Fatal(err)
		}
		before := opened.Load() // a session's initialize starts one opening
		for range 3 {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		ts.Close()
		switch {
		case stateless && (sessionless.Load() != 3 || opened.Load() != 3):
			t.Errorf("stateless: %d of 3 tools/list sessionless, %d openings run, want 3 and 3", sessionless.Load(), opened.Load())
		case !stateless && (sessionless.Load() != 0 || opened.Load() != before):
			t.Errorf("with a session: %d tools/list sessionless, %d openings by tools/list, want none", sessionless.Load(), opened.Load()-before)
		}
	}
}
