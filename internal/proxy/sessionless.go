package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/sdklog"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Clients of the sessionless protocol ([mcpwire.Sessionless] and later: no
// initialize, no Mcp-Session-Id; server/discover, then each request on its
// own with the client's identity in its _meta). Which way they are served
// depends on the downstream server, which the endpoint asks once
// (sessionlessMode):
//
//   - A Streamable HTTP server that speaks the sessionless protocol itself
//     gets each sessionless POST as one sessionless POST (the raw
//     passthrough of raw.go, without a session on either side).
//   - Any other server (stdio, legacy SSE, a Streamable HTTP server of the
//     handshake versions only) is reached through a downstream session the
//     endpoint keeps for the calling user (keptSession): the sessionless
//     requests are served by the SDK (a stateless Streamable HTTP handler
//     over a second SDK server) whose receiving middleware forwards each
//     one on that session, as a link does for an upstream session.

// DefaultMaxKeptSessions bounds the downstream sessions an endpoint keeps
// for sessionless clients (one per calling user) when
// Options.MaxKeptSessions is zero.
const DefaultMaxKeptSessions = 64

// sessionlessMode is how an endpoint serves sessionless clients.
type sessionlessMode int32

const (
	modeUnknown sessionlessMode = iota // not asked yet
	modeRaw                            // forwarded as raw sessionless POSTs
	modeKept                           // through kept downstream sessions
)

// isSessionless reports whether r is a request of the sessionless protocol:
// no session, and a protocol version from [mcpwire.Sessionless] on.
func isSessionless(r *http.Request) bool {
	return r.Header.Get(mcpwire.SessionHeader) == "" && r.Header.Get(mcpwire.VersionHeader) >= mcpwire.Sessionless
}

// serveSessionless serves a request of a sessionless client.
func (ep *endpoint) serveSessionless(w http.ResponseWriter, r *http.Request) {
	if ep.sessionlessMode(r.Context()) == modeRaw && r.Method == http.MethodPost {
		ep.slRaw.servePOST(w, r)
		return
	}
	// The SDK's stateless handler serves the rest (and refuses what is not
	// a POST); requests in flight and open subscriptions/listen streams end
	// when the endpoint closes.
	ctx, stop := mergeCancel(r.Context(), ep.ctx)
	defer stop()
	ep.slHandler.ServeHTTP(w, r.WithContext(ctx))
}

// sessionlessMode returns how the endpoint serves sessionless clients,
// asking the downstream server the first time: a Streamable HTTP server is
// probed with an SDK client of the sessionless protocol (server/discover,
// which falls back to initialize on a server without it); stdio and SSE
// servers have sessions only. A probe that fails (the server is down) is
// not remembered: the request is served through a kept session, whose
// dial reports the failure, and the next request asks again.
func (ep *endpoint) sessionlessMode(ctx context.Context) sessionlessMode {
	if ep.hc == nil {
		return modeKept
	}
	if m := sessionlessMode(ep.slMode.Load()); m != modeUnknown {
		return m
	}
	ep.probeMu.Lock()
	defer ep.probeMu.Unlock()
	if m := sessionlessMode(ep.slMode.Load()); m != modeUnknown {
		return m
	}
	m, err := ep.probe(ctx)
	if err != nil {
		ep.log.Debug("asking the server for the sessionless protocol", "error", err)
		return modeKept
	}
	ep.slMode.Store(int32(m))
	ep.log.Debug("sessionless clients", "raw", m == modeRaw)
	return m
}

