// Package pipeline is the one path every tool call takes, from every surface
// (SPEC section 1): look up, bound and decode the arguments, resolve context
// and workspace, validate against the tool's schema, execute, trace, render.
//
// A surface builds a [Request], calls [Pipeline.Call] and renders the
// [Outcome] with [Outcome.Body]; it never validates, traces or shapes errors
// itself.
package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/jsondepth"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// DefaultMaxArgBytes is the default limit on a call's encoded arguments.
const DefaultMaxArgBytes = 256 << 10

// DefaultWorkspace is the workspace of a call that names none.
const DefaultWorkspace = "default"

// Sessions are the conversations calls belong to (SPEC section 3, "One
// conversation model"). The pipeline gives every call a session: the one the
// caller names, else the one bound to the caller's transport session (in the
// call's workspace), else a new one. A session is stored by the first call
// that succeeds and may write (a tool not marked ReadOnly); reads and failed
// calls store nothing.
type Sessions interface {
	// Lookup returns the workspace session id is bound to (seed 000,
	// precedence step 3) and its owner's user id (empty for conversations
	// older than owners: only admins may use those); ok is false when the
	// session does not exist.
	Lookup(ctx context.Context, id string) (workspace, owner string, ok bool, err error)
	// Ensure returns the workspace and owner of session id, creating it in
	// workspace, owned by user ownerID of tier ownerTier, when it does not
	// exist.
	Ensure(ctx context.Context, id, workspace, ownerID, ownerTier string) (ws, owner string, err error)
}

// Options configure a [Pipeline].
type Options struct {
	Registry *registry.Registry
	Traces   *trace.Writer // nil disables tracing (tests of the pipeline alone)
	Sessions Sessions      // nil: calls get no session (tests of the pipeline alone)
	Logger   *slog.Logger
	// MaxArgBytes bounds the encoded arguments of one call; zero means
	// [DefaultMaxArgBytes].
	MaxArgBytes int
	// Tracer exports each call as an OpenTelemetry span; nil means none.
	Tracer oteltrace.Tracer
	// Resolve is called when a tool name is not in the registry, so that a
	// configured toolbox still opening can add it (the workbench waits for
	// it, bounded by its connect timeout). After a nil error the pipeline
	// looks the name up again; an error is the call's error.
	Resolve func(ctx context.Context, tool string) error
	// Principal says who a call acts as, from its context (the HTTP front
	// puts the authenticated user there); nil, or an empty answer, means
	// the local user (principal.Local).
	Principal func(ctx context.Context) (principal.Principal, bool)
	// Observer is told of every call when it ends (metrics); nil means
	// none.
	Observer Observer
	// Authorizer decides which tools and workspaces a caller may use; nil
	// allows everything in workspace "default" (tests of the pipeline
	// alone). Conversations are checked against their owners either way.
	Authorizer Authorizer
	// Bindings keeps the conversations each transport session is bound to
	// where every replica finds them; nil keeps them in this process only.
	Bindings Bindings
}

// Bindings stores which conversation each transport session's calls
// belong to, per user and workspace, so that a transport session (an MCP
// session over HTTP) served by several replicas gets one conversation.
type Bindings interface {
	// Bound returns the bindings of transport, oldest first.
	Bound(ctx context.Context, transport string) ([]Bound, error)
	// Bind stores b for transport unless the transport already has a
	// binding for b's user and workspace, and returns the binding stored
	// (another replica's, when it bound first).
	Bind(ctx context.Context, transport string, b Bound) (Bound, error)
}

// Bound is a conversation a transport session's calls belong to.
type Bound struct {
	SessionID, Workspace, User string
}

// Observer is told of every call the pipeline runs, when it ends.
type Observer interface {
	// ObserveCall reports one call: tool is the registered tool's flat
	// name, or "" when the registry does not know the name the caller gave
	// (so that a caller's typo never becomes a name of its own); surface is
	// the [Request]'s; outcome is "ok", the error code, or "TOOL_ERROR" for
	// a downstream result marked isError; d is the call's duration.
	ObserveCall(tool, surface, outcome string, d time.Duration)
}

