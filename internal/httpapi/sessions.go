package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/ids"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/users"
)

// DefaultMaxSessions bounds the live MCP sessions of one Nexus process, over
// all its Streamable HTTP endpoints (an idle session costs about 17 KB; see
// docs/benchmarks.md).
const DefaultMaxSessions = 10000

// SessionTimeout is how long an MCP session may stay idle (no request)
// before it is closed (Options.SessionTimeout, zero meaning this).
const SessionTimeout = 30 * time.Minute

// sessionLimiter caps the live MCP sessions of the Streamable HTTP
// endpoints it wraps. An initialize request that would exceed the cap first
// closes the session idle the longest (no POST in flight; an open GET event
// stream does not count as activity, as for the SDK's own idle timeout); the
// closed session's client gets 404 on its next request and, as the MCP
// specification says, starts a new session. When every session has a POST
// in flight, the initialize gets 503.
//
// Each user holds at most a share of the cap ([shares]), so that one user's
// load never locks the others out: an initialize of a user at their share
// closes that user's own session idle the longest, never another's, and
// gets 429 naming the per-user limit when each of theirs has a POST in
// flight. Cap and shares are this process's (per replica).
//
// A slot is reserved before the initialize runs, so concurrent initializes
// cannot overshoot the cap or a share.
//
// The limiter also ends the sessions of an endpoint wrapped with an idle
// timeout ([sessionLimiter.wrap]) once they have been idle that long: no
// POST in flight, none ended (a notification or response counts as one that
// ended), for the timeout. That is the rule of the SDK's own
// StreamableHTTPOptions.SessionTimeout, kept here instead because a
// tools/call the front serves itself ([fastCalls]) never reaches the SDK's
// timer.
type sessionLimiter struct {
	shares
	now func() time.Time
	// store keeps sessions where every replica finds them, and ids names
	// new ones (both nil: sessions live in this process only); see
	// [sessionLimiter.restore].
	store  *mcpsession.Store
	ids    *ids.MCPSessions
	events *events.Bus
	log    *slog.Logger

	mu        sync.Mutex
	live      map[string]*liveSession
	pending   int                      // initializes admitted whose session is not known yet
	held      map[string]int           // live and pending sessions by share
	restoring map[string]chan struct{} // sessions being re-created, closed when done
}

type liveSession struct {
	handler  http.Handler // the endpoint the session lives on
	path     string       // and the path it was made on
	user     string       // the id of the user who made it
	share    string       // and the share of the slots it takes (shareOf)
	last     time.Time
	inflight int
	// idle ends the session once idle for idleFor, its endpoint's timeout;
	// nil without one. Stopped while a POST is in flight.
	idle    *time.Timer
	idleFor time.Duration
}

func newSessionLimiter(s shares) *sessionLimiter {
	return &sessionLimiter{shares: s, live: map[string]*liveSession{}, held: map[string]int{}, now: time.Now, restoring: map[string]chan struct{}{},
		log: slog.New(slog.DiscardHandler)}
}

