// Package httpapi is Nexus's HTTP front: the MCP surfaces over Streamable
// HTTP (/mcp flat, /mcp/agents, /mcp/bounded), GET / (the endpoints),
// GET /healthz, GET /metrics (when given) and whatever other routes the
// caller mounts (REST, the per-server proxy), all behind one guard. The
// guard alone decides, for every route:
//
//   - Host: a loopback name or address, or one of Options.AllowedHosts
//     (DNS rebinding protection; the SDK's own localhost check is off).
//   - Origin, when sent: one of Options.AllowedOrigins, the origin of the
//     request's (allowed) Host itself, or, on a loopback listener only, a
//     loopback origin. An allowed Origin gets CORS headers; a preflight
//     (OPTIONS with Access-Control-Request-Method) is answered here.
//   - Body: read whole before the route runs, at most Options.MaxBodyBytes
//     (413 beyond) within Options.BodyTimeout (408 and the connection closed
//     when it stalls).
//
// The MCP endpoints themselves, their sessions and the clients without
// one, are package streamable's: the front hands their requests there.
//
// Every error the front itself writes (403, 404, 405, 408, 413) is JSON in
// the REST surface's one error shape ([errs.Write]); the errors of the MCP
// routes are JSON-RPC errors ([streamable.JSONRPCErrors]).
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/streamable"
)

// DefaultMaxBodyBytes bounds every request body (1 MiB); a larger body gets
// 413 and is not read.
const DefaultMaxBodyBytes = 1 << 20

// The timeouts of the HTTP server, all in one place. Nexus sets no
// http.Server ReadTimeout or WriteTimeout: both would cut the long-lived SSE
// streams of MCP (ReadTimeout through the server's background read once the
// body is consumed). A request body is bounded by the guard instead.
const (
	// ReadHeaderTimeout bounds reading a request's headers
	// (http.Server.ReadHeaderTimeout).
	ReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a request's body, from the end of
	// its headers (Options.BodyTimeout); a body not received in time gets
	// 408 and the connection is closed.
	DefaultBodyTimeout = 30 * time.Second
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request (http.Server.IdleTimeout).
	IdleTimeout = 2 * time.Minute
)

// CORS: what an allowed origin may send and read.
var (
	corsMethods = []string{"GET", "POST", "DELETE", "OPTIONS"}
	corsHeaders = []string{"Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Last-Event-ID", "Authorization", "Accept"}
	// Response headers a page may read besides the safelisted ones.
	corsExpose = []string{"Mcp-Session-Id", "X-Request-Id", "X-Nexus-Session", "X-Nexus-Workspace", "Retry-After"}
)

// corsMaxAge is how long (seconds) a browser may cache a preflight.
const corsMaxAge = "600"

// RateLimiter bounds the requests a second of each user (Options.TokenLimit).
type RateLimiter interface {
	// Allow admits one request of key now, or refuses it and says how long
	// until one would be admitted.
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
	// Rate is the sustained requests a second a key may make.
	Rate() float64
}

