// Package mcpkit is what every MCP surface (flat, agents, bounded) shares:
// the server options, a tool's MCP listing, the rendering of an outcome as a
// tool result, the pipeline request of a tools/call (session keying and the
// context in _meta), session tracking, the toolbox-opening middleware, and
// the catalog that names agents. No surface imports another; they all
// import this.
package mcpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/relay"
	"github.com/nexus-mcp/nexus/internal/sdklog"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Options configure an MCP surface. Every MCP surface package (flat, agents,
// bounded) has one constructor of one shape, New(p, o) (*mcp.Server, error),
// and every surface of a process is built in one place (app.App.Surfaces).
type Options struct {
	// Name and Version identify the server at initialize.
	Name, Version string
	// Surface names the surface in traces, e.g. "mcp-flat-http".
	Surface string
	// Instructions are the intro of the instructions sent at initialize
	// (what Nexus is); each surface adds how it serves tools and the
	// toolboxes. Empty means no instructions.
	Instructions string
	// Catalog names the agents and their modes (agents, bounded) and gives
	// the configured toolboxes; with toolboxes, the flat and agents surfaces
	// open them all when a client initializes (see [OpenOnInitialize]).
	Catalog *Catalog
	// Logger receives the surface's and the MCP SDK's diagnostics; nil
	// discards them.
	Logger *slog.Logger
	// Sessions, when set, keeps each Streamable HTTP session in the store
	// (its initialize parameters, log level and what it discovered), so
	// that another replica can restore it (shared by the surfaces of a
	// process). Nil: sessions live in this process only.
	Sessions *mcpsession.Store
	// Instance names the surface's server among the servers of the
	// process, for the transport keys of its stdio sessions ([Transport]):
	// the resource reads of [Options.Server]'s extras use it.
	Instance string
	// ExtrasOpened, when set, limits the downstream prompts and resources
	// a caller sees and uses to those of the toolboxes they opened (the
	// bounded surface, whose sessions open toolboxes themselves).
	ExtrasOpened func(ctx context.Context, req mcp.Request, toolbox string) bool
	// Embedder, when set, makes the bounded surface's search_tools hybrid:
	// lexical fused with the tools' embeddings (the embedding model that
	// memory search uses; issue 27). Nil: search_tools is lexical.
	Embedder embed.Embedder

	// Set by [Options.Server]: Extras advertises prompts and resources
	// (with list_changed), Complete answers completion/complete, and
	// Subscribe and Unsubscribe answer resources/subscribe and
	// resources/unsubscribe (extras.go).
	Extras      bool
	Complete    func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	Subscribe   func(context.Context, *mcp.SubscribeRequest) error
	Unsubscribe func(context.Context, *mcp.UnsubscribeRequest) error
	// Calls, when set, receives the tools/call of a surface that the HTTP
	// front may serve without the SDK server's dispatch (the flat surface's;
	// see [ToolCalls]), keyed by the surface's server.
	Calls *Calls
}

// ToolCalls is an MCP surface's tools/call, for an HTTP front that serves
// it without the SDK server's JSON-RPC machinery (streamable.ToolCalls, whose
// methods are these).
type ToolCalls interface {
	// Serves reports whether the surface runs a tools/call of name itself.
	Serves(name string) bool
	// Call runs a tools/call of session ss and returns its result as the
	// SDK server would encode it, or the JSON-RPC error it would answer
	// with.
	Call(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error)
	// CallSessionless runs a tools/call of the sessionless protocol as Call
	// does, bound to no transport session.
	CallSessionless(ctx context.Context, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error)
	// Relays reports whether a call of name may send its client something
	// while it runs (see streamable.ToolCalls).
	Relays(name string) bool
	// ServesSessionless reports whether the surface runs a sessionless
	// tools/call of name itself (see streamable.ToolCalls).
	ServesSessionless(name string) bool
	// Implementation is the server's name and version.
	Implementation() *mcp.Implementation
}

// Calls holds the [ToolCalls] of a process's surfaces, by server.
type Calls struct {
	mu sync.Mutex
	m  map[*mcp.Server]ToolCalls
}

// Set records the tool calls of server s.
func (c *Calls) Set(s *mcp.Server, tc ToolCalls) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[*mcp.Server]ToolCalls{}
	}
	c.m[s] = tc
}

