package workbench

//lint:file-ignore SA1019 logging, sampling and roots are relayed for the clients and servers of the protocol versions that have them (SEP-2577 deprecates them)

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/relay"
)

// Relays: what a downstream server sends while it runs a call Nexus made
// for a client reaches that client ([relay.Caller]), and its answer goes
// back. A server's connection is shared by every client that calls it, so
// each message is matched to the call it belongs to:
//
//   - progress notifications by token: each call whose client gave a
//     progress token is sent down with a token of its own, mapped back to
//     the client's;
//   - on a raw call (a Streamable HTTP server, rawcall.go), anything that
//     comes on the call's own response stream (log messages, requests for
//     input) belongs to that call;
//   - over the SDK client (stdio, legacy SSE, a server of the sessionless
//     protocol), log messages and requests for input name no call: they
//     go to the one call of the server in flight with a client, and are
//     refused (requests) or dropped (log messages) when several are, since
//     sending one client's server's question to another would be worse.
//
// A server of the sessionless protocol asks for input by an input-required
// result instead ([server.sdkCall]): a client of that protocol gets the
// result to answer and retry, with its answers sent down; Nexus asks any
// other client itself and retries.

// inCall is one call of the server in flight for a client.
type inCall struct {
	token string // the progress token sent down; "" when the client gave none
	// flight, for a client of the sessionless protocol, takes the
	// server's requests for input to that client (hold.go).
	flight *flight

	mu     sync.Mutex
	ctx    context.Context // the client's request context (the SDK relates what it sends to it)
	caller *relay.Caller

	// The call's notifications read off a shared connection (relayConn),
	// passed on in order by a goroutine of the call's own (send), so that
	// a client slow to read holds up its own call, not the connection.
	qmu     sync.Mutex
	idle    *sync.Cond // signalled when the queue empties
	queue   []func()
	running bool
}

// send passes fn (a notification to the call's client) on after those
// sent before it, in a goroutine of the call's own, which ends when the
// queue is empty.
func (ic *inCall) send(fn func()) {
	ic.qmu.Lock()
	defer ic.qmu.Unlock()
	ic.queue = append(ic.queue, fn)
	if !ic.running {
		ic.running = true
		go ic.drain()
	}
}

func (ic *inCall) drain() {
	for {
		ic.qmu.Lock()
		if len(ic.queue) == 0 {
			ic.running = false
			ic.idle.Broadcast()
			ic.qmu.Unlock()
			return
		}
		fn := ic.queue[0]
		ic.queue = ic.queue[1:]
		ic.qmu.Unlock()
		fn()
	}
}

// flush waits until what was sent has been passed on (nil: nothing to
// wait for): the call's result goes to its client after them.
func (ic *inCall) flush() {
	if ic == nil {
		return
	}
	ic.qmu.Lock()
	for ic.running {
		ic.idle.Wait()
	}
	ic.qmu.Unlock()
}

// at is the client's request the call is answering now: a held call is
// resumed by a request of its own (hold.go).
func (ic *inCall) at() (context.Context, *relay.Caller) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.ctx, ic.caller
}

// rebind makes the client's request ctx, c the one the call answers.
func (ic *inCall) rebind(ctx context.Context, c *relay.Caller) {
	ic.mu.Lock()
	ic.ctx, ic.caller = ctx, c
	ic.mu.Unlock()
}

func (ic *inCall) progress(p *mcp.ProgressNotificationParams) {
	ctx, c := ic.at()
	_ = c.Progress(ctx, p)
}

func (ic *inCall) log(p *mcp.LoggingMessageParams) {
	ctx, c := ic.at()
	_ = c.Log(ctx, p)
}

// input asks the call's client for one input: through the call's flight
// for a client of the sessionless protocol, else by a request to it.
func (ic *inCall) input(r mcp.InputRequest) (mcp.InputResponse, error) {
	if ic.flight != nil {
		return ic.flight.ask(r)
	}
	ctx, c := ic.at()
	return c.Ask(ctx, r)
}

// inputAs is [inCall.input] whose answer is decoded as T (an answer that
// came back in a retry's inputResponses is of the SDK's own type for its
// shape).
func inputAs[T any](ic *inCall, r mcp.InputRequest) (*T, error) {
	res, err := ic.input(r)
	if err != nil {
		return nil, err
	}
	if t, ok := any(res).(*T); ok {
		return t, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	t := new(T)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("the client's answer: %w", err)
	}
	return t, nil
}

