// Package registry holds every tool Nexus serves, local or downstream.
//
// A [Tool] is a static value: identity, description, JSON Schema (2020-12) for
// its input and optionally its output, where it comes from ([Source]), how its
// errors are rendered ([Family]) and the [Handler] that runs it. Local servers
// register their tools at start; surfaces read the registry and route calls
// through the pipeline, never to a handler directly.
package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access/principal"
)

// Source says where a tool runs.
type Source string

// Sources of tools.
const (
	Local Source = "local" // in process, a Nexus server package
	MCP   Source = "mcp"   // a downstream MCP server
)

// Family decides how a tool's results and errors are rendered (SPEC section 5).
type Family string

// Families of tools.
const (
	Valence   Family = "valence"   // substrate and vkb: {success:false, error_code, error_message}
	Tutor     Family = "tutor"     // tn_*: ADR-012 ErrorResponse
	Workbench Family = "workbench" // meta-tools: plain text with the seed's wording
	Vault     Family = "vault"     // the vault agents (seed 000's original): {success:false, error, code}
)

// BuiltinToolbox is the toolbox that holds Nexus's own local servers. The
// name is reserved: no downstream tool can be registered in it.
const BuiltinToolbox = "nexus"

// ID identifies a tool: the toolbox, the server in it and the tool's own name.
type ID struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
}

// Name is the tool's name on the flat surface: local tools keep their own
// name, downstream tools are "toolbox__server__tool".
//
// Name is one-to-one on the IDs [ID.Check] accepts: a toolbox or server name
// holds no "__" and neither starts nor ends with "_", so the first "__" of a
// flat name ends the toolbox and the next one ends the server (without that
// rule server "b" with tool "_c" and server "b_" with tool "c" would both be
// "a__b___c"); the built-in toolbox's tool names hold no "__", which every
// other flat name does.
func (id ID) Name() string {
	if id.Toolbox == BuiltinToolbox {
		return id.Tool
	}
	return id.Toolbox + "__" + id.Server + "__" + id.Tool
}

// Check reports why id cannot be registered: a toolbox or server name that
// is empty, holds "__", or starts or ends with "_"; an empty tool name; a
// built-in tool name with "__". Together they make flat names unique (see
// [ID.Name]). The MCP name rules of the flat name are checked on their own.
func (id ID) Check() error {
	if id.Tool == "" {
		return fmt.Errorf("registry: tool %+v has an empty name", id)
	}
	if id.Toolbox == BuiltinToolbox {
		if strings.Contains(id.Tool, "__") {
			return fmt.Errorf("registry: built-in tool name %q contains \"__\", which only downstream tools' flat names (toolbox__server__tool) hold", id.Tool)
		}
		return nil
	}
	for _, part := range []struct{ what, name string }{{"toolbox", id.Toolbox}, {"server", id.Server}} {
		if err := CheckName(part.what, part.name); err != nil {
			return fmt.Errorf("registry: tool %q of toolbox %q, server %q: %w", id.Tool, id.Toolbox, id.Server, err)
		}
	}
	return nil
}

// CheckName reports why name cannot be the name of a toolbox or server
// (what says which) in a flat name toolbox__server__tool: it is empty,
// holds "__", or starts or ends with "_".
func CheckName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", what)
	case strings.Contains(name, "__"):
		return fmt.Errorf("%s name %q contains \"__\"", what, name)
	case strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_"):
		return fmt.Errorf("%s name %q starts or ends with \"_\"", what, name)
	}
	return nil
}

// Call is what a handler receives: arguments already validated against the
// tool's input schema (defaults applied, context fields removed) and the
// resolved call context.
type Call struct {
	// Args is the validated argument object.
	Args json.RawMessage
	// Workspace is the resolved workspace id (never empty).
	Workspace string
	// SessionID is the session named by the caller, if any.
	SessionID string
	// RequestID identifies this call in traces and error responses.
	RequestID string
	// User is who the call acts as (the local user on stdio and a
	// loopback-only HTTP listener).
	User principal.Principal
}

