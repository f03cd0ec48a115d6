package streamable

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// serve is the Streamable HTTP endpoint of the sessions of srv, one of
// Nexus's own MCP surfaces: the session table itself, on the SDK's API for
// it. An initialize without Mcp-Session-Id makes a session
// (mcp.Server.Connect on a StreamableServerTransport of a new id) and every
// later request of it goes to its transport; DELETE, the idle timeout and
// the cap end it by closing it (mcp.ServerSession.Close). A session this
// replica does not hold but the store does is restored here from its
// stored state (mcp.ServerSessionOptions.State), under its id, so that its
// client never notices which replica serves it ([sessionLimiter.restore]).
//
// With fast, a tools/call of a session is served by the fast path
// ([fastCalls.serve]) when it can be. Requests without a session (the
// sessionless protocol, one-off POSTs) never come here ([sessionless]).
//
// The HTTP rules the SDK's own handler applies before it hands a request to
// a session's transport are applied here, as JSON-RPC errors: the methods
// (POST, GET, DELETE), a session id on each but the initialize, the
// Content-Type and Accept of a POST and the Accept of a GET, a protocol
// version of the session protocol (the guard and [JSONRPCErrors] bounded
// the body and checked its message before).
func (l *sessionLimiter) serve(srv *mcp.Server, fast *fastCalls, idle time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		switch r.Method {
		case http.MethodPost, http.MethodGet, http.MethodDelete:
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			writeRPCErrorCode(w, http.StatusMethodNotAllowed, nil, rpcInvalidRequest, "Method Not Allowed: "+r.Method+"; an MCP endpoint takes GET, POST and DELETE")
			return
		}
		if status, msg := mcpwire.CheckRequest(r, bodyOf(r)); status != 0 {
			writeRPCErrorCode(w, status, requestID(r), rpcInvalidRequest, msg)
			return
		}
		if id == "" {
			if r.Method != http.MethodPost {
				writeRPCErrorCode(w, http.StatusBadRequest, nil, rpcInvalidRequest, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header")
				return
			}
			if !isInitialize(r) {
				// The front sends every other request without a session to
				// the stateless handler (servesSessionless).
				writeRPCErrorCode(w, http.StatusBadRequest, requestID(r), rpcInvalidRequest, "Bad Request: a request without Mcp-Session-Id must be initialize")
				return
			}
			l.start(w, r, srv, idle)
			return
		}
		s, answered := l.session(w, r, id, srv, idle)
		if answered {
			return
		}
		switch {
		case r.Method == http.MethodDelete:
			l.delete(id, s)
			w.WriteHeader(http.StatusNoContent)
			return
		case r.Method == http.MethodPost && !isRequest(r):
			// A notification or a response: nobody waits for its answer.
			l.touch(id)
			if fast != nil {
				fast.cancelled(r, &s.calls)
			}
		case r.Method == http.MethodPost:
			l.begin(id)
			defer l.end(id)
			if l.store != nil {
				if err := l.store.Touch(r.Context(), id); err != nil {
					l.log.Warn("record an MCP session's use", "session", id, "err", err)
				}
			}
			if fast != nil && fast.serve(w, r, s.ss, &s.calls) {
				return
			}
		}
		s.transport.ServeHTTP(w, r)
	})
}

// start serves an initialize that makes a new session of srv.
func (l *sessionLimiter) start(w http.ResponseWriter, r *http.Request, srv *mcp.Server, idle time.Duration) {
	share := shareOf(r)
	if !l.makeRoom(w, share) {
		return
	}
	id := rand.Text()
	s, err := l.connect(r.Context(), srv, id, nil, r.URL.Path, requestUser(r), share, idle)
	if err != nil {
		l.settle("", share)
		l.log.Error("start an MCP session", "err", err)
		writeRPCErrorCode(w, http.StatusInternalServerError, requestID(r), rpcInternalError, "the session could not be started")
		return
	}
	// The session is live from now, before the client reads the reply:
	// counted from then, it cannot look younger than a session its client
	// starts next. The initialize is not in flight, nor activity, once its
	// client has its answer, however long the SDK's transport takes to
	// return.
	l.admit(id, s)
	s.transport.ServeHTTP(w, r)
	if s.ss.InitializeParams() == nil {
		// The initialize failed: nobody holds the session's id.
		l.closeLocal(id)
	}
}

