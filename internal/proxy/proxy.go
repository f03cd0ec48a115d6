// Package proxy serves each configured downstream MCP server as a transparent
// MCP endpoint of its own: an MCP client talking Streamable HTTP to
// /mcp/servers/{toolbox}/{server} sees that downstream server as if it were
// connected to it directly.
//
// # Two paths
//
// A session on a Streamable HTTP server takes the raw passthrough (raw.go, raw_wire.go):
// the proxy forwards HTTP, not MCP messages. Each HTTP request of the
// upstream session (POST, GET, DELETE) becomes one HTTP request to the
// server, on the downstream session that the upstream initialize opened,
// with the same body; the server's response (JSON, or an SSE stream, event
// by event as it is read) is copied back. Only the envelope of a POSTed
// message is decoded (id, method, and the tool name of a tools/call), and
// only two responses are rewritten: the initialize result (MetaKey added to
// its "_meta") and the tools/list result of a server with tool filters.
// Nothing passes through the SDK's types, so fields and methods the SDK
// does not model pass unchanged, and the proxy costs a fraction of what
// decoding and re-encoding every message as an SDK server and an SDK client
// did (docs/benchmarks.md, "Proxy hop, cross-process"). Downstream requests
// share one pool of keep-alive connections per server
// ([downstream.HTTPClient]).
//
// Sessions on stdio and legacy SSE servers take the SDK path: an SDK server
// upstream, an SDK client session downstream, messages forwarded between
// them (link.go). A raw forwarding of those transports would need a message
// framing of their own (newline-delimited stdio, the SSE transport's POST
// endpoint), which is not done. So do, on any server, the requests that
// belong to no raw session and to no sessionless client: requests without a
// session or with an unknown one, which the SDK's handler answers (or
// refuses) as before.
//
// # Sessionless clients
//
// A client of the sessionless protocol (2026-07-28 and later, SEP-2575 and
// SEP-2567: no initialize and no Mcp-Session-Id; server/discover, then
// every request on its own, with Mcp-Protocol-Version and its protocol
// version, clientInfo and capabilities in its "_meta") is served without a
// session too (sessionless.go). A request is the sessionless client's when
// it has no Mcp-Session-Id and a protocol version header from 2026-07-28
// on. How it reaches the server depends on the server, which the endpoint
// asks once: over Streamable HTTP it connects an SDK client of the
// sessionless protocol, which sends server/discover and falls back to
// initialize on a server without it (that session is deleted at once);
// the answer is kept for the endpoint's life (a reload that changes the
// server asks again; a failed probe is not kept). Stdio and SSE servers
// have sessions only.
//
//   - A Streamable HTTP server of the sessionless protocol gets each POST
//     as one sessionless POST (the raw passthrough, no session on either
//     side), with the client's Mcp-Method, Mcp-Name and Mcp-Param-*
//     headers, and its response (JSON or SSE) is copied back as on a raw
//     session; the server/discover result gets MetaKey in its "_meta". A
//     request cut short (the client gone, the Timeout) ends its downstream
//     HTTP request, which is the protocol's cancellation.
//   - Any other server is reached through a downstream session the
//     endpoint keeps for the calling user (the user of the request's
//     context, users.FromContext; requests without one share the session
//     of no user): the SDK serves the sessionless requests (its stateless
//     Streamable HTTP handler over a second SDK server), and that server's
//     receiving middleware forwards each on the user's kept session as a
//     link forwards an upstream session's, results as the server wrote
//     them. Users never share a downstream session. The session is opened
//     by the user's first request, with the clientInfo and capabilities of
//     that request's "_meta" (capabilities as the SDK models them), and
//     reused by the user's next requests, whichever client sends them; it
//     is closed when idle for Options.SessionTimeout, on Proxy.Close and
//     reload, when the downstream session ends, and when a new user needs
//     its place under Options.MaxKeptSessions (per endpoint; the session
//     idle longest goes; with every one busy, the new user's request
//     fails). server/discover is answered with the downstream server's
//     capabilities, instructions and serverInfo, and MetaKey; each result
//     names the downstream server in "_meta" (io.modelcontextprotocol/
//     serverInfo) and is marked "resultType": "complete" where the
//     protocol has it, as a server of the sessionless protocol answers.
//     The protocol's own "_meta" entries are removed from forwarded
//     params (the kept session had them in its handshake). Progress, and
//     log messages the server sends, of a request travel on its response
//     stream (the log level a request asks for in "_meta" is not set on
//     the kept session); notifications of no request (list_changed, resources/updated) are
//     dropped, subscriptions/listen is the SDK's (it acknowledges and
//     sends nothing), and server-to-client requests (sampling,
//     elicitation, roots) are refused, since a sessionless request's
//     stream takes no answer from the client.
//
// Tool filters apply to both, and every tools/call is recorded, as on the
// session paths.
//
// # Sessions
//
// Every upstream session (one MCP client on the endpoint) gets a dedicated
// downstream session, opened while the upstream "initialize" is being
// answered and closed when the upstream session ends (DELETE, idle timeout,
// Proxy.Close); a stdio server is therefore one child process per upstream
// session. When the downstream session ends on its own (the process exits,
// or an HTTP server answers 404 for it), the upstream session is closed too,
// and the client gets 404 for it and can initialize again. Requests,
// notifications and server-to-client requests map 1:1 between the two
// sessions, so progress tokens, subscriptions, log levels and list_changed
// notifications need no translation. Upstream session ids are the proxy's
// own; a raw session maps its id to the server's.
//
// # Handshake
//
// The downstream session is opened with the upstream client's clientInfo,
// capabilities and protocol version (any version before 2026-07-28:
// clients of the sessionless protocol have no handshake, see above). The
// upstream "initialize" is answered with the
// downstream server's negotiated protocol version, capabilities,
// instructions and serverInfo, unchanged: a client sees the real server's
// identity. The only addition is the "_meta" entry [MetaKey] of the
// initialize result, {"toolbox": ..., "server": ...}, for clients that want
// to know they talk through Nexus. On the raw path the initialize request
// and result are the client's and the server's as written. On the SDK path
// capabilities are those the SDK models (client: roots, sampling,
// elicitation, experimental, extensions; server: tools, resources, prompts,
// completions, logging, experimental, extensions), so a capability the
// proxy could not carry (e.g. "tasks") is advertised to neither side.
//
// # Messages
//
// On the raw path every message passes as written, in both directions, on
// the HTTP request or stream it came on: requests of any method, their
// results and errors, notifications (progress, log messages, list_changed,
// cancellation) and server-to-client requests (sampling, elicitation,
// roots, ping) with the client's answers. When the client goes away before
// a response (or a tools/call passes its Timeout), the server gets
// notifications/cancelled for the request.
//
// On the SDK path, upstream to downstream: every request the SDK server
// accepts (tools/list and tools/call, resources/list,
// resources/templates/list, resources/read, resources/subscribe and
// unsubscribe, prompts/list and prompts/get, completion/complete,
// logging/setLevel, ping) is forwarded with its params, _meta and progress
// token included, and its result is returned byte for byte as the
// downstream server wrote it; JSON-RPC errors keep their code, message and
// data. Cursors pass through, so pagination is the server's. Cancellation
// follows the request: when the upstream client cancels (or the session
// ends), the downstream server gets notifications/cancelled. Upstream
// notifications/progress and notifications/roots/list_changed are
// forwarded.
//
// Downstream to upstream (SDK path): notifications (log messages, progress,
// tools/prompts/resources list_changed, resources/updated,
// elicitation/complete) are forwarded with their params unchanged;
// sampling/createMessage, elicitation/create and roots/list are forwarded to
// the upstream client and its answer (or error) is returned. Messages that
// belong to an upstream request travel on that request's response stream:
// progress by its token; log messages and server-to-client requests with the
// upstream request in flight (the latest tools/call if several are); the
// rest (list_changed, resources/updated) on the standalone stream. The
// downstream connection is tapped (the jsonrpc connection for stdio and SSE
// servers, the HTTP response bodies for a Streamable HTTP server reached on
// this path) so that notifications are forwarded as they are read: they keep
// their order and reach the client before the response that followed them.
//
// On both paths, tool filters of the server's configuration apply: filtered
// tools are left out of tools/list and calling one fails as an unknown tool
// (-32602), without reaching the server. A configured Timeout bounds each
// tools/call.
//
// # Records
//
// Every tools/call forwarded, on either path, is recorded as the pipeline
// records the calls it runs (Options.Record, the pipeline's
// RecordPassthrough; record.go): a trace on surface "proxy" with the tool,
// its server, the caller, the duration, the sizes of the arguments and of
// the answer and the outcome (never the arguments), and the call metrics.
// Only the envelope the proxy already reads and the answer's error code or
// isError are decoded for it.
//
// # Errors: the one exception to the pipeline's renderers
//
// The proxy is the only surface whose calls do not pass through the
// pipeline, so its errors are not rendered by a family's renderer: what it
// returns is the downstream server's own result or JSON-RPC error, byte for
// byte. The errors the proxy makes itself are JSON-RPC errors, because on a
// passthrough there is no tool result of Nexus's to render: a tools/call
// past the server's Timeout is -32603 "tool call timed out after D", a
// server that cannot be reached fails the initialize, and what the HTTP
// front refuses is [streamable.JSONRPCErrors]. On the raw path the proxy
// checks a request by the transport's rules, written once for Nexus's
// endpoints ([mcpwire.CheckRequest]: HTTP method, Content-Type, Accept,
// protocol version header, an empty body; then Last-Event-ID, a malformed
// body, batches: [jsonrpcmsg]) and answers with the status the SDK's
// handler would and a JSON-RPC error of its own ([mcpwire.WriteError]),
// which says at least what the SDK's says (mounted alone, a malformed body
// is refused in [jsonrpcmsg]'s words rather than the SDK's); on the SDK
// path the SDK's handler's plain-text refusals are made JSON-RPC errors by
// [streamable.JSONRPCErrors]. docs/surfaces.md says so for users.
//
// # Limitations
//
//   - SDK path: only the methods the Go SDK knows are proxied: other
//     JSON-RPC methods (custom, experimental such as tasks/*) are refused
//     with "method not found" by the SDK server. Params of forwarded
//     requests, and the params and results of server-to-client requests,
//     pass through the SDK's types: fields the SDK does not model are
//     dropped. (Results of client requests and all notifications are passed
//     as written.) Over stdio nothing says which request a log message or a
//     server-to-client request belongs to; with several requests in flight
//     it may travel on another one's stream (it still reaches the client).
//     Pings from the downstream server are answered by the proxy.
//   - SDK path: a server closing its SSE stream mid-call (SEP-1699) is not
//     mirrored; upstream streams are resumable though (an in-memory event
//     store).
//   - Raw path: event ids and stream resumption (Last-Event-ID) are the
//     server's: a stream can be resumed through the proxy when the server
//     supports it.
//   - Headers of the client's HTTP requests (Authorization...) are not
//     passed on; HTTP servers get the headers of their configuration (and,
//     on the raw path, the client's Accept, MCP-Protocol-Version and
//     Last-Event-ID).
//   - Each upstream session costs a downstream session (a process for
//     stdio); sessions idle for Options.SessionTimeout are closed. Each
//     user of sessionless clients of a server without the sessionless
//     protocol costs one too (bounded by Options.MaxKeptSessions).
package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/sdklog"
	"github.com/nexus-mcp/nexus/internal/streamable"
)