// Pipeline runs tool calls.
type Pipeline struct {
	reg      *registry.Registry
	traces   *trace.Writer
	sessions Sessions
	log      *slog.Logger
	maxArgs  int
	tracer   oteltrace.Tracer
	resolve  func(ctx context.Context, tool string) error
	observer Observer
	// whom says who a call acts as (Options.Principal).
	whom     func(ctx context.Context) (principal.Principal, bool)
	authz    Authorizer
	bindings Bindings

	// transports maps a surface's transport session (an MCP session) to the
	// conversations its calls without a named session belong to, one per
	// workspace. An entry lives as long as its transport session: the
	// surface ends it with [Pipeline.EndTransport], and the surfaces bound
	// the number of live transport sessions.
	mu         sync.Mutex
	transports map[string][]boundSession
}

// boundSession is a session of a transport: its id, its workspace, its
// user and whether it is stored yet. A transport's sessions are its user's:
// were a transport session ever used by two users, each would get
// conversations of their own.
type boundSession struct {
	id, workspace, user string
	stored              bool // the conversation exists
	bound               bool // the binding is in Options.Bindings
}

// New returns a pipeline.
func New(o Options) *Pipeline {
	p := &Pipeline{reg: o.Registry, traces: o.Traces, sessions: o.Sessions, log: o.Logger, maxArgs: o.MaxArgBytes,
		resolve: o.Resolve, observer: o.Observer, whom: o.Principal, authz: o.Authorizer, bindings: o.Bindings,
		transports: map[string][]boundSession{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.maxArgs <= 0 {
		p.maxArgs = DefaultMaxArgBytes
	}
	p.tracer = o.Tracer
	if _, none := p.tracer.(noop.Tracer); none {
		// Telemetry is off: no span, not even a no-op one, per call.
		p.tracer = nil
	}
	return p
}

// Registry returns the registry the pipeline calls into.
func (p *Pipeline) Registry() *registry.Registry { return p.reg }

// Request is one call as a surface parsed it.
type Request struct {
	// Tool is the flat name of the tool.
	Tool string
	// Args is the raw JSON argument object as received (may be empty).
	Args json.RawMessage
	// Surface names the surface for traces ("mcp-http", "cli", "rest", ...).
	Surface string
	// Transport identifies the caller's transport session (for MCP, the
	// server session), so that its calls without a named session share
	// one. Empty means every such call starts a new session.
	Transport string
	// Context is the call's context given outside its arguments (an MCP
	// request's _meta, or use_tool passing on its own call's context). The
	// arguments' context, where the tool does not declare those names
	// itself, takes precedence.
	Context *CallContext
	// Refused is set by a surface that could not make a call of what the
	// client sent (an agent tool without a valid mode): the pipeline does
	// not run a tool, but records, traces and renders this error like any
	// call's. RenderAs names the tool whose family renders it.
	Refused  *errs.Error
	RenderAs string
	// Delegate leaves the arguments of a downstream tool (Source MCP) to
	// its server: they are not validated against the schema Nexus holds
	// (nor given its defaults) and reach the tool as the caller sent them,
	// and a refusal is the server's own answer. use_tool sets it (seed 003:
	// arguments are "validated by downstream tool's inputSchema"). The
	// call is authorized, bound to its session and workspace, traced and
	// rendered as any other; for a local tool it changes nothing.
	Delegate bool
}

// CallContext is a call's session and workspace given outside its
// arguments.
type CallContext struct {
	SessionID   string
	WorkspaceID string
}

// Transports reports how many transport sessions have sessions bound.
func (p *Pipeline) Transports() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.transports)
}

// EndTransport forgets the sessions bound to transport; surfaces call it when
// their transport session ends.
func (p *Pipeline) EndTransport(transport string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.transports, transport)
}

