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
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Options configure the server.
type Options struct {
	// Name and Version identify the server at initialize.
	Name, Version string
	// Surface names the surface in traces, e.g. "mcp-http" or "mcp-stdio".
	Surface string
	// Instructions are sent to clients at initialize.
	Instructions string
	Logger       *slog.Logger
	// OnInitialized runs (in the background) when a client initializes;
	// the flat surface uses it to open every toolbox, so that downstream
	// servers connect lazily, on first use. The session's tools/list
	// requests wait for it (see [mcpkit.OpenOnInitialize]).
	OnInitialized func(context.Context)
}

// New returns an MCP server exposing every tool of p's registry. It follows
// the registry: when a downstream server's tools change, the server's tool
// list changes and connected clients get notifications/tools/list_changed.
func New(p *pipeline.Pipeline, o Options) *mcp.Server {
	// Transport sessions are keyed by this server instance too, since a
	// stdio session has no id of its own.
	instance := ulid.Make().String()
	s := mcpkit.NewServer(o.Name, o.Version, o.Instructions, o.Logger)
	sy := &syncer{s: s, p: p, surface: o.Surface, instance: instance, listed: map[string]*registry.Tool{}}
	p.Registry().OnChange(sy.sync)
	sy.sync()
	mcpkit.Track(s, p, instance, nil)
	// Toolboxes still opening (toolboxes.go).
	s.AddReceivingMiddleware(sy.unlisted)
	if o.OnInitialized != nil {
		s.AddReceivingMiddleware(mcpkit.OpenOnInitialize(o.OnInitialized))
	}
	return s
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
	for _, t := range sy.p.Registry().List() {
		if !t.Meta {
			current[t.ID.Name()] = t
		}
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
// session that name no session of their own share one conversation.
func Handler(p *pipeline.Pipeline, surface, instance string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		o := p.Call(ctx, mcpkit.CallRequest(surface, instance, req.Session, req.Params.Name, req.Params.Arguments, req.Params.Meta))
		return mcpkit.Result(o), nil
	}
}
