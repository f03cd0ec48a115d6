package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/httpapi"
)

// TestDrainEndsSessionlessListen: a sessionless client's
// subscriptions/listen stream (a POST) is long-lived like a GET stream: the
// drain ends it, so that Shutdown does not wait the drain timeout for it.
func TestDrainEndsSessionlessListen(t *testing.T) {
	drain := make(chan struct{})
	ts := serve(t, httpapi.Options{MCP: whoServer(nil), Drain: drain})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	time.Sleep(200 * time.Millisecond) // the listen stream opens (not synchronisation of the result)
	close(drain)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	err = ts.Config.Shutdown(sctx)
	t.Logf("shutdown: %v after %s", err, time.Since(start))
	if err != nil {
		t.Errorf("the drain left a sessionless client's subscriptions/listen stream open: Shutdown %v", err)
	}
}