// Of returns the tool calls of server s, nil when it has none.
func (c *Calls) Of(s *mcp.Server) ToolCalls {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[s]
}

// OpenAll is the catalog's toolbox opening, nil without configured toolboxes.
func (o Options) OpenAll() func(context.Context) {
	if o.Catalog == nil || o.Catalog.Toolboxes == nil {
		return nil
	}
	return o.Catalog.Toolboxes.OpenAll
}

// Server returns the MCP server of a surface built with o over pipeline p
// (see [NewServer]); its instructions are o.Instructions followed by how
// (how the surface serves tools) and the catalog's toolboxes, as they are
// when a client initializes (a reloaded configuration changes them) and as
// the client's user may know of them (a toolbox the access rules deny them
// is not named): they are made for each initialize, and for each
// server/discover of a sessionless client.
func (o Options) Server(p *pipeline.Pipeline, how string) *mcp.Server {
	// The downstream servers' prompts and resources, with configured
	// toolboxes, and Nexus's own resource templates (extras.go).
	var x *extrasSyncer
	if o.Extras = o.OpenAll() != nil || len(p.Registry().LocalTemplates()) > 0; o.Extras {
		x = newExtrasSyncer(p, o.Surface, o.Instance)
		x.opened = o.ExtrasOpened
		o.Complete, o.Subscribe, o.Unsubscribe = x.complete, x.subscribe, x.unsubscribe
	}
	// The server's own instructions are the built-in toolbox's alone: every
	// client's are made for it below.
	s := newServer(o)
	if x != nil {
		x.s = s
		x.addLocal()
		p.Registry().OnChange(x.sync)
		p.Registry().OnResourceUpdated(x.updated)
		x.sync()
		s.AddReceivingMiddleware(x.listOnly)
	}
	if o.Instructions != "" && o.Catalog != nil {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				switch r := res.(type) {
				case *mcp.InitializeResult:
					r.Instructions = o.instructions(ctx, p, how)
				case *mcp.DiscoverResult: // sessionless clients
					r.Instructions = o.instructions(ctx, p, how)
				}
				return res, err
			}
		})
	}
	if o.Sessions != nil {
		s.AddReceivingMiddleware(keep(o.Sessions, o.Surface, o.Logger))
	}
	return s
}

// syncing reports whether req applies another replica's change to a
// session ([mcpsession.SyncHeader]).
func syncing(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && mcpsession.IsSyncing(extra.Header)
}

// keep stores each Streamable HTTP session of a surface when it
// initializes, and the log level it sets (see [Options.Sessions]); stdio and
// in-memory sessions have no id and are not kept.
func keep(st *mcpsession.Store, surface string, log *slog.Logger) mcp.Middleware {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if err != nil || ss == nil || ss.ID() == "" {
				return res, err
			}
			switch method {
			case "initialize":
				params, merr := json.Marshal(req.GetParams())
				user := ""
				if u, ok := users.FromContext(ctx); ok {
					user = u.ID
				}
				if merr == nil {
					merr = st.Save(ctx, mcpsession.Session{ID: ss.ID(), Surface: surface, User: user, Params: params})
				}
				if merr != nil {
					// The session works here; another replica cannot
					// re-create it.
					log.Warn("store an MCP session", "session", ss.ID(), "err", merr)
				}
			case "logging/setLevel":
				// A level another replica stored and told is only applied.
				// (Logging is deprecated as of protocol 2026-07-28, SEP-2577;
				// clients of earlier versions still set levels, for the
				// deprecation window.)
				//lint:ignore SA1019 served to clients of the protocol versions that have logging
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && !syncing(req) {
					if err := st.SetLogLevel(ctx, ss.ID(), string(p.Level)); err != nil {
						log.Warn("store an MCP session's log level", "session", ss.ID(), "err", err)
					}
				}
			}
			return res, err
		}
	}
}

