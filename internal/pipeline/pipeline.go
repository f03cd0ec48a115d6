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
	"regexp"
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

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// DefaultMaxArgBytes is the default limit on a call's encoded arguments.
const DefaultMaxArgBytes = 256 << 10

// DefaultWorkspace is the workspace of a call that names none.
const DefaultWorkspace = "default"

// Sessions are the conversations calls belong to (SPEC section 3, "One
// conversation model"). The pipeline gives every call a session: the one the
// caller names (created if it does not exist yet), else the one bound to the
// caller's transport session, else a new one.
type Sessions interface {
	// Workspace returns the workspace session id is bound to (seed 000,
	// precedence step 3); ok is false when the session does not exist.
	Workspace(ctx context.Context, id string) (workspace string, ok bool, err error)
	// Ensure returns the workspace of session id, creating the session in
	// workspace when it does not exist.
	Ensure(ctx context.Context, id, workspace string) (string, error)
	// NewSession starts a session in workspace and returns its id.
	NewSession(ctx context.Context, workspace string) (string, error)
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
}

// Pipeline runs tool calls.
type Pipeline struct {
	reg      *registry.Registry
	traces   *trace.Writer
	sessions Sessions
	log      *slog.Logger
	maxArgs  int
	tracer   oteltrace.Tracer

	// transports maps a surface's transport session (an MCP session) to the
	// conversation its unnamed calls belong to.
	mu         sync.Mutex
	transports map[string]boundSession
}

// boundSession is the session of a transport and the workspace it is bound to.
type boundSession struct{ id, workspace string }

// maxTransports bounds the transport-to-session map.
const maxTransports = 100000