// Outcome is the result of a call, ready to render.
type Outcome struct {
	Tool      *registry.Tool // nil when the tool is unknown
	RequestID string
	SessionID string
	Workspace string
	// Result is the handler's value encoded as JSON, when the call
	// succeeded (a [registry.Encoded] value: the JSON it came with).
	Result json.RawMessage
	// MCP is the downstream server's result when the tool is a proxy; MCP
	// surfaces return it unmodified.
	MCP *mcp.CallToolResult
	// Err is the failure, when the call failed.
	Err *errs.Error
	// Render is the tool whose family renders the outcome when it is not
	// Tool: the tool a meta-tool (use_tool) ran on the caller's behalf.
	Render *registry.Tool

	// who is the caller, once known (whoKnown), for the trace.
	who      principal.Principal
	whoKnown bool
}

// Call runs one tool call through the pipeline.
func (p *Pipeline) Call(ctx context.Context, req Request) *Outcome {
	start := time.Now()
	var span oteltrace.Span
	if p.tracer != nil {
		ctx, span = p.tracer.Start(ctx, "tools/call "+req.Tool, oteltrace.WithSpanKind(oteltrace.SpanKindServer))
		defer span.End()
	}
	o := &Outcome{RequestID: ulid.Make().String(), Workspace: DefaultWorkspace}
	o.Err = p.run(ctx, &req, o)
	if span != nil {
		defer p.annotate(span, &req, o)
	}
	if o.Err != nil && o.Err.Code == errs.Internal {
		p.hideInternal(ctx, &req, o)
	}
	p.finish(ctx, &req, o, start)
	return o
}

// hideInternal logs an internal error and replaces its message with one
// that names the request and nothing of the cause.
func (p *Pipeline) hideInternal(ctx context.Context, req *Request, o *Outcome) {
	level := slog.LevelError
	if ctx.Err() != nil {
		level = slog.LevelDebug // the caller went away: a normal disconnect
	}
	p.log.Log(ctx, level, "tool call failed", "tool", req.Tool, "request_id", o.RequestID, "err", o.Err)
	o.Err = &errs.Error{Code: errs.Internal, Message: fmt.Sprintf("internal error (request %s)", o.RequestID), Err: o.Err.Err}
}

// finish logs, observes and traces a call that has ended. (A function of
// its own, out of Call's frame: see [Pipeline.run].)
func (p *Pipeline) finish(ctx context.Context, req *Request, o *Outcome, start time.Time) {
	d := time.Since(start)
	p.logCall(ctx, req, o, d)
	if p.observer != nil {
		tool := ""
		if o.Tool != nil {
			tool = req.Tool
		}
		p.observer.ObserveCall(tool, req.Surface, outcomeOf(o), d)
	}
	if p.traces == nil {
		return
	}
	if !o.whoKnown {
		o.who, o.whoKnown = p.principal(ctx), true
	}
	rec := trace.Record{
		RequestID: o.RequestID, Surface: req.Surface, Tool: req.Tool,
		SessionID: o.SessionID, Workspace: o.Workspace, UserID: o.who.ID, StartedAt: start,
		Duration: d, Outcome: trace.OK,
		ArgsBytes: len(req.Args), ResultBytes: len(o.Result),
	}
	if t := o.Tool; t != nil {
		rec.Toolbox, rec.Server, rec.Tool, rec.Source = t.ID.Toolbox, t.ID.Server, t.ID.Tool, string(t.Source)
	}
	if o.Err != nil {
		rec.Outcome, rec.ErrorCode = trace.Error, string(o.Err.Code)
	} else if o.MCP != nil && o.MCP.IsError {
		rec.Outcome, rec.ErrorCode = trace.Error, "TOOL_ERROR"
	}
	p.traces.Record(rec)
}

// logCall writes one debug line per call: the tool, the surface, the
// outcome and the duration; never the arguments or the result.
func (p *Pipeline) logCall(ctx context.Context, req *Request, o *Outcome, d time.Duration) {
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	p.log.LogAttrs(ctx, slog.LevelDebug, "tool call", slog.String("tool", req.Tool), slog.String("surface", req.Surface),
		slog.String("outcome", outcomeOf(o)), slog.Duration("duration", d), slog.String("request_id", o.RequestID))
}