// MetaKey is the "_meta" key of the initialize result that marks a proxied
// server; its value is {"toolbox": name, "server": name}.
const MetaKey = "io.github.nexus-mcp/proxy"

// DefaultSessionTimeout closes upstream sessions (and so their downstream
// sessions and processes) idle for this long when Options.SessionTimeout is
// zero.
const DefaultSessionTimeout = 30 * time.Minute

// Options configures a Proxy.
type Options struct {
	// Logger receives the proxy's and the MCP SDK's diagnostics; nil
	// discards them.
	Logger *slog.Logger
	// Stderr receives the stderr of stdio servers; nil means os.Stderr.
	Stderr *os.File
	// SessionTimeout closes an upstream session that has received no HTTP
	// request for this long (with its downstream session). Zero means
	// DefaultSessionTimeout; negative means never.
	SessionTimeout time.Duration
	// QuietTimeout ends a stdio server's session (and its process) that
	// has had no request in flight and no GET stream open for this long
	// (quiet.go). Zero means DefaultQuietTimeout; negative means never.
	QuietTimeout time.Duration
	// Allow, when set, decides whether the request's user may reach a
	// server through the proxy (the access rules; the proxy passes messages
	// unchanged, so it cannot hide single tools); a refused request gets
	// 403.
	Allow func(r *http.Request, toolbox, server string) bool
	// Record, when set, records each tools/call forwarded (the pipeline's
	// RecordPassthrough: a trace and the call metrics); ctx is the
	// caller's.
	Record func(ctx context.Context, c pipeline.Passthrough)
	// MaxKeptSessions bounds the downstream sessions each endpoint keeps
	// for clients of the sessionless protocol (one per calling user; see
	// the package doc). Zero means DefaultMaxKeptSessions.
	MaxKeptSessions int
}

