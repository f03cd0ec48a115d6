package httpapi_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestFrontStripsTheSyncHeader: a client cannot mark its own requests as
// applying another replica's change (mcpsession.SyncHeader): the front
// removes the header before the MCP server sees the request.
func TestFrontStripsTheSyncHeader(t *testing.T) {
	srv := testServer(nil)
	var seen, marked atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				seen.Add(1)
				if e := req.GetExtra(); e != nil && mcpsession.IsSyncing(e.Header) {
					marked.Add(1)
				}
			}
			return next(ctx, method, req)
		}
	})
	ts := serve(t, httpapi.Options{MCP: srv})
	ctx := context.Background()
	hc := &http.Client{Transport: withHeader{mcpsession.SyncHeader, "1"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 1 || marked.Load() != 0 {
		t.Fatalf("%d tools/list seen, %d of them still marked as syncing: the front must strip %s", seen.Load(), marked.Load(), mcpsession.SyncHeader)
	}
}

// withHeader sets one header on every request.
type withHeader struct{ name, value string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