// NewServer returns an MCP server as every Nexus surface makes one: its
// name, version and instructions, the SDK's logs through [sdklog], and tools
// (with list_changed) advertised even while none is listed.
func NewServer(name, version, instructions string, log *slog.Logger) *mcp.Server {
	return newServer(Options{Name: name, Version: version, Instructions: instructions, Logger: log})
}

func newServer(opts Options) *mcp.Server {
	o := &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       sdklog.New(opts.Logger),
		// Logging is deprecated as of protocol 2026-07-28 (SEP-2577) but
		// still advertised to clients of earlier versions, whose log
		// levels sessions keep.
		//lint:ignore SA1019 served to clients of the protocol versions that have logging
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}},
	}
	if opts.Extras {
		// Downstream servers connect after a client initializes: their
		// prompts and resources come later, and the lists say when.
		o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true}
		o.CompletionHandler = opts.Complete
		if opts.Subscribe != nil && opts.Unsubscribe != nil {
			o.Capabilities.Resources.Subscribe = true
			o.SubscribeHandler, o.UnsubscribeHandler = opts.Subscribe, opts.Unsubscribe
		}
	}
	return mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, o)
}

// WithCaller returns ctx carrying the caller of the tools/call req
// ([relay.FromRequest]), so that a downstream server's progress, log
// messages and requests for input during the call reach the client that
// made it, whichever tool of the surface (a flat name, use_tool, an
// agent's mode) led there. Every surface's tools/call handler starts with
// it.
func WithCaller(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return relay.With(ctx, relay.FromRequest(req))
}

// Sessionless reports whether req is a request without a session over
// Streamable HTTP: one the HTTP front served through the SDK's stateless
// handler (a client of the sessionless protocol, 2026-07-28 and later, or a
// one-off POST without Mcp-Session-Id), which makes a session for that
// request alone, without an id, and ends it with the request. Nothing of
// such a session is kept: it is not tracked, its calls are bound to no
// conversation, it discovers nothing. Requests over stdio or in memory (no
// HTTP headers) are never sessionless: their connection is their session.
func Sessionless(req mcp.Request) bool {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	extra := req.GetExtra()
	return ss != nil && ss.ID() == "" && extra != nil && extra.Header != nil
}

// Transport is the pipeline's transport key of an SDK request (see
// [TransportKey]): "" for a [Sessionless] request, so that its call, unless
// it names a session (in its arguments or _meta), gets a one-off session,
// as a REST call does.
func Transport(instance string, req mcp.Request) string {
	if Sessionless(req) {
		return ""
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return TransportKey(instance, ss)
}

// TransportKey is the pipeline's name for the transport session of an MCP
// request. A Streamable HTTP session is named by its id alone
// ([mcpsession.TransportKey]), the same on every replica, so that its calls
// keep their conversation whichever replica serves them. Sessions without an
// id (stdio, in-memory) are told apart by server instance and address while
// they live.
func TransportKey(instance string, ss *mcp.ServerSession) string {
	switch {
	case ss == nil:
		return instance
	case ss.ID() == "":
		return fmt.Sprintf("%s/%p", instance, ss)
	}
	return mcpsession.TransportKey(ss.ID())
}

// Track ends the pipeline's binding of each session of s once the session
// has ended (closed by the client, timed out or evicted), and then calls
// onEnd if it is not nil, so that no state of a session outlives it for long.
// A session is tracked from its first request (initialize, or
// server/discover for clients of newer protocol versions). Ended sessions
// are swept when new sessions arrive (every time while few are tracked,
// every [sweepEvery] new sessions beyond that), so tracking costs a map entry
// per session and no goroutine; what an ended session leaves is bounded by
// the live sessions plus sweepEvery. [Sessionless] requests are not
// tracked: their session ends with them and binds nothing.
func Track(s *mcp.Server, p *pipeline.Pipeline, instance string, onEnd func(*mcp.ServerSession)) {
	t := &tracker{s: s, p: p, instance: instance, onEnd: onEnd, sessions: map[*mcp.ServerSession]bool{}}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && !Sessionless(req) {
				t.see(ss)
			}
			return next(ctx, method, req)
		}
	})
}

