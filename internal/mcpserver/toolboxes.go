package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// Downstream toolboxes open lazily, when a client connects, so a client's
// first requests can race their opening. Two middlewares close the race:
//
//   - OpenOnInitialize starts the opening when a client's initialize
//     succeeds and holds the session's tools/list requests until that
//     opening is done, so that the first tools/list lists every toolbox being
//     opened (a client without list_changed support would never see them
//     otherwise). The wait is bounded by the opening itself and by the
//     request; the workbench's opening (workbench.Manager.OpenAll) waits only
//     for servers connecting for the first time, each within its connect
//     timeout (30 s by default), not for servers already known to be down.
//   - unlisted sends a tools/call of a name the server does not list yet,
//     but would, to the pipeline instead of the SDK's "unknown tool": the
//     pipeline asks the workbench to resolve the name
//     (pipeline.Options.Resolve), which waits for the tool's server, again
//     within its connect timeout. The bounded surface's meta-tools, which
//     this server never lists, stay unknown here.

// OpenOnInitialize returns a receiving middleware that runs open in the
// background when a client's initialize succeeds, and makes the session's
// tools/list requests wait until that run has ended (or the request is
// cancelled). A session runs one opening at a time: a repeated initialize
// (which the SDK refuses anyway) starts none, and a session's entry is
// removed when its opening ends, so none outlives it.
func OpenOnInitialize(open func(context.Context)) mcp.Middleware {
	mw, _ := openOnInitialize(open)
	return mw
}

// openings are the sessions whose opening runs.
type openings struct {
	mu      sync.Mutex
	running map[mcp.Session]chan struct{} // closed when the opening ends
}

// sessions counts the sessions whose opening runs.
func (o *openings) sessions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.running)
}

// start runs open for sess in the background unless an opening of sess
// runs already.
func (o *openings) start(ctx context.Context, sess mcp.Session, open func(context.Context)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.running[sess]; ok {
		return
	}
	done := make(chan struct{})
	o.running[sess] = done
	go func() {
		defer func() {
			o.mu.Lock()
			delete(o.running, sess)
			o.mu.Unlock()
			close(done)
		}()
		open(ctx)
	}()
}

// wait waits for the opening of sess, if one runs, or for ctx.
func (o *openings) wait(ctx context.Context, sess mcp.Session) error {
	o.mu.Lock()
	done := o.running[sess]
	o.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func openOnInitialize(open func(context.Context)) (mcp.Middleware, *openings) {
	o := &openings{running: map[mcp.Session]chan struct{}{}}
	mw := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				// The opening starts before the initialize result goes out,
				// so the session's first tools/list finds it.
				res, err := next(ctx, method, req)
				if err == nil {
					o.start(context.WithoutCancel(ctx), req.GetSession(), open)
				}
				return res, err
			case "tools/list":
				if err := o.wait(ctx, req.GetSession()); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	}
	return mw, o
}

// unlisted routes a tools/call of a name the server does not list yet to
// the pipeline, as [Handler] would: a name the registry does not know (a
// downstream tool whose toolbox is still opening, which the pipeline
// resolves), or a tool the surface lists but whose listing has not caught up
// with the registry. A name the pipeline does not know either is the
// JSON-RPC error the SDK gives for an unknown tool; any other outcome (the
// tool's result once its toolbox has opened, or why its server did not
// connect) is the call's result. A tool the surface does not list (the
// bounded surface's meta-tools) is left to the SDK, whose answer is the
// unknown-tool error: the surface never runs it.
func (sy *syncer) unlisted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil || sy.lists(r.Params.Name) || !sy.mayList(r.Params.Name) {
			return next(ctx, method, req)
		}
		o := sy.p.Call(ctx, CallRequest(sy.surface, sy.instance, r.Session, r.Params.Name, r.Params.Arguments, r.Params.Meta))
		if o.Tool == nil && o.Err != nil && o.Err.Code == errs.NotFound {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Err.Message}
		}
		return Result(o), nil
	}
}

// lists reports whether the server lists the tool name.
func (sy *syncer) lists(name string) bool {
	sy.mu.Lock()
	defer sy.mu.Unlock()
	_, ok := sy.listed[name]
	return ok
}

// mayList reports whether the tool name is one the server would list: a
// name the registry does not know (yet), or a registry tool that is not a
// meta-tool (the rule of [syncer.sync]).
func (sy *syncer) mayList(name string) bool {
	t, ok := sy.p.Registry().Lookup(name)
	return !ok || !t.Meta
}
