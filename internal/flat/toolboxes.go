package flat

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Downstream toolboxes open lazily, when a client connects, so a client's
// first requests can race their opening. Two middlewares close the race:
//
//   - mcpkit.OpenOnInitialize starts the opening when a client's initialize
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
		ctx = mcpkit.WithCaller(ctx, r)
		o := sy.p.Call(ctx, mcpkit.CallRequest(sy.surface, mcpkit.Transport(sy.instance, r), r.Params.Name, r.Params.Arguments, r.Params.Meta))
		if o.Tool == nil && o.Err != nil && o.Err.Code == errs.NotFound {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Err.Message}
		}
		return mcpkit.Result(o), nil
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
	return !ok || t.In(registry.Tools)
}
