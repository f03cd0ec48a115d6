package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/sdklog"
)

// link pairs one upstream server session with its downstream client session
// or, for a kept session (sessionless.go), one calling user's sessionless
// requests with the downstream client session kept for them.
type link struct {
	ep *endpoint
	ss *mcp.ServerSession // nil for a kept session
	// kept is the kept session this link serves; nil for an upstream
	// session's.
	kept   *keptSession
	client *mcp.Client
	// downSend is the client's own sending method handler (see
	// endpoint.upSend).
	downSend mcp.MethodHandler
	// ctx ends when the link closes; every forwarded call is cancelled
	// with it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	cs        *mcp.ClientSession // nil until dialed
	transport mcp.Transport      // the downstream transport, once made (Reap ends a stdio server's leftovers)
	closed    bool
	inflight  []*upCall          // upstream requests being forwarded, oldest first
	tokens    map[string]*upCall // by progress token (as JSON)

	closeOnce sync.Once
}

// upCall is an upstream request being forwarded downstream.
type upCall struct {
	ctx    context.Context // the upstream handler's context
	method string
	// ss is the upstream session of the request on a kept session (each
	// sessionless request has its own); nil otherwise.
	ss *mcp.ServerSession
}

// dial opens the downstream session for the upstream session ss (nil:
// for the kept session k), mirroring the upstream client's identity,
// capabilities and protocol version.
func (ep *endpoint) dial(ctx context.Context, ss *mcp.ServerSession, k *keptSession, params *mcp.InitializeParams) (*link, error) {
	l := &link{ep: ep, ss: ss, kept: k, tokens: map[string]*upCall{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())

	ep.mu.Lock()
	if ep.closed {
		ep.mu.Unlock()
		l.cancel()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the MCP proxy is shutting down"}
	}
	if ss != nil {
		ep.links[ss] = l
	} else {
		k.l = l
	}
	ep.mu.Unlock()

	impl := &mcp.Implementation{Name: "nexus-proxy", Version: "1"}
	if params.ClientInfo != nil {
		c := *params.ClientInfo
		impl = &c
	}
	caps := &mcp.ClientCapabilities{}
	if params.Capabilities != nil {
		c := *params.Capabilities
		caps = &c
	}
	l.client = mcp.NewClient(impl, &mcp.ClientOptions{
		Logger:         sdklog.New(ep.log),
		Capabilities:   caps,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	l.client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		l.downSend = next
		return next
	})
	l.client.AddReceivingMiddleware(l.receive)

	fail := func(err error) (*link, error) {
		l.abort()
		return nil, &jsonrpc.Error{
			Code:    jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("connecting to MCP server %q of toolbox %q: %v", ep.name, ep.toolbox, err),
		}
	}
	t, err := downstream.Transport(ep.cfg, ep.p.stderr)
	if err != nil {
		return fail(err)
	}
	// A stdio server's leftover processes end with its session.
	l.mu.Lock()
	l.transport = t
	l.mu.Unlock()
	if st, ok := t.(*mcp.StreamableClientTransport); ok {
		st.HTTPClient = tapHTTPClient(st.HTTPClient, l)
	} else {
		t = &tapTransport{inner: t, l: l}
	}

	// The connection outlives ctx, so its values are not passed on.
	dctx, stop := mergeCancel(l.ctx, ctx)
	defer stop()
	if ep.cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(dctx, ep.cfg.ConnectTimeout)
		defer cancel()
	}
	cs, err := l.client.Connect(dctx, t, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion(params.ProtocolVersion)})
	if err != nil {
		return fail(err)
	}
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.cs = cs
	}
	l.mu.Unlock()
	if closed {
		cs.Close()
		return fail(errors.New("the MCP proxy is shutting down"))
	}
	ep.log.Debug("proxy session opened", "session", l.name(), "protocol", cs.InitializeResult().ProtocolVersion)
	return l, nil
}

// legacyVersion is the protocol version to ask of the downstream server for
// an upstream client that asked for v: v when the SDK speaks it with the
// initialize handshake, else the newest version the SDK does. (The proxy's
// sessions are stateful, so they speak the versions before
// [mcpwire.Sessionless].)
func legacyVersion(v string) string {
	if v != "" && mcpwire.IsHandshake(v) {
		return v
	}
	return mcpwire.LatestHandshake()
}

// name is the link's upstream session id, or the user of a kept session,
// for logs.
func (l *link) name() string {
	if l.ss == nil {
		return "kept for user " + strconv.Quote(l.kept.user)
	}
	return l.ss.ID()
}

// watch closes the link when either session ends (a kept session's link has
// only the downstream one).
func (l *link) watch() {
	if l.ss != nil {
		go func() {
			l.ss.Wait()
			l.close()
		}()
	}
	go func() {
		l.cs.Wait()
		l.close()
	}()
}