// Handler runs a tool. It returns a JSON-marshalable result or an error; the
// pipeline renders both. Handlers do no schema validation of their own.
type Handler func(ctx context.Context, c *Call) (any, error)

// Bind adapts a typed function to a [Handler]: the validated arguments are
// decoded into In before fn runs.
func Bind[In any](fn func(ctx context.Context, c *Call, in In) (any, error)) Handler {
	return func(ctx context.Context, c *Call) (any, error) {
		var in In
		if len(c.Args) > 0 {
			if err := json.Unmarshal(c.Args, &in); err != nil {
				return nil, fmt.Errorf("decode arguments: %w", err)
			}
		}
		return fn(ctx, c, in)
	}
}

// Tool is one registry entry.
type Tool struct {
	ID           ID
	Description  string
	InputSchema  json.RawMessage // the tool's own input schema, a JSON object schema
	OutputSchema json.RawMessage // optional
	Source       Source
	Family       Family
	ReadOnly     bool
	Handler      Handler
	// Title, Annotations, Icons and ToolMeta (the listing's _meta) are listed
	// as given (downstream tools keep theirs).
	Title       string
	Annotations *mcp.ToolAnnotations
	Icons       []mcp.Icon
	ToolMeta    mcp.Meta
	// Plain lists a downstream tool under its own name (ID.Tool) rather
	// than its qualified name (ID.Name()), which still finds it: its
	// toolbox's naming is plain (config.NamingPlain).
	Plain bool
	// Meta marks a surface meta-tool (get_tools, open_toolbox, search_tools, use_tool):
	// only the bounded surface lists it (see [View]).
	Meta bool
	// SelfValidating tools check their own arguments (to give a contract's
	// exact error texts); the pipeline only checks that they are an object.
	SelfValidating bool

	schema   *compiled // the input schema's validator, compiled on first use
	listed   map[string]any
	encoded  json.RawMessage // listed, encoded once
	declared map[string]bool // which of ContextNames the tool's own schema declares
	sessions []string        // the tool's own arguments that name a conversation (SessionArgNames)
}

// Name is the name the tool is listed and called under: its own for a
// [Tool.Plain] tool, else [ID.Name].
func (t *Tool) Name() string {
	if t.Plain {
		return t.ID.Tool
	}
	return t.ID.Name()
}

// SessionArgNames are the argument names that name a conversation (a
// session) in Nexus's own tools: vkb's session_id and the tutor's sessionId.
// The pipeline checks that the caller may use the conversation such an
// argument names before the tool runs (SPEC section 8: a session id never
// grants access), so that no local tool can forget to.
var SessionArgNames = []string{"session_id", "sessionId"}

// SessionArgs returns the names of the tool's own top-level arguments that
// name a conversation: for a local tool, those of [SessionArgNames] its
// schema declares. Downstream tools have none (their sessions are theirs).
func (t *Tool) SessionArgs() []string { return t.sessions }

// ContextNames are the arguments seed 000 adds to every tool: Nexus reads
// and removes them, unless the tool's own schema declares them.
var ContextNames = []string{"context", "workspaceContext", "sessionId"}

// Declares reports whether the tool's own input schema declares the
// top-level property name (one of [ContextNames]); such a property belongs
// to the tool and is forwarded to it unchanged.
func (t *Tool) Declares(name string) bool { return t.declared[name] }

// Encoded is a handler's value that comes with its JSON encoding, which
// the pipeline takes as the call's result ([Outcome.Result] in
// internal/pipeline) instead of encoding Value again: a downstream server's
// tool result (Value a *mcp.CallToolResult) as the server sent it.
type Encoded struct {
	Value any
	JSON  json.RawMessage
}

