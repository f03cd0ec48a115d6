package httpapi

import (
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// DefaultMaxSessions bounds the live MCP sessions of one Nexus process, over
// all its Streamable HTTP endpoints (an idle session costs about 17 KB; see
// docs/benchmarks.md).
const DefaultMaxSessions = 10000

// SessionTimeout is how long an MCP session may stay idle (no request)
// before it is closed.
const SessionTimeout = 30 * time.Minute

// sessionLimiter caps the live MCP sessions of the Streamable HTTP
// endpoints. When a new session would exceed the cap, the session idle the
// longest (no request in flight) is closed first; its client gets 404 on its
// next request and, as the MCP specification says, starts a new session.
// When every session has a request in flight, a new one gets 503.
type sessionLimiter struct {
	max int

	mu      sync.Mutex
	live    map[string]*liveSession
	servers map[*mcp.Server]bool // the servers sessions were made on
	now     func() time.Time
}

type liveSession struct {
	last     time.Time
	inflight int
}

func newSessionLimiter(max int) *sessionLimiter {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionLimiter{max: max, live: map[string]*liveSession{}, servers: map[*mcp.Server]bool{}, now: time.Now}
}

// getServer records the servers of getServer functions, so that sessions
// can be found and closed.
func (l *sessionLimiter) getServer(get func(*http.Request) *mcp.Server) func(*http.Request) *mcp.Server {
	return func(r *http.Request) *mcp.Server {
		s := get(r)
		if s != nil {
			l.mu.Lock()
			l.servers[s] = true
			l.mu.Unlock()
		}
		return s
	}
}

// wrap applies the cap to a Streamable HTTP handler.
func (l *sessionLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			l.begin(id)
			defer l.end(id, r.Method == http.MethodDelete)
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// A request without a session may start one.
		if !l.makeRoom() {
			w.Header().Set("Retry-After", "5")
			WriteError(w, http.StatusServiceUnavailable, errs.E(errs.Unavailable,
				"all %d MCP sessions have a request in flight; try again shortly", l.max))
			return
		}
		cw := &captureSession{ResponseWriter: w, l: l}
		next.ServeHTTP(cw, r)
	})
}

// begin and end track a request of session id in flight.
func (l *sessionLimiter) begin(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.live[id]; s != nil {
		s.inflight++
		s.last = l.now()
	}
}

func (l *sessionLimiter) end(id string, deleted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.live[id]
	if s == nil {
		return
	}
	if deleted {
		delete(l.live, id)
		return
	}
	s.inflight--
	s.last = l.now()
}

// add records a session the SDK created.
func (l *sessionLimiter) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.live[id]; !ok {
		l.live[id] = &liveSession{last: l.now()}
	}
}

// Live reports the number of sessions counted against the cap.
func (l *sessionLimiter) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.live)
}

// makeRoom makes room for one more session: it forgets sessions that ended
// (timed out or closed), then closes the oldest idle one. It reports false
// when every session is busy.
func (l *sessionLimiter) makeRoom() bool {
	l.mu.Lock()
	if len(l.live) < l.max {
		l.mu.Unlock()
		return true
	}
	servers := make([]*mcp.Server, 0, len(l.servers))
	for s := range l.servers {
		servers = append(servers, s)
	}
	l.mu.Unlock()

	open := map[string]*mcp.ServerSession{}
	for _, s := range servers {
		for ss := range s.Sessions() {
			open[ss.ID()] = ss
		}
	}
	l.mu.Lock()
	for id := range l.live {
		if open[id] == nil {
			delete(l.live, id)
		}
	}
	if len(l.live) < l.max {
		l.mu.Unlock()
		return true
	}
	oldest := ""
	for id, s := range l.live {
		if s.inflight == 0 && (oldest == "" || s.last.Before(l.live[oldest].last)) {
			oldest = id
		}
	}
	if oldest == "" {
		l.mu.Unlock()
		return false
	}
	delete(l.live, oldest)
	l.mu.Unlock()
	open[oldest].Close() // the SDK forgets it; the pipeline's binding ends with it
	return true
}

// captureSession records the session id the SDK assigns in its response.
type captureSession struct {
	http.ResponseWriter
	l    *sessionLimiter
	done bool
}

func (c *captureSession) WriteHeader(code int) {
	if !c.done {
		c.done = true
		if id := c.Header().Get("Mcp-Session-Id"); id != "" && code < 300 {
			c.l.add(id)
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureSession) Write(b []byte) (int, error) {
	if !c.done {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Flush passes flushes on, for SSE streams.
func (c *captureSession) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureSession) Unwrap() http.ResponseWriter { return c.ResponseWriter }
