// Package bounded is the bounded MCP surface (seed 000's chat view and seed
// 003's workbench; SPEC section 2): a handful of meta-tools instead of
// hundreds of schemas. get_tools discovers tools on demand (and makes them
// callable as "agent_mode" in the same session), open_toolbox connects a
// toolbox and lists its tools, use_tool calls any tool by its structured id.
//
// The meta-tools are registry tools (marked Meta, so only this surface lists
// them), called through the one pipeline like every other tool. All sessions
// share one MCP server; the tools a session discovers are its own, listed
// and routed by a middleware.
package bounded

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
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
	p   *pipeline.Pipeline
	cat *mcpkit.Catalog
	o   Options

	// server is the one MCP server of every session of the surface; the
	// tools a session discovers are listed and routed per session by a
	// middleware, so a session costs no more than a flat one.
	mu       sync.Mutex
	server   *mcp.Server
	instance string
	sessions map[*mcp.ServerSession]*session
}

// New registers the meta-tools in p's registry and returns the surface.
func New(p *pipeline.Pipeline, cat *mcpkit.Catalog, o Options) (*Surface, error) {
	s := &Surface{p: p, cat: cat, o: o, sessions: map[*mcp.ServerSession]*session{}}
	if err := s.register(); err != nil {
		return nil, err
	}
	s.server = s.build()
	return s, nil
}

// session is the state of one MCP session of the surface: the tools it
// discovered, by the name it calls them.
type session struct {
	mu         sync.Mutex
	discovered map[string]*discoveredTool
}

// discoveredTool is a tool a session discovered with get_tools.
type discoveredTool struct {
	listing *mcp.Tool
	flat    string
}

type sessionKey struct{}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// Sessions reports how many sessions have state on the surface.
func (s *Surface) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// state returns the state of session ss, creating it on first use.
func (s *Surface) state(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[ss]
	if st == nil {
		st = &session{discovered: map[string]*discoveredTool{}}
		s.sessions[ss] = st
	}
	return st
}

func (s *Surface) build() *mcp.Server {
	srv := mcpkit.NewServer(s.o.Name, s.o.Version, s.o.Instructions, s.o.Logger)
	s.instance = ulid.Make().String()
	for _, t := range s.p.Registry().List() {
		if t.Meta && t.ID.Server == ServerName {
			srv.AddTool(mcpkit.Tool(t), s.metaHandler)
		}
	}
	srv.AddReceivingMiddleware(s.perSession)
	mcpkit.Track(srv, s.p, s.instance, func(ss *mcp.ServerSession) {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.sessions, ss)
	})
	return srv
}

// NewServer returns the surface's server, for any number of sessions over
// any transport (stdio, in-memory, Streamable HTTP).
func (s *Surface) NewServer() *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server
}

// SetInstructions sets the instructions sent at initialize (they list the
// toolboxes, known only once the app is wired). Call it before serving.
func (s *Surface) SetInstructions(text string) {
	s.o.Instructions = text
	srv := s.build()
	s.mu.Lock()
	s.server = srv
	s.mu.Unlock()
}

// HTTPServer is the getServer function for mcp.NewStreamableHTTPHandler.
func (s *Surface) HTTPServer(*http.Request) *mcp.Server { return s.NewServer() }

func (s *Surface) metaHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sess := s.state(req.Session)
	ctx = context.WithValue(ctx, sessionKey{}, sess)
	o := s.p.Call(ctx, mcpkit.CallRequest(s.o.Surface, s.instance, req.Session, req.Params.Name, req.Params.Arguments, req.Params.Meta))
	return mcpkit.Result(o), nil
}

// perSession lists a session's discovered tools after the meta-tools and
// routes calls of them through the pipeline.
func (s *Surface) perSession(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			lt, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok || ss == nil || lt.NextCursor != "" {
				return res, err
			}
			sess := s.state(ss)
			sess.mu.Lock()
			names := slices.Sorted(maps.Keys(sess.discovered))
			for _, n := range names {
				lt.Tools = append(lt.Tools, sess.discovered[n].listing)
			}
			sess.mu.Unlock()
			return lt, nil
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || ss == nil {
				break
			}
			sess := s.state(ss)
			sess.mu.Lock()
			d := sess.discovered[p.Name]
			sess.mu.Unlock()
			if d == nil {
				break
			}
			o := s.p.Call(ctx, mcpkit.CallRequest(s.o.Surface, s.instance, ss, d.flat, p.Arguments, p.Meta))
			return mcpkit.Result(o), nil
		}
		return next(ctx, method, req)
	}
}

// discover makes tool t callable in the session as name, and tells clients
// their tool list changed.
func (s *Surface) discover(sess *session, name string, t *registry.Tool) {
	sess.mu.Lock()
	if _, ok := sess.discovered[name]; ok {
		sess.mu.Unlock()
		return
	}
	mt := mcpkit.Tool(t)
	mt.Name = name
	sess.discovered[name] = &discoveredTool{listing: mt, flat: t.ID.Name()}
	sess.mu.Unlock()
	// The SDK notifies list changes to every session of a server, not one:
	// re-adding a meta-tool (unchanged) sends notifications/tools/list_changed,
	// debounced by the SDK; sessions that did not discover anything list the
	// same tools again.
	if gt, ok := s.p.Registry().LookupID(registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: "get_tools"}); ok {
		s.NewServer().AddTool(mcpkit.Tool(gt), s.metaHandler)
	}
}

func (s *Surface) register() error {
	return registry.AddAll(s.p.Registry(), registry.BuiltinToolbox, ServerName, s.tools()...)
}

// toolboxNames is the toolbox part of the instructions.
func (s *Surface) builtin() registry.Toolbox {
	tb := registry.Toolbox{Name: registry.BuiltinToolbox, Description: "Nexus's own servers (knowledge substrate, conversation memory)"}
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
func (s *Surface) Toolboxes() []registry.Toolbox {
	out := []registry.Toolbox{s.builtin()}
	if s.cat.Toolboxes != nil {
		out = append(out, s.cat.Toolboxes.Toolboxes()...)
	}
	return out
}

// Instructions describes the toolboxes for the initialize result.
func Instructions(intro string, tbs []registry.Toolbox) string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n\nToolboxes (open one with open_toolbox, then call its tools with use_tool; or discover tools with get_tools):\n")
	for _, tb := range tbs {
		fmt.Fprintf(&b, "- %s: %s (servers: %s)\n", tb.Name, tb.Description, strings.Join(tb.Servers, ", "))
	}
	return strings.TrimSpace(b.String())
}
