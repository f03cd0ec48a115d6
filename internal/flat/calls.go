package flat

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
)

// Calls is the flat surface's tools/call for an HTTP front that serves it
// without the SDK server's JSON-RPC dispatch (httpapi.ToolCalls): the same
// pipeline request and the same rendering as the server's tool handlers
// ([Handler]) and its unlisted middleware (toolboxes.go), so that a call
// has one outcome whichever way it came.
type Calls struct {
	sy *syncer
}

// surfaces are the syncers of the flat servers New made, by server, held
// weakly: a surface lives as long as its server.
var surfaces sync.Map // weak.Pointer[mcp.Server] -> *syncer

// register makes the calls of s findable by [CallsOf].
func register(s *mcp.Server, sy *syncer) {
	key := weak.Make(s)
	surfaces.Store(key, weak.Make(sy))
	runtime.AddCleanup(s, func(k weak.Pointer[mcp.Server]) { surfaces.Delete(k) }, key)
}

// CallsOf returns the tool calls of a flat server made by [New], for
// httpapi.Options.MCPCalls; nil for any other server.
func CallsOf(s *mcp.Server) httpapi.ToolCalls {
	v, ok := surfaces.Load(weak.Make(s))
	if !ok {
		return nil
	}
	sy := v.(weak.Pointer[syncer]).Value()
	if sy == nil {
		return nil
	}
	return &Calls{sy: sy}
}

// Serves reports whether the server would run a tools/call of name through
// the pipeline: a tool it lists ([Handler]), or one it does not list yet but
// would (the unlisted middleware). Any other name (the bounded surface's
// meta-tools) is the SDK's unknown tool.
func (c *Calls) Serves(name string) bool {
	return c.sy.lists(name) || c.sy.mayList(name)
}

// Call runs a tools/call of session ss through the pipeline and returns its
// result as the SDK server would send it, or the JSON-RPC error of a name
// the pipeline does not know either, as the unlisted middleware answers.
func (c *Calls) Call(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	sy := c.sy
	listed := sy.lists(name)
	o := sy.p.Call(ctx, mcpkit.CallRequest(sy.surface, sy.instance, ss, name, args, meta))
	if !listed && o.Tool == nil && o.Err != nil && o.Err.Code == errs.NotFound {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Err.Message}
	}
	res, err := mcpkit.ResultJSON(o)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return res, nil
}
