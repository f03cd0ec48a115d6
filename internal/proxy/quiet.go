package proxy

import (
	"net/http"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// Quiet stdio sessions. A passthrough session of a stdio server costs a
// process, which a client that leaves without DELETE (most do) kept alive
// until the session timeout (30 minutes). A client that is still there
// either has a request in flight or holds its GET stream open (to hear the
// server between its requests): so a stdio session with neither for
// Options.QuietTimeout (DefaultQuietTimeout) is ended, with its process. A
// client that comes back after that gets 404 for its session and
// initializes again, as after any session's end. Sessions of HTTP servers,
// which cost a connection, keep the session timeout alone.

// DefaultQuietTimeout ends a stdio server's passthrough session with no
// request in flight and no GET stream open for this long when
// Options.QuietTimeout is zero.
const DefaultQuietTimeout = 2 * time.Minute

// quiet follows the HTTP requests of an endpoint's sessions.
type quiet struct {
	after time.Duration
	end   func(id string) // ends session id

	mu       sync.Mutex
	sessions map[string]*quietSession
}

type quietSession struct {
	open  int // requests in flight, GET streams included
	timer *time.Timer
}

// begin records a request of session id starting.
func (q *quiet) begin(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sessions[id]
	if s == nil {
		s = &quietSession{}
		q.sessions[id] = s
	}
	s.open++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// done records a request of session id ending: with none left, the session
// ends after the quiet timeout unless another request begins.
func (q *quiet) done(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sessions[id]
	if s == nil {
		return
	}
	if s.open--; s.open > 0 {
		return
	}
	s.timer = time.AfterFunc(q.after, func() {
		q.mu.Lock()
		cur := q.sessions[id]
		ended := cur == s && s.open == 0
		if ended {
			delete(q.sessions, id)
		}
		q.mu.Unlock()
		if ended {
			q.end(id)
		}
	})
}

// forget stops following session id (it ended).
func (q *quiet) forget(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if s := q.sessions[id]; s != nil && s.timer != nil {
		s.timer.Stop()
	}
	delete(q.sessions, id)
}

// stop stops every timer (the endpoint closes).
func (q *quiet) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, s := range q.sessions {
		if s.timer != nil {
			s.timer.Stop()
		}
		delete(q.sessions, id)
	}
}

// serveQuiet serves r on the SDK's handler, following the session's
// requests: a request of a session counts while it runs, and an
// initialize's new session starts quiet.
func (ep *endpoint) serveQuiet(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(mcpwire.SessionHeader); id != "" {
		ep.quiet.begin(id)
		defer ep.quiet.done(id)
		ep.sdk.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			ep.quiet.forget(id)
		}
		return
	}
	ep.sdk.ServeHTTP(w, r)
	if id := w.Header().Get(mcpwire.SessionHeader); id != "" {
		ep.quiet.begin(id)
		ep.quiet.done(id)
	}
}

// quietTimeout is how long a session of srv may be quiet (0: forever):
// stdio servers only.
func (p *Proxy) quietTimeout(srv *config.Server) time.Duration {
	if srv.TransportKind() != config.Stdio {
		return 0
	}
	return p.quietAfter
}