// Proxy serves MCP Streamable HTTP at /mcp/servers/{toolbox}/{server}.
type Proxy struct {
	cfg            *config.Config
	log            *slog.Logger
	stderr         *os.File
	sessionTimeout time.Duration
	quietAfter     time.Duration
	allow          func(r *http.Request, toolbox, server string) bool
	record         func(ctx context.Context, c pipeline.Passthrough)
	maxKept        int

	mu        sync.Mutex
	closed    bool
	endpoints map[string]*endpoint // by "toolbox/server"
}

// New returns a proxy for the servers of cfg. Nothing is dialed until a
// client initializes a session.
func New(cfg *config.Config, o Options) *Proxy {
	p := &Proxy{
		cfg:            cfg,
		log:            o.Logger,
		stderr:         o.Stderr,
		sessionTimeout: o.SessionTimeout,
		quietAfter:     o.QuietTimeout,
		allow:          o.Allow,
		record:         o.Record,
		maxKept:        o.MaxKeptSessions,
		endpoints:      map[string]*endpoint{},
	}
	if p.maxKept <= 0 {
		p.maxKept = DefaultMaxKeptSessions
	}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if p.stderr == nil {
		p.stderr = os.Stderr
	}
	switch {
	case p.sessionTimeout == 0:
		p.sessionTimeout = DefaultSessionTimeout
	case p.sessionTimeout < 0:
		p.sessionTimeout = 0
	}
	switch {
	case p.quietAfter == 0:
		p.quietAfter = DefaultQuietTimeout
	case p.quietAfter < 0:
		p.quietAfter = 0
	}
	return p
}