// wrap applies the cap to a Streamable HTTP handler; with idle > 0 its
// sessions also end once idle that long.
func (l *sessionLimiter) wrap(next http.Handler, idle time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id != "" && l.restore(w, r, id, next, idle) {
			return
		}
		if id == "" && r.Method == http.MethodPost && l.ids != nil {
			// This request may start a session: the SDK asks for its id.
			defer l.ids.Hold("")()
		}
		if id != "" && !l.owns(id, requestUser(r)) {
			// An MCP session is its user's: its id alone grants nothing
			// (SPEC section 8). Answered as for a session that does not
			// exist, so that nothing is disclosed.
			WriteError(w, http.StatusNotFound, errs.E(errs.NotFound, "session not found: start a new session with initialize"))
			return
		}
		switch {
		case id != "" && r.Method == http.MethodPost && !isRequest(r):
			// A notification or a response: nobody waits for its answer,
			// however long the SDK's handler takes to return.
			l.touch(id)
		case id != "" && r.Method == http.MethodPost:
			l.begin(id)
			defer l.end(id)
			if l.store != nil {
				if err := l.store.Touch(r.Context(), id); err != nil {
					l.log.Warn("record an MCP session's use", "session", id, "err", err)
				}
			}
		case id != "" && r.Method == http.MethodDelete:
			defer l.forget(id)
			if l.store != nil {
				defer l.drop(id)
			}
		case id == "" && r.Method == http.MethodPost && isInitialize(r):
			share := shareOf(r)
			victim, refused := l.reserve(share)
			if refused != admitted {
				l.refuse(w, share, sessionSlots, refused == capFull)
				return
			}
			if victim != nil {
				victim.close()
			}
			// The session is live from the moment its id is written, before
			// the client reads the reply: counted from then, it cannot look
			// younger than a session its client starts next.
			user := requestUser(r)
			cw := &captureSession{ResponseWriter: w, admit: func(id string) { l.admit(id, next, r.URL.Path, user, share, idle) }}
			defer func() { l.settle(cw.session, share) }()
			next.ServeHTTP(cw, r)
			return
		}
		next.ServeHTTP(w, r)
	})
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
	var body []byte
	if b, isBuffered := r.Body.(*bufferedBody); isBuffered {
		body = b.data
	} else {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return "", false, false
		}
	}
	var msg message
	if json.Unmarshal(body, &msg) != nil {
		return "", false, false
	}
	return msg.Method, len(msg.ID) > 0 && string(msg.ID) != "null", true
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
	(&victim{id: id, path: s.path, handler: s.handler}).close()
}

// victim is a session chosen for eviction.
type victim struct {
	id, path string
	handler  http.Handler
}

// close ends the session through its endpoint, as a client's DELETE would:
// the SDK closes it and forgets it, and Nexus's state of it on this replica
// ends with it. Its row in the store stays: another replica may be serving
// it, and should its client come back here, the session is re-created.
func (v *victim) close() {
	req := httptest.NewRequest(http.MethodDelete, v.path, nil)
	req.Header.Set("Mcp-Session-Id", v.id)
	v.handler.ServeHTTP(httptest.NewRecorder(), req)
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

// setLevel sets the log level of this replica's copy of session id, if it
// holds one, through its endpoint, as the client's logging/setLevel did on
// the replica it reached, which stored it and told the others: the request
// is marked ([mcpsession.SyncHeader]), so that it is applied, not stored or
// told again.
func (l *sessionLimiter) setLevel(id, level string) {
	l.mu.Lock()
	s := l.live[id]
	l.mu.Unlock()
	if s == nil {
		return
	}
	lv, _ := json.Marshal(level)
	req := httptest.NewRequest(http.MethodPost, s.path,
		strings.NewReader(`{"jsonrpc":"2.0","id":"nexus-sync-level","method":"logging/setLevel","params":{"level":`+string(lv)+`}}`))
	req.Header.Set(mcpsession.SyncHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		l.log.Warn("set the log level of an MCP session changed on another replica", "session", id, "status", rec.Code, "body", rec.Body.String())
	}
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
	req := httptest.NewRequest(http.MethodDelete, s.path, nil)
	req.Header.Set("Mcp-Session-Id", id)
	s.handler.ServeHTTP(httptest.NewRecorder(), req)
}

// restore re-creates session id on this replica when the replica does not
// hold it but the store does (another replica started it, or this one
// before it restarted), so that its client never notices which replica
// serves it: the session is initialized again under its id with the
// client's initialize parameters (through next, the SDK's handler, so that
// every surface's middleware sees it begin), then its log level is set
// again; the surfaces restore their own state of it (the bounded surface's
// discovered tools, the pipeline's conversations) from the store. It
// reports whether it answered the request itself: a store that does not
// answer (503), a session of another user or no free slot; a session the
// store does not know is left to the SDK (404).
func (l *sessionLimiter) restore(w http.ResponseWriter, r *http.Request, id string, next http.Handler, idle time.Duration) bool {
	if l.store == nil || l.ids == nil {
		return false
	}
	l.mu.Lock()
	if _, ok := l.live[id]; ok {
		l.mu.Unlock()
		return false
	}
	if wait, ok := l.restoring[id]; ok {
		// Another request of the session is re-creating it.
		l.mu.Unlock()
		<-wait
		return false
	}
	done := make(chan struct{})
	l.restoring[id] = done
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.restoring, id)
		l.mu.Unlock()
		close(done)
	}()

	sess, ok, err := l.store.Load(r.Context(), id)
	if err != nil {
		l.log.Warn("read an MCP session", "session", id, "err", err)
		w.Header().Set("Retry-After", "1")
		WriteError(w, http.StatusServiceUnavailable, errs.E(errs.Unavailable, "the session store does not answer; try again shortly"))
		return true
	}
	if !ok {
		return false
	}
	if sess.User != requestUser(r) {
		WriteError(w, http.StatusNotFound, errs.E(errs.NotFound, "session not found: start a new session with initialize"))
		return true
	}
	share := shareOf(r)
	victim, refused := l.reserve(share)
	if refused != admitted {
		l.refuse(w, share, sessionSlots, refused == capFull)
		return true
	}
	if victim != nil {
		victim.close()
	}
	init := synthetic(r, `{"jsonrpc":"2.0","id":"nexus-restore","method":"initialize","params":`+string(sess.Params)+`}`, "")
	rec := httptest.NewRecorder()
	release := l.ids.Hold(id)
	next.ServeHTTP(rec, init)
	release()
	if rec.Code != http.StatusOK || rec.Header().Get("Mcp-Session-Id") != id {
		l.settle("", share)
		l.log.Warn("re-create an MCP session", "session", id, "status", rec.Code, "body", rec.Body.String())
		return false // the SDK answers: the session is not found
	}
	l.admit(id, next, r.URL.Path, sess.User, share, idle)
	next.ServeHTTP(httptest.NewRecorder(), synthetic(r, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, id))
	if sess.LogLevel != "" {
		level, _ := json.Marshal(sess.LogLevel)
		next.ServeHTTP(httptest.NewRecorder(), synthetic(r, `{"jsonrpc":"2.0","id":"nexus-restore-level","method":"logging/setLevel","params":{"level":`+string(level)+`}}`, id))
	}
	l.log.Info("re-created an MCP session from the store", "session", id, "surface", sess.Surface)
	return false
}

