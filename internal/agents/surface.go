package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// New returns the agents surface: an MCP server with one tool per agent of
// o.Catalog. Its tools follow the registry; when a client initializes, every
// configured toolbox is opened so that downstream agents appear (announced
// with tools/list_changed), and the session's tools/list requests wait for
// that opening (mcpkit.OpenOnInitialize), so that the first lists them.
func New(p *pipeline.Pipeline, o mcpkit.Options) (*mcp.Server, error) {
	cat := o.Catalog
	if cat == nil {
		return nil, fmt.Errorf("agents: a catalog is required")
	}
	instance := ulid.Make().String()
	o.Instance = instance
	s := o.Server(p, "Each server is one tool, an agent named after the server; its mode argument names the server's tool, "+
		"whose own arguments go beside mode. Toolboxes and their servers:")
	sy := &syncer{s: s, p: p, cat: cat, surface: o.Surface, instance: instance, listed: map[string]string{}}
	p.Registry().OnChange(sy.sync)
	sy.sync()
	mcpkit.Track(s, p, instance, nil)
	s.AddReceivingMiddleware(legacyNames(cat))
	// Each caller sees the agents and modes they may use.
	s.AddReceivingMiddleware(mcpkit.ListOnly(sy.visible))
	if open := o.OpenAll(); open != nil {
		s.AddReceivingMiddleware(mcpkit.OpenOnInitialize(open))
	}
	return s, nil
}