// SetConfig makes cfg the configuration of the servers proxied (a reloaded
// one): a server it adds is served from the next request; the endpoint of
// a server it removes or changes is closed (its sessions and downstream
// connections end, a stdio server's process too), and a client of it gets
// 404 for its session and initializes again, reaching the new one.
func (p *Proxy) SetConfig(cfg *config.Config) {
	p.mu.Lock()
	p.cfg = cfg
	var gone []*endpoint
	for key, ep := range p.endpoints {
		var srv *config.Server
		if cfg != nil && cfg.Toolboxes[ep.toolbox] != nil {
			srv = cfg.Toolboxes[ep.toolbox].Servers[ep.name]
		}
		if srv == nil || !reflect.DeepEqual(*ep.cfg, endpointConfig(ep.name, srv)) {
			gone = append(gone, ep)
			delete(p.endpoints, key)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, ep := range gone {
		wg.Go(ep.close)
	}
	wg.Wait()
}

// ServeHTTP serves the MCP endpoint of one downstream server. The path ends
// in /mcp/servers/{toolbox}/{server} (the prefix may have been stripped);
// an unknown toolbox or server is 404 with a message naming it. The proxy's
// own errors are the REST error shape ([errs.Write]); those of the
// MCP endpoint are JSON-RPC errors ([streamable.JSONRPCErrors]).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	toolbox, server, ok := splitPath(r.URL.Path)
	if !ok {
		errs.Write(w, http.StatusNotFound, errs.E(errs.NotFound, "not found: MCP servers are served at /mcp/servers/{toolbox}/{server}"))
		return
	}
	if p.allow != nil && !p.allow(r, toolbox, server) {
		errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden,
			"server %s/%s is not available to you: this server's access rules hide some or all of its tools from you, and its proxy passes every tool", toolbox, server))
		return
	}
	ep, status, e := p.endpoint(toolbox, server)
	if ep == nil {
		errs.Write(w, status, e)
		return
	}
	ep.handler.ServeHTTP(w, r)
}