// synthetic is a POST of body to r's endpoint, as r's client (its context,
// its user), on session id ("" for none).
func synthetic(r *http.Request, body, id string) *http.Request {
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, r.URL.Path, strings.NewReader(body))
	req.Host = r.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
			req.Header.Set("Mcp-Protocol-Version", v)
		}
	}
	return req
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
// every session it could choose has a request in flight.
func (l *sessionLimiter) reserve(share string) (*victim, refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v *victim
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

// evict unlists the session idle the longest of those that match, none of
// whose POSTs is in flight, and returns it to be closed; nil when there is
// none. l.mu is held.
func (l *sessionLimiter) evict(match func(*liveSession) bool) *victim {
	oldest := ""
	for id, s := range l.live {
		if s.inflight == 0 && match(s) && (oldest == "" || s.last.Before(l.live[oldest].last)) {
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
	return &victim{id: oldest, path: s.path, handler: s.handler}
}

// admit turns a reservation into a live session once the initialize has
// written the session's id: its idle time counts from then. The initialize
// is not in flight from then on: its client has its answer, however long the
// SDK's handler takes to return.
func (l *sessionLimiter) admit(id string, h http.Handler, path, user, share string, idle time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	if old := l.live[id]; old != nil {
		// Never twice in its share's count.
		if old.idle != nil {
			old.idle.Stop()
		}
		l.unlist(id)
	}
	s := &liveSession{handler: h, path: path, user: user, share: share, last: l.now(), idleFor: idle}
	if idle > 0 {
		// Idle from now, as for the cap (the SDK's own timer starts when
		// the initialize returns, moments later).
		s.idle = time.AfterFunc(idle, func() { l.expire(id, s) })
	}
	l.live[id] = s
}

// owns reports whether session id may be used by user: it is user's, or
// the limiter does not know it (the SDK answers for a session that does not
// exist).
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