// Validate checks args (a decoded JSON object) against the tool's own input
// schema after applying its defaults in place.
func (t *Tool) Validate(args map[string]any) error {
	c := t.schema.get()
	if c.input == nil {
		return nil
	}
	if c.quick == nil || c.quick.defaults {
		if err := c.input.ApplyDefaults(&args); err != nil {
			return err
		}
	}
	if c.quick != nil && c.quick.accepts(args) {
		return nil // what the full validator would say (quick.go)
	}
	return c.input.Validate(args)
}

// AppliesDefaults reports whether [Tool.Validate] may change the arguments it
// checks, by applying defaults of the tool's schema.
func (t *Tool) AppliesDefaults() bool {
	c := t.schema.get()
	return c.input != nil && (c.quick == nil || c.quick.defaults)
}

// CompileSchema compiles the tool's input schema now, if it was not yet,
// and returns why it does not compile (nil when it does). A tool's schema
// is compiled on its first call, not when it is registered: a catalog of
// thousands of tools (and Nexus's start) pays only for those called. A
// schema that does not compile validates nothing but the object its
// arguments must be; the tests of Nexus's own tools check that theirs
// compile.
func (t *Tool) CompileSchema() error { return t.schema.get().err }

// compiled is a tool's input schema, compiled once, on first use.
type compiled struct {
	raw  json.RawMessage
	once sync.Once
	// input is nil when the schema could not be compiled (err says why):
	// only "object" is checked then.
	input *jsonschema.Resolved
	quick *quick // the schema's quick check (quick.go), nil outside its subset
	err   error
}

func (c *compiled) get() *compiled {
	if c == nil {
		return &compiled{}
	}
	c.once.Do(func() {
		s := new(jsonschema.Schema)
		err := json.Unmarshal(c.raw, s)
		if err == nil {
			c.input, err = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		}
		if err != nil {
			c.input, c.err = nil, fmt.Errorf("input schema: %w", err)
			return
		}
		c.quick = compileQuick(s)
	})
	return c
}

// ListedSchema is the input schema as surfaces list it: the tool's own schema
// plus seed 000's optional "context" and "workspaceContext" objects and the
// legacy top-level "sessionId", each where the tool's own schema does not
// declare that name (a declared one keeps the tool's definition).
func (t *Tool) ListedSchema() map[string]any { return t.listed }

// ListedSchemaJSON is [Tool.ListedSchema] encoded (once, when the tool was
// registered), for listings: encoding the map again for every surface and
// every tools/list sorted its keys each time.
func (t *Tool) ListedSchemaJSON() json.RawMessage { return t.encoded }

// ContextSchema is the schema of seed 000's "context" argument.
func ContextSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "Call context (seed 000). sessionId is the canonical session; workspaceId binds the workspace.",
		"properties": map[string]any{
			"sessionId":   map[string]any{"type": "string", "maxLength": 200},
			"workspaceId": map[string]any{"type": "string", "maxLength": 200},
		},
	}
}