// CloseSession ends upstream session id of the endpoint at path, if it
// holds it, as its client's DELETE would (the downstream session is deleted
// too): the HTTP front ends a session this way to make room under its cap
// (it implements streamable.SessionCloser).
func (p *Proxy) CloseSession(path, id string) {
	toolbox, server, ok := splitPath(path)
	if !ok {
		return
	}
	p.mu.Lock()
	ep := p.endpoints[toolbox+"/"+server]
	p.mu.Unlock()
	if ep == nil {
		return
	}
	ep.closeSession(id)
}

// closeSession ends the upstream session id of the endpoint, if it holds
// it, with its downstream session.
func (ep *endpoint) closeSession(id string) {
	ep.mu.Lock()
	raw := ep.raw[id]
	ep.mu.Unlock()
	if raw != nil {
		raw.close(true)
		return
	}
	for ss := range ep.server.Sessions() {
		if ss.ID() == id {
			ss.Close()
			return
		}
	}
}

// splitPath returns the toolbox and server of a request path.
func splitPath(path string) (toolbox, server string, ok bool) {
	const prefix = "/mcp/servers/"
	if i := strings.Index(path, prefix); i >= 0 {
		path = path[i+len(prefix):]
	} else {
		path = strings.TrimPrefix(path, "/")
	}
	path = strings.TrimSuffix(path, "/")
	toolbox, server, ok = strings.Cut(path, "/")
	if !ok || toolbox == "" || server == "" || strings.Contains(server, "/") {
		return "", "", false
	}
	return toolbox, server, true
}

// endpoint returns the endpoint of a configured server, creating it on first
// use, or nil with an HTTP status and error.
func (p *Proxy) endpoint(toolbox, server string) (*endpoint, int, *errs.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var tb *config.Toolbox
	if p.cfg != nil {
		tb = p.cfg.Toolboxes[toolbox]
	}
	if tb == nil {
		return nil, http.StatusNotFound, errs.E(errs.NotFound, "unknown toolbox %q", toolbox)
	}
	srv := tb.Servers[server]
	if srv == nil {
		return nil, http.StatusNotFound, errs.E(errs.NotFound, "unknown server %q in toolbox %q", server, toolbox)
	}
	key := toolbox + "/" + server
	if p.closed {
		return nil, http.StatusServiceUnavailable, errs.E(errs.Unavailable, "the MCP proxy is shutting down")
	}
	ep := p.endpoints[key]
	if ep == nil {
		ep = newEndpoint(p, toolbox, server, srv)
		p.endpoints[key] = ep
	}
	return ep, 0, nil
}

// Close ends every upstream session and every downstream connection and
// child process. Later requests get 503.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	eps := make([]*endpoint, 0, len(p.endpoints))
	for _, ep := range p.endpoints {
		eps = append(eps, ep)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Go(ep.close)
	}
	wg.Wait()
	return nil
}

