package mcpkit

//lint:file-ignore SA1019 sessions keep the log level clients of earlier protocol versions set

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestKeepStoresOnlyTheClientsLevels: a log level the client sets is
// stored; one applied from another replica (a request marked with
// mcpsession.SyncHeader, as the HTTP front sends it) is applied but not
// stored again, which would echo it between replicas and could put an
// older level over the client's last one.
func TestKeepStoresOnlyTheClientsLevels(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	sessions := mcpsession.New(st, time.Hour)
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	srv.AddReceivingMiddleware(keep(sessions, "test", nil))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	stored := func() string {
		t.Helper()
		s, ok, err := sessions.Load(ctx, cs.ID())
		if err != nil || !ok {
			t.Fatalf("load the session: %v %v", ok, err)
		}
		return s.LogLevel
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got != "debug" {
		t.Fatalf("the client's level: stored %q, want debug", got)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"sync","method":"logging/setLevel","params":{"level":"error"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	req.Header.Set(mcpsession.SyncHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the synced setLevel: %s", resp.Status)
	}
	if got := stored(); got != "debug" {
		t.Fatalf("a level applied from another replica was stored: %q, want the client's debug kept", got)
	}
}
