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
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// ServerName is the server the meta-tools belong to.
const ServerName = "bounded"

// Surface is the state behind the bounded surface's server: the meta-tools'
// handlers and what each session discovered.
type Surface struct {
	p   *pipeline.Pipeline
	cat *mcpkit.Catalog
	o   mcpkit.Options

	// server is the one MCP server of every session of the surface; the
	// tools a session discovers are listed and routed per session by a
	// middleware, so a session costs no more than a flat one.
	server   *mcp.Server
	instance string
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	// restoring counts the restores from the store in progress by session
	// id, and stale marks those a change from another replica overtook:
	// their result is used once, not kept (see [Surface.state]).
	restoring map[string]int
	stale     map[string]bool

	// search is search_tools' index (search.go), vecs the tools' vectors
	// when an embedding model is configured (hybrid.go).
	search searchIndex
	vecs   toolVectors
}

// New registers the meta-tools in p's registry and returns the bounded
// surface: one MCP server for any number of sessions over any transport
// (stdio, in-memory, Streamable HTTP). The meta-tools are registry tools, so
// New is called once per registry (app.App.Surfaces does).
func New(p *pipeline.Pipeline, o mcpkit.Options) (*mcp.Server, error) {
	s, err := newSurface(p, o)
	if err != nil {
		return nil, err
	}
	return s.server, nil
}

func newSurface(p *pipeline.Pipeline, o mcpkit.Options) (*Surface, error) {
	if o.Catalog == nil {
		return nil, fmt.Errorf("bounded: a catalog is required")
	}
	s := &Surface{p: p, cat: o.Catalog, o: o, sessions: map[*mcp.ServerSession]*session{}, restoring: map[string]int{}, stale: map[string]bool{}}
	if err := s.register(); err != nil {
		return nil, err
	}
	s.server = s.build()
	p.Registry().OnChange(s.followRegistry)
	p.Registry().OnChange(func() { s.search.dirty.Store(true) })
	if o.Sessions != nil {
		o.Sessions.OnChange(func(c mcpsession.Change) {
			if c.Discovered {
				s.rediscover(c.ID)
			}
		})
	}
	return s, nil
}

// followRegistry tells the surface's sessions that their tool lists
// changed when a tool one of them discovered left the registry or came
// back (its server was removed, restarted or added by a reload), not on
// every change of the registry.
func (s *Surface) followRegistry() {
	reg := s.p.Registry()
	s.mu.Lock()
	states := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	changed := false
	for _, st := range states {
		st.mu.Lock()
		for name, d := range st.discovered {
			was := d.tool != nil
			if d.current(reg, name) != was {
				changed = true
			}
		}
		st.mu.Unlock()
	}
	if changed {
		s.listChanged()
	}
}

// rediscover brings this replica's copy of session id up to date after it
// discovered a tool through another replica: its state is read from the
// store again on its next request, and its client is told its tool list
// changed (its event stream may be open on this replica).
func (s *Surface) rediscover(id string) {
	s.mu.Lock()
	held := false
	for ss, st := range s.sessions {
		if st.id == id {
			delete(s.sessions, ss)
			held = true
		}
	}
	if s.restoring[id] > 0 {
		s.stale[id] = true // a restore under way may have read the store before the change
		held = true
	}
	s.mu.Unlock()
	if held {
		s.listChanged()
	}
}

// session is the state of one MCP session of the surface: the tools it
// discovered, by the name it calls them, and the toolboxes it opened (seed
// 003: use_tool reaches only those).
type session struct {
	id string // the MCP session's id, "" for stdio and in-memory
	// sessionless: the session is one request's ([mcpkit.Sessionless]);
	// it discovers and opens nothing, and is not kept.
	sessionless bool
	mu          sync.Mutex
	discovered  map[string]*discoveredTool
	opened      map[string]bool
}

// newSession is the empty state of session id.
func newSession(id string, sessionless bool) *session {
	return &session{id: id, sessionless: sessionless, discovered: map[string]*discoveredTool{}, opened: map[string]bool{}}
}