// outcomeOf is a finished call's outcome: "ok", the error code, or
// "TOOL_ERROR" for a downstream result marked isError.
func outcomeOf(o *Outcome) string {
	switch {
	case o.Err != nil:
		return string(o.Err.Code)
	case o.MCP != nil && o.MCP.IsError:
		return "TOOL_ERROR"
	}
	return "ok"
}

// annotate records the call on its span: the tool, where it runs, the
// session and workspace, the outcome.
func (p *Pipeline) annotate(span oteltrace.Span, req *Request, o *Outcome) {
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", "tools/call"),
		attribute.String("gen_ai.tool.name", req.Tool),
		attribute.String("nexus.surface", req.Surface),
		attribute.String("nexus.request_id", o.RequestID),
		attribute.String("nexus.workspace", o.Workspace),
		attribute.Int("nexus.args_bytes", len(req.Args)),
		attribute.Int("nexus.result_bytes", len(o.Result)),
	}
	if o.SessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", o.SessionID))
	}
	if t := o.Tool; t != nil {
		attrs = append(attrs, attribute.String("nexus.toolbox", t.ID.Toolbox), attribute.String("nexus.server", t.ID.Server),
			attribute.String("nexus.tool", t.ID.Tool), attribute.String("nexus.source", string(t.Source)))
	}
	switch {
	case o.Err != nil:
		attrs = append(attrs, attribute.String("error.type", string(o.Err.Code)))
		span.SetStatus(codes.Error, o.Err.Message)
	case o.MCP != nil && o.MCP.IsError:
		attrs = append(attrs, attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, "the tool returned isError")
	}
	span.SetAttributes(attrs...)
}