// relays are a server's calls in flight for clients.
type relays struct {
	mu      sync.Mutex
	seq     uint64
	calls   map[*inCall]struct{}
	byToken map[string]*inCall
}

// begin records a call for caller c (nil: none, and nil is returned).
func (r *relays) begin(ctx context.Context, c *relay.Caller) *inCall {
	if c == nil {
		return nil
	}
	ic := &inCall{ctx: ctx, caller: c}
	ic.idle = sync.NewCond(&ic.qmu)
	if c.Sessionless() {
		ic.flight = newFlight()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls, r.byToken = map[*inCall]struct{}{}, map[string]*inCall{}
	}
	r.calls[ic] = struct{}{}
	if c.ProgressToken != nil {
		r.seq++
		ic.token = "nexus-" + strconv.FormatUint(r.seq, 10)
		r.byToken[ic.token] = ic
	}
	return ic
}

// end forgets ic.
func (r *relays) end(ic *inCall) {
	if ic == nil {
		return
	}
	r.mu.Lock()
	delete(r.calls, ic)
	delete(r.byToken, ic.token)
	r.mu.Unlock()
}

// byProgress is the call a progress token was sent down for.
func (r *relays) byProgress(tok any) *inCall {
	s, ok := tok.(string)
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byToken[s]
}

// sole is the one call in flight, or why there is not one.
func (r *relays) sole() (*inCall, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch len(r.calls) {
	case 0:
		return nil, errors.New("no call of a client is in flight on this server")
	case 1:
		for ic := range r.calls {
			return ic, nil
		}
	}
	return nil, fmt.Errorf("%d calls of clients are in flight on this server and its transport does not say which one this belongs to", len(r.calls))
}

// clientOptions declare the capabilities that let a server send what
// Nexus relays, whichever client calls (each request is then answered by
// the calling client's own capabilities). What a stdio or SSE server sends
// is taken from its connection (relayConn); the handlers here serve a
// Streamable HTTP server's calls through the SDK client (one of the
// sessionless protocol, or a call after its session was lost), whose
// connection cannot be wrapped: the SDK gives it session updates through a
// method of its own.
func (s *server) clientOptions(o *mcp.ClientOptions) {
	o.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if ic := s.relays.byProgress(req.Params.ProgressToken); ic != nil {
			ic.progress(req.Params)
		}
	}
	o.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
		if ic, err := s.relays.sole(); err == nil {
			ic.log(req.Params)
		}
	}
	o.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		ic, err := s.relays.sole()
		if err != nil {
			return nil, s.askError("elicitation", err)
		}
		res, err := inputAs[mcp.ElicitResult](ic, req.Params)
		return res, s.askError("elicitation", err)
	}
	o.CreateMessageWithToolsHandler = func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		ic, err := s.relays.sole()
		if err != nil {
			return nil, s.askError("sampling", err)
		}
		res, err := inputAs[mcp.CreateMessageWithToolsResult](ic, req.Params)
		return res, s.askError("sampling", err)
	}
	o.Capabilities = &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{},
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}, Context: &mcp.SamplingContextCapabilities{}},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
	// Multi-round-trip results are answered by server.sdkCall, which knows
	// the caller; the SDK's own loop would ask handlers that do not.
	o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
}

// relaying is t, whose connections relay (relayConn), for a stdio or SSE
// server; a Streamable HTTP server's own (see clientOptions).
func (s *server) relaying(t mcp.Transport) mcp.Transport {
	if _, ok := t.(*mcp.StreamableClientTransport); ok {
		return t
	}
	return &relayTransport{Transport: t, s: s}
}

// relayTransport is a downstream server's transport whose connections
// relay (relayConn).
type relayTransport struct {
	mcp.Transport
	s *server
}

// Connect connects the transport, and wraps the connection.
func (t *relayTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &relayConn{Connection: c, s: t.s}, nil
}

// relayConn takes from a downstream connection what is relayed, before the
// SDK client reads it: progress notifications and log messages, queued for
// their call's client in the order they came, which the call waits for
// before its result goes back (inCall.send, inCall.flush: the SDK client
// hands notifications to a goroutine of their own, so that a call's last
// log message could reach Nexus after the call's result, and be lost), and
// the server's requests for input, answered by the call's client (the SDK
// client would also check their schemas more strictly than the protocol
// does, refusing elicitations that clients accept).
type relayConn struct {
	mcp.Connection
	s *server
}

