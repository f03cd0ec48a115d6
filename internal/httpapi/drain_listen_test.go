package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/testtools"
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

// TestSessionlessListensAreCapped: sessionless listening streams hold as
// much as sessions and are capped as many: past MaxSessions open ones, a
// subscriptions/listen gets 503 with Retry-After.
func TestSessionlessListensAreCapped(t *testing.T) {
	ts := serve(t, httpapi.Options{MCP: whoServer(nil), MaxSessions: 1})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	testtools.EventuallyErr(t, 5*time.Second, "a second listening stream to be refused", func() error {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", streamable.SessionlessVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			return fmt.Errorf("answered %s", resp.Status)
		}
		return nil
	})
}