// WorkspaceContextSchema is the schema of seed 000's "workspaceContext" argument.
func WorkspaceContextSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "Workspace binding; takes precedence over context.workspaceId.",
		"properties": map[string]any{
			"workspaceId": map[string]any{"type": "string", "maxLength": 200},
		},
	}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ValidName reports whether name follows the MCP rule for tool names (1-128
// letters, digits and _ . -), as every tool Nexus lists must.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Registry is the set of tools, safe for concurrent use. Local servers add
// their tools at start; downstream servers replace theirs whenever their
// tool list changes, and subscribers ([Registry.OnChange]) hear about it.
type Registry struct {
	mu        sync.RWMutex
	tools     map[string]*Tool   // by the name surfaces list (Tool.Name)
	qualified map[string]*Tool   // Plain tools by their qualified name (ID.Name)
	extras    map[string]*extras // by "toolbox/server" (extras.go)
	listeners []func()
	updated   []func(toolbox, server, uri string) // OnResourceUpdated
	local     []LocalTemplate                     // AddLocalTemplate
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{tools: map[string]*Tool{}, qualified: map[string]*Tool{}, extras: map[string]*extras{}}
}

// prepare checks t and compiles its schemas.
func prepare(t *Tool) error {
	name := t.ID.Name()
	if err := t.ID.Check(); err != nil {
		return err
	}
	if t.ID.Toolbox == BuiltinToolbox && t.Source != Local {
		return fmt.Errorf("registry: tool %q of server %q: toolbox %q is reserved for Nexus's own (local) servers", t.ID.Tool, t.ID.Server, BuiltinToolbox)
	}
	if !namePattern.MatchString(name) {
		return fmt.Errorf("registry: tool name %q does not follow the MCP name rules", name)
	}
	if t.Handler == nil {
		return fmt.Errorf("registry: tool %q has no handler", name)
	}
	var listed map[string]any
	if err := json.Unmarshal(t.InputSchema, &listed); err != nil {
		return fmt.Errorf("registry: tool %q input schema: %w", name, err)
	}
	if listed["type"] != "object" {
		return fmt.Errorf("registry: tool %q input schema must have type object", name)
	}
	// Compiled on first use; a downstream server's schema that does not
	// compile is still listed as given, and the server validates its own
	// arguments.
	t.schema = &compiled{raw: t.InputSchema}
	props, _ := listed["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		listed["properties"] = props
	}
	// A tool that declares one of the context names owns it: the property is
	// listed with the tool's own definition and forwarded unchanged.
	t.declared = map[string]bool{}
	for _, name := range ContextNames {
		if _, ok := props[name]; ok {
			t.declared[name] = true
		}
	}
	t.sessions = nil
	if t.Source == Local {
		for _, name := range SessionArgNames {
			if _, ok := props[name]; ok {
				t.sessions = append(t.sessions, name)
			}
		}
	}
	for name, schema := range map[string]map[string]any{
		"context":          ContextSchema(),
		"workspaceContext": WorkspaceContextSchema(),
		"sessionId": {"type": "string", "maxLength": 200,
			"description": "Session of the call (seed 000, legacy); context.sessionId takes precedence."},
	} {
		if !t.declared[name] {
			props[name] = schema
		}
	}
	t.listed = listed
	encoded, err := json.Marshal(listed)
	if err != nil {
		return fmt.Errorf("registry: tool %q input schema: %w", name, err)
	}
	t.encoded = encoded
	return nil
}

// Add registers t. It fails on a duplicate name, an invalid name or a
// schema that is not a JSON object of type "object" (the schema itself is
// compiled on first use: [Tool.CompileSchema]).
func (r *Registry) Add(t Tool) error {
	if err := prepare(&t); err != nil {
		return err
	}
	return r.addPrepared([]Tool{t})
}

// addPrepared adds tools that passed prepare, all or none (a duplicate name
// adds none), and notifies the listeners once.
func (r *Registry) addPrepared(tools []Tool) error {
	r.mu.Lock()
	seen := map[string]bool{}
	for i := range tools {
		name := tools[i].Name()
		if other, dup := r.tools[name]; dup {
			r.mu.Unlock()
			return collision(&tools[i], other)
		}
		if seen[name] {
			r.mu.Unlock()
			return fmt.Errorf("registry: duplicate tool %q", name)
		}
		seen[name] = true
	}
	for i := range tools {
		r.tools[tools[i].Name()] = &tools[i]
	}
	r.mu.Unlock()
	r.notify()
	return nil
}

// ReplaceServer atomically replaces every tool of the server {toolbox,
// server} with tools (which must all belong to it). Tools that fail
// [Registry.Add]'s checks are left out and reported; the others are served.
// The built-in toolbox is not a downstream one: replacing a server of it is
// an error that changes nothing.
func (r *Registry) ReplaceServer(toolbox, server string, tools []Tool) []error {
	if toolbox == BuiltinToolbox {
		return []error{fmt.Errorf("registry: toolbox %q is reserved for Nexus's own (local) servers; server %q cannot replace its tools", BuiltinToolbox, server)}
	}
	var errs []error
	prepared := make(map[string]*Tool, len(tools))
	for i := range tools {
		t := tools[i]
		if t.ID.Toolbox != toolbox || t.ID.Server != server {
			errs = append(errs, fmt.Errorf("registry: tool %q does not belong to %s/%s", t.ID.Name(), toolbox, server))
			continue
		}
		if err := prepare(&t); err != nil {
			errs = append(errs, err)
			continue
		}
		if t.Plain && strings.Contains(t.ID.Tool, "__") {
			errs = append(errs, fmt.Errorf("registry: tool %q of %s/%s cannot keep its own name: it holds \"__\", which only qualified names (toolbox__server__tool) hold", t.ID.Tool, toolbox, server))
			continue
		}
		if _, dup := prepared[t.Name()]; dup {
			errs = append(errs, fmt.Errorf("registry: duplicate tool %q", t.Name()))
			continue
		}
		prepared[t.Name()] = &t
	}
	r.mu.Lock()
	for name, t := range r.tools {
		if t.ID.Toolbox == toolbox && t.ID.Server == server {
			delete(r.tools, name)
			delete(r.qualified, t.ID.Name())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(prepared)) {
		t := prepared[name]
		if other, taken := r.tools[name]; taken {
			errs = append(errs, collision(t, other))
			continue
		}
		r.tools[name] = t
		if t.Plain {
			r.qualified[t.ID.Name()] = t
		}
	}
	r.mu.Unlock()
	r.notify()
	return errs
}

// OnChange registers fn to be called after every change of the tool set
// (or of the downstream servers' prompts and resources: [Registry.ReplaceExtras]).
// fn runs on the changing goroutine, without the registry's lock held.
func (r *Registry) OnChange(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, fn)
}

func (r *Registry) notify() {
	r.mu.RLock()
	ls := slices.Clone(r.listeners)
	r.mu.RUnlock()
	for _, fn := range ls {
		fn()
	}
}

// Lookup returns the tool served under the flat name, if any.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	if !ok {
		t, ok = r.qualified[name]
	}
	return t, ok
}