// connect makes session id of srv, restored from state when it is not nil,
// and returns it, not yet listed. Every way a session ends here goes
// through the table, which unlists it (DELETE, the idle timeout, the cap,
// another replica's end); one that ended of itself (its connection failed)
// stays listed until its idle timeout, with no goroutine per session
// watching it (ServerSession.Wait), which would cost each idle session
// several KB.
func (l *sessionLimiter) connect(ctx context.Context, srv *mcp.Server, id string, state *mcp.ServerSessionState, path, user, share string, idle time.Duration) (*liveSession, error) {
	t := &mcp.StreamableServerTransport{SessionID: id}
	ss, err := srv.Connect(ctx, t, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return nil, fmt.Errorf("connect MCP session %s: %w", id, err)
	}
	s := &liveSession{ss: ss, transport: t, path: path, user: user, share: share, idleFor: idle}
	s.calls.logging.Store(state != nil && state.LogLevel != "")
	s.end = func() { ss.Close() }
	return s, nil
}

// delete ends session s (id), which its client deleted, here and in the
// store, and tells the other replicas.
func (l *sessionLimiter) delete(id string, s *liveSession) {
	l.forget(id)
	s.end()
	if l.store != nil {
		l.drop(id)
	}
}

// session returns the live session id of r, restoring it from the store
// when this replica does not hold it; answered reports that it answered r
// instead (no such session, another user's, a store that does not answer,
// no free slot).
func (l *sessionLimiter) session(w http.ResponseWriter, r *http.Request, id string, srv *mcp.Server, idle time.Duration) (s *liveSession, answered bool) {
	for {
		l.mu.Lock()
		s = l.live[id]
		wait, restoring := l.restoring[id]
		l.mu.Unlock()
		switch {
		case s != nil && s.ss != nil:
			if s.user != requestUser(r) {
				// An MCP session is its user's: its id alone grants
				// nothing (SPEC section 8). Answered as for a session that
				// does not exist, so that nothing is disclosed.
				writeNoSession(w, r)
				return nil, true
			}
			return s, false
		case s != nil:
			// The id of a session of another route.
			writeNoSession(w, r)
			return nil, true
		case restoring:
			// Another request of the session is restoring it.
			<-wait
			continue
		}
		if l.store == nil {
			writeNoSession(w, r)
			return nil, true
		}
		return l.restore(w, r, id, srv, idle)
	}
}

