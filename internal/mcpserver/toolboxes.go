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
//   - OpenOnInitialize starts the opening when a client sends initialize and
//     holds the session's tools/list requests until that opening is done, so
//     that the first tools/list lists every toolbox being opened (a client
//     without list_changed support would never see them otherwise). The wait
//     is bounded by the opening itself, which the downstream servers'
//     connect timeouts bound (30 s by default), and by the request.
//   - unlisted sends a tools/call of a name the server does not list (yet)
//     to the pipeline instead of the SDK's "unknown tool": the pipeline asks
//     the workbench to resolve the name (pipeline.Options.Resolve), which
//     waits for the tool's server, again within its connect timeout.

// OpenOnInitialize returns a receiving middleware that runs open in the
// background when a client sends initialize, and makes the session's
// tools/list requests wait until that run has ended (or the request is
// cancelled).
func OpenOnInitialize(open func(context.Context)) mcp.Middleware {
	var mu sync.Mutex
	running := map[mcp.Session]chan struct{}{} // sessions whose opening runs
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				sess := req.GetSession()
				done := make(chan struct{})
				mu.Lock()
				running[sess] = done
				mu.Unlock()
				octx := context.WithoutCancel(ctx)
				go func() {
					defer func() {
						mu.Lock()
						delete(running, sess)
						mu.Unlock()
						close(done)
					}()
					open(octx)
				}()
			case "tools/list":
				mu.Lock()
				done := running[req.GetSession()]
				mu.Unlock()
				if done != nil {
					select {
					case <-done:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// unlisted routes a tools/call of a name the server does not list to the
// pipeline, as [Handler] would. A name the pipeline does not know either is
// the JSON-RPC error the SDK gives for an unknown tool; any other outcome
// (the tool's result once its toolbox has opened, or why its server did not
// connect) is the call's result.
func (sy *syncer) unlisted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil || sy.lists(r.Params.Name) {
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
