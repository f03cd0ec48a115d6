// Package agents is the agents MCP surface (seed 000, MCP server path; SPEC
// section 2): one tool per agent, where an agent is a server (the local
// substrate and vkb, and every downstream server), with a required "mode"
// argument naming the agent's tool and the mode's own arguments beside it.
package mcpkit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Key identifies a server.
type Key struct{ Toolbox, Server string }

// Agent is a server under its agent name.
type Agent struct {
	Name string
	Key
}

// Names assigns agent names to servers, given in a stable order (local
// servers first, then configured toolboxes in file order):
//
//  1. the server name with "_" replaced by "-", when no other server has
//     that name (local servers always keep theirs);
//  2. otherwise "<toolbox>-<server>" (again with "-" for "_"), as for the
//     same server name in toolboxes "dev" and "prod": "dev-api", "prod-api";
//  3. a numeric suffix "-2", "-3", ... if that still collides.
//
// The same configuration always yields the same names.
func Names(keys []Key) []Agent {
	base := func(k Key) string { return strings.ReplaceAll(k.Server, "_", "-") }
	count := map[string]int{}
	reserved := map[string]bool{}
	for _, k := range keys {
		if k.Toolbox == registry.BuiltinToolbox {
			reserved[base(k)] = true
		} else {
			count[base(k)]++
		}
	}
	taken := map[string]bool{}
	out := make([]Agent, 0, len(keys))
	for _, k := range keys {
		name := base(k)
		if k.Toolbox != registry.BuiltinToolbox && (count[name] > 1 || reserved[name]) {
			name = strings.ReplaceAll(k.Toolbox, "_", "-") + "-" + name
		}
		if taken[name] {
			for i := 2; ; i++ {
				if n := fmt.Sprintf("%s-%d", name, i); !taken[n] {
					name = n
					break
				}
			}
		}
		taken[name] = true
		out = append(out, Agent{Name: name, Key: k})
	}
	return out
}

// Catalog lists agents and their modes from the registry and the configured
// toolboxes.
type Catalog struct {
	Registry  *registry.Registry
	Toolboxes registry.Toolboxes // may be nil
}

// Agents returns every agent: the local servers, then each configured
// downstream server (whether or not it is connected yet).
func (c *Catalog) Agents() []Agent {
	var keys []Key
	seen := map[Key]bool{}
	add := func(k Key) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	var local []Key
	for _, t := range c.Registry.Listed(registry.Tools) {
		if t.ID.Toolbox == registry.BuiltinToolbox {
			local = append(local, Key{t.ID.Toolbox, t.ID.Server})
		}
	}
	slices.SortStableFunc(local, func(a, b Key) int { return strings.Compare(a.Server, b.Server) })
	for _, k := range local {
		add(k)
	}
	if c.Toolboxes != nil {
		for _, tb := range c.Toolboxes.Toolboxes() {
			for _, s := range tb.Servers {
				add(Key{tb.Name, s})
			}
		}
	}
	// Servers with tools but no configuration entry (registered directly).
	for _, t := range c.Registry.Listed(registry.Tools) {
		if t.ID.Toolbox != registry.BuiltinToolbox {
			add(Key{t.ID.Toolbox, t.ID.Server})
		}
	}
	return Names(keys)
}

// Agent returns the agent of the given name.
func (c *Catalog) Agent(name string) (Agent, bool) {
	for _, a := range c.Agents() {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Modes returns the tools of an agent's server, sorted by name.
func (c *Catalog) Modes(a Agent) []*registry.Tool {
	var out []*registry.Tool
	for _, t := range c.Registry.Listed(registry.Tools) {
		if t.ID.Toolbox == a.Toolbox && t.ID.Server == a.Server {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(x, y *registry.Tool) int { return strings.Compare(x.ID.Tool, y.ID.Tool) })
	return out
}

// SplitName splits "agent_rest" on the first underscore.
func SplitName(name string) (agent, rest string, ok bool) {
	return strings.Cut(name, "_")
}

// BuiltinDescription describes the built-in toolbox in listings and
// instructions.
const BuiltinDescription = "Nexus's own servers (knowledge substrate, conversation memory, tutor)"

// Builtin is the built-in toolbox: Nexus's own servers.
func (c *Catalog) Builtin() registry.Toolbox {
	tb := registry.Toolbox{Name: registry.BuiltinToolbox, Description: BuiltinDescription}
	seen := map[string]bool{}
	for _, t := range c.Registry.Listed(registry.Tools) {
		if t.ID.Toolbox == registry.BuiltinToolbox && !seen[t.ID.Server] {
			seen[t.ID.Server] = true
			tb.Servers = append(tb.Servers, t.ID.Server)
		}
	}
	return tb
}

// AllToolboxes lists the built-in toolbox, then the configured ones in
// configuration order.
func (c *Catalog) AllToolboxes() []registry.Toolbox {
	out := []registry.Toolbox{c.Builtin()}
	if c.Toolboxes != nil {
		out = append(out, c.Toolboxes.Toolboxes()...)
	}
	return out
}

// ToolboxesFor lists the toolboxes of [Catalog.AllToolboxes] the caller of
// ctx may know of ([pipeline.Pipeline.ToolboxVisible]): a toolbox the
// access rules deny them is not described to them anywhere.
func (c *Catalog) ToolboxesFor(ctx context.Context, p *pipeline.Pipeline) []registry.Toolbox {
	all := c.AllToolboxes()
	out := all[:0:0]
	for _, tb := range all {
		if p.ToolboxVisible(ctx, tb.Name) {
			out = append(out, tb)
		}
	}
	return out
}

// instructions are a surface's initialize instructions for the caller of
// ctx: intro (what Nexus is, from [Options.Instructions]), then how the
// surface serves tools, then the toolboxes of the catalog the caller may
// know of, one line each. Without an intro there are none; without a
// catalog, only the intro.
func (o Options) instructions(ctx context.Context, p *pipeline.Pipeline, how string) string {
	if o.Instructions == "" || o.Catalog == nil {
		return o.Instructions
	}
	var b strings.Builder
	b.WriteString(o.Instructions)
	b.WriteString("\n\n")
	b.WriteString(how)
	b.WriteString("\n")
	tbs := o.Catalog.ToolboxesFor(ctx, p)
	for i, tb := range tbs {
		line := fmt.Sprintf("- %s: %s (servers: %s)\n", tb.Name, tb.Description, strings.Join(tb.Servers, ", "))
		if b.Len()+len(line) > OverviewBudget-200 {
			// A catalog of thousands: the rest are named by get_tools'
			// overview and found by search_tools (bounded surface).
			fmt.Fprintf(&b, "- and %d more toolboxes\n", len(tbs)-i)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

// OverviewBudget is the most, in bytes, that a surface's initialize
// instructions and the bounded surface's get_tools overview take: about
// 2,000 tokens at 4 bytes a token, whatever the catalog's size (issue 27).
const OverviewBudget = 8000