// legacyNames routes a call of "agent_<suffix>" (older flows) to "agent".
// The suffix named a vault (seed 000's agentName_<vaultSuffix>; it may
// hold underscores): when the mode called takes a "vault" argument and the
// call gives none, the suffix is passed as that argument.
func legacyNames(cat *mcpkit.Catalog) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					if _, known := cat.Agent(p.Name); !known {
						if agent, suffix, ok := mcpkit.SplitName(p.Name); ok {
							if a, known := cat.Agent(agent); known {
								p.Name = agent
								p.Arguments = withVault(cat, a, p.Arguments, suffix)
							}
						}
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// withVault adds "vault": suffix to args when the mode they call takes a
// vault and they name none.
func withVault(cat *mcpkit.Catalog, a mcpkit.Agent, args json.RawMessage, suffix string) json.RawMessage {
	if suffix == "" {
		return args
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	if _, given := m["vault"]; given {
		return args
	}
	mode, _ := m["mode"].(string)
	for _, t := range cat.Modes(a) {
		if t.ID.Tool != mode {
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(t.InputSchema, &schema) == nil && schema.Properties["vault"] != nil {
			m["vault"] = suffix
			if b, err := json.Marshal(m); err == nil {
				return b
			}
		}
	}
	return args
}

// syncer keeps one tool per agent with modes, following the registry.
type syncer struct {
	s                 *mcp.Server
	p                 *pipeline.Pipeline
	cat               *mcpkit.Catalog
	surface, instance string

	mu     sync.Mutex
	listed map[string]string // agent name -> listing fingerprint
}

func (sy *syncer) sync() {
	sy.mu.Lock()
	defer sy.mu.Unlock()
	current := map[string]string{}
	tools := map[string]*mcp.Tool{}
	for _, a := range sy.cat.Agents() {
		modes := sy.cat.Modes(a)
		if len(modes) == 0 {
			continue
		}
		t := Tool(a, modes)
		b, _ := json.Marshal(t)
		current[a.Name], tools[a.Name] = string(b), t
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
	for _, name := range slices.Sorted(maps.Keys(current)) {
		if sy.listed[name] != current[name] {
			a, _ := sy.cat.Agent(name)
			sy.s.AddTool(tools[name], sy.handler(a))
		}
	}
	sy.listed = current
}

// Tool is the listing of an agent: mode (required, one of the agent's
// tools), sessionId (required in the listing, seed 000's legacy), context,
// and the modes' own arguments beside them.
func Tool(a mcpkit.Agent, modes []*registry.Tool) *mcp.Tool {
	names := make([]any, len(modes))
	var doc strings.Builder
	fmt.Fprintf(&doc, "Agent %q (server %q in toolbox %q). Choose the operation with mode and pass its arguments beside mode. Modes:\n", a.Name, a.Server, a.Toolbox)
	for i, m := range modes {
		names[i] = m.ID.Tool
		desc, _, _ := strings.Cut(m.Description, "\n")
		fmt.Fprintf(&doc, "- %s(%s): %s\n", m.ID.Tool, argList(m), desc)
	}
	return &mcp.Tool{
		Name:        a.Name,
		Description: strings.TrimSpace(doc.String()),
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"mode":             map[string]any{"type": "string", "enum": names, "description": "The operation to run"},
				"sessionId":        map[string]any{"type": "string", "description": "Session id (the hub creates one when the context has none)"},
				"context":          registry.ContextSchema(),
				"workspaceContext": registry.WorkspaceContextSchema(),
			},
			"required":             []any{"mode", "sessionId"},
			"additionalProperties": true,
		},
	}
}

// argList renders a mode's arguments, required ones marked with "*".
func argList(t *registry.Tool) string {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal(t.InputSchema, &schema)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		if slices.Contains(schema.Required, name) {
			name += "*"
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

// visible is an agent's listing as the caller of ctx may see it: its modes
// the caller may use; nil when there are none.
func (sy *syncer) visible(ctx context.Context, t *mcp.Tool) *mcp.Tool {
	a, ok := sy.cat.Agent(t.Name)
	if !ok {
		return t
	}
	all := sy.cat.Modes(a)
	modes := sy.modes(ctx, a)
	switch len(modes) {
	case len(all):
		return t
	case 0:
		return nil
	}
	return Tool(a, modes)
}

// modes are the modes of agent a the caller of ctx may use.
func (sy *syncer) modes(ctx context.Context, a mcpkit.Agent) []*registry.Tool {
	all := sy.cat.Modes(a)
	out := all[:0:0]
	for _, t := range all {
		if sy.p.Visible(ctx, t) {
			out = append(out, t)
		}
	}
	return out
}

func (sy *syncer) handler(a mcpkit.Agent) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = mcpkit.WithCaller(ctx, req)
		modes := sy.modes(ctx, a)
		// What the client sent is not a call of a tool yet: a request the
		// surface cannot map to one is refused through the pipeline, which
		// traces it and renders the error in the agent's tools' family.
		refuse := func(e *errs.Error) (*mcp.CallToolResult, error) {
			r := mcpkit.CallRequest(sy.surface, mcpkit.Transport(sy.instance, req), a.Name, req.Params.Arguments, req.Params.Meta)
			r.Refused = e
			if len(modes) > 0 {
				r.RenderAs = modes[0].ID.Name()
			}
			return mcpkit.Result(sy.p.Call(ctx, r)), nil
		}
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return refuse(errs.E(errs.BadRequest, "arguments must be a JSON object: %v", err))
			}
		}
		m, given := args["mode"]
		mode, isString := m.(string)
		switch {
		case given && !isString:
			return refuse(errs.Invalid("mode", "must be a string: one of %s", strings.Join(modeNames(modes), ", ")))
		case mode == "":
			return refuse(errs.Invalid("mode", "is required: one of %s", strings.Join(modeNames(modes), ", ")))
		}
		t, ok := sy.p.Registry().LookupID(registry.ID{Toolbox: a.Toolbox, Server: a.Server, Tool: mode})
		if !ok || !t.In(registry.Tools) {
			return refuse(errs.Invalid("mode", "unknown mode %q for agent %q: one of %s", mode, a.Name, strings.Join(modeNames(modes), ", ")))
		}
		delete(args, "mode")
		raw, _ := json.Marshal(args)
		o := sy.p.Call(ctx, mcpkit.CallRequest(sy.surface, mcpkit.Transport(sy.instance, req), t.ID.Name(), raw, req.Params.Meta))
		return mcpkit.Result(o), nil
	}
}

func modeNames(ts []*registry.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID.Tool
	}
	return out
}