func (p *Pipeline) run(ctx context.Context, req *Request, o *Outcome) (err *errs.Error) {
	if req.Refused != nil {
		o.Render, _ = p.reg.Lookup(req.RenderAs)
		o.SessionID, o.Workspace = p.transportSession(ctx, req.Transport, o.Workspace)
		return req.Refused
	}
	who := p.principal(ctx)
	// A toolbox the caller may not know of is answered as one that does not
	// exist: its tools are unknown tools, and it is not opened to look.
	hidden := func(toolbox string) bool {
		return p.authz != nil && toolbox != "" && toolbox != registry.BuiltinToolbox && !p.authz.Toolbox(who, toolbox)
	}
	t, ok := p.reg.Lookup(req.Tool)
	if !ok && p.resolve != nil {
		if toolbox, _, found := strings.Cut(req.Tool, "__"); found && hidden(toolbox) {
			return errs.E(errs.NotFound, "unknown tool %q", req.Tool)
		}
		if err := p.resolve(ctx, req.Tool); err != nil {
			return errs.From(err)
		}
		t, ok = p.reg.Lookup(req.Tool)
	}
	if !ok || hidden(t.ID.Toolbox) {
		return errs.E(errs.NotFound, "unknown tool %q", req.Tool)
	}
	o.Tool = t
	o.who, o.whoKnown = who, true
	if p.authz != nil && !p.authz.Tool(who, t) {
		return errs.E(errs.Forbidden, "tool %q is not available to user %q: this server's access rules do not allow it (an admin can change them in the configuration's access section)", req.Tool, who.Name)
	}
	args, pruned, e := p.decode(req.Args)
	if e != nil {
		// The arguments are unreadable, so they name no session: the call
		// reports its connection's, if it has one yet.
		o.SessionID, o.Workspace = p.transportSession(ctx, req.Transport, o.Workspace)
		return e
	}
	given := len(args)
	explicitWS, e := p.resolveContext(ctx, who, t, req.Context, args, o)
	if e != nil {
		return e
	}
	if p.authz != nil {
		if err := p.authz.Workspace(ctx, who, o.Workspace); err != nil {
			return errs.From(err)
		}
	}
	// Binding stores nothing, so even a call that fails validation reports
	// the session it belongs to.
	store, e := p.bindSession(ctx, who, req.Transport, explicitWS, o)
	if e != nil {
		return e
	}
	if t.Source == registry.Local && !t.Meta {
		// PostgreSQL cannot store NUL in text; both stores refuse it alike.
		// (Meta-tools pass arguments on: the tool they call is checked.)
		if field, bad := findNUL(args, ""); bad {
			if field == "" {
				field = "arguments"
			}
			return errs.Invalid(field, "contains a NUL character (\\u0000), which Nexus does not store")
		}
	}
	delegated := req.Delegate && t.Source == registry.MCP
	if t.SelfValidating || delegated {
		// The handler validates (see registry.Tool.SelfValidating), or the
		// downstream server does (Request.Delegate).
	} else if verr := t.Validate(args); verr != nil {
		e := errs.E(errs.BadRequest, "invalid arguments for %s: %s", req.Tool, schemaMessage(verr))
		e.Field = schemaField(verr)
		return e
	}
	if e := p.checkSessionArgs(ctx, who, t, args); e != nil {
		return e
	}
	changed := pruned || len(args) != given
	// Arguments passed on as sent: a downstream tool's delegated to its
	// server, and those of a meta-tool that reads them itself (use_tool,
	// which passes its "arguments" on).
	asSent := delegated || (t.Meta && t.SelfValidating)
	if asSent {
		// Only a context argument Nexus took (seed 000's, which the tool
		// does not declare) is not the tool's; its nulls are.
		changed = len(args) != given
	}
	raw, e := p.handlerArgs(req.Args, args, t, changed, asSent)
	if e != nil {
		return e
	}
	call := &registry.Call{Args: raw, Workspace: o.Workspace, SessionID: o.SessionID, RequestID: o.RequestID, User: who}
	value, herr := p.execute(ctx, t, call)
	if herr != nil {
		e := errs.From(herr)
		if e.Op == "" {
			e.Op = req.Tool
		}
		return e
	}
	if inner, ok := value.(*Outcome); ok {
		// A meta-tool (use_tool) ran another tool through the pipeline: its
		// outcome is this call's, rendered in that tool's family by every
		// surface alike.
		o.Result, o.MCP, o.Render = inner.Result, inner.MCP, inner.renderer()
		if inner.Err != nil {
			return inner.Err
		}
		return nil
	}
	var encoded json.RawMessage
	if e, ok := value.(*registry.Encoded); ok {
		value, encoded = e.Value, e.JSON
	}
	if r, ok := value.(*mcp.CallToolResult); ok {
		o.MCP = r
	}
	// The session is stored by the first successful call that may write;
	// reads and failures store nothing.
	if store != nil && !t.ReadOnly && !t.Meta && (o.MCP == nil || !o.MCP.IsError) {
		// Stored even when the caller has gone: the call's write stands.
		if err := store(context.WithoutCancel(ctx)); err != nil {
			// The call itself succeeded; its session is stored by a later one.
			p.log.Error("store session", "tool", req.Tool, "request_id", o.RequestID, "err", err)
		}
	}
	if encoded != nil {
		o.Result = encoded
		return nil
	}
	body, merr := json.Marshal(value)
	if merr != nil {
		return errs.From(fmt.Errorf("encode result of %s: %w", req.Tool, merr))
	}
	o.Result = body
	return nil
}

// execute runs the handler, turning a panic into an internal error.
func (p *Pipeline) execute(ctx context.Context, t *registry.Tool, call *registry.Call) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("tool handler panicked", "tool", t.ID.Name(), "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return t.Handler(ctx, call)
}