// restore makes session id live on this replica from its state in the
// store (another replica started it, or this one before it restarted), so
// that its client never notices which replica serves it: connected again
// under its id with its client's initialize parameters, the protocol
// version they negotiated and its log level, through the SDK's own API for
// this (mcp.ServerSessionOptions.State); the surfaces restore their own
// state of it (the bounded surface's discovered tools, the pipeline's
// conversations) from the store. It answers r itself when the store does
// not know the session (404), does not answer (503), holds it for another
// user (404) or when no slot is free.
func (l *sessionLimiter) restore(w http.ResponseWriter, r *http.Request, id string, srv *mcp.Server, idle time.Duration) (*liveSession, bool) {
	l.mu.Lock()
	if _, ok := l.restoring[id]; ok || l.live[id] != nil {
		l.mu.Unlock()
		return l.session(w, r, id, srv, idle)
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
	switch {
	case err != nil:
		l.log.Warn("read an MCP session", "session", id, "err", err)
		w.Header().Set("Retry-After", "1")
		errs.Write(w, http.StatusServiceUnavailable, errs.E(errs.Unavailable, "the session store does not answer; try again shortly"))
		return nil, true
	case !ok || sess.User != requestUser(r):
		writeNoSession(w, r)
		return nil, true
	}
	state, err := sessionState(sess)
	if err != nil {
		l.log.Warn("restore an MCP session", "session", id, "err", err)
		writeNoSession(w, r)
		return nil, true
	}
	share := shareOf(r)
	if !l.makeRoom(w, share) {
		return nil, true
	}
	s, err := l.connect(mcpsession.Restoring(context.WithoutCancel(r.Context())), srv, id, state, r.URL.Path, sess.User, share, idle)
	if err != nil {
		l.settle("", share)
		l.log.Warn("restore an MCP session", "session", id, "err", err)
		writeRPCErrorCode(w, http.StatusInternalServerError, requestID(r), rpcInternalError, "the session could not be restored")
		return nil, true
	}
	l.admit(id, s)
	l.log.Info("restored an MCP session from the store", "session", id, "surface", sess.Surface)
	return s, false
}

// sessionState is the SDK's state of a stored session: as it was once its
// client's initialize and notifications/initialized were handled, at its
// log level.
func sessionState(sess mcpsession.Session) (*mcp.ServerSessionState, error) {
	var params mcp.InitializeParams
	if err := json.Unmarshal(sess.Params, &params); err != nil {
		return nil, fmt.Errorf("decode the stored initialize parameters: %w", err)
	}
	// The version the session negotiated: the client's when Nexus speaks
	// it, else Nexus's latest (the rule of the initialize handshake).
	version := params.ProtocolVersion
	if !mcpwire.IsHandshake(version) {
		version = mcpwire.LatestHandshake()
	}
	return &mcp.ServerSessionState{
		InitializeParams:          &params,
		InitializedParams:         &mcp.InitializedParams{},
		NegotiatedProtocolVersion: version,
		// Sessions of the protocol versions that have logging keep their
		// level, for the deprecation window (SEP-2577).
		//lint:ignore SA1019 restored for clients of the protocol versions that have logging
		LogLevel: mcp.LoggingLevel(sess.LogLevel),
	}, nil
}

// setLevel sets the log level of this replica's copy of session id, if it
// holds one, as the client's logging/setLevel did on the replica it
// reached, which stored it and told the others. The SDK has no API to set
// a live session's level, so the request is handed to the session's
// transport as its client's would be, marked ([mcpsession.SyncHeader]) so
// that it is applied, not stored or told again.
func (l *sessionLimiter) setLevel(id, level string) {
	l.mu.Lock()
	s := l.live[id]
	l.mu.Unlock()
	if s == nil || s.transport == nil {
		return
	}
	s.calls.logging.Store(true)
	lv, _ := json.Marshal(level)
	req, _ := http.NewRequest(http.MethodPost, s.path,
		strings.NewReader(`{"jsonrpc":"2.0","id":"nexus-sync-level","method":"logging/setLevel","params":{"level":`+string(lv)+`}}`))
	req.Header.Set(mcpsession.SyncHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(sessionHeader, id)
	rec := &discard{header: http.Header{}}
	s.transport.ServeHTTP(rec, req)
	if rec.status != 0 && rec.status != http.StatusOK {
		l.log.Warn("set the log level of an MCP session changed on another replica", "session", id, "status", rec.status)
	}
}

// requestID is the id of r's JSON-RPC request as [JSONRPCErrors] read it,
// nil when it has none.
func requestID(r *http.Request) json.RawMessage {
	if b, ok := r.Body.(*bufferedBody); ok && b.checked {
		return b.info.ID
	}
	return nil
}

// discard is a response nobody reads: its status is kept.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header { return d.header }

func (d *discard) Write(b []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return len(b), nil
}

func (d *discard) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

// Flush does nothing: nothing is sent.
func (d *discard) Flush() {}