// probe connects an SDK client of the sessionless protocol to the
// Streamable HTTP server and reports what it negotiated.
func (ep *endpoint) probe(ctx context.Context) (sessionlessMode, error) {
	if d := ep.cfg.ConnectTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	t, err := downstream.TransportVia(ep.cfg, ep.p.stderr, ep.hc)
	if err != nil {
		return modeUnknown, err
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "nexus-proxy", Version: "1"}, &mcp.ClientOptions{Logger: sdklog.New(ep.log)})
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: mcpwire.Sessionless})
	if err != nil {
		return modeUnknown, fmt.Errorf("probing %s: %w", ep.cfg.URL, err)
	}
	v := cs.InitializeResult().ProtocolVersion
	// A server without the sessionless protocol opened a session for the
	// fallback initialize: closing it deletes it.
	cs.Close()
	if v >= mcpwire.Sessionless {
		return modeRaw, nil
	}
	return modeKept, nil
}

// newSessionless sets up what serves sessionless clients on the endpoint:
// the raw forwarder and the SDK server and stateless handler of kept
// sessions.
func (ep *endpoint) newSessionless() {
	ep.slRaw = &rawSession{ep: ep, ctx: ep.ctx, cancel: func() {}}
	ep.slServer = mcp.NewServer(&mcp.Implementation{Name: "nexus-proxy", Version: "1"}, &mcp.ServerOptions{
		Logger: sdklog.New(ep.log),
		// Replaced in every server/discover result by the downstream
		// server's.
		Capabilities: &mcp.ServerCapabilities{},
	})
	ep.slServer.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		ep.slSend = next
		return next
	})
	ep.slServer.AddReceivingMiddleware(ep.receiveSessionless)
	ep.slHandler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ep.slServer }, &mcp.StreamableHTTPOptions{
		Logger:                       sdklog.New(ep.log),
		Stateless:                    true,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
	})
}

// keptSession is the downstream session an endpoint keeps for the
// sessionless requests of one user. Users never share one. It is opened
// by the user's first request (with the client identity and capabilities
// of that request's _meta), reused by the next ones, and closed when idle
// for the session timeout, when the endpoint closes (Proxy.Close, a
// reload), when the endpoint needs its place under the bound
// (Options.MaxKeptSessions: the one idle longest goes), or when the
// downstream session ends on its own.
type keptSession struct {
	user  string
	ready chan struct{} // closed once dialed
	l     *link         // set by dial (under endpoint.mu)
	err   error         // the dial's, read after ready
	calls atomic.Int32  // requests using it
	last  atomic.Int64  // when the last one ended (unix nanoseconds)
	timer *time.Timer   // the idle timeout, nil without one
}

// release ends a request's use of the session.
func (k *keptSession) release() {
	k.last.Store(time.Now().UnixNano())
	k.calls.Add(-1)
}

// userOf is the key of the calling user of ctx: users never share a kept
// session. Requests without a user (a proxy mounted without
// authentication) share the session of "".
func userOf(ctx context.Context) string {
	if u, ok := users.FromContext(ctx); ok && u != nil {
		return u.ID
	}
	return ""
}

// keptLink returns the link of the calling user's kept session, dialing it
// for the user's first request; the caller releases k when its request
// ends.
func (ep *endpoint) keptLink(ctx context.Context, params *mcp.InitializeParams) (l *link, k *keptSession, err error) {
	user := userOf(ctx)
	var evicted *link
	ep.mu.Lock()
	if ep.closed {
		ep.mu.Unlock()
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the MCP proxy is shutting down"}
	}
	k = ep.kept[user]
	dial := k == nil
	if dial {
		if len(ep.kept) >= ep.p.maxKept {
			evicted = ep.idlestKept()
			if evicted == nil {
				ep.mu.Unlock()
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("MCP server %q of toolbox %q: too many clients without a session (%d) are using it", ep.name, ep.toolbox, ep.p.maxKept)}
			}
			delete(ep.kept, evicted.kept.user)
		}
		k = &keptSession{user: user, ready: make(chan struct{})}
		k.last.Store(time.Now().UnixNano())
		ep.kept[user] = k
		if d := ep.p.sessionTimeout; d > 0 {
			k.timer = time.AfterFunc(d, func() { ep.keptIdle(k) })
		}
	}
	k.calls.Add(1)
	ep.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}
	if !dial {
		select {
		case <-k.ready:
		case <-ctx.Done():
			k.release()
			return nil, nil, ctx.Err()
		}
		if k.err != nil {
			k.release()
			return nil, nil, k.err
		}
		return k.l, k, nil
	}
	l, err = ep.dial(ctx, nil, k, params)
	if err != nil {
		k.err = err
		ep.mu.Lock()
		if ep.kept[user] == k {
			delete(ep.kept, user)
		}
		ep.mu.Unlock()
		k.stop()
		close(k.ready)
		k.release()
		return nil, nil, err
	}
	l.watch()
	close(k.ready)
	return l, k, nil
}

