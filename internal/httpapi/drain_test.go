package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/httpapi"
)

// TestProbesAndDrain: /healthz is liveness and /readyz readiness; once the
// drain starts /readyz answers 503 "draining" while /healthz stays 200,
// and a long-lived stream's request ends, while other requests run on.
func TestProbesAndDrain(t *testing.T) {
	drain := make(chan struct{})
	storeUp := true
	streamCtx := make(chan context.Context, 1)
	ts := serve(t, httpapi.Options{
		Health: func(context.Context) map[string]any { return map[string]any{"status": "ok", "version": "t"} },
		Ready: func(context.Context) map[string]any {
			if !storeUp {
				return map[string]any{"status": "unavailable", "store": "down"}
			}
			return map[string]any{"status": "ok"}
		},
		Drain: drain,
		Routes: map[string]http.Handler{"/api/stream": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			streamCtx <- r.Context()
			<-r.Context().Done()
		})},
	})
	probe := func(path string, want int, wantBody string) {
		t.Helper()
		resp, body := do(t, ts, "GET", path, "", nil)
		if resp.StatusCode != want || !strings.Contains(body, wantBody) {
			t.Errorf("GET %s: %d %s, want %d with %s", path, resp.StatusCode, body, want, wantBody)
		}
	}
	probe("/readyz", 200, `"ok"`)
	probe("/healthz", 200, `"version":"t"`)
	storeUp = false
	probe("/readyz", 503, `"unavailable"`)
	probe("/healthz", 200, `"ok"`)
	storeUp = true

	ended := make(chan struct{})
	go func() {
		defer close(ended)
		do(t, ts, "GET", "/api/stream", "", map[string]string{"Accept": "text/event-stream"})
	}()
	ctx := <-streamCtx
	close(drain)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a long-lived stream did not end when the drain started")
	}
	<-ended
	probe("/readyz", 503, `"draining"`)
	probe("/healthz", 200, `"ok"`)
}