// sweepEvery is how many new sessions may arrive between sweeps once more
// than sweepEvery sessions are tracked.
const sweepEvery = 64

// tracker is the state of [Track].
type tracker struct {
	s        *mcp.Server
	p        *pipeline.Pipeline
	instance string
	onEnd    func(*mcp.ServerSession)

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]bool
	added    int // new sessions since the last sweep
}

// see tracks ss and, now and then, sweeps the sessions that ended.
func (t *tracker) see(ss *mcp.ServerSession) {
	t.mu.Lock()
	if t.sessions[ss] {
		t.mu.Unlock()
		return
	}
	t.sessions[ss] = true
	t.added++
	sweep := len(t.sessions) <= sweepEvery || t.added >= sweepEvery
	if sweep {
		t.added = 0
	}
	t.mu.Unlock()
	if sweep {
		t.sweep()
	}
}

// sweep ends the state of every tracked session the server no longer has.
func (t *tracker) sweep() {
	live := map[*mcp.ServerSession]bool{}
	for ss := range t.s.Sessions() {
		live[ss] = true
	}
	t.mu.Lock()
	var ended []*mcp.ServerSession
	for ss := range t.sessions {
		if !live[ss] {
			ended = append(ended, ss)
			delete(t.sessions, ss)
		}
	}
	t.mu.Unlock()
	for _, ss := range ended {
		t.p.EndTransport(TransportKey(t.instance, ss))
		if t.onEnd != nil {
			t.onEnd(ss)
		}
	}
}

// CallRequest is the pipeline request of a tools/call on an MCP surface:
// the tool (by its flat name) and arguments, the transport key of the
// request's session ([Transport], or [TransportKey] of a session) and the
// context in the request's _meta. Every MCP surface builds its requests
// here.
func CallRequest(surface, transport, tool string, args json.RawMessage, meta mcp.Meta) pipeline.Request {
	return pipeline.Request{Tool: tool, Args: args, Surface: surface, Transport: transport, Context: CallContext(meta)}
}

// CallContext is the call context a client put in a tools/call request's
// _meta ("io.nexus/sessionId", "io.nexus/workspaceId"): the way to give
// Nexus a session or workspace for a tool that declares "context",
// "sessionId" or "workspaceContext" arguments of its own. Nil when absent.
func CallContext(meta mcp.Meta) *pipeline.CallContext {
	sid, _ := meta[MetaSession].(string)
	ws, _ := meta[MetaWorkspace].(string)
	if sid == "" && ws == "" {
		return nil
	}
	return &pipeline.CallContext{SessionID: sid, WorkspaceID: ws}
}

// Tool is the MCP listing of a registry tool.
func Tool(t *registry.Tool) *mcp.Tool {
	mt := &mcp.Tool{
		Name:        t.Name(),
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.ListedSchemaJSON(),
		Annotations: t.Annotations,
		Icons:       t.Icons,
		Meta:        t.ToolMeta,
	}
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	if t.ReadOnly && mt.Annotations == nil {
		mt.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return mt
}

// Meta keys Nexus sets on every tool result.
const (
	MetaSession   = "io.nexus/sessionId"
	MetaWorkspace = "io.nexus/workspaceId"
	MetaRequest   = "io.nexus/requestId"
	// MetaError is a failed call's error code (FORBIDDEN, NOT_FOUND, ...),
	// also for the families whose errors are plain text (the workbench's).
	MetaError = "io.nexus/errorCode"
)

// Result renders an outcome as an MCP tool result. A downstream server's
// result is returned exactly as it came.
func Result(o *pipeline.Outcome) *mcp.CallToolResult {
	if o.MCP != nil {
		return o.MCP
	}
	body, isErr := o.Body()
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, IsError: isErr}
	res.Meta = mcp.Meta{MetaRequest: o.RequestID, MetaWorkspace: o.Workspace}
	if o.SessionID != "" {
		res.Meta[MetaSession] = o.SessionID
	}
	if o.Err != nil {
		res.Meta[MetaError] = string(o.Err.Code)
	}
	if o.IsJSON() && len(body) > 0 && body[0] == '{' {
		res.StructuredContent = json.RawMessage(body)
	}
	return res
}