// idlestKept is the dialed kept session without a request in flight that
// has been idle longest; nil if there is none. ep.mu is held.
func (ep *endpoint) idlestKept() *link {
	var best *keptSession
	for _, k := range ep.kept {
		if k.l == nil || k.calls.Load() > 0 {
			continue
		}
		if best == nil || k.last.Load() < best.last.Load() {
			best = k
		}
	}
	if best == nil {
		return nil
	}
	return best.l
}

// keptIdle closes a kept session idle for the session timeout, else checks
// again when it could be. A request takes a kept session under ep.mu, so
// one that is forgotten here with no request is taken by none.
func (ep *endpoint) keptIdle(k *keptSession) {
	d := ep.p.sessionTimeout
	ep.mu.Lock()
	l := k.l
	if l == nil || k.calls.Load() > 0 {
		ep.mu.Unlock()
		k.timer.Reset(d)
		return
	}
	if left := d - time.Since(time.Unix(0, k.last.Load())); left > 0 {
		ep.mu.Unlock()
		k.timer.Reset(left)
		return
	}
	if ep.kept[k.user] == k {
		delete(ep.kept, k.user)
	}
	ep.mu.Unlock()
	ep.log.Debug("closing an idle kept session", "user", k.user)
	l.close()
}

// stop stops the idle timeout.
func (k *keptSession) stop() {
	if k.timer != nil {
		k.timer.Stop()
	}
}

// receiveSessionless is the receiving middleware of the SDK server of kept
// sessions: each request is forwarded on the calling user's kept session.
func (ep *endpoint) receiveSessionless(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		switch {
		case ss == nil || strings.HasPrefix(method, "notifications/") || method == "subscriptions/listen":
			// Cancellation ends the HTTP request; subscriptions are the
			// SDK's (see the package doc's limitations).
			return next(ctx, method, req)
		case method == "server/discover":
			return ep.discover(ctx, ss, req, next)
		}
		params := ss.InitializeParams() // from the request's _meta
		if params == nil {
			return next(ctx, method, req) // the SDK refuses
		}
		l, k, err := ep.keptLink(ctx, params)
		if err != nil {
			return nil, err
		}
		defer k.release()
		res, err := l.forward(context.WithValue(ctx, requestSessionKey{}, ss), method, withoutRequestMeta(nilIfNil(req.GetParams())))
		if err != nil {
			return nil, err
		}
		return l.sessionlessResult(method, res), nil
	}
}

// completeResults are the methods whose results the sessionless protocol
// marks "resultType": "complete" when they need no more input (SEP-2322),
// as the SDK's server marks them.
var completeResults = map[string]bool{
	"tools/call": true, "tools/list": true, "prompts/get": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true, "completion/complete": true,
}