// Read returns the next message that is not relayed.
func (c *relayConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch req.Method {
		case "notifications/progress":
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(req.Params, &p) == nil {
				if ic := c.s.relays.byProgress(p.ProgressToken); ic != nil {
					ic.send(func() { ic.progress(&p) })
				}
			}
			continue
		case "notifications/message":
			var p mcp.LoggingMessageParams
			if json.Unmarshal(req.Params, &p) == nil {
				if ic, err := c.s.relays.sole(); err == nil {
					ic.send(func() { ic.log(&p) })
				}
			}
			continue
		case "elicitation/create", "sampling/createMessage", "roots/list":
			if req.ID.IsValid() {
				c.answer(req)
				continue
			}
		}
		return msg, nil
	}
}

// asks name what a server's request for input asks for.
var asks = map[string]string{"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}

// answer answers a server's request for input, in a goroutine of its own
// (a person may take their time), by the one call of a client in flight.
func (c *relayConn) answer(req *jsonrpc.Request) {
	respond := func(res any, err error) {
		resp := &jsonrpc.Response{ID: req.ID}
		if err == nil {
			resp.Result, err = json.Marshal(res)
		}
		if err != nil {
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) {
				wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			resp.Result, resp.Error = nil, wire
		}
		_ = c.Connection.Write(context.Background(), resp)
	}
	ic, err := c.s.relays.sole()
	if err != nil {
		if req.Method == "roots/list" {
			// Outside a call (a server that asks at start): no roots.
			respond(&mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil)
			return
		}
		respond(nil, c.s.askError(asks[req.Method], err))
		return
	}
	if !c.s.goroutine(func() {
		ic.flush() // what the server sent before it asked, first
		respond(c.s.ask(ic, req.Method, req.Params))
	}) {
		respond(nil, c.s.closedErr())
	}
}

// askError is the error a server is answered when its request could not be
// passed on: method not found when the client cannot be asked (as a
// client without the capability answers), an internal error naming the
// toolbox and server otherwise. Nil stays nil.
func (s *server) askError(what string, err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return wire
	}
	code := int64(jsonrpc.CodeInternalError)
	if errors.Is(err, relay.ErrCannotAsk) {
		code = jsonrpc.CodeMethodNotFound
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("Nexus could not pass the %s request of server '%s' (toolbox '%s') to its client: %v", what, s.name, s.toolbox, err)}
}

// exchange is how a raw call relays to its client (nil: as a client
// without capabilities): everything on the call's stream belongs to it.
func (s *server) exchange(ic *inCall) *downstream.Exchange {
	if ic == nil {
		return nil
	}
	x := &downstream.Exchange{
		Notify: func(method string, params json.RawMessage) {
			switch method {
			case "notifications/progress":
				var p mcp.ProgressNotificationParams
				if json.Unmarshal(params, &p) == nil {
					ic.progress(&p)
				}
			case "notifications/message":
				var p mcp.LoggingMessageParams
				if json.Unmarshal(params, &p) == nil {
					ic.log(&p)
				}
			}
		},
		Ask: func(_ context.Context, method string, params json.RawMessage) (any, error) {
			return s.ask(ic, method, params)
		},
	}
	if ic.token != "" {
		x.Meta, _ = json.Marshal(map[string]string{"progressToken": ic.token})
	}
	return x
}

// ask passes a request the server made during a raw call to its client.
func (s *server) ask(ic *inCall, method string, params json.RawMessage) (any, error) {
	bad := func(err error) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", method, err)}
	}
	switch method {
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, bad(err)
		}
		res, err := ic.input(&p)
		return res, s.askError("elicitation", err)
	case "sampling/createMessage":
		var p mcp.CreateMessageWithToolsParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, bad(err)
		}
		res, err := ic.input(&p)
		return res, s.askError("sampling", err)
	case "roots/list":
		var p mcp.ListRootsParams
		if len(params) > 0 {
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, bad(err)
			}
		}
		res, err := ic.input(&p)
		if errors.Is(err, relay.ErrCannotAsk) {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
		}
		return res, s.askError("roots", err)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("the client does not support %s", method)}
}

// followLogs asks a server that has logging for its log messages of every
// level: each client then gets those of its call at the level it set
// ([relay.Caller.Log]). A server that refuses is simply not followed.
func followLogs(ctx context.Context, cs *mcp.ClientSession) {
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return
	}
	_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
}