// discoveredTool is a tool a session discovered with get_tools: its
// listing (under the session's name for it) made from tool, the registry's
// tool when it was last listed (nil while the registry has none: its server
// was removed or is restarting).
type discoveredTool struct {
	listing *mcp.Tool
	flat    string
	tool    *registry.Tool
}

// current brings d up to date with the registry (d's session's mu held):
// it reports whether the tool is there, and makes its listing anew when
// its server re-registered it (a restart, a reload).
func (d *discoveredTool) current(reg *registry.Registry, name string) bool {
	t, ok := reg.Lookup(d.flat)
	if !ok {
		d.tool = nil
		return false
	}
	if t != d.tool {
		mt := mcpkit.Tool(t)
		mt.Name = name
		d.listing, d.tool = mt, t
	}
	return true
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

// state returns the state of the session of req, creating it on first use:
// what a session kept in the store discovered (on this replica or another)
// is discovered again. A sessionless request gets a state of its own, empty
// and not kept.
func (s *Surface) state(ctx context.Context, req mcp.Request) *session {
	if mcpkit.Sessionless(req) {
		return newSession("", true)
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	s.mu.Lock()
	st := s.sessions[ss]
	s.mu.Unlock()
	if st != nil {
		return st
	}
	fresh := newSession(ss.ID(), false)
	s.mu.Lock()
	s.restoring[fresh.id]++
	s.mu.Unlock()
	s.restore(ctx, fresh)
	s.mu.Lock()
	defer s.mu.Unlock()
	stale := s.stale[fresh.id]
	if s.restoring[fresh.id]--; s.restoring[fresh.id] == 0 {
		delete(s.restoring, fresh.id)
		delete(s.stale, fresh.id)
	}
	if stale {
		return fresh // serves this request; the next one reads the store again
	}
	if st = s.sessions[ss]; st == nil {
		st = fresh
		s.sessions[ss] = st
	}
	return st
}

// restore gives sess the toolboxes its stored session opened, and the tools
// it discovered that it does not know yet, or knows as another tool. It
// makes a new session's state; on a session this replica holds, it brings
// in what the session opened or discovered through another replica:
// get_tools and open_toolbox store what they did before they answer, but
// the change event (see [Surface.rediscover]) may reach this replica after
// the client's next request.
func (s *Surface) restore(ctx context.Context, sess *session) {
	if s.o.Sessions == nil || sess.id == "" {
		return
	}
	stored, ok, err := s.o.Sessions.Load(ctx, sess.id)
	if err != nil {
		s.logger().Warn("read the tools an MCP session discovered", "session", sess.id, "err", err)
	}
	if !ok {
		return
	}
	sess.mu.Lock()
	for _, tb := range stored.Opened {
		sess.opened[tb] = true
	}
	for name, flat := range stored.Discovered {
		if d := sess.discovered[name]; d != nil && d.flat == flat {
			delete(stored.Discovered, name) // known already
		}
	}
	sess.mu.Unlock()
	opened := map[string]bool{}
	for name, flat := range stored.Discovered {
		t, ok := s.p.Registry().Lookup(flat)
		if toolbox, _, found := strings.Cut(flat, "__"); !ok && found && s.cat.Toolboxes != nil && !opened[toolbox] {
			// A downstream tool is known once its toolbox is open here.
			opened[toolbox] = true
			if _, err := s.cat.Toolboxes.Open(ctx, toolbox); err == nil {
				t, ok = s.p.Registry().Lookup(flat)
			}
		}
		if !ok {
			continue // gone since: get_tools again finds what there is
		}
		mt := mcpkit.Tool(t)
		mt.Name = name
		sess.mu.Lock()
		sess.discovered[name] = &discoveredTool{listing: mt, flat: flat, tool: t}
		if t.ID.Toolbox != registry.BuiltinToolbox {
			sess.opened[t.ID.Toolbox] = true // get_tools opened it (see discover)
		}
		sess.mu.Unlock()
	}
}

func (s *Surface) build() *mcp.Server {
	s.instance = ulid.Make().String()
	o := s.o
	o.Instance = s.instance
	// A session sees the downstream prompts and resources of the
	// toolboxes it opened, as it sees their tools (Nexus's own resource
	// templates are everyone's).
	o.ExtrasOpened = func(ctx context.Context, req mcp.Request, toolbox string) bool {
		return s.isOpen(context.WithValue(ctx, sessionKey{}, s.state(ctx, req)), toolbox)
	}
	srv := o.Server(s.p, "Toolboxes (find tools for a task with search_tools; open one with open_toolbox, then call its tools with use_tool; or discover tools with get_tools):")
	for _, t := range s.p.Registry().Listed(registry.MetaTools) {
		if t.ID.Server == ServerName {
			srv.AddTool(mcpkit.Tool(t), s.metaHandler)
		}
	}
	srv.AddReceivingMiddleware(s.perSession)
	// Only the meta-tools the caller may use (discovered tools were checked
	// when discovered).
	srv.AddReceivingMiddleware(mcpkit.ListOnly(mcpkit.VisibleTools(s.p)))
	mcpkit.Track(srv, s.p, s.instance, func(ss *mcp.ServerSession) {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.sessions, ss)
	})
	return srv
}

func (s *Surface) metaHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = mcpkit.WithCaller(ctx, req)
	sess := s.state(ctx, req)
	ctx = context.WithValue(ctx, sessionKey{}, sess)
	o := s.p.Call(ctx, mcpkit.CallRequest(s.o.Surface, mcpkit.Transport(s.instance, req), req.Params.Name, req.Params.Arguments, req.Params.Meta))
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
			sess := s.state(ctx, req)
			s.restore(ctx, sess)
			sess.mu.Lock()
			names := slices.Sorted(maps.Keys(sess.discovered))
			for _, n := range names {
				// A tool whose server is gone (a reload removed it) is
				// not listed; it is again if the server comes back.
				if d := sess.discovered[n]; d.current(s.p.Registry(), n) {
					lt.Tools = append(lt.Tools, d.listing)
				}
			}
			sess.mu.Unlock()
			return lt, nil
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || ss == nil {
				break
			}
			sess := s.state(ctx, req)
			sess.mu.Lock()
			d := sess.discovered[p.Name]
			sess.mu.Unlock()
			flat := ""
			switch {
			case d != nil:
				flat = d.flat
			case sess.sessionless && !s.meta(p.Name):
				// Nothing was kept of an earlier get_tools: a name it
				// would have made callable is resolved now, by the same
				// rule.
				if t, ok := s.named(ctx, p.Name); ok {
					flat = t.ID.Name()
				}
			case !sess.sessionless && !s.meta(p.Name):
				// get_tools may have discovered it through another
				// replica a moment ago: it stored the tool before it
				// answered, but its change event may not have reached
				// this replica yet.
				s.restore(ctx, sess)
				sess.mu.Lock()
				if d := sess.discovered[p.Name]; d != nil {
					flat = d.flat
				}
				sess.mu.Unlock()
				if flat == "" {
					// A name search_tools gave: callable at once, by
					// get_tools' rule, without being listed (a session
					// that searches a thousand times lists none of it).
					if t, ok := s.named(ctx, p.Name); ok {
						flat = t.ID.Name()
					}
				}
			}
			if flat == "" {
				break
			}
			o := s.p.Call(ctx, mcpkit.CallRequest(s.o.Surface, mcpkit.Transport(s.instance, req), flat, p.Arguments, p.Meta))
			return mcpkit.Result(o), nil
		}
		return next(ctx, method, req)
	}
}