// sessionlessResult is the result res of a kept session's server made the
// result of a sessionless request, as the server would have answered one:
// its serverInfo in "_meta" (the SDK's server adds its own, the proxy's,
// to a result without one) and, where the protocol has it, "resultType".
// A raw result is edited as JSON; one that does not decode is left as it
// is.
func (l *link) sessionlessResult(method string, res mcp.Result) mcp.Result {
	info := l.cs.InitializeResult().ServerInfo
	raw, ok := res.(*rawResult)
	if !ok {
		if res != nil && info != nil {
			m := maps.Clone(res.GetMeta())
			if m == nil {
				m = map[string]any{}
			}
			if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
				m[mcp.MetaKeyServerInfo] = info
			}
			res.SetMeta(m)
		}
		return res
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw.raw, &fields) != nil || fields == nil {
		return res
	}
	if info != nil {
		meta := map[string]json.RawMessage{}
		if m, ok := fields["_meta"]; ok && string(m) != "null" {
			if json.Unmarshal(m, &meta) != nil || meta == nil {
				return res
			}
		}
		if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
			b, err := json.Marshal(info)
			if err != nil {
				return res
			}
			meta[mcp.MetaKeyServerInfo] = b
			if fields["_meta"], err = json.Marshal(meta); err != nil {
				return res
			}
		}
	}
	if _, ok := fields["resultType"]; !ok && completeResults[method] {
		fields["resultType"] = json.RawMessage(`"complete"`)
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return res
	}
	return &rawResult{raw: b}
}

// discover answers server/discover with what the downstream server
// answered the kept session's initialize: its capabilities, instructions
// and serverInfo, and MetaKey.
func (ep *endpoint) discover(ctx context.Context, ss *mcp.ServerSession, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	res, err := next(ctx, "server/discover", req)
	dr, ok := res.(*mcp.DiscoverResult)
	if err != nil || !ok {
		return res, err
	}
	params := ss.InitializeParams()
	if params == nil {
		params = &mcp.InitializeParams{}
	}
	l, k, err := ep.keptLink(ctx, params)
	if err != nil {
		return nil, err
	}
	defer k.release()
	down := l.cs.InitializeResult()
	dr.Capabilities = down.Capabilities
	if dr.Capabilities == nil {
		dr.Capabilities = &mcp.ServerCapabilities{}
	}
	dr.Instructions = down.Instructions
	meta := maps.Clone(down.Meta)
	if meta == nil {
		meta = mcp.Meta{}
	}
	if down.ServerInfo != nil {
		meta[mcp.MetaKeyServerInfo] = down.ServerInfo
	}
	meta[MetaKey] = map[string]string{"toolbox": ep.toolbox, "server": ep.name}
	dr.Meta = meta
	return dr, nil
}

// withoutRequestMeta removes from params the _meta entries of the
// sessionless protocol (protocol version, client identity and
// capabilities): the kept session had them in its handshake, and a server
// of the session protocol is not to read its requests as sessionless ones.
func withoutRequestMeta(params mcp.Params) mcp.Params {
	if params == nil {
		return nil
	}
	m := params.GetMeta()
	keys := [...]string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}
	found := false
	for _, key := range keys {
		if _, ok := m[key]; ok {
			found = true
		}
	}
	if !found {
		return params
	}
	m = maps.Clone(m)
	for _, key := range keys {
		delete(m, key)
	}
	if len(m) == 0 {
		m = nil
	}
	params.SetMeta(m)
	return params
}

// requestSessionKey is the context key of the upstream (per-request)
// session of a sessionless request forwarded on a kept session.
type requestSessionKey struct{}

// requestSession is the upstream session of a sessionless request, nil for
// a request of an upstream session.
func requestSession(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(requestSessionKey{}).(*mcp.ServerSession)
	return ss
}

// notifyRequest forwards a notification of a kept session's server to the
// sessionless request it belongs to, on that request's response stream;
// one that belongs to no request in flight (list_changed,
// resources/updated) is dropped.
func (l *link) notifyRequest(method string, raw json.RawMessage, params mcp.Params) {
	c := l.callFor(method, raw)
	if c == nil || c.ss == nil {
		l.ep.log.Debug("dropping a notification of a kept session", "method", method)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), notifyTimeout)
	defer cancel()
	if _, err := l.ep.slSend(ctx, method, &mcp.ServerRequest[mcp.Params]{Session: c.ss, Params: params}); err != nil {
		l.ep.log.Debug("forwarding notification upstream", "method", method, "error", err)
	}
}
