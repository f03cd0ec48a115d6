// Package flat is the flat MCP surface: every registry tool under its
// own name (SPEC section 2), served over any MCP transport the SDK offers.
//
// It only translates: a tools/call becomes a [pipeline.Request], and the
// [pipeline.Outcome] becomes a CallToolResult whose text content is the
// rendered body (also offered as structuredContent when it is a JSON object)
// and whose isError follows the outcome.
package flat

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// New returns the flat surface: an MCP server exposing every tool of p's
// registry that the [registry.Tools] view lists, under its own name. It
// follows the registry: when a downstream server's tools change, the
// server's tool list changes and connected clients get
// notifications/tools/list_changed. With configured toolboxes (o.Catalog),
// every toolbox is opened when a client initializes, so that downstream
// servers connect lazily, on first use; the session's tools/list requests
// wait for that opening (see [mcpkit.OpenOnInitialize]).
func New(p *pipeline.Pipeline, o mcpkit.Options) (*mcp.Server, error) {
	// Transport sessions are keyed by this server instance too, since a
	// stdio session has no id of its own.
	instance := ulid.Make().String()
	o.Instance = instance
	s := o.Server(p, "Every tool is listed under its own name: the built-in toolbox's tools by their names (belief_query), "+
		"a configured toolbox's as toolbox__server__tool. Toolboxes and their servers:")
	sy := &syncer{s: s, p: p, surface: o.Surface, instance: instance, listed: map[string]*registry.Tool{}}
	if o.Calls != nil {
		o.Calls.Set(s, &Calls{sy: sy, impl: &mcp.Implementation{Name: o.Name, Version: o.Version}}) // calls.go
	}
	p.Registry().OnChange(sy.sync)
	sy.sync()
	mcpkit.Track(s, p, instance, nil)
	// Toolboxes still opening (toolboxes.go).
	s.AddReceivingMiddleware(sy.unlisted)
	// Only the tools the caller may use.
	s.AddReceivingMiddleware(mcpkit.ListOnly(mcpkit.VisibleTools(p)))
	if open := o.OpenAll(); open != nil {
		s.AddReceivingMiddleware(mcpkit.OpenOnInitialize(open))
	}
	return s, nil
}

// syncer keeps an MCP server's tools equal to the registry's.
type syncer struct {
	s                 *mcp.Server
	p                 *pipeline.Pipeline
	surface, instance string

	mu     sync.Mutex
	listed map[string]*registry.Tool
}

func (sy *syncer) sync() {
	sy.mu.Lock()
	defer sy.mu.Unlock()
	current := map[string]*registry.Tool{}
	for _, t := range sy.p.Registry().Listed(registry.Tools) {
		current[t.Name()] = t
	}
	var gone []string
	for name := range sy.listed {
		if _, ok := current[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sy.s.RemoveTools(gone...)
	}
	for name, t := range current {
		if sy.listed[name] != t {
			sy.s.AddTool(mcpkit.Tool(t), Handler(sy.p, sy.surface, sy.instance))
		}
	}
	sy.listed = current
}

// Handler routes tools/call requests through the pipeline. Calls of one MCP
// session that name no session of their own share one conversation. A tool
// the pipeline answers as unknown (one of a toolbox the caller may not know
// of) is the JSON-RPC error of an unknown tool, as for a name never listed.
func Handler(p *pipeline.Pipeline, surface, instance string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = mcpkit.WithCaller(ctx, req)
		o := p.Call(ctx, mcpkit.CallRequest(surface, mcpkit.Transport(instance, req), req.Params.Name, req.Params.Arguments, req.Params.Meta))
		if o.Tool == nil && o.Err != nil && o.Err.Code == errs.NotFound {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Err.Message}
		}
		return mcpkit.Result(o), nil
	}
}
