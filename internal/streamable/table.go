package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/users"
)

// DefaultMaxSessions bounds the live MCP sessions of one Nexus process, over
// all its Streamable HTTP endpoints (an idle session costs about 17 KB; see
// docs/benchmarks.md).
const DefaultMaxSessions = 10000

// SessionTimeout is how long an MCP session may stay idle (no request)
// before it is closed ([Options].SessionTimeout, zero meaning this).
const SessionTimeout = 30 * time.Minute

// sessionLimiter is the table of the live MCP sessions of one Nexus
// process over Streamable HTTP: it serves the sessions of Nexus's own
// surfaces itself ([sessionLimiter.serve]) and counts those of the session
// routes that serve their own ([sessionLimiter.wrap]).
//
// It caps them over all endpoints. An initialize request that would exceed
// the cap first ends the session idle the longest (no POST in flight; an
// open GET event stream does not count as activity); the ended session's
// client gets 404 on its next request and, as the MCP specification says,
// starts a new session. When every session has a POST in flight, the
// initialize gets 503.
//
// Each user holds at most a share of the cap ([shares]), so that one user's
// load never locks the others out: an initialize of a user at their share
// ends that user's own session idle the longest, never another's, and gets
// 429 naming the per-user limit when each of theirs has a POST in flight.
// Cap and shares are this process's (per replica).
//
// A slot is reserved before the initialize runs, so concurrent initializes
// cannot overshoot the cap or a share.
//
// The table also ends the sessions of an endpoint with an idle timeout
// once they have been idle that long: no POST in flight, none ended (a
// notification or response counts as one that ended), for the timeout.
type sessionLimiter struct {
	shares
	now func() time.Time
	// store keeps sessions where every replica finds them (nil: sessions
	// live in this process only); see [sessionLimiter.restore].
	store  *mcpsession.Store
	events *events.Bus
	log    *slog.Logger

	mu        sync.Mutex
	live      map[string]*liveSession
	pending   int                      // initializes admitted whose session is not known yet
	held      map[string]int           // live and pending sessions by share
	restoring map[string]chan struct{} // sessions being restored, closed when done
}

type liveSession struct {
	// end closes the session: the SDK session itself for a session this
	// front serves ([sessionLimiter.serve]), the route's own way for one of
	// a route it counts ([sessionLimiter.wrap], [SessionCloser]).
	end  func()
	path string // the path it was made on
	user string // the id of the user who made it
	// share is the share of the slots it takes (shareOf).
	share    string
	last     time.Time
	inflight int
	// idle ends the session once idle for idleFor, its endpoint's timeout;
	// nil without one. Stopped while a POST is in flight.
	idle    *time.Timer
	idleFor time.Duration

	// For a session this front serves: the SDK's session and its
	// transport, and the tools/call requests the fast path runs.
	ss        *mcp.ServerSession
	transport *mcp.StreamableServerTransport
	calls     inFlight
}

// SessionCloser is implemented by the handler of a session route
// ([Sessions.Route]) whose sessions the table counts: the table ends one
// (idle the longest, to make room) through it.
type SessionCloser interface {
	// CloseSession ends session id of the endpoint at path, if it holds it.
	CloseSession(path, id string)
}

func newSessionLimiter(s shares) *sessionLimiter {
	return &sessionLimiter{shares: s, live: map[string]*liveSession{}, held: map[string]int{}, now: time.Now, restoring: map[string]chan struct{}{},
		log: slog.New(slog.DiscardHandler)}
}

