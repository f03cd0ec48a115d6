package flat

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Calls is the flat surface's tools/call for an HTTP front that serves it
// without the SDK server's JSON-RPC dispatch ([mcpkit.ToolCalls], given to
// the front as httpapi.Options.MCPCalls; [New] puts it in
// mcpkit.Options.Calls): the same
// pipeline request and the same rendering as the server's tool handlers
// ([Handler]) and its unlisted middleware (toolboxes.go), so that a call
// has one outcome whichever way it came.
type Calls struct {
	sy   *syncer
	impl *mcp.Implementation
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
	return c.call(ctx, mcpkit.TransportKey(c.sy.instance, ss), name, args, meta)
}

// Relays reports whether a call of tool name may send its client something
// while it runs: a downstream server's tool (or a name not known yet,
// which may become one).
func (c *Calls) Relays(name string) bool {
	t, ok := c.sy.p.Registry().Lookup(name)
	return !ok || t.Source != registry.Local
}

// ServesSessionless reports whether the server would run a sessionless
// tools/call of name through the pipeline and the front may serve it: a
// tool it lists whose listed schema repeats no argument in a header
// (x-mcp-header), which the SDK's handler checks against the request's
// headers.
func (c *Calls) ServesSessionless(name string) bool {
	c.sy.mu.Lock()
	t := c.sy.listed[name]
	c.sy.mu.Unlock()
	return t != nil && !headerBound(t.ListedSchema())
}

// headerBound reports whether a schema marks a property, at any depth of
// its properties, with x-mcp-header.
func headerBound(schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	for _, p := range props {
		prop, _ := p.(map[string]any)
		if _, ok := prop["x-mcp-header"]; ok || headerBound(prop) {
			return true
		}
	}
	return false
}

// CallSessionless runs a tools/call of the sessionless protocol as Call
// does, on no transport session: as the server's tool handlers run a
// sessionless request ([mcpkit.Transport]), its call gets a conversation of
// its own unless it names one.
func (c *Calls) CallSessionless(ctx context.Context, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	return c.call(ctx, "", name, args, meta)
}

// Implementation is the server's name and version.
func (c *Calls) Implementation() *mcp.Implementation { return c.impl }

func (c *Calls) call(ctx context.Context, transport, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	sy := c.sy
	o := sy.p.Call(ctx, mcpkit.CallRequest(sy.surface, transport, name, args, meta))
	if o.Tool == nil && o.Err != nil && o.Err.Code == errs.NotFound {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Err.Message}
	}
	res, err := mcpkit.ResultJSON(o)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return res, nil
}
