// Package bounded is the bounded MCP surface (seed 000's chat view and seed
// 003's workbench; SPEC section 2): a handful of meta-tools instead of
// hundreds of schemas. get_tools discovers tools on demand (and makes them
// callable as "agent_mode" in the same session), open_toolbox connects a
// toolbox and lists its tools, use_tool calls any tool by its structured id.
//
// The meta-tools are registry tools (marked Meta, so only this surface lists
// them), called through the one pipeline like every other tool; each MCP
// session has its own server so that discovered tools are per session.
package bounded

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/mcpserver"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// ServerName is the server the meta-tools belong to.
const ServerName = "bounded"

// Options configure the surface.
type Options struct {
	Name, Version, Surface, Instructions string
	Logger                               *slog.Logger
}

// Surface is the bounded surface.
type Surface struct {
	p        *pipeline.Pipeline
	cat      *agents.Catalog
	o        Options
	template *mcp.Server // answers requests of existing sessions' protocol checks
}

// New registers the meta-tools in p's registry and returns the surface.
func New(p *pipeline.Pipeline, cat *agents.Catalog, o Options) (*Surface, error) {
	s := &Surface{p: p, cat: cat, o: o}
	if err := s.register(); err != nil {
		return nil, err
	}
	s.template = s.NewServer()
	return s, nil
}

// session is the state of one MCP session of the surface.
type session struct {
	server    *mcp.Server
	transport string

	mu         sync.Mutex
	discovered map[string]bool
}

type sessionKey struct{}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// NewServer returns a server for one MCP session (HTTP) or connection
// (stdio): the meta-tools, plus the tools the session discovers.
func (s *Surface) NewServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: s.o.Name, Version: s.o.Version}, &mcp.ServerOptions{
		Instructions: s.o.Instructions,
		Logger:       s.o.Logger,
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	sess := &session{server: srv, transport: ulid.Make().String(), discovered: map[string]bool{}}
	for _, t := range s.p.Registry().List() {
		if t.Meta && t.ID.Server == ServerName {
			srv.AddTool(mcpserver.Tool(t), s.metaHandler(sess))
		}
	}
	return srv
}

// SetInstructions sets the instructions new sessions' servers send at
// initialize (they list the toolboxes, known only once the app is wired).
func (s *Surface) SetInstructions(text string) {
	s.o.Instructions = text
	s.template = s.NewServer()
}

// HTTPServer is the getServer function for mcp.NewStreamableHTTPHandler: a
// new server for each new session.
func (s *Surface) HTTPServer(r *http.Request) *mcp.Server {
	if r.Header.Get("Mcp-Session-Id") != "" {
		return s.template // existing session: the SDK only reads its versions
	}
	return s.NewServer()
}

func (s *Surface) metaHandler(sess *session) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = context.WithValue(ctx, sessionKey{}, sess)
		o := s.p.Call(ctx, pipeline.Request{Tool: req.Params.Name, Args: req.Params.Arguments, Surface: s.o.Surface, Transport: sess.transport})
		return mcpserver.Result(o), nil
	}
}

// discover makes tool t callable in the session as name.
func (s *Surface) discover(sess *session, name string, t *registry.Tool) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.discovered[name] {
		return
	}
	sess.discovered[name] = true
	mt := mcpserver.Tool(t)
	mt.Name = name
	flat := t.ID.Name()
	sess.server.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		o := s.p.Call(ctx, pipeline.Request{Tool: flat, Args: req.Params.Arguments, Surface: s.o.Surface, Transport: sess.transport})
		return mcpserver.Result(o), nil
	})
}

func (s *Surface) register() error {
	reg := s.p.Registry()
	for _, t := range []registry.Tool{
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: "get_tools"},
			Description: "Discover tools on demand. With no tools asked for: an overview of the agents, their modes and the toolboxes. With tools ({agent: [modes]} or [\"agent_mode\", ...]): their full schemas, named agent_mode; each becomes callable by that name in this session.",
			InputSchema: json.RawMessage(getToolsSchema), Handler: s.getTools, ReadOnly: true,
		},
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: "open_toolbox"},
			Description: "Open a toolbox: connect its MCP servers (idempotent) and list its tools with their schemas. Call use_tool with {toolbox, server, tool} from this list.",
			InputSchema: json.RawMessage(openToolboxSchema), Handler: s.openToolbox,
		},
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: "use_tool"},
			Description: "Execute a tool from an opened toolbox by its structured identifier {toolbox, server, tool}; the result is the tool's own, unmodified.",
			InputSchema: json.RawMessage(useToolSchema), Handler: s.useTool, SelfValidating: true,
		},
	} {
		t.Source, t.Family, t.Meta = registry.Local, registry.Workbench, true
		if err := reg.Add(t); err != nil {
			return err
		}
	}
	return nil
}

// toolboxNames is the toolbox part of the instructions.
func (s *Surface) builtin() agents.Toolbox {
	tb := agents.Toolbox{Name: registry.BuiltinToolbox, Description: "Nexus's own servers (knowledge substrate, conversation memory)"}
	seen := map[string]bool{}
	for _, t := range s.p.Registry().List() {
		if t.ID.Toolbox == registry.BuiltinToolbox && !t.Meta && !seen[t.ID.Server] {
			seen[t.ID.Server] = true
			tb.Servers = append(tb.Servers, t.ID.Server)
		}
	}
	return tb
}

// Toolboxes lists the built-in toolbox and the configured ones.
func (s *Surface) Toolboxes() []agents.Toolbox {
	out := []agents.Toolbox{s.builtin()}
	if s.cat.Toolboxes != nil {
		out = append(out, s.cat.Toolboxes.List()...)
	}
	return out
}

// Instructions describes the toolboxes for the initialize result.
func Instructions(intro string, tbs []agents.Toolbox) string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n\nToolboxes (open one with open_toolbox, then call its tools with use_tool; or discover tools with get_tools):\n")
	for _, tb := range tbs {
		fmt.Fprintf(&b, "- %s: %s (servers: %s)\n", tb.Name, tb.Description, strings.Join(tb.Servers, ", "))
	}
	return strings.TrimSpace(b.String())
}