// Options configure the handler.
type Options struct {
	// MCP is the flat surface's server, behind /mcp.
	MCP *mcp.Server
	// MCPCalls, when set, serves the flat surface's tools/call requests
	// without the SDK server's JSON-RPC dispatch (see [ToolCalls]); nil
	// leaves every request to the SDK.
	MCPCalls streamable.ToolCalls
	// Agents is the agents surface's server, behind /mcp/agents (optional).
	Agents *mcp.Server
	// Bounded is the bounded surface's server, behind /mcp/bounded
	// (optional).
	Bounded *mcp.Server
	// SessionRoutes are further MCP endpoints over Streamable HTTP by
	// ServeMux pattern (the per-server proxy), which serve their sessions
	// themselves: those count against MaxSessions like the surfaces', and
	// a handler that is a [SessionCloser] may lose its idlest to the cap.
	SessionRoutes map[string]http.Handler
	// Routes are further handlers by ServeMux pattern (optional).
	Routes map[string]http.Handler
	// Endpoints are the endpoints of Routes, listed by GET / after the MCP
	// surfaces.
	Endpoints []Endpoint
	// Loopback is true when the listener is bound to a loopback address;
	// then loopback origins (http://localhost:5173) are accepted too.
	Loopback bool
	// AllowedHosts are the host names (ports ignored, case-insensitive)
	// clients use to reach Nexus besides loopback names and addresses.
	// Beyond loopback they are required: without them only loopback Host
	// headers are accepted.
	AllowedHosts []string
	// AllowedOrigins are the origins (such as "https://app.example.com")
	// whose pages may call Nexus, with CORS.
	AllowedOrigins []string
	// MaxBodyBytes bounds request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds reading a request body; zero means
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// SessionTimeout closes an MCP session of the surfaces idle that long
	// (no POST in flight, none ended); zero means [streamable.SessionTimeout].
	SessionTimeout time.Duration
	// MaxSessions caps the live MCP sessions over all MCP endpoints, in
	// this process; zero means [streamable.DefaultMaxSessions]. The session idle the
	// longest is closed to make room for a new one. Sessionless clients'
	// listening streams (subscriptions/listen) are capped at as many again;
	// past it they get 503.
	MaxSessions int
	// MaxSessionsPerUser is each user's share of MaxSessions, and of the
	// listening streams; zero means [streamable.SessionsPerUser] of MaxSessions. A
	// user's new session past it closes their own session idle the longest;
	// with each of theirs busy, it gets 429 with Retry-After, while other
	// users still get in. Users of the anonymous tier share one share; the
	// local user's is the whole cap (see [shares]).
	MaxSessionsPerUser int
	// Metrics, when set, serves GET /metrics (Prometheus text format) behind
	// the guard like every route. [Handler] calls it once, with a function
	// reporting the live MCP sessions (read at scrape time) and their cap.
	Metrics func(liveSessions func() int, maxSessions int) http.Handler
	// Auth finds the user of a bearer token (see authenticate). With it,
	// every request needs a token, except on a loopback-only listener, where
	// one without acts as the local user. Nil turns authentication off: every
	// request acts as the local user (serve allows that on loopback only).
	Auth Authenticator
	// AuthorizationServers are the OAuth authorization servers (issuers)
	// whose access tokens Auth accepts, listed in the protected resource
	// metadata; Resource is this resource's canonical URL there (default:
	// the URL a request reached /mcp at).
	AuthorizationServers []string
	Resource             string
	// TokenLimit, when set, bounds each authenticated user's request rate:
	// a request over it gets 429 with Retry-After. Requests of the local
	// user (no token on a loopback-only listener) are not limited. serve
	// sets a quota.SharedLimiter, whose limit holds across replicas.
	TokenLimit RateLimiter
	// UI, when set, serves the web UI: GET / for a browser (Accept:
	// text/html; other clients get the JSON index) and its assets under
	// /ui/.
	UI http.Handler
	// Health describes the process for GET /healthz, the liveness probe:
	// 200 while the process answers (status "ok"), 503 only if Health
	// itself says otherwise; nil answers {"status":"ok"}.
	Health func(ctx context.Context) map[string]any
	// Ready reports readiness for GET /readyz: 200 when its status is
	// "ok" (the store, the event bus answer), 503 otherwise; nil means
	// always ready. A draining server is never ready.
	Ready func(ctx context.Context) map[string]any
	// Drain, when closed, starts the drain of a stopping server: /readyz
	// answers 503 "draining", so that balancers stop sending requests, and
	// long-lived MCP GET streams end, so that their clients reconnect
	// elsewhere; requests in flight finish.
	// Nil never drains.
	Drain <-chan struct{}
	// Sessions, when set, lets this replica serve MCP sessions it does not
	// hold: a request for a session the store knows restores it here under
	// its id (the surfaces must be built with the same store, see
	// mcpkit.Options). Nil: a session lives on the replica that started it.
	Sessions *mcpsession.Store
	// Events, with Sessions, tells the other replicas of sessions that
	// ended here, and closes the ones that ended elsewhere.
	Events *events.Bus
	// Logger receives the front's and the MCP SDK HTTP handler's logs (the
	// latter through [sdklog.New]).
	Logger *slog.Logger
}

// Endpoint is one entry of the index (GET /).
type Endpoint struct {
	Path        string `json:"path"`
	Description string `json:"description"`
}