// endpoint is the MCP endpoint of one downstream server: an SDK server whose
// receiving middleware forwards everything to per-session downstream
// sessions, behind a Streamable HTTP handler.
type endpoint struct {
	p       *Proxy
	toolbox string
	name    string
	cfg     *config.Server
	log     *slog.Logger
	server  *mcp.Server
	handler http.Handler // serve, its errors made JSON-RPC
	sdk     http.Handler // the SDK's Streamable HTTP handler
	// hc reaches a Streamable HTTP server for the raw passthrough (one
	// pool of keep-alive connections for all sessions); nil for stdio and
	// SSE servers, whose sessions take the SDK path.
	hc *http.Client
	// upSend is the SDK server's own sending method handler: it sends a
	// request or notification on a server session as given, without the
	// checks of the typed ServerSession methods.
	upSend mcp.MethodHandler
	// quiet ends a stdio server's quiet sessions (quiet.go); nil for other
	// servers.
	quiet *quiet

	// ctx ends when the endpoint closes: sessionless requests forwarded
	// raw end with it.
	ctx    context.Context
	cancel context.CancelFunc
	// Sessionless clients (sessionless.go): slMode is how they are served
	// (a sessionlessMode, asked of the server once, under probeMu); slRaw
	// forwards their POSTs raw; slServer behind slHandler forwards them on
	// kept sessions, sending upstream with slSend.
	slMode    atomic.Int32
	probeMu   sync.Mutex
	slRaw     *rawSession
	slServer  *mcp.Server
	slHandler http.Handler
	slSend    mcp.MethodHandler

	mu     sync.Mutex
	closed bool
	links  map[*mcp.ServerSession]*link
	raw    map[string]*rawSession  // by upstream session id
	kept   map[string]*keptSession // by user
}

// endpointConfig is the configuration an endpoint of server name keeps.
func endpointConfig(name string, srv *config.Server) config.Server {
	c := *srv
	c.Name = name
	c.Transport = c.TransportKind()
	return c
}

func newEndpoint(p *Proxy, toolbox, name string, srv *config.Server) *endpoint {
	c := endpointConfig(name, srv)
	ep := &endpoint{
		p:       p,
		toolbox: toolbox,
		name:    name,
		cfg:     &c,
		log:     p.log.With("toolbox", toolbox, "server", name),
		links:   map[*mcp.ServerSession]*link{},
		raw:     map[string]*rawSession{},
		kept:    map[string]*keptSession{},
	}
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	if c.Transport == config.StreamableHTTP {
		ep.hc = downstream.HTTPClient(&c)
	}
	ep.server = mcp.NewServer(&mcp.Implementation{Name: "nexus-proxy", Version: "1"}, &mcp.ServerOptions{
		Logger: sdklog.New(ep.log),
		// Replaced in every initialize result by the downstream server's.
		Capabilities: &mcp.ServerCapabilities{},
		// Sessions begin with initialize, which pairs them with their
		// downstream session: a client probing with server/discover
		// (SEP-2575) is told to use a version of the handshake.
		SupportedProtocolVersions: mcpwire.HandshakeVersions(),
	})
	ep.server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		ep.upSend = next
		return next
	})
	ep.server.AddReceivingMiddleware(ep.receive)
	ep.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ep.server }, &mcp.StreamableHTTPOptions{
		Logger: sdklog.New(ep.log),
		// Nexus's HTTP guard decides Host for every route (--allow-hosts);
		// the SDK's own localhost check would refuse allowed hosts.
		DisableLocalhostProtection: true,
		// Resumable streams: a client whose SSE stream breaks can resume it.
		EventStore:     mcp.NewMemoryEventStore(nil),
		SessionTimeout: p.sessionTimeout,
	})
	if d := p.quietTimeout(&c); d > 0 {
		ep.quiet = &quiet{after: d, sessions: map[string]*quietSession{}, end: func(id string) {
			ep.log.Info("ending a quiet passthrough session", "session", id, "quiet_for", d)
			ep.closeSession(id)
		}}
	}
	ep.newSessionless()
	ep.handler = streamable.JSONRPCErrors(http.HandlerFunc(ep.serve))
	return ep
}

// serve sends the requests of raw sessions, and initializes that open
// them, to the raw passthrough, those of sessionless clients to
// serveSessionless, and everything else to the SDK's handler.
func (ep *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	if isSessionless(r) {
		ep.serveSessionless(w, r)
		return
	}
	if ep.hc != nil {
		if id := r.Header.Get(mcpwire.SessionHeader); id != "" {
			if s := ep.rawSession(id); s != nil {
				s.serve(w, r)
				return
			}
		} else if r.Method == http.MethodPost && ep.rawInitialize(w, r) {
			return
		}
	}
	if ep.quiet != nil {
		ep.serveQuiet(w, r)
		return
	}
	ep.sdk.ServeHTTP(w, r)
}