// opened records that the session of ctx opened toolbox (open_toolbox), and
// keeps it with the session in the store, for every replica.
func (s *Surface) opened(ctx context.Context, toolbox string) {
	sess := sessionFrom(ctx)
	if sess == nil || sess.sessionless {
		return
	}
	sess.mu.Lock()
	known := sess.opened[toolbox]
	sess.opened[toolbox] = true
	sess.mu.Unlock()
	if !known && s.o.Sessions != nil && sess.id != "" {
		if err := s.o.Sessions.Open(context.WithoutCancel(ctx), sess.id, toolbox); err != nil {
			s.logger().Warn("store a toolbox an MCP session opened", "session", sess.id, "toolbox", toolbox, "err", err)
		}
	}
}

// isOpen reports whether use_tool may reach configured toolbox for the
// caller of ctx: a session of the surface must have opened it (open_toolbox,
// or get_tools discovering one of its tools; seed 003). A call with no
// session to remember an opening (a sessionless client, whose every request
// stands alone; REST, nexus call and the chat loop, which reach use_tool
// through the pipeline) finds every configured toolbox open: use_tool opens
// it itself.
func (s *Surface) isOpen(ctx context.Context, toolbox string) bool {
	sess := sessionFrom(ctx)
	if sess == nil || sess.sessionless {
		return true
	}
	sess.mu.Lock()
	open := sess.opened[toolbox]
	sess.mu.Unlock()
	if !open {
		// Opened through another replica, whose change event may not
		// have reached this one yet: the store has it.
		s.restore(ctx, sess)
		sess.mu.Lock()
		open = sess.opened[toolbox]
		sess.mu.Unlock()
	}
	return open
}

