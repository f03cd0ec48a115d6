package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/relay"
)

// call proxies one tool call, bounded by the server's Timeout, and returns
// the downstream result unmodified: a *mcp.CallToolResult, or, from a raw
// call (rawcall.go), a [registry.Encoded] holding it and its JSON as the
// server sent it. The server's circuit breaker may refuse it (breaker.go).
func (s *server) call(ctx context.Context, tool string, args json.RawMessage, safe bool) (any, error) {
	return s.guarded(ctx, "the call of tool '"+tool+"'", func() (any, error) {
		if !safe {
			return s.callOnce(ctx, tool, args)
		}
		return s.retrying(ctx, func() (any, error) { return s.callOnce(ctx, tool, args) })
	})
}

// callOnce is [server.call] past the breaker.
func (s *server) callOnce(ctx context.Context, tool string, args json.RawMessage) (any, error) {
	sess, down := s.session()
	if sess == nil && s.connectingFirst() {
		// Its tools are in the registry (listed during the connection) a
		// moment before its session is kept: a call in between waits for
		// the connection, within its connect timeout, instead of failing.
		_ = s.ensure(ctx) // why it failed, if it did, is the server's down error
		sess, down = s.session()
	}
	if sess != nil {
		select {
		case <-sess.ended: // the monitor has not caught up yet
			sess, down = nil, restarting(sess.cause)
		default:
		}
	}
	if sess == nil {
		return nil, &errs.Error{Code: errs.Unavailable, Err: down,
			Message: fmt.Sprintf("Server '%s' (toolbox '%s') is unavailable: %v", s.name, s.toolbox, down)}
	}
	c := relay.From(ctx)
	if held(c) {
		return s.resume(ctx, tool, c)
	}
	// The client the call runs for, which what the server sends during
	// the call reaches (relay.go).
	ic := s.relays.begin(ctx, c)
	if ic != nil && ic.flight != nil {
		return s.fly(ctx, sess, tool, args, ic) // a client of the sessionless protocol (hold.go)
	}
	defer s.relays.end(ic)
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	res, err := s.invoke(cctx, sess, tool, args, ic)
	ic.flush() // the call's notifications before its result
	if err != nil {
		return nil, s.callError(ctx, cctx, sess, tool, err)
	}
	return res, nil
}

// invoke makes the call on sess: raw on a Streamable HTTP session of the
// handshake protocol, else through the SDK client.
func (s *server) invoke(ctx context.Context, sess *session, tool string, args json.RawMessage, ic *inCall) (any, error) {
	var err error
	if sess.raw != nil {
		var res *registry.Encoded
		if res, err = rawCall(ctx, sess.raw, tool, args, s.exchange(ic)); err == nil {
			return res, nil
		}
	}
	if sess.raw == nil || errors.Is(err, downstream.ErrSessionGone) {
		// The SDK client's path; after a 404 too, so that the SDK client
		// learns that its session is gone (and the monitor restarts it).
		var res *mcp.CallToolResult
		if res, err = s.sdkCall(ctx, sess.cs, tool, args, ic); err == nil {
			return res, nil
		}
	}
	return nil, err
}

// callError is the error of a call that failed with err: ctx is the
// client's, which may have cancelled it, cctx the call's own, bounded by
// the server's call timeout.
func (s *server) callError(ctx, cctx context.Context, sess *session, tool string, err error) error {
	timeout := s.timeout()
	var wire *jsonrpc.Error
	switch {
	case errors.Is(err, relay.ErrCannotAsk):
		return &errs.Error{Code: errs.BadRequest, Err: err,
			Message: fmt.Sprintf("Tool '%s' on server '%s' (toolbox '%s') needs input from the client: %v", tool, s.name, s.toolbox, err)}
	case ctx.Err() != nil:
		return &errs.Error{Code: errs.Unavailable, Err: err,
			Message: fmt.Sprintf("Call of tool '%s' on server '%s' (toolbox '%s') was cancelled", tool, s.name, s.toolbox)}
	case cctx.Err() != nil:
		return &errs.Error{Code: errs.Unavailable, Err: err, Reason: "timeout",
			Message: fmt.Sprintf("Tool '%s' on server '%s' (toolbox '%s') timed out after %s", tool, s.name, s.toolbox, formatDuration(timeout))}
	case errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams:
		return &errs.Error{Code: errs.BadRequest, Err: err,
			Message: fmt.Sprintf("Tool '%s' on server '%s' (toolbox '%s') rejected the call: %s", tool, s.name, s.toolbox, wire.Message)}
	case errors.As(err, &wire):
		return &errs.Error{Code: errs.Unavailable, Err: err,
			Message: fmt.Sprintf("Server '%s' (toolbox '%s') failed the call of tool '%s': %s (JSON-RPC error %d)", s.name, s.toolbox, tool, wire.Message, wire.Code)}
	}
	// The connection failed: say why if the session ended.
	timer := time.NewTimer(endGrace)
	defer timer.Stop()
	select {
	case <-sess.ended:
		msg := fmt.Sprintf("Server '%s' (toolbox '%s') is unavailable: %v during the call of tool '%s'", s.name, s.toolbox, sess.cause, tool)
		if !errors.Is(sess.cause, errClosed) {
			msg += "; restarting"
		}
		return &errs.Error{Code: errs.Unavailable, Err: err, Message: msg}
	case <-timer.C:
	}
	return &errs.Error{Code: errs.Unavailable, Err: err,
		Message: fmt.Sprintf("Server '%s' (toolbox '%s') is unavailable: the call of tool '%s' failed: %v", s.name, s.toolbox, tool, err)}
}

// maxInputRounds bounds the rounds of a multi-round-trip call that Nexus
// answers for its client, as the SDK's own client does.
const maxInputRounds = 10

// sdkCall is a tools/call through the SDK client: with the progress token
// of the call's client, if it gave one (relay.go), and, for a client of the
// sessionless protocol retrying a call that needed input, its answers. A
// server of the sessionless protocol asks for input by an input-required
// result: a client of that protocol gets it (and retries with its
// answers); Nexus asks any other client itself and calls again.
func (s *server) sdkCall(ctx context.Context, cs *mcp.ClientSession, tool string, args json.RawMessage, ic *inCall) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool}
	if len(args) > 0 {
		params.Arguments = args
	}
	if ic != nil {
		if ic.token != "" {
			params.Meta = mcp.Meta{"progressToken": ic.token}
		}
		_, caller := ic.at()
		params.InputResponses, params.RequestState = caller.InputResponses, caller.RequestState
	}
	for round := 1; ; round++ {
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.NeedsInput() {
			return res, err
		}
		if ic == nil {
			return nil, fmt.Errorf("%w: the tool was called without an MCP session (over REST, in the chat or from the command line), so there is no client to give the input it needs", relay.ErrCannotAsk)
		}
		ictx, caller := ic.at()
		if caller.Sessionless() {
			return res, nil
		}
		if round == maxInputRounds {
			return nil, fmt.Errorf("the server still needed input after %d rounds", round)
		}
		answers, err := caller.Fulfill(ictx, res.InputRequests)
		if err != nil {
			return nil, err
		}
		next := *params
		next.InputResponses, next.RequestState = answers, res.RequestState
		params = &next
	}
}