// close cancels every forwarded call and closes both sessions (the
// downstream one first, which ends a stdio server's process). It must not be
// called from a handler of the upstream session, whose Close waits for them.
func (l *link) close() {
	if l.abort() && l.ss != nil {
		l.ss.Close()
	}
}

// abort cancels every forwarded call and closes the downstream session. It
// reports whether the link was established (and is now closed).
func (l *link) abort() bool {
	var established bool
	l.closeOnce.Do(func() {
		l.ep.remove(l)
		l.cancel()
		l.mu.Lock()
		l.closed = true
		cs, t := l.cs, l.transport
		l.mu.Unlock()
		if cs != nil {
			established = true
			cs.Close()
			l.ep.log.Debug("proxy session closed", "session", l.name())
		}
		if t != nil {
			downstream.Reap(t)
		}
	})
	return established
}

// forward sends an upstream request downstream and returns the downstream
// result as the server wrote it.
func (l *link) forward(ctx context.Context, method string, params mcp.Params) (mcp.Result, error) {
	if method == "tools/call" {
		if p, ok := params.(*mcp.CallToolParamsRaw); ok {
			call := l.ep.beginCall(ctx, p.Name, len(p.Arguments))
			res, err := l.forwardCall(ctx, method, p)
			call.result(res, err)
			return res, err
		}
	}
	return l.forwardCall(ctx, method, params)
}

// forwardCall is forward, the call recorded or not.
func (l *link) forwardCall(ctx context.Context, method string, params mcp.Params) (mcp.Result, error) {
	cfg := l.ep.cfg
	if method == "tools/call" {
		if p, ok := params.(*mcp.CallToolParamsRaw); ok && !cfg.Serves(p.Name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		if cfg.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout, errToolTimeout)
			defer cancel()
		}
	}
	call := &upCall{ctx: ctx, method: method, ss: requestSession(ctx)}
	l.begin(call, params)
	defer l.end(call)

	dctx, stop := mergeCancel(ctx, l.ctx)
	defer stop()
	slot := &rawSlot{}
	dctx = context.WithValue(dctx, slotKey{}, slot)
	res, err := l.downSend(dctx, method, &mcp.ClientRequest[mcp.Params]{Session: l.cs, Params: params})
	slot.forget()
	if raw := slot.result(); raw != nil && (err == nil || dctx.Err() == nil) {
		// The response arrived: pass it on as written, even if the SDK
		// could not decode it.
		if method == "tools/list" && len(cfg.ToolFilters) > 0 {
			if filtered, ferr := filterToolList(raw, cfg.ToolFilters); ferr == nil {
				raw = filtered
			}
		}
		return &rawResult{raw: raw}, nil
	}
	if err != nil {
		switch {
		case dctx.Err() == nil:
			return nil, l.downErr(err)
		case context.Cause(ctx) == errToolTimeout:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool call timed out after %v", cfg.Timeout)}
		case l.ctx.Err() != nil:
			return nil, l.downErr(errClosed)
		}
		return nil, err // the client cancelled
	}
	if lt, ok := res.(*mcp.ListToolsResult); ok && len(cfg.ToolFilters) > 0 {
		lt.Tools = slices.DeleteFunc(lt.Tools, func(t *mcp.Tool) bool { return !cfg.Serves(t.Name) })
	}
	return res, nil
}

// errClosed is the cause of calls cut short by the end of a proxied session.
var errClosed = errors.New("the proxied session is closed")

var errToolTimeout = errors.New("tool call timeout")

// downErr is the error to return upstream for a failed downstream call: a
// JSON-RPC error of the downstream server as it was, anything else as an
// internal error naming the server.
func (l *link) downErr(err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("MCP server %q of toolbox %q: %v", l.ep.name, l.ep.toolbox, err),
	}
}

// notifyDown forwards an upstream notification (progress of a
// server-to-client request, roots/list_changed) downstream.
func (l *link) notifyDown(ctx context.Context, method string, params mcp.Params) error {
	_, err := l.downSend(context.WithoutCancel(ctx), method, &mcp.ClientRequest[mcp.Params]{Session: l.cs, Params: params})
	if err != nil {
		l.ep.log.Debug("forwarding notification downstream", "method", method, "error", err)
	}
	return nil
}

// begin records an upstream request in flight (and its progress token).
func (l *link) begin(c *upCall, params mcp.Params) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight = append(l.inflight, c)
	if params != nil {
		if tok, ok := params.GetMeta()["progressToken"]; ok && tok != nil {
			if key, err := json.Marshal(tok); err == nil {
				l.tokens[string(key)] = c
			}
		}
	}
}