// meta reports whether name is one of the surface's meta-tools.
func (s *Surface) meta(name string) bool {
	t, ok := s.p.Registry().Lookup(name)
	return ok && t.Meta && t.ID.Server == ServerName
}

// discover makes tool t callable in the session as name, and tells clients
// their tool list changed; a sessionless request's session keeps nothing.
// get_tools opened a downstream tool's toolbox to find it, so the toolbox
// is open for the session's use_tool too.
func (s *Surface) discover(sess *session, name string, t *registry.Tool) {
	if s.remember(sess, name, t) {
		s.listChanged()
	}
}

// remember makes tool t callable in the session as name, as discover does,
// without telling clients: it reports whether t is new to the session.
func (s *Surface) remember(sess *session, name string, t *registry.Tool) bool {
	if sess.sessionless {
		return false
	}
	sess.mu.Lock()
	if t.ID.Toolbox != registry.BuiltinToolbox {
		sess.opened[t.ID.Toolbox] = true
	}
	if _, ok := sess.discovered[name]; ok {
		sess.mu.Unlock()
		return false
	}
	mt := mcpkit.Tool(t)
	mt.Name = name
	sess.discovered[name] = &discoveredTool{listing: mt, flat: t.ID.Name(), tool: t}
	sess.mu.Unlock()
	if s.o.Sessions != nil && sess.id != "" {
		if err := s.o.Sessions.Discover(context.Background(), sess.id, name, t.ID.Name()); err != nil {
			s.logger().Warn("store a tool an MCP session discovered", "session", sess.id, "err", err)
		}
	}
	return true
}

// listChanged tells the surface's sessions that their tool lists changed.
// The SDK notifies list changes to every session of a server, not one:
// re-adding a meta-tool (unchanged) sends notifications/tools/list_changed,
// debounced by the SDK; sessions that did not discover anything list the
// same tools again.
func (s *Surface) listChanged() {
	if gt, ok := s.p.Registry().LookupID(registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: "get_tools"}); ok {
		s.server.AddTool(mcpkit.Tool(gt), s.metaHandler)
	}
}

func (s *Surface) register() error {
	return registry.AddAll(s.p.Registry(), registry.BuiltinToolbox, ServerName, s.tools()...)
}

// builtin is the built-in toolbox: Nexus's own servers.
func (s *Surface) builtin() registry.Toolbox { return s.cat.Builtin() }

// logger is the surface's logger (discarding when none was given).
func (s *Surface) logger() *slog.Logger {
	if s.o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.o.Logger
}