// New returns a pipeline.
func New(o Options) *Pipeline {
	p := &Pipeline{reg: o.Registry, traces: o.Traces, sessions: o.Sessions, log: o.Logger, maxArgs: o.MaxArgBytes,
		transports: map[string]boundSession{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.maxArgs <= 0 {
		p.maxArgs = DefaultMaxArgBytes
	}
	p.tracer = o.Tracer
	if p.tracer == nil {
		p.tracer = noop.NewTracerProvider().Tracer("")
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
}

// Outcome is the result of a call, ready to render.
type Outcome struct {
	Tool      *registry.Tool // nil when the tool is unknown
	RequestID string
	SessionID string
	Workspace string
	// Result is the handler's value encoded as JSON, when the call succeeded.
	Result json.RawMessage
	// MCP is the downstream server's result when the tool is a proxy; MCP
	// surfaces return it unmodified.
	MCP *mcp.CallToolResult
	// Err is the failure, when the call failed.
	Err *errs.Error
}

var workspacePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)

// Call runs one tool call through the pipeline.
func (p *Pipeline) Call(ctx context.Context, req Request) *Outcome {
	start := time.Now()
	ctx, span := p.tracer.Start(ctx, "tools/call "+req.Tool, oteltrace.WithSpanKind(oteltrace.SpanKindServer))
	defer span.End()
	o := &Outcome{RequestID: ulid.Make().String(), Workspace: DefaultWorkspace}
	o.Err = p.run(ctx, req, o)
	defer p.annotate(span, req, o)
	if o.Err != nil && o.Err.Code == errs.Internal {
		p.log.Error("tool call failed", "tool", req.Tool, "request_id", o.RequestID, "err", o.Err)
		o.Err = &errs.Error{Code: errs.Internal, Message: fmt.Sprintf("internal error (request %s)", o.RequestID), Err: o.Err.Err}
	}
	if p.traces != nil {
		rec := trace.Record{
			RequestID: o.RequestID, Surface: req.Surface, Tool: req.Tool,
			SessionID: o.SessionID, Workspace: o.Workspace, StartedAt: start,
			Duration: time.Since(start), Outcome: trace.OK,
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
	return o
}

// annotate records the call on its span: the tool, where it runs, the
// session and workspace, the outcome.
func (p *Pipeline) annotate(span oteltrace.Span, req Request, o *Outcome) {
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

func (p *Pipeline) run(ctx context.Context, req Request, o *Outcome) (err *errs.Error) {
	t, ok := p.reg.Lookup(req.Tool)
	if !ok {
		return errs.E(errs.NotFound, "unknown tool %q", req.Tool)
	}
	o.Tool = t
	args, e := p.decode(req.Args)
	if e != nil {
		return e
	}
	explicitWS, e := p.resolveContext(ctx, args, o)
	if e != nil {
		return e
	}
	if t.SelfValidating {
		// The handler validates (see registry.Tool.SelfValidating).
	} else if verr := t.Validate(args); verr != nil {
		return errs.E(errs.BadRequest, "invalid arguments for %s: %s", req.Tool, schemaMessage(verr))
	}
	// Only valid calls create sessions: bad input writes nothing.
	if e := p.bindSession(ctx, req.Transport, explicitWS, o); e != nil {
		return e
	}
	raw, merr := json.Marshal(args)
	if merr != nil {
		return errs.From(fmt.Errorf("re-encode arguments: %w", merr))
	}
	call := &registry.Call{Args: raw, Workspace: o.Workspace, SessionID: o.SessionID, RequestID: o.RequestID}
	value, herr := p.execute(ctx, t, call)
	if herr != nil {
		e := errs.From(herr)
		if e.Op == "" {
			e.Op = req.Tool
		}
		return e
	}
	if r, ok := value.(*mcp.CallToolResult); ok {
		o.MCP = r
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

// decode bounds and decodes the raw arguments into a JSON object.
func (p *Pipeline) decode(raw json.RawMessage) (map[string]any, *errs.Error) {
	if len(raw) > p.maxArgs {
		return nil, errs.E(errs.BadRequest, "arguments are %d bytes; the limit is %d bytes", len(raw), p.maxArgs)
	}
	if !utf8.Valid(raw) {
		return nil, errs.E(errs.BadRequest, "arguments are not valid UTF-8")
	}
	if hasLoneSurrogate(raw) {
		return nil, errs.E(errs.BadRequest, "arguments contain an unpaired UTF-16 surrogate escape, which is not valid Unicode")
	}
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, errs.E(errs.BadRequest, "arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errs.E(errs.BadRequest, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	// A top-level null means "not given": clients generated from schemas
	// often send every optional property.
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return m, nil
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

// resolveContext removes seed 000's "context", "workspaceContext" and
// top-level "sessionId" from args and resolves the named session and the
// workspace with seed 000's precedence: workspaceContext.workspaceId,
// context.workspaceId, the session's workspace, then "default". It only
// reads; explicit reports whether the caller named the workspace.
func (p *Pipeline) resolveContext(ctx context.Context, args map[string]any, o *Outcome) (explicit bool, _ *errs.Error) {
	cctx, e := contextObject(args, "context")
	if e != nil {
		return false, e
	}
	wctx, e := contextObject(args, "workspaceContext")
	if e != nil {
		return false, e
	}
	top, e := stringField(args, "", "sessionId")
	if e != nil {
		return false, e
	}
	delete(args, "context")
	delete(args, "workspaceContext")
	delete(args, "sessionId")

	sid, e := stringField(cctx, "context", "sessionId")
	if e != nil {
		return false, e
	}
	if sid == "" {
		sid = top
	}
	o.SessionID = sid
	ws, e := stringField(wctx, "workspaceContext", "workspaceId")
	if e != nil {
		return false, e
	}
	field := "workspaceContext.workspaceId"
	if ws == "" {
		ws, e = stringField(cctx, "context", "workspaceId")
		if e != nil {
			return false, e
		}
		field = "context.workspaceId"
	}
	explicit = ws != ""
	if ws == "" && sid != "" && p.sessions != nil {
		sws, ok, err := p.sessions.Workspace(ctx, sid)
		if err != nil {
			return false, errs.From(fmt.Errorf("look up session workspace: %w", err))
		}
		if ok {
			ws = sws
		}
	}
	if ws == "" {
		ws = DefaultWorkspace
	}
	if !workspacePattern.MatchString(ws) {
		return false, errs.Invalid(field, "workspace id %q must be 1-128 characters of letters, digits and . _ : @ - starting with a letter or digit", ws)
	}
	o.Workspace = ws
	return explicit, nil
}

// bindSession gives the call its session: the named one (created in the
// call's workspace if missing), else the transport's, else a new one.
func (p *Pipeline) bindSession(ctx context.Context, transport string, explicitWS bool, o *Outcome) *errs.Error {
	if p.sessions == nil {
		return nil
	}
	if o.SessionID != "" {
		ws, err := p.sessions.Ensure(ctx, o.SessionID, o.Workspace)
		if err != nil {
			return errs.From(err)
		}
		if !explicitWS {
			o.Workspace = ws
		}
		return nil
	}
	if transport == "" {
		id, err := p.sessions.NewSession(ctx, o.Workspace)
		if err != nil {
			return errs.From(fmt.Errorf("start session: %w", err))
		}
		o.SessionID = id
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	bs, ok := p.transports[transport]
	if !ok {
		id, err := p.sessions.NewSession(ctx, o.Workspace)
		if err != nil {
			return errs.From(fmt.Errorf("start session: %w", err))
		}
		if len(p.transports) >= maxTransports {
			clear(p.transports)
		}
		bs = boundSession{id: id, workspace: o.Workspace}
		p.transports[transport] = bs
	}
	o.SessionID = bs.id
	if !explicitWS {
		o.Workspace = bs.workspace // seed 000 step 3: the session's workspace
	}
	return nil
}

func contextObject(args map[string]any, name string) (map[string]any, *errs.Error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errs.Invalid(name, "must be an object, got %s", jsonKind(v))
	}
	return m, nil
}

func stringField(m map[string]any, parent, name string) (string, *errs.Error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errs.Invalid(strings.TrimPrefix(parent+"."+name, "."), "must be a string, got %s", jsonKind(v))
	}
	if len(s) > 200 {
		return "", errs.Invalid(strings.TrimPrefix(parent+"."+name, "."), "is %d bytes; the limit is 200", len(s))
	}
	return s, nil
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