func (l *link) end(c *upCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight = slices.DeleteFunc(l.inflight, func(x *upCall) bool { return x == c })
	for k, v := range l.tokens {
		if v == c {
			delete(l.tokens, k)
		}
	}
}

// relatedCall is the upstream request a downstream message most likely
// belongs to: the latest tools/call in flight, else the latest request in
// flight; nil when there is none.
func (l *link) relatedCall() *upCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range slices.Backward(l.inflight) {
		if c.method == "tools/call" {
			return c
		}
	}
	if n := len(l.inflight); n > 0 {
		return l.inflight[n-1]
	}
	return nil
}

// upstreamValues returns the context whose values route a message to the
// upstream stream it belongs to: the upstream request's context (whose
// response stream carries it) or, for a message of the session,
// context.Background() (the standalone stream).
func (l *link) upstreamValues(method string, raw json.RawMessage) context.Context {
	if c := l.callFor(method, raw); c != nil {
		return c.ctx
	}
	return context.Background()
}

// callFor is the upstream request in flight a downstream message belongs
// to; nil for a message of the session.
func (l *link) callFor(method string, raw json.RawMessage) *upCall {
	switch method {
	case "notifications/progress":
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(raw, &p) == nil && p.Token != nil {
			if key, err := json.Marshal(p.Token); err == nil {
				l.mu.Lock()
				c := l.tokens[string(key)]
				l.mu.Unlock()
				return c
			}
		}
		return nil
	case "notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated":
		return nil
	}
	return l.relatedCall()
}

// forwardedUp reports whether a downstream notification is forwarded
// upstream.
func forwardedUp(method string) bool {
	switch method {
	case "notifications/message", "notifications/progress",
		"notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated",
		"notifications/elicitation/complete":
		return true
	}
	return false
}

// notifyUp forwards a downstream notification upstream with its params as
// the downstream server wrote them.
func (l *link) notifyUp(method string, raw json.RawMessage) {
	var params mcp.Params
	if len(raw) > 0 && string(raw) != "null" {
		params = &rawParams{raw: raw}
	}
	if l.ss == nil {
		l.notifyRequest(method, raw, params)
		return
	}
	send := func(vals context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(vals), notifyTimeout)
		defer cancel()
		_, err := l.ep.upSend(ctx, method, &mcp.ServerRequest[mcp.Params]{Session: l.ss, Params: params})
		return err
	}
	vals := l.upstreamValues(method, raw)
	err := send(vals)
	if err != nil && vals != context.Background() {
		// The request's stream is gone: use the standalone stream.
		err = send(context.Background())
	}
	if err != nil {
		l.ep.log.Debug("forwarding notification upstream", "method", method, "error", err)
	}
}

const notifyTimeout = 10 * time.Second

// receive is the receiving middleware of the downstream client: it forwards
// the downstream server's requests and notifications upstream.
func (l *link) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "sampling/createMessage", "elicitation/create", "roots/list":
			return l.requestUp(ctx, method, nilIfNil(req.GetParams()))
		}
		if strings.HasPrefix(method, "notifications/") && forwardedUp(method) {
			// The taps forward notifications as they read them; this is a
			// fallback for any that reach the SDK.
			var raw json.RawMessage
			if p := nilIfNil(req.GetParams()); p != nil {
				var err error
				if raw, err = json.Marshal(p); err != nil {
					return nil, nil
				}
			}
			l.notifyUp(method, raw)
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// requestUp forwards a downstream server's request to the upstream client
// and returns its answer.
func (l *link) requestUp(ctx context.Context, method string, params mcp.Params) (mcp.Result, error) {
	if l.ss == nil {
		// A sessionless request's stream takes no answer from the client.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: the client reached this server through the proxy without a session", method)}
	}
	vals := context.Background()
	if c := l.relatedCall(); c != nil {
		vals = c.ctx
	}
	uctx, stop := mergeCancel(ctx, l.ctx)
	defer stop()
	res, err := l.ep.upSend(withValues(uctx, vals), method, &mcp.ServerRequest[mcp.Params]{Session: l.ss, Params: params})
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return nil, werr
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("forwarding %s to the client: %v", method, err)}
	}
	return res, nil
}

// mergeCancel returns a context with the values and cancellation of ctx that
// is also cancelled when also ends.
func mergeCancel(ctx, also context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(also, func() { cancel(context.Cause(also)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// valuesCtx has the deadline and cancellation of one context and the values
// of another.
type valuesCtx struct {
	context.Context
	vals context.Context
}

func (c valuesCtx) Value(key any) any { return c.vals.Value(key) }

func withValues(ctx, vals context.Context) context.Context {
	return valuesCtx{Context: ctx, vals: vals}
}