// Handler returns the HTTP handler of Nexus.
func Handler(o Options) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	sessions := streamable.New(streamable.Options{MaxSessions: o.MaxSessions, MaxSessionsPerUser: o.MaxSessionsPerUser,
		SessionTimeout: o.SessionTimeout, MaxBodyBytes: o.MaxBodyBytes, Store: o.Sessions, Events: o.Events, Logger: o.Logger})
	index := []Endpoint{{"/mcp", "MCP over Streamable HTTP, flat surface: every tool by name"}}
	mux.Handle("/mcp", sessions.Endpoint(o.MCP, o.MCPCalls))
	if o.Agents != nil {
		mux.Handle("/mcp/agents", sessions.Endpoint(o.Agents, nil))
		index = append(index, Endpoint{"/mcp/agents", "MCP, agents surface: one tool per server with a mode argument"})
	}
	if o.Bounded != nil {
		mux.Handle("/mcp/bounded", sessions.Endpoint(o.Bounded, nil))
		index = append(index, Endpoint{"/mcp/bounded", "MCP, bounded surface: get_tools, open_toolbox, search_tools, use_tool"})
	}
	for pattern, h := range o.Routes {
		mux.Handle(pattern, h)
	}
	for pattern, h := range o.SessionRoutes {
		mux.Handle(pattern, sessions.Route(h))
	}
	index = append(index, o.Endpoints...)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", adminsOnly(o.Metrics(sessions.Live, sessions.Max())))
		index = append(index, Endpoint{"/metrics", "Prometheus metrics: tool calls, downstream servers, MCP sessions, store pool, Go runtime"})
	}
	index = append(index, Endpoint{"/healthz", "liveness: 200 while the process answers"},
		Endpoint{"/readyz", "readiness: 200 when the store (and event bus) answer and the server is not draining, 503 otherwise"})
	meta := resourceMetadata(o.Resource, o.AuthorizationServers)
	mux.HandleFunc("GET "+ResourceMetadataPath, meta)
	mux.HandleFunc("GET "+ResourceMetadataPath+"/{resource...}", meta)
	if o.UI != nil {
		mux.Handle("GET /ui/", o.UI)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if o.UI != nil && strings.Contains(r.Header.Get("Accept"), "text/html") {
			// A browser gets the web UI; any other client the index.
			o.UI.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": "Nexus", "endpoints": index})
	})
	probe := func(report func(ctx context.Context) map[string]any, draining bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body := map[string]any{"status": "ok"}
			if report != nil {
				body = report(r.Context())
			}
			if draining && closed(o.Drain) {
				body["status"] = "draining"
			}
			status := http.StatusOK
			if body["status"] != "ok" {
				status = http.StatusServiceUnavailable
			}
			writeJSON(w, status, body)
		}
	}
	mux.HandleFunc("GET /healthz", probe(o.Health, false))
	mux.HandleFunc("GET /readyz", probe(o.Ready, true))
	return guard(o, drainStreams(o.Drain, JSONMux(mux)))
}

// JSONMux serves mux, answering a request no pattern matches with a JSON 404,
// or 405 with Allow when only the method is wrong (the mux itself writes
// text).
func JSONMux(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// The mux's own 404 or 405: learn which.
		rec := &recorder{header: http.Header{}}
		inner.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			errs.Write(w, http.StatusMethodNotAllowed, errs.E(errs.BadRequest, "method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
			return
		}
		errs.Write(w, http.StatusNotFound, errs.E(errs.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
}

// recorder captures the status and headers of the mux's fallback handlers.
type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// policy is what the guard accepts, normalized.
type policy struct {
	loopback bool
	hosts    map[string]bool // lower case, no port, no trailing dot
	origins  map[string]bool // lower case, no trailing slash
	maxBody  int64
	timeout  time.Duration
}

func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(hostOnly(strings.TrimSpace(h))), ".")
}

func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// guard validates Host and Origin (DNS rebinding protection), answers CORS
// preflights, adds CORS headers for allowed origins, and reads request
// bodies whole under a size and time bound.
func guard(o Options, next http.Handler) http.Handler {
	p := policy{loopback: o.Loopback, hosts: map[string]bool{}, origins: map[string]bool{}, maxBody: o.MaxBodyBytes, timeout: o.BodyTimeout}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxBodyBytes
	}
	if p.timeout <= 0 {
		p.timeout = DefaultBodyTimeout
	}
	for _, h := range o.AllowedHosts {
		if h = normalizeHost(h); h != "" {
			p.hosts[h] = true
		}
	}
	for _, origin := range o.AllowedOrigins {
		if origin = normalizeOrigin(origin); origin != "" {
			p.origins[origin] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the front itself marks a request as applying another
		// replica's change to a session (sessionLimiter.setLevel).
		r.Header.Del(mcpsession.SyncHeader)
		hdr := w.Header()
		hdr.Add("Vary", "Origin")
		if !p.hostAllowed(r.Host) {
			errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden, "Forbidden: invalid Host header %q: not a loopback name or address, nor one of the allowed hosts (--allow-hosts)", r.Host))
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" {
			if !p.originAllowed(origin, r.Host) {
				errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden, "Forbidden: invalid Origin header %q: not an allowed origin (--allow-origins)", origin))
				return
			}
			hdr.Set("Access-Control-Allow-Origin", origin)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				preflight(w, r)
				return
			}
			hdr.Set("Access-Control-Expose-Headers", strings.Join(corsExpose, ", "))
		}
		r, ok := authenticate(o, w, r)
		if !ok {
			return
		}
		if r.Body != nil && r.Body != http.NoBody && !p.readBody(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *policy) hostAllowed(host string) bool {
	h := normalizeHost(host)
	return h != "" && (isLoopbackHost(h) || p.hosts[h])
}