// ResultJSON is [Result] encoded as the SDK server sends it: a downstream
// server's result as the pipeline has it (Outcome.Result: the JSON the
// server sent, or the result encoded once), else the rendered result. As the
// SDK server does, a result without content gets an empty list, not null.
func ResultJSON(o *pipeline.Outcome) (json.RawMessage, error) {
	if o.MCP != nil && len(o.Result) > 0 && o.MCP.Content != nil && o.MCP.InputRequests == nil {
		return o.Result, nil
	}
	if o.MCP == nil {
		return textResultJSON(o)
	}
	res := Result(o)
	if res.Content == nil {
		r := *res
		r.Content = []mcp.Content{}
		res = &r
	}
	return json.Marshal(res)
}

// textResultJSON is json.Marshal(Result(o)) for a local tool's outcome,
// byte for byte (TestTextResultJSONAsMarshal), written directly: through
// the SDK's types, encoding/json compacts the output of each MarshalJSON
// again (the result's, its text content's, the structured content's), which
// was 15-18 % of a replica's CPU under a read-heavy load (docs/benchmarks.md).
func textResultJSON(o *pipeline.Outcome) (json.RawMessage, error) {
	body, isErr := o.Body()
	text, err := json.Marshal(string(body))
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, len(text)+len(body)+256))
	// _meta's keys in the order encoding/json sorts a map's.
	b.WriteString(`{"_meta":{`)
	first := true
	meta := func(k, v string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	if o.Err != nil {
		meta(MetaError, string(o.Err.Code))
	}
	meta(MetaRequest, o.RequestID)
	if o.SessionID != "" {
		meta(MetaSession, o.SessionID)
	}
	meta(MetaWorkspace, o.Workspace)
	b.WriteString(`},"content":[{"type":"text","text":`)
	b.Write(text)
	b.WriteString(`}]`)
	if o.IsJSON() && len(body) > 0 && body[0] == '{' {
		b.WriteString(`,"structuredContent":`)
		// As encoding/json writes a Marshaler's output: compacted, and
		// <, >, &, U+2028 and U+2029 escaped.
		var c bytes.Buffer
		if err := json.Compact(&c, body); err != nil {
			return nil, err
		}
		json.HTMLEscape(b, c.Bytes())
	}
	if isErr {
		b.WriteString(`,"isError":true`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Must returns srv, and panics if err is not nil: for a surface built
// where its error cannot happen (tests, benchmarks), as template.Must does.
func Must(srv *mcp.Server, err error) *mcp.Server {
	if err != nil {
		panic(err)
	}
	return srv
}

// ListOnly is the listing half of the pipeline's authorize step for an MCP
// surface: a tools/list result keeps only what keep returns for each tool
// (nil drops it; another tool replaces it). Calls are authorized by the
// pipeline itself.
func ListOnly(keep func(ctx context.Context, t *mcp.Tool) *mcp.Tool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "tools/list" || err != nil {
				return res, err
			}
			lt, ok := res.(*mcp.ListToolsResult)
			if !ok {
				return res, err
			}
			kept := make([]*mcp.Tool, 0, len(lt.Tools))
			for _, t := range lt.Tools {
				if k := keep(ctx, t); k != nil {
					kept = append(kept, k)
				}
			}
			out := *lt
			out.Tools = kept
			return &out, nil
		}
	}
}

// VisibleTools keeps the registry tools the caller may use
// (pipeline.Pipeline.Visible), and any tool the registry does not know by
// that name (the surface decided it).
func VisibleTools(p *pipeline.Pipeline) func(ctx context.Context, t *mcp.Tool) *mcp.Tool {
	return func(ctx context.Context, t *mcp.Tool) *mcp.Tool {
		if rt, ok := p.Registry().Lookup(t.Name); ok && !p.Visible(ctx, rt) {
			return nil
		}
		return t
	}
}
