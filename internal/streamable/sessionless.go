package streamable

import (
	"net/http"
	"sync"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// SessionlessVersion is the first MCP protocol version of the sessionless
// direction of MCP ([mcpwire.Sessionless]).
const SessionlessVersion = mcpwire.Sessionless

// sessionless sends each request of an MCP endpoint either to the session
// table (next: [sessionLimiter.serve], with the fast path on the flat
// surface) or to the SDK's stateless handler of the same server
// (stateless), one request at a time. It is the one place that
// decides (see [servesSessionless]); the guard (Host, Origin, body bounds,
// authentication) has run before it for both, and both reach the same
// server, whose tools run through the one pipeline.
//
// With fast (the flat surface's fast path), a sessionless tools/call it
// serves never reaches the stateless handler ([fastCalls.serveSessionless]):
// the stateless handler makes, connects and closes a session per request,
// which cost a sessionless call about three times the CPU of a session's.
//
// A sessionless client's subscriptions/listen is a stream that lasts as
// long as the client keeps it: those take the slots of streams (see
// [streamSlots]), bounded and shared out between users as sessions are,
// since they hold as much.
func sessionless(stateless http.Handler, fast *fastCalls, next http.Handler, slots *streamSlots) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !servesSessionless(r) {
			next.ServeHTTP(w, r)
			return
		}
		if fast != nil && fast.serveSessionless(w, r) {
			return
		}
		if method, _, ok := peek(r); ok && method == "subscriptions/listen" {
			share := shareOf(r)
			if refused := slots.take(share); refused != admitted {
				slots.refuse(w, share, streamSlotsName, refused == capFull)
				return
			}
			defer slots.give(share)
		}
		stateless.ServeHTTP(w, r)
	})
}

// streamSlotsName is what streamSlots are, in their refusals.
const streamSlotsName = "listening streams"

// streamSlots bounds the sessionless listening streams of one process,
// over all its endpoints, and each share of them. A stream is busy for as
// long as it is open: none is closed to make room.
type streamSlots struct {
	shares
	mu   sync.Mutex
	n    int
	held map[string]int // open streams by share
}

// take reserves a slot of share, or says why not.
func (s *streamSlots) take(share string) refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.full(share, s.held[share]):
		return shareFull
	case s.n >= s.max:
		return capFull
	}
	s.n++
	s.held[share]++
	return admitted
}

// give returns a slot of share.
func (s *streamSlots) give(share string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.held[share]--; s.held[share] <= 0 {
		delete(s.held, share)
	}
}

// servesSessionless reports whether r is served without a session:
//
//   - r speaks the sessionless protocol: Mcp-Protocol-Version is
//     [SessionlessVersion] or later (any method: server/discover, tools/call;
//     a GET or DELETE gets the stateless handler's 405), with or without an
//     Mcp-Session-Id, which that protocol does not have;
//   - or r is a POST of one JSON-RPC message without Mcp-Session-Id that is
//     not initialize, of an earlier protocol version. The SDK's stateful
//     handler answers such a request 400 (a session is needed first); Nexus
//     serves it as a one-off instead, as the stateless handler does: on a
//     session made for it alone (initialized with the header's protocol
//     version), its tool call in a conversation of its own unless it names
//     one. A client with a session sends its id; only initialize starts a
//     session.
//
// Everything else (initialize, any request with Mcp-Session-Id of an
// earlier version, GET and DELETE, a body that is no JSON-RPC message) goes
// to the session table.
func servesSessionless(r *http.Request) bool {
	if r.Header.Get(protocolHeader) >= SessionlessVersion {
		return true
	}
	if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" {
		return false
	}
	method, _, ok := peek(r)
	return ok && method != "initialize"
}
