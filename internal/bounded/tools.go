package bounded

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

const getToolsSchema = `{
  "type": "object",
  "properties": {
    "tools": {
      "description": "Tools to get schemas for: {\"agent\": [\"mode\", ...]} (grouped, recommended) or [\"agent_mode\", ...]. Omit for an overview.",
      "anyOf": [
        {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string", "minLength": 1}}},
        {"type": "array", "items": {"type": "string", "minLength": 1}}
      ]
    }
  },
  "additionalProperties": false
}`

const openToolboxSchema = `{
  "type": "object",
  "properties": {
    "toolbox": {"type": "string", "minLength": 1, "description": "Name of the toolbox to open"}
  },
  "required": ["toolbox"],
  "additionalProperties": false
}`

// useToolSchema is seed 003's schema, plus "name" accepted in place of
// tool.tool (newer Workbench clients send it).
const useToolSchema = `{
  "type": "object",
  "required": ["tool"],
  "properties": {
    "tool": {
      "type": "object",
      "required": ["toolbox", "server", "tool"],
      "properties": {
        "toolbox": {"type": "string", "minLength": 1, "description": "Name of the toolbox containing the tool"},
        "server": {"type": "string", "minLength": 1, "description": "Name of the MCP server providing the tool"},
        "tool": {"type": "string", "minLength": 1, "description": "Name of the tool to invoke (original downstream tool name)"},
        "name": {"type": "string", "minLength": 1, "description": "Accepted in place of tool (not both)"}
      },
      "additionalProperties": false,
      "description": "Structured identifier for the tool to invoke"
    },
    "arguments": {"type": "object", "description": "Arguments to pass to the downstream tool", "default": {}}
  },
  "additionalProperties": false
}`

// tools are the bounded surface's meta-tools, listed by this surface only.
func (s *Surface) tools() []registry.Def {
	return []registry.Def{
		{
			Name:        "get_tools",
			Description: "Discover tools on demand. With no tools asked for: an overview of the agents, their modes and the toolboxes. With tools ({agent: [modes]} or [\"agent_mode\", ...]): their full schemas, named agent_mode; each becomes callable by that name in this session.",
			ReadOnly:    true,
			Family:      registry.Workbench,
			Meta:        true,
			Schema:      json.RawMessage(getToolsSchema),
			Handler:     registry.Handle(s.getTools),
		},
		{
			Name:        "open_toolbox",
			Description: "Open a toolbox: connect its MCP servers (idempotent) and list its tools with their schemas. Call use_tool with {toolbox, server, tool} from this list.",
			Family:      registry.Workbench,
			Meta:        true,
			Schema:      json.RawMessage(openToolboxSchema),
			Handler:     registry.Handle(s.openToolbox),
		},
		{
			Name: "search_tools",
			Description: "Find tools for what you want to do: ranks every tool you may use (Nexus's own, and those of every toolbox, opened or not) " +
				"for a query in your own words, best first. Each hit's name is callable at once, as get_tools' names are; no hits means nothing fits.",
			ReadOnly: true,
			Family:   registry.Workbench,
			Meta:     true,
			Schema:   json.RawMessage(searchToolsSchema),
			Handler:  registry.Handle(s.searchTools),
		},
		{
			Name:           "use_tool",
			Description:    "Execute a tool from an opened toolbox by its structured identifier {toolbox, server, tool}; the result is the tool's own, unmodified.",
			Family:         registry.Workbench,
			Meta:           true,
			SelfValidating: true,
			Schema:         json.RawMessage(useToolSchema),
			Handler:        registry.Handle(s.useTool),
		},
	}
}

// --- get_tools ---------------------------------------------------------------

