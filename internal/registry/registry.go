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
	"regexp"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
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
)

// BuiltinToolbox is the toolbox that holds Nexus's own local servers.
const BuiltinToolbox = "nexus"

// ID identifies a tool: the toolbox, the server in it and the tool's own name.
type ID struct {
	Toolbox string `json:"toolbox"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
}

// Name is the tool's name on the flat surface: local tools keep their own
// name, downstream tools are "toolbox__server__tool".
func (id ID) Name() string {
	if id.Toolbox == BuiltinToolbox {
		return id.Tool
	}
	return id.Toolbox + "__" + id.Server + "__" + id.Tool
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

	input  *jsonschema.Resolved
	listed map[string]any
}

// Validate checks args (a decoded JSON object) against the tool's own input
// schema after applying its defaults in place.
func (t *Tool) Validate(args map[string]any) error {
	if err := t.input.ApplyDefaults(&args); err != nil {
		return err
	}
	return t.input.Validate(args)
}

// ListedSchema is the input schema as surfaces list it: the tool's own schema
// plus seed 000's optional "context" and "workspaceContext" objects and the
// legacy top-level "sessionId".
func (t *Tool) ListedSchema() map[string]any { return t.listed }

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

// Registry is the set of tools, safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
}

// New returns an empty registry.
func New() *Registry { return &Registry{tools: map[string]*Tool{}} }

// Add registers t, resolving its schemas. It fails on a duplicate name, an
// invalid name or a schema that does not compile.
func (r *Registry) Add(t Tool) error {
	name := t.ID.Name()
	if !namePattern.MatchString(name) {
		return fmt.Errorf("registry: tool name %q does not follow the MCP name rules", name)
	}
	if t.Handler == nil {
		return fmt.Errorf("registry: tool %q has no handler", name)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(t.InputSchema, &s); err != nil {
		return fmt.Errorf("registry: tool %q input schema: %w", name, err)
	}
	if s.Type != "object" {
		return fmt.Errorf("registry: tool %q input schema must have type object", name)
	}
	res, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return fmt.Errorf("registry: tool %q input schema: %w", name, err)
	}
	t.input = res
	var listed map[string]any
	if err := json.Unmarshal(t.InputSchema, &listed); err != nil {
		return fmt.Errorf("registry: tool %q input schema: %w", name, err)
	}
	props, _ := listed["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		listed["properties"] = props
	}
	props["context"] = ContextSchema()
	props["workspaceContext"] = WorkspaceContextSchema()
	props["sessionId"] = map[string]any{"type": "string", "maxLength": 200,
		"description": "Session of the call (seed 000, legacy); context.sessionId takes precedence."}
	t.listed = listed

	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("registry: duplicate tool %q", name)
	}
	r.tools[name] = &t
	return nil
}

// Lookup returns the tool served under the flat name, if any.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool sorted by flat name.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tool) int {
		switch an, bn := a.ID.Name(), b.ID.Name(); {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	})
	return out
}
