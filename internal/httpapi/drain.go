package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/nexus-mcp/nexus/internal/streamable"
)

// closed reports whether c is closed (a nil channel never is).
func closed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// longLived reports whether r opens a stream that lasts as long as its
// client keeps it: an MCP GET stream (server-to-client messages), or a
// sessionless client's subscriptions/listen, a POST whose answer is such a
// stream. A WebSocket is hijacked, which http.Server.Shutdown does not
// wait for.
func longLived(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet:
		return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	case http.MethodPost:
		method, ok := streamable.Method(r)
		return ok && method == "subscriptions/listen"
	}
	return false
}

// drainStreams ends long-lived streams when drain is closed: their
// requests' contexts are cancelled, so the MCP handler ends the stream, and
// their clients reconnect (to another replica). Other requests are left to finish: http.Server.Shutdown waits
// for them. A stream opened while draining ends at once.
func drainStreams(drain <-chan struct{}, next http.Handler) http.Handler {
	if drain == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !longLived(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-drain:
				cancel()
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