type modeInfo struct {
	Mode        string `json:"mode"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type agentInfo struct {
	Name      string     `json:"name"`
	Toolbox   string     `json:"toolbox"`
	Server    string     `json:"server"`
	Connected bool       `json:"connected"`
	Modes     []modeInfo `json:"modes"`
}

type toolboxInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Servers     []string `json:"servers,omitempty"`
	// ServerCount and ToolCount summarise a toolbox when its servers are
	// not listed (a catalog too large for the overview).
	ServerCount int `json:"server_count,omitempty"`
	ToolCount   int `json:"tool_count,omitempty"`
}

// overview is get_tools' result when no tools are asked for.
type overview struct {
	Agents    []agentInfo   `json:"agents"`
	Toolboxes []toolboxInfo `json:"toolboxes"`
	// MoreToolboxes counts the toolboxes left out to keep the overview
	// within its budget.
	MoreToolboxes int `json:"more_toolboxes,omitempty"`
}

type toolSchema struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Toolbox     string         `json:"toolbox"`
	Server      string         `json:"server"`
	Tool        string         `json:"tool"`
}

// discovered is get_tools' result when tools are asked for.
type discovered struct {
	Tools   []toolSchema `json:"tools"`
	Unknown []string     `json:"unknown,omitempty"`
}

// getToolsResult is get_tools' result: the overview or the tools discovered
// (exactly one is set; a nil embedded pointer adds no fields), then usage.
type getToolsResult struct {
	*overview
	*discovered
	Usage string `json:"usage"`
}

type getToolsIn struct {
	// Tools is {agent: [modes]} or [agent_mode, ...]; see parseWanted.
	Tools json.RawMessage `json:"tools"`
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func (s *Surface) getTools(ctx context.Context, _ *registry.Call, in getToolsIn) (*getToolsResult, error) {
	wanted, err := parseWanted(in.Tools)
	if err != nil {
		return nil, err
	}
	if len(wanted) == 0 {
		return s.overview(ctx), nil
	}
	sess := sessionFrom(ctx)
	out := &discovered{Tools: []toolSchema{}}
	opened := map[string]bool{}
	for _, w := range wanted {
		t, ok := s.lookup(ctx, w.agent, w.mode, opened)
		if !ok {
			out.Unknown = append(out.Unknown, w.agent+"_"+w.mode)
			continue
		}
		name := w.agent + "_" + w.mode
		out.Tools = append(out.Tools, toolSchema{Name: name, Description: t.Description, InputSchema: t.ListedSchema(),
			Toolbox: t.ID.Toolbox, Server: t.ID.Server, Tool: t.ID.Tool})
		if sess != nil && len(name) <= 128 {
			s.discover(sess, name, t)
		}
	}
	usage := "Call each tool by its name, passing context {sessionId, workspaceId} beside its arguments."
	if sess != nil && sess.sessionless {
		usage = "This request has no session (sessionless protocol), so nothing is kept between requests: these tools are not added to tools/list. " +
			"Call each by its name all the same (resolved again on every request), or with use_tool {toolbox, server, tool}; " +
			"pass context {sessionId, workspaceId} beside its arguments to keep one conversation."
	}
	return &getToolsResult{discovered: out, Usage: usage}, nil
}

// lookup is the tool get_tools names agent_mode by: mode of the catalog's
// agent, a tool the Tools view lists and the caller may see; a downstream
// agent's toolbox is opened when its tools are not known yet (once per
// toolbox and call: opened records the toolboxes tried).
func (s *Surface) lookup(ctx context.Context, agent, mode string, opened map[string]bool) (*registry.Tool, bool) {
	a, ok := s.cat.Agent(agent)
	if !ok || !s.p.ToolboxVisible(ctx, a.Toolbox) {
		return nil, false
	}
	t, ok := s.p.Registry().LookupID(registry.ID{Toolbox: a.Toolbox, Server: a.Server, Tool: mode})
	if !ok && a.Toolbox != registry.BuiltinToolbox && s.cat.Toolboxes != nil && !opened[a.Toolbox] {
		// A downstream agent's tools are known once its toolbox is open.
		opened[a.Toolbox] = true
		if _, err := s.cat.Toolboxes.Open(ctx, a.Toolbox); err == nil {
			t, ok = s.p.Registry().LookupID(registry.ID{Toolbox: a.Toolbox, Server: a.Server, Tool: mode})
		}
	}
	if !ok || !t.In(registry.Tools) || !s.p.Visible(ctx, t) {
		return nil, false
	}
	return t, true
}

// named is the tool get_tools makes callable as name ("agent_mode"), for a
// sessionless request, which keeps nothing get_tools discovered.
func (s *Surface) named(ctx context.Context, name string) (*registry.Tool, bool) {
	agent, mode, ok := mcpkit.SplitName(name)
	if !ok || agent == "" || mode == "" || len(name) > 128 {
		return nil, false
	}
	return s.lookup(ctx, agent, mode, map[string]bool{})
}

type want struct{ agent, mode string }

// parseWanted reads get_tools' "tools": grouped {agent: [modes]} or a list
// of "agent_mode" names (split on the first underscore).
func parseWanted(raw json.RawMessage) ([]want, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var out []want
	var grouped map[string][]string
	if err := json.Unmarshal(raw, &grouped); err == nil {
		agentsSorted := make([]string, 0, len(grouped))
		for a := range grouped {
			agentsSorted = append(agentsSorted, a)
		}
		sort.Strings(agentsSorted)
		for _, a := range agentsSorted {
			for _, m := range grouped[a] {
				out = append(out, want{a, m})
			}
		}
		return out, nil
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, errs.Invalid("tools", "must be {\"agent\": [\"mode\", ...]} or [\"agent_mode\", ...]")
	}
	for _, n := range names {
		a, m, ok := mcpkit.SplitName(n)
		if !ok || a == "" || m == "" {
			return nil, errs.Invalid("tools", "%q is not an agent_mode name", n)
		}
		out = append(out, want{a, m})
	}
	return out, nil
}

// --- open_toolbox ------------------------------------------------------------

// openedTool is a tool as open_toolbox lists it: the tool as its server
// lists it (its own name, title, description, schemas, annotations, icons
// and _meta; the input schema as every surface lists it, see
// registry.Tool.ListedSchema), plus where it is.
type openedTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description"`
	InputSchema  map[string]any       `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []mcp.Icon           `json:"icons,omitempty"`
	Meta         mcp.Meta             `json:"_meta,omitempty"`
	Toolbox      string               `json:"toolbox"`
	Server       string               `json:"server"`
}

// openResult is open_toolbox's result: the MCP Workbench's, where
// servers_connected is the number of servers connected, plus their names
// (server_names) and why the others are not (server_errors).
type openResult struct {
	Toolbox          string            `json:"toolbox"`
	Description      string            `json:"description"`
	ServersConnected int               `json:"servers_connected"`
	ServerNames      []string          `json:"server_names"`
	ServerErrors     map[string]string `json:"server_errors,omitempty"`
	Tools            []openedTool      `json:"tools"`
}

type openToolboxIn struct {
	Toolbox string `json:"toolbox"`
}

func (s *Surface) openToolbox(ctx context.Context, _ *registry.Call, in openToolboxIn) (*openResult, error) {
	res := &openResult{Toolbox: in.Toolbox, ServerNames: []string{}, Tools: []openedTool{}}
	var tools []*registry.Tool
	if !s.p.ToolboxVisible(ctx, in.Toolbox) || (in.Toolbox != registry.BuiltinToolbox && !s.configured(in.Toolbox)) {
		// A toolbox denied to the caller is missing to them, word for word.
		var names []string
		for _, tb := range s.cat.ToolboxesFor(ctx, s.p) {
			names = append(names, tb.Name)
		}
		return nil, errs.E(errs.NotFound, "Toolbox '%s' not found. Available toolboxes: %s", in.Toolbox, strings.Join(names, ", "))
	}
	if in.Toolbox == registry.BuiltinToolbox {
		b := s.builtin()
		res.Description, res.ServerNames = b.Description, b.Servers
		for _, t := range s.p.Registry().Listed(registry.Tools) {
			if t.ID.Toolbox == registry.BuiltinToolbox {
				tools = append(tools, t)
			}
		}
	} else {
		o, err := s.cat.Toolboxes.Open(ctx, in.Toolbox)
		if err != nil {
			// Unknown, or none of its servers connects.
			return nil, err
		}
		s.opened(ctx, in.Toolbox)
		res.Description, res.ServerNames, res.ServerErrors, tools = o.Description, o.ServersConnected, o.ServerErrors, o.Tools
	}
	if res.ServerNames == nil {
		res.ServerNames = []string{}
	}
	res.ServersConnected = len(res.ServerNames)
	for _, t := range tools {
		if !s.p.Visible(ctx, t) {
			continue
		}
		res.Tools = append(res.Tools, openedTool{Name: t.ID.Tool, Title: t.Title, Description: t.Description,
			InputSchema: t.ListedSchema(), OutputSchema: t.OutputSchema, Annotations: t.Annotations, Icons: t.Icons, Meta: t.ToolMeta,
			Toolbox: t.ID.Toolbox, Server: t.ID.Server})
	}
	return res, nil
}

// configured reports whether name is a configured (downstream) toolbox.
func (s *Surface) configured(name string) bool {
	if s.cat.Toolboxes == nil {
		return false
	}
	for _, tb := range s.cat.Toolboxes.Toolboxes() {
		if tb.Name == name {
			return true
		}
	}
	return false
}

// --- use_tool ----------------------------------------------------------------

// useTool follows seed 003's validation order and error texts: the shape of
// the request, then the toolbox (one the caller may know of and, in a
// session, has opened), the server (a server that did not connect is
// UNAVAILABLE with its connection error), the tool, and the arguments (a
// local tool's by the pipeline against its schema; a downstream tool's by
// its server alone, [pipeline.Request.Delegate]).
// useToolIn is use_tool's arguments as the schema describes them; useTool
// reads them from the call itself (parseUseTool), in seed 003's order.
type useToolIn struct {
	Tool      json.RawMessage `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// useTool's result is not its own (see registry.Def): it is the outcome of
// the tool it ran, which the pipeline adopts.
func (s *Surface) useTool(ctx context.Context, c *registry.Call, _ useToolIn) (any, error) {
	id, args, err := parseUseTool(c.Args)
	if err != nil {
		return nil, err
	}
	if !s.p.ToolboxVisible(ctx, id.Toolbox) || (id.Toolbox != registry.BuiltinToolbox && (!s.configured(id.Toolbox) || !s.isOpen(ctx, id.Toolbox))) {
		// Seed 003: the toolbox must be one the caller opened; one the
		// access rules deny them is missing to them, word for word.
		return nil, errs.E(errs.NotFound, "Toolbox '%s' not found", id.Toolbox)
	}
	var servers []string
	if id.Toolbox == registry.BuiltinToolbox {
		servers = s.builtin().Servers
	} else {
		for _, tb := range s.cat.Toolboxes.Toolboxes() {
			if tb.Name == id.Toolbox {
				servers = tb.Servers
			}
		}
	}
	if !slices.Contains(servers, id.Server) {
		return nil, errs.E(errs.NotFound, "Server '%s' not found in toolbox '%s'", id.Server, id.Toolbox)
	}
	t, ok := s.p.Registry().LookupID(id)
	if !ok && id.Toolbox != registry.BuiltinToolbox {
		// Opening is idempotent: it connects what is not connected yet (a
		// sessionless caller's toolbox, a server down since), and says why
		// a server is not.
		o, err := s.cat.Toolboxes.Open(ctx, id.Toolbox)
		if o == nil && err != nil {
			return nil, err
		}
		if !slices.Contains(o.ServersConnected, id.Server) {
			cause := o.ServerErrors[id.Server]
			if cause == "" {
				cause = "not connected"
			}
			return nil, errs.E(errs.Unavailable, "Failed to connect to MCP server '%s' (toolbox '%s'): %s", id.Server, id.Toolbox, cause)
		}
		t, ok = s.p.Registry().LookupID(id)
	}
	if !ok || !t.In(registry.Tools) {
		return nil, errs.E(errs.NotFound, "Tool '%s' not found in server '%s' (toolbox '%s')", id.Tool, id.Server, id.Toolbox)
	}
	// The tool's own call goes through the pipeline too (and is traced), in
	// this call's session and workspace, given beside the arguments: the
	// arguments reach the tool as given (a "context" the tool declares is
	// its own).
	// A downstream tool's arguments are its server's to check (seed 003:
	// "Validated by downstream tool's inputSchema"): they are forwarded
	// unchecked and unchanged, and its answer is use_tool's.
	o := s.p.Call(ctx, pipeline.Request{Tool: t.ID.Name(), Args: args, Surface: "use_tool",
		Context:  &pipeline.CallContext{SessionID: c.SessionID, WorkspaceID: c.Workspace},
		Delegate: t.Source == registry.MCP})
	// The tool's outcome is use_tool's: the pipeline adopts it, and every
	// surface renders it as that tool's (its result, or its error in its
	// family's shape).
	return o, nil
}

// parseUseTool checks use_tool's arguments with seed 003's messages and
// returns the tool's id and its arguments as sent (nil when absent).
func parseUseTool(raw json.RawMessage) (registry.ID, json.RawMessage, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return registry.ID{}, nil, errs.E(errs.BadRequest, "Invalid parameters: expected an object")
	}
	if err := unrecognized(root, "tool", "arguments"); err != nil {
		return registry.ID{}, nil, err
	}
	toolRaw, ok := root["tool"]
	if !ok {
		return registry.ID{}, nil, errs.E(errs.BadRequest, "Invalid parameters: Required: 'tool'")
	}
	var tool map[string]json.RawMessage
	if err := json.Unmarshal(toolRaw, &tool); err != nil || tool == nil {
		return registry.ID{}, nil, errs.E(errs.BadRequest, "Invalid parameters: 'tool' must be an object")
	}
	if err := unrecognized(tool, "toolbox", "server", "tool", "name"); err != nil {
		return registry.ID{}, nil, err
	}
	str := func(k string) (string, error) {
		v, ok := tool[k]
		if !ok {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", errs.E(errs.BadRequest, "Invalid tool identifier: %s must be a string", k)
		}
		return s, nil
	}
	var id registry.ID
	var err error
	if id.Toolbox, err = str("toolbox"); err != nil {
		return id, nil, err
	}
	if id.Server, err = str("server"); err != nil {
		return id, nil, err
	}
	if id.Tool, err = str("tool"); err != nil {
		return id, nil, err
	}
	name, err := str("name")
	if err != nil {
		return id, nil, err
	}
	_, hasTool := tool["tool"]
	_, hasName := tool["name"]
	if hasTool && hasName {
		return id, nil, errs.E(errs.BadRequest, "Invalid tool identifier: give either tool or name, not both")
	}
	if hasName {
		id.Tool = name
	}
	for _, f := range []struct{ field, v string }{{"toolbox", id.Toolbox}, {"server", id.Server}, {"tool", id.Tool}} {
		if f.v == "" {
			return id, nil, errs.E(errs.BadRequest, "Invalid tool identifier: %s cannot be empty", f.field)
		}
	}
	var args json.RawMessage
	if a, ok := root["arguments"]; ok && string(a) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(a, &obj); err != nil || obj == nil {
			return id, nil, errs.E(errs.BadRequest, "Invalid parameters: 'arguments' must be an object")
		}
		args = a
	}
	return id, args, nil
}

// unrecognized reports keys of m outside allowed, in Zod's words.
func unrecognized(m map[string]json.RawMessage, allowed ...string) error {
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	switch len(extra) {
	case 0:
		return nil
	case 1:
		return errs.E(errs.BadRequest, "Invalid parameters: Unrecognized key: '%s'", extra[0])
	}
	sort.Strings(extra)
	return errs.E(errs.BadRequest, "Invalid parameters: Unrecognized keys: '%s'", strings.Join(extra, "', '"))
}