// handlerArgs are the arguments the handler gets: the caller's own bytes
// when they say exactly what args (decoded from them, then checked) says,
// else args encoded again. The caller's bytes do only for a local tool (whose
// handler decodes them as the pipeline did, the last of duplicate names
// winning) whose arguments the pipeline left as they were: it removed no null
// and no context argument (changed is false) and the schema gives no default
// to apply. Encoding again costs as much as decoding, per call.
//
// Arguments passed on as sent (asSent: [Request.Delegate], or a meta-tool
// that reads its own) are the caller's bytes, less the members the pipeline
// removed (changed: a context argument it took), each other member's value
// as the caller sent it.
func (p *Pipeline) handlerArgs(raw json.RawMessage, args map[string]any, t *registry.Tool, changed, asSent bool) (json.RawMessage, *errs.Error) {
	if asSent && len(raw) > 0 && raw[0] == '{' {
		if !changed {
			return raw, nil
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err == nil {
			for k := range members {
				if _, kept := args[k]; !kept && string(members[k]) != "null" {
					delete(members, k)
				}
			}
			b, err := json.Marshal(members)
			if err != nil {
				return nil, errs.From(fmt.Errorf("re-encode arguments: %w", err))
			}
			return b, nil
		}
	}
	if !changed && t.Source == registry.Local && !t.Meta && !t.AppliesDefaults() && len(raw) > 0 && raw[0] == '{' {
		return raw, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, errs.From(fmt.Errorf("re-encode arguments: %w", err))
	}
	return b, nil
}

// decode bounds and decodes the raw arguments into a JSON object; pruned
// reports that top-level nulls were removed from it.
func (p *Pipeline) decode(raw json.RawMessage) (_ map[string]any, pruned bool, _ *errs.Error) {
	if len(raw) > p.maxArgs {
		return nil, false, errs.E(errs.BadRequest, "arguments are %d bytes; the limit is %d bytes", len(raw), p.maxArgs)
	}
	if !utf8.Valid(raw) {
		return nil, false, errs.E(errs.BadRequest, "arguments are not valid UTF-8")
	}
	if hasLoneSurrogate(raw) {
		return nil, false, errs.E(errs.BadRequest, "arguments contain an unpaired UTF-16 surrogate escape, which is not valid Unicode")
	}
	if jsondepth.Of(raw, jsondepth.Max) > jsondepth.Max {
		return nil, false, errs.E(errs.BadRequest, "arguments are nested deeper than %d levels", jsondepth.Max)
	}
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, false, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false, errs.E(errs.BadRequest, "arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, errs.E(errs.BadRequest, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	// A top-level null means "not given": clients generated from schemas
	// often send every optional property.
	for k, v := range m {
		if v == nil {
			delete(m, k)
			pruned = true
		}
	}
	return m, pruned, nil
}

// hasLoneSurrogate reports whether raw JSON contains a \uD800-\uDFFF escape
// that is not part of a high+low surrogate pair. encoding/json would silently
// turn one into U+FFFD; Nexus rejects it instead.
func hasLoneSurrogate(raw []byte) bool {
	pendingHigh := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			if pendingHigh {
				return true
			}
			continue
		}
		if raw[i+1] != 'u' || i+5 >= len(raw) {
			if pendingHigh {
				return true
			}
			i++ // skip the escaped character
			continue
		}
		r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		if err != nil {
			return false // not our problem: the JSON decoder reports it
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case r >= 0xDC00 && r <= 0xDFFF:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
		i += 5
	}
	return pendingHigh
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// findNUL reports the path of the first string or key in v that contains a
// NUL character.
func findNUL(v any, path string) (string, bool) {
	switch v := v.(type) {
	case string:
		return path, strings.IndexByte(v, 0) >= 0
	case map[string]any:
		for k, x := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if strings.IndexByte(k, 0) >= 0 {
				return p, true
			}
			if f, bad := findNUL(x, p); bad {
				return f, true
			}
		}
	case []any:
		for i, x := range v {
			if f, bad := findNUL(x, fmt.Sprintf("%s[%d]", path, i)); bad {
				return f, true
			}
		}
	}
	return "", false
}

// principal is who the call of ctx acts as.
func (p *Pipeline) principal(ctx context.Context) principal.Principal {
	if p.whom != nil {
		if u, ok := p.whom(ctx); ok {
			return u
		}
	}
	return principal.Local
}

// Principal is who the call of ctx acts as.
func (p *Pipeline) Principal(ctx context.Context) principal.Principal { return p.principal(ctx) }