// receive is the receiving middleware of the endpoint's SDK server.
func (ep *endpoint) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if method == "initialize" {
			return ep.initialize(ctx, ss, req, next)
		}
		l := ep.link(ss)
		if l == nil {
			// Before initialize (ping) or after the downstream session
			// ended: the SDK answers or refuses.
			return next(ctx, method, req)
		}
		switch method {
		case "notifications/initialized", "notifications/cancelled":
			// The downstream session had its own handshake; cancellation
			// travels with the request contexts.
			return next(ctx, method, req)
		}
		params := nilIfNil(req.GetParams())
		if strings.HasPrefix(method, "notifications/") {
			return nil, l.notifyDown(ctx, method, params)
		}
		return l.forward(ctx, method, params)
	}
}

// initialize dials the downstream server for a new upstream session and
// answers with what the downstream server answered.
func (ep *endpoint) initialize(ctx context.Context, ss *mcp.ServerSession, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	params, _ := req.GetParams().(*mcp.InitializeParams)
	if ss == nil || params == nil || ep.link(ss) != nil {
		return next(ctx, "initialize", req) // the SDK refuses
	}
	l, err := ep.dial(ctx, ss, nil, params)
	if err != nil {
		return nil, err
	}
	res, err := next(ctx, "initialize", req)
	ir, ok := res.(*mcp.InitializeResult)
	if err != nil || !ok {
		l.abort()
		if err == nil {
			err = fmt.Errorf("initialize: unexpected result %T", res)
		}
		return nil, err
	}
	down := l.cs.InitializeResult()
	ir.ProtocolVersion = down.ProtocolVersion
	ir.Capabilities = down.Capabilities
	if ir.Capabilities == nil {
		ir.Capabilities = &mcp.ServerCapabilities{}
	}
	ir.Instructions = down.Instructions
	if down.ServerInfo != nil {
		ir.ServerInfo = down.ServerInfo
	}
	meta := mcp.Meta{}
	for k, v := range down.Meta {
		meta[k] = v
	}
	meta[MetaKey] = map[string]string{"toolbox": ep.toolbox, "server": ep.name}
	ir.Meta = meta
	l.watch()
	return ir, nil
}

// nilIfNil turns params holding a nil pointer (absent params) into nil, so
// that they are left out rather than sent as null.
func nilIfNil(p mcp.Params) mcp.Params {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

func (ep *endpoint) link(ss *mcp.ServerSession) *link {
	if ss == nil {
		return nil
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.links[ss]
}

func (ep *endpoint) remove(l *link) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if l.kept != nil {
		if ep.kept[l.kept.user] == l.kept {
			delete(ep.kept, l.kept.user)
		}
		l.kept.stop()
		return
	}
	if ep.links[l.ss] == l {
		delete(ep.links, l.ss)
	}
}

// close ends every session of the endpoint.
func (ep *endpoint) close() {
	ep.mu.Lock()
	ep.closed = true
	links := make([]*link, 0, len(ep.links))
	for _, l := range ep.links {
		links = append(links, l)
	}
	raws := make([]*rawSession, 0, len(ep.raw))
	for _, s := range ep.raw {
		raws = append(raws, s)
	}
	for _, k := range ep.kept {
		if k.l != nil {
			links = append(links, k.l)
		}
	}
	ep.mu.Unlock()
	ep.cancel()
	if ep.quiet != nil {
		ep.quiet.stop()
	}
	var wg sync.WaitGroup
	for _, l := range links {
		wg.Go(l.close)
	}
	for _, s := range raws {
		wg.Go(func() { s.close(true) })
	}
	wg.Wait()
	// Upstream sessions that never initialized have no link.
	for ss := range ep.server.Sessions() {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
	if ep.hc != nil {
		ep.hc.CloseIdleConnections()
	}
}

// The HTTP front ends the proxy's sessions to make room under its cap.
var _ streamable.SessionCloser = (*Proxy)(nil)
