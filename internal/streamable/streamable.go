// Package streamable owns MCP's Streamable HTTP transport on Nexus's own
// endpoints (/mcp, /mcp/agents, /mcp/bounded) and the session accounting of
// the per-server passthrough's: what Nexus reads and writes of that wire
// above the SDK's API.
//
//   - The session table (table.go, serve.go): sessions made with the SDK's
//     session API (mcp.Server.Connect on a StreamableServerTransport of a
//     new id), capped per process and shared out between users
//     (shares.go), ended when idle, to make room or when their client
//     deletes them by closing the SDK session itself, and restored on
//     another replica from the store through mcp.ServerSessionOptions.State.
//   - The routing of requests without a session (sessionless.go): the
//     sessionless protocol (2026-07-28 and later: server/discover,
//     per-request _meta, the Mcp-Method and Mcp-Name headers) and one-off
//     POSTs go to the SDK's stateless handler of the same server.
//   - The fast tools/call (fastcall.go), for session and sessionless
//     requests alike, through the surface's own call into the one pipeline.
//   - The one JSON-RPC error writer of MCP routes (jsonrpcerrors.go).
//
// The protocol versions, headers, media types and SSE framing come from
// [mcpwire]; the HTTP front (package httpapi) keeps the guard (Host,
// Origin, body bounds), authentication and health, and hands each MCP
// route's requests here with their bodies read ([NewBody]).
package streamable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/jsonrpcmsg"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/sdklog"
)

// Options configure the Streamable HTTP endpoints of one process.
type Options struct {
	// MaxSessions caps the live MCP sessions over all endpoints (and,
	// besides them, the sessionless listening streams);
	// DefaultMaxSessions when zero.
	MaxSessions int
	// MaxSessionsPerUser is one user's share of the cap;
	// SessionsPerUser(MaxSessions) when zero.
	MaxSessionsPerUser int
	// SessionTimeout ends a session of Nexus's own endpoints idle that
	// long; [SessionTimeout] when zero.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body the SDK's stateless handler reads
	// (the front's guard bounds them all before).
	MaxBodyBytes int64
	// Store, when set, keeps sessions where every replica finds them: a
	// request for a session this replica does not hold restores it from
	// there. Nil: a session lives on the replica that started it.
	Store *mcpsession.Store
	// Events, with Store, tells the other replicas of sessions that ended
	// here, and closes the ones that ended elsewhere.
	Events *events.Bus
	// Logger receives the table's logs and the SDK handler's; nil discards
	// them.
	Logger *slog.Logger
}

// Sessions serves the Streamable HTTP endpoints of one process over one
// session table.
type Sessions struct {
	o       Options
	table   *sessionLimiter
	listens *streamSlots
}

// New returns the session table of one process.
func New(o Options) *Sessions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = SessionTimeout
	}
	shared := newShares(o.MaxSessions, o.MaxSessionsPerUser)
	t := newSessionLimiter(shared)
	t.store, t.log = o.Store, o.Logger
	if o.Events != nil && o.Store != nil {
		t.follow(o.Events)
	}
	// Sessionless listening streams: as many as sessions, besides them,
	// shared out between users alike.
	return &Sessions{o: o, table: t, listens: &streamSlots{shares: shared, held: map[string]int{}}}
}

// Endpoint is the Streamable HTTP endpoint of srv, one of Nexus's own MCP
// surfaces: its sessions are the table's; its requests without a session
// go to the SDK's stateless handler of srv (see [sessionless]); with calls
// (the flat surface), a tools/call is served by the fast path when it can
// be. Its errors are JSON-RPC errors ([JSONRPCErrors]).
func (s *Sessions) Endpoint(srv *mcp.Server, calls ToolCalls) http.Handler {
	var fast *fastCalls
	if calls != nil {
		fast = newFastCalls(srv, calls)
	}
	// A session of one request, not counted by the table; a sessionless
	// request's work ends when its client goes away, its POST being the
	// whole request. The front's guard decides Host for every route; the
	// SDK's own check would reject the allowed hosts on a loopback
	// listener.
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
		Logger:                       sdklog.New(s.o.Logger),
		MaxRequestBodyBytes:          s.o.MaxBodyBytes,
		DisableLocalhostProtection:   true,
	})
	return buffered(s.o.MaxBodyBytes, JSONRPCErrors(sessionless(stateless, fast, s.table.serve(srv, fast, s.o.SessionTimeout), s.listens)))
}

// buffered reads a POST's body whole, at most maxBytes of it (413 beyond),
// unless the front's guard did ([NewBody]): the endpoint reads a message's
// method and id before it is served, and serves it from memory.
func buffered(maxBytes int64, next http.Handler) http.Handler {
	if maxBytes <= 0 {
		maxBytes = mcp.DefaultMaxRequestBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Body.(*bufferedBody); ok || r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
		if err != nil {
			status := http.StatusBadRequest
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				status = http.StatusRequestEntityTooLarge
			}
			writeRPCErrorCode(w, status, nil, rpcInvalidRequest, fmt.Sprintf("read the request body: %v", err))
			return
		}
		r.Body = NewBody(data)
		next.ServeHTTP(w, r)
	})
}

// Route counts the sessions of h, an MCP endpoint that serves its own
// (the per-server passthrough), against the cap: see
// [sessionLimiter.wrap] and [SessionCloser].
func (s *Sessions) Route(h http.Handler) http.Handler { return s.table.wrap(h) }

// Live reports the number of sessions counted against the cap.
func (s *Sessions) Live() int { return s.table.Live() }

// Max is the cap.
func (s *Sessions) Max() int { return s.table.max }

// NewBody is a request body the front's guard read whole, for an MCP
// route: its content, to be read again, and the whole of it, which the
// table reads without reading the body ([JSONRPCErrors] checks it once).
func NewBody(data []byte) io.ReadCloser {
	return &bufferedBody{Reader: bytes.NewReader(data), data: data}
}

// bufferedBody is a request body the guard has read ([NewBody]).
type bufferedBody struct {
	*bytes.Reader
	data []byte
	// checked: [JSONRPCErrors] found one valid JSON-RPC message in data,
	// of which info says what the table reads.
	checked bool
	info    jsonrpcmsg.Info
}

func (*bufferedBody) Close() error { return nil }

// Method is the method of r's body when it is one JSON-RPC request or
// notification ("" for a response); ok is false when it is not one
// JSON-RPC message. The body stays to be read.
func Method(r *http.Request) (method string, ok bool) {
	method, _, ok = peek(r)
	return method, ok
}