// originAllowed reports whether a page of origin may call Nexus through
// host, a Host that passed hostAllowed: a listed origin, the origin of that
// host itself (a page Nexus served, or a same-origin page behind a proxy), or
// on a loopback listener a loopback origin.
func (p *policy) originAllowed(origin, host string) bool {
	o := normalizeOrigin(origin)
	if p.origins[o] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if p.loopback && isLoopbackHost(u.Hostname()) {
		return true
	}
	return strings.EqualFold(u.Host, host)
}

// preflight answers a CORS preflight of an allowed origin: 204 with what may
// be sent, or 403 naming what may not.
func preflight(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Add("Vary", "Access-Control-Request-Method")
	hdr.Add("Vary", "Access-Control-Request-Headers")
	if m := r.Header.Get("Access-Control-Request-Method"); !slices.Contains(corsMethods, m) {
		hdr.Del("Access-Control-Allow-Origin")
		errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden, "CORS: method %s is not allowed; allowed: %s", m, strings.Join(corsMethods, ", ")))
		return
	}
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name != "" && !slices.ContainsFunc(corsHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
				hdr.Del("Access-Control-Allow-Origin")
				errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden, "CORS: header %s is not allowed; allowed: %s", name, strings.Join(corsHeaders, ", ")))
				return
			}
		}
	}
	hdr.Set("Access-Control-Allow-Methods", strings.Join(corsMethods, ", "))
	hdr.Set("Access-Control-Allow-Headers", strings.Join(corsHeaders, ", "))
	hdr.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

// readBody replaces r.Body with its content, read whole under the read
// deadline p.timeout from now. On failure it has answered (413, 408, 400)
// with the connection to be closed, and reports false.
func (p *policy) readBody(w http.ResponseWriter, r *http.Request) bool {
	rc := http.NewResponseController(w)
	// Set before anything is read and left in place on failure, so that
	// nothing waits longer for this client, not even net/http discarding
	// the rest of a body after the response. Unsupported (a
	// ResponseRecorder, say) means no deadline: the body is read as it
	// comes.
	deadline := rc.SetReadDeadline(time.Now().Add(p.timeout)) == nil
	if r.ContentLength > p.maxBody {
		w.Header().Set("Connection", "close")
		errs.Write(w, http.StatusRequestEntityTooLarge, errs.E(errs.BadRequest, "request body is larger than %d bytes", p.maxBody))
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			errs.Write(w, http.StatusRequestEntityTooLarge, errs.E(errs.BadRequest, "request body is larger than %d bytes", mbe.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			errs.Write(w, http.StatusRequestTimeout, errs.E(errs.BadRequest, "request body not received within %v", p.timeout))
		default: // the client went away, or sent a malformed chunked body
			errs.Write(w, http.StatusBadRequest, errs.E(errs.BadRequest, "read request body: %v", err))
		}
		return false
	}
	if deadline {
		// Cleared before the route runs: a response may stream for long
		// (SSE). (net/http also clears it when its background read starts
		// at the end of the body; this does not depend on that.)
		rc.SetReadDeadline(time.Time{})
	}
	r.Body = streamable.NewBody(body)
	r.ContentLength = int64(len(body))
	return true
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address binds only loopback.
func IsLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopbackHost(h)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