// collision is why tool t cannot be served: other has its name.
func collision(t, other *Tool) error {
	if !t.Plain && !other.Plain {
		return fmt.Errorf("registry: duplicate tool %q", t.Name())
	}
	owner := func(x *Tool) string {
		if x.ID.Toolbox == BuiltinToolbox {
			return "Nexus's own tool"
		}
		return fmt.Sprintf("tool %q of server %q (toolbox %q)", x.ID.Tool, x.ID.Server, x.ID.Toolbox)
	}
	return fmt.Errorf("registry: naming collision: %s and %s are both named %q on the surfaces; give one of their toolboxes naming: prefixed, or filter one out (toolFilters)",
		owner(t), owner(other), t.Name())
}

// LookupID returns the tool with the given identity, if any.
func (r *Registry) LookupID(id ID) (*Tool, bool) {
	t, ok := r.Lookup(id.Name())
	if !ok || t.ID != id {
		return nil, false
	}
	return t, true
}

// View is which tools a surface lists. What each surface lists is decided
// here, by [Tool.In], and nowhere else.
type View int

// Views of the registry.
const (
	// Tools is every tool under its own name, the meta-tools excepted: the
	// flat MCP surface, the agents surface's modes, REST and its OpenAPI
	// document, the CLI, docs/tools.md.
	Tools View = iota
	// MetaTools is the bounded surface's meta-tools (get_tools,
	// open_toolbox, use_tool); the tools a bounded session discovers are
	// listed by that session, under the names it discovered them by.
	MetaTools
)

// In reports whether a surface of view v lists t.
func (t *Tool) In(v View) bool { return t.Meta == (v == MetaTools) }

// Listed returns the tools a surface of view v lists, sorted by flat name.
func (r *Registry) Listed(v View) []*Tool {
	all := r.List()
	out := all[:0]
	for _, t := range all {
		if t.In(v) {
			out = append(out, t)
		}
	}
	return out
}

// List returns every tool sorted by flat name, whatever lists it; a surface
// lists [Registry.Listed] instead.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}