// wrap applies the cap to the Streamable HTTP handler of a session route
// ([Sessions.Route]), which serves its sessions itself: the table
// counts them from the initialize responses the handler writes, and ends
// one to make room through the handler ([SessionCloser]; a handler that is
// none never loses a session to the cap, which then refuses).
func (l *sessionLimiter) wrap(next http.Handler) http.Handler {
	closer, _ := next.(SessionCloser)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		if id != "" && !l.owns(id, requestUser(r)) {
			// An MCP session is its user's: its id alone grants nothing
			// (SPEC section 8). Answered as for a session that does not
			// exist, so that nothing is disclosed.
			writeNoSession(w, r)
			return
		}
		switch {
		case id != "" && r.Method == http.MethodPost && !isRequest(r):
			l.touch(id)
		case id != "" && r.Method == http.MethodPost:
			l.begin(id)
			defer l.end(id)
		case id != "" && r.Method == http.MethodDelete:
			defer l.forget(id)
		case id == "" && r.Method == http.MethodPost && isInitialize(r):
			share := shareOf(r)
			if !l.makeRoom(w, share) {
				return
			}
			// The session is live from the moment its id is written, before
			// the client reads the reply: counted from then, it cannot look
			// younger than a session its client starts next.
			user, path := requestUser(r), r.URL.Path
			cw := &captureSession{ResponseWriter: w, admit: func(id string) {
				var end func()
				if closer != nil {
					end = func() { closer.CloseSession(path, id) }
				}
				l.admit(id, &liveSession{end: end, path: path, user: user, share: share})
			}}
			defer func() { l.settle(cw.session, share) }()
			next.ServeHTTP(cw, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeNoSession answers a request for a session that does not exist here
// (or is another user's): 404, so that its client starts a new session,
// as the MCP specification says.
func writeNoSession(w http.ResponseWriter, r *http.Request) {
	writeRPCErrorCode(w, http.StatusNotFound, requestID(r), rpcInvalidRequest, "session not found: start a new session with initialize")
}

// message is the part of a JSON-RPC message the limiter reads.
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
}

// peek returns the method of r's message and whether it has an id (not
// null); ok is false when r's body is not one JSON-RPC message. A body the
// guard read and [JSONRPCErrors] checked is not decoded again; any other is
// read (and put back) and decoded.
func peek(r *http.Request) (method string, hasID, ok bool) {
	if r.Body == nil {
		return "", false, false
	}
	if b, isBuffered := r.Body.(*bufferedBody); isBuffered && b.checked {
		return b.info.Method, b.info.HasID, true
	}
	var msg message
	if json.Unmarshal(bodyOf(r), &msg) != nil {
		return "", false, false
	}
	return msg.Method, len(msg.ID) > 0 && string(msg.ID) != "null", true
}

// bodyOf returns r's body, which stays to be read: the guard's buffer, or
// what is read (and put back) of any other body (nil when it cannot be
// read).
func bodyOf(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	if b, isBuffered := r.Body.(*bufferedBody); isBuffered {
		return b.data
	}
	data, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	return data
}

// isInitialize reports whether r's body is an initialize request, the only
// request that starts a session.
func isInitialize(r *http.Request) bool {
	method, _, ok := peek(r)
	return ok && method == "initialize"
}

// isRequest reports whether r's body is a request, whose client waits for
// its answer; notifications and responses are not. What is not a message
// counts as a request: the SDK answers it, with an error.
func isRequest(r *http.Request) bool {
	method, hasID, ok := peek(r)
	return !ok || (method != "" && hasID)
}

// begin and end track a POST of session id in flight.
func (l *sessionLimiter) begin(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.live[id]; s != nil {
		if s.inflight == 0 && s.idle != nil {
			s.idle.Stop()
		}
		s.inflight++
		s.last = l.now()
	}
}

// touch records activity of session id without a request in flight.
func (l *sessionLimiter) touch(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.live[id]; s != nil {
		s.last = l.now()
		s.restart()
	}
}

func (l *sessionLimiter) end(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.live[id]; s != nil {
		s.inflight--
		s.last = l.now()
		s.restart()
	}
}

// restart starts the idle timeout again when no POST of s is in flight.
func (s *liveSession) restart() {
	if s.inflight == 0 && s.idle != nil {
		s.idle.Reset(s.idleFor)
	}
}

// forget drops a session its client deleted.
func (l *sessionLimiter) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.live[id]; s != nil && s.idle != nil {
		s.idle.Stop()
	}
	l.unlist(id)
}

// unlist drops session id from the live ones and its share; l.mu is held.
func (l *sessionLimiter) unlist(id string) *liveSession {
	s := l.live[id]
	if s == nil {
		return nil
	}
	delete(l.live, id)
	l.release(s.share)
	return s
}

// release gives back a slot of share; l.mu is held.
func (l *sessionLimiter) release(share string) {
	if l.held[share]--; l.held[share] <= 0 {
		delete(l.held, share)
	}
}

// expire ends session id, idle for its endpoint's timeout, as the cap ends
// a victim; a session with a POST in flight again, or gone, stays as it is.
func (l *sessionLimiter) expire(id string, s *liveSession) {
	l.mu.Lock()
	if l.live[id] != s || s.inflight > 0 {
		l.mu.Unlock()
		return
	}
	l.unlist(id)
	l.mu.Unlock()
	s.end()
}

// drop deletes session id from the store, and tells the other replicas
// that it ended (they close their copies of it).
func (l *sessionLimiter) drop(id string) {
	ctx := context.Background()
	if err := l.store.Delete(ctx, id); err != nil {
		l.log.Warn("delete an ended MCP session", "session", id, "err", err)
	}
	if l.events != nil {
		if err := l.events.Publish(ctx, TopicSessionEnded, id); err != nil {
			l.log.Warn("tell the replicas an MCP session ended", "session", id, "err", err)
		}
	}
}

// TopicSessionEnded is the event of an MCP session ended by its client (or
// closed to make room): its data is the session id.
const TopicSessionEnded = "mcp.session.ended"

// follow makes this replica close its copies of sessions other replicas
// ended, and, after the event bus reconnects, of sessions the store no
// longer has (their events may have been missed).
func (l *sessionLimiter) follow(b *events.Bus) {
	l.events = b
	if l.store != nil {
		// A log level a session set through another replica is set on
		// this replica's copy too, in the order the levels were set (on
		// the bus's goroutine: an in-process call).
		l.store.OnChange(func(c mcpsession.Change) {
			if c.LogLevel != "" {
				l.setLevel(c.ID, c.LogLevel)
			}
		})
	}
	b.Subscribe(TopicSessionEnded, func(e events.Event) {
		var id string
		if e.Origin == b.Origin() || json.Unmarshal(e.Data, &id) != nil {
			return
		}
		l.closeLocal(id)
	})
	b.OnResync(func(ctx context.Context) {
		l.mu.Lock()
		ids := make([]string, 0, len(l.live))
		for id := range l.live {
			ids = append(ids, id)
		}
		l.mu.Unlock()
		for _, id := range ids {
			if _, ok, err := l.store.Load(ctx, id); err == nil && !ok {
				l.closeLocal(id)
			}
		}
	})
}

// closeLocal closes this replica's copy of session id, if it holds one,
// leaving the store alone.
func (l *sessionLimiter) closeLocal(id string) {
	l.mu.Lock()
	s := l.unlist(id)
	l.mu.Unlock()
	if s == nil {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	s.end()
}

// sessionSlots is what the limiter's slots are, in its refusals.
const sessionSlots = "MCP sessions"

// refusal says why a slot was refused, if it was.
type refusal int

const (
	admitted  refusal = iota
	shareFull         // the share is full, each of its slots busy
	capFull           // the cap is reached, each slot busy
)

// reserve admits one new session of share: it reserves a slot of the cap
// and of share. When share is full, its own session idle the longest is
// chosen for eviction (the share's session makes room, not another's);
// when the cap is, the session idle the longest of all. It refuses when
// every session it could choose has a request in flight. The caller ends
// the victim returned (liveSession.end), outside the limiter's lock.
func (l *sessionLimiter) reserve(share string) (*liveSession, refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v *liveSession
	switch {
	case l.full(share, l.held[share]):
		if v = l.evict(func(s *liveSession) bool { return s.share == share }); v == nil {
			return nil, shareFull
		}
	case len(l.live)+l.pending >= l.max:
		if v = l.evict(func(*liveSession) bool { return true }); v == nil {
			return nil, capFull
		}
	}
	l.pending++
	l.held[share]++
	return v, admitted
}

// makeRoom reserves a slot of share for a new session, ending the session
// it chose to make room, or answers w with the refusal; it reports whether
// a slot was reserved.
func (l *sessionLimiter) makeRoom(w http.ResponseWriter, share string) bool {
	victim, refused := l.reserve(share)
	if refused != admitted {
		l.refuse(w, share, sessionSlots, refused == capFull)
		return false
	}
	if victim != nil {
		victim.end()
	}
	return true
}

// evict unlists the session idle the longest of those that match, none of
// whose POSTs is in flight and that can be ended, and returns it to be
// ended; nil when there is none. l.mu is held.
func (l *sessionLimiter) evict(match func(*liveSession) bool) *liveSession {
	oldest := ""
	for id, s := range l.live {
		if s.inflight == 0 && s.end != nil && match(s) && (oldest == "" || s.last.Before(l.live[oldest].last)) {
			oldest = id
		}
	}
	if oldest == "" {
		return nil
	}
	s := l.live[oldest]
	if s.idle != nil {
		s.idle.Stop()
	}
	l.unlist(oldest)
	return s
}

// admit turns a reservation into live session s, idle from now; with an
// idle timeout (s.idleFor), s ends once idle that long.
func (l *sessionLimiter) admit(id string, s *liveSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	l.list(id, s)
}

// list makes s live session id, idle from now; l.mu is held and s's slot
// reserved.
func (l *sessionLimiter) list(id string, s *liveSession) {
	if old := l.live[id]; old != nil {
		// Never twice in its share's count.
		if old.idle != nil {
			old.idle.Stop()
		}
		l.unlist(id)
	}
	s.last = l.now()
	if s.idleFor > 0 && s.end != nil {
		s.idle = time.AfterFunc(s.idleFor, func() { l.expire(id, s) })
	}
	l.live[id] = s
}

// owns reports whether session id may be used by user: it is user's, or
// the limiter does not know it.
func (l *sessionLimiter) owns(id, user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.live[id]
	return s == nil || s.user == user
}

// requestUser is the id of the user r acts as ("" when authentication is
// off).
func requestUser(r *http.Request) string {
	if u, ok := users.FromContext(r.Context()); ok {
		return u.ID
	}
	return ""
}

// settle ends an initialize of share: it releases the reservation when no
// session was made (id is empty).
func (l *sessionLimiter) settle(id, share string) {
	if id != "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	l.release(share)
}

// Live reports the number of sessions counted against the cap.
func (l *sessionLimiter) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.live) + l.pending
}

// captureSession records the session id the SDK assigns in its response,
// and admits it as it is written.
type captureSession struct {
	http.ResponseWriter
	admit   func(id string)
	session string
	wrote   bool
}

func (c *captureSession) WriteHeader(code int) {
	if !c.wrote {
		c.wrote = true
		if id := c.Header().Get("Mcp-Session-Id"); id != "" && code < 300 {
			c.session = id
			c.admit(id)
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureSession) Write(b []byte) (int, error) {
	if !c.wrote {
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
