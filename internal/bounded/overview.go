package bounded

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// get_tools' overview stays within mcpkit.OverviewBudget (about 2,000
// tokens) whatever the catalog's size (issue 27). It is the first of these
// that fits:
//
//  1. every agent with its modes and their one-line descriptions (an agent
//     whose server is not connected here, with the modes of its kept
//     listing: connected false), and the toolboxes with their servers (a
//     small catalog);
//  2. the same without the modes' descriptions;
//  3. the toolboxes alone, each with how many servers and tools it has, as
//     many as fit (more_toolboxes counts the rest): search_tools finds the
//     tools themselves.
//
// The usage line says which it is and where to go next.

const (
	usageFull = "Ask get_tools for {\"agent\": [\"mode\"]} to get schemas; then call \"agent_mode\" directly, passing context {sessionId, workspaceId}. " +
		"search_tools {query} finds tools for what you want to do."
	usageToolboxes = "The catalog is too large to list every tool: find tools with search_tools {query} (or {query, toolbox}), " +
		"or list a toolbox's tools with open_toolbox; then call them by the names they give."
)

// overview is get_tools' result when no tools are asked for.
func (s *Surface) overview(ctx context.Context) *getToolsResult {
	ov := &overview{}
	// A server not connected here is described by its kept listing.
	ci := s.index()
	kept := map[mcpkit.Key][]*registry.Tool{}
	for _, e := range ci.entries {
		if e.tool.Handler == nil {
			k := mcpkit.Key{Toolbox: e.tool.ID.Toolbox, Server: e.tool.ID.Server}
			kept[k] = append(kept[k], e.tool)
		}
	}
	for _, a := range s.cat.Agents() {
		if !s.p.ToolboxVisible(ctx, a.Toolbox) {
			continue // a toolbox denied to this caller is not there for them
		}
		ai := agentInfo{Name: a.Name, Toolbox: a.Toolbox, Server: a.Server, Modes: []modeInfo{}}
		modes := s.cat.Modes(a)
		connected := len(modes) > 0
		if !connected {
			modes = kept[a.Key]
			slices.SortFunc(modes, func(x, y *registry.Tool) int { return strings.Compare(x.ID.Tool, y.ID.Tool) })
		}
		for _, t := range modes {
			if s.p.Visible(ctx, t) {
				ai.Modes = append(ai.Modes, modeInfo{Mode: t.ID.Tool, Name: a.Name + "_" + t.ID.Tool, Description: firstLine(t.Description)})
			}
		}
		if len(modes) > 0 && len(ai.Modes) == 0 {
			continue // every tool of the agent is hidden from this caller
		}
		ai.Connected = connected && len(ai.Modes) > 0
		ov.Agents = append(ov.Agents, ai)
	}
	tbs := s.cat.ToolboxesFor(ctx, s.p)
	for _, tb := range tbs {
		ov.Toolboxes = append(ov.Toolboxes, toolboxInfo{Name: tb.Name, Description: tb.Description, Servers: tb.Servers})
	}
	if fits(ov, usageFull) {
		return &getToolsResult{overview: ov, Usage: usageFull}
	}
	for i := range ov.Agents {
		for j := range ov.Agents[i].Modes {
			ov.Agents[i].Modes[j].Description = ""
		}
	}
	if fits(ov, usageFull) {
		return &getToolsResult{overview: ov, Usage: usageFull}
	}
	// The toolboxes alone, with their sizes (the index knows every tool,
	// listed or kept).
	servers, tools := map[string]int{}, map[string]int{}
	for _, e := range ci.entries {
		tools[e.tool.ID.Toolbox]++
	}
	for _, a := range s.cat.Agents() {
		servers[a.Toolbox]++
	}
	small := &overview{Agents: []agentInfo{}, Toolboxes: []toolboxInfo{}}
	for i, tb := range tbs {
		small.Toolboxes = append(small.Toolboxes, toolboxInfo{Name: tb.Name, Description: tb.Description,
			ServerCount: servers[tb.Name], ToolCount: tools[tb.Name]})
		if !fits(small, usageToolboxes) {
			small.Toolboxes = small.Toolboxes[:len(small.Toolboxes)-1]
			small.MoreToolboxes = len(tbs) - i
			break
		}
	}
	return &getToolsResult{overview: small, Usage: usageToolboxes}
}

// fits reports whether the overview with usage is within the budget (with
// room for more_toolboxes).
func fits(ov *overview, usage string) bool {
	b, _ := json.Marshal(getToolsResult{overview: ov, Usage: usage})
	return len(b) <= mcpkit.OverviewBudget-40
}
