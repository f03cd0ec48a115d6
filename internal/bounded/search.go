package bounded

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/toolsearch"
)

// search_tools (issue 27) ranks every tool the caller may use for what
// they ask: Nexus's own, those of the toolboxes opened here, and those of
// the configured toolboxes not opened yet, as their servers last listed
// them (the workbench keeps each server's listing: registry.Listings). The
// ranking is toolsearch's, lexical; with an embedding model configured it
// is fused with a vector ranking (hybrid.go). Each hit's name is callable
// at once, as get_tools' names are.

const searchToolsSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 32000, "description": "What you want to do, in your own words (\"convert a Word document to PDF\", \"weather forecast for a city\")"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "How many tools at most"},
    "toolbox": {"type": "string", "minLength": 1, "description": "Search this toolbox only"}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// DefaultSearchLimit is how many hits search_tools returns when the call
// does not say.
const DefaultSearchLimit = 10

type searchToolsIn struct {
	Query   string `json:"query"`
	Limit   int    `json:"limit"`
	Toolbox string `json:"toolbox"`
}

// searchHit is one tool search_tools found.
type searchHit struct {
	// Name is the name to call it by (agent_mode, as get_tools names it).
	Name        string `json:"name"`
	Description string `json:"description"`
	// Params are its parameters, required ones marked with "*".
	Params string `json:"params,omitempty"`
	// Flat is its name on the flat surface, in REST and nexus call.
	Flat    string  `json:"flat"`
	Toolbox string  `json:"toolbox"`
	Server  string  `json:"server"`
	Tool    string  `json:"tool"`
	Source  string  `json:"source"`
	Score   float64 `json:"score"`
}

// searchResult is search_tools' result.
type searchResult struct {
	// Query is the request searched for (its first 200 characters).
	Query string      `json:"query"`
	Tools []searchHit `json:"tools"`
	// Searched is how many tools were ranked (those the caller may use).
	Searched int `json:"searched"`
	// Ranking is "lexical" or "hybrid".
	Ranking string `json:"ranking"`
	// Unindexed are toolboxes none of whose tools are known yet: no
	// server of theirs has been listed (open_toolbox lists them).
	Unindexed []string `json:"unindexed,omitempty"`
	Usage     string   `json:"usage"`
}

// searchIndex is the surface's index of every tool, rebuilt when the
// registry or the kept listings change (on the first search after).
type searchIndex struct {
	dirty atomic.Bool // the registry changed since the index was built

	build sync.Mutex // one build at a time
	mu    sync.Mutex
	cur   *catalogIndex
}

// catalogIndex is one build of the index: the tools ranked and, for each,
// what a hit says of it.
type catalogIndex struct {
	ix       *toolsearch.Index
	entries  []searchEntry  // by the index's tool order
	byName   map[string]int // entries by flat name
	listings uint64         // the listings' version it was built from
}

// searchEntry is a tool of the index.
type searchEntry struct {
	tool   *registry.Tool
	name   string // callable (agent_mode)
	params string
	text   string // what is embedded of it (hybrid.go)
}

// index is the current index, rebuilt first when it is out of date.
func (s *Surface) index() *catalogIndex {
	lst, _ := s.cat.Toolboxes.(registry.Listings)
	var version uint64
	if lst != nil {
		version = lst.ListingsVersion()
	}
	s.search.mu.Lock()
	cur := s.search.cur
	s.search.mu.Unlock()
	if cur != nil && !s.search.dirty.Load() && cur.listings == version {
		return cur
	}
	s.search.build.Lock()
	defer s.search.build.Unlock()
	s.search.mu.Lock()
	cur = s.search.cur
	s.search.mu.Unlock()
	if cur != nil && !s.search.dirty.Load() && cur.listings == version {
		return cur // another search built it
	}
	s.search.dirty.Store(false)
	next := s.buildIndex(lst, version)
	s.search.mu.Lock()
	s.search.cur = next
	s.search.mu.Unlock()
	return next
}

// buildIndex indexes the registry's tools and the kept listings' (a tool
// in both counts once, as the registry has it).
func (s *Surface) buildIndex(lst registry.Listings, version uint64) *catalogIndex {
	reg := s.p.Registry()
	tools := reg.Listed(registry.Tools)
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		seen[t.ID.Name()] = true
	}
	if lst != nil {
		for _, t := range lst.Listed() {
			if !seen[t.ID.Name()] {
				seen[t.ID.Name()] = true
				tools = append(tools, &t)
			}
		}
	}
	agents := map[mcpkit.Key]string{}
	for _, a := range s.cat.Agents() {
		agents[a.Key] = a.Name
	}
	describe := map[string]string{}
	servers := map[mcpkit.Key]string{}
	for _, tb := range s.cat.AllToolboxes() {
		describe[tb.Name] = tb.Description
		for name, d := range tb.ServerDescriptions {
			servers[mcpkit.Key{Toolbox: tb.Name, Server: name}] = d
		}
	}
	ci := &catalogIndex{listings: version, entries: make([]searchEntry, 0, len(tools)), byName: make(map[string]int, len(tools))}
	docs := make([]toolsearch.Tool, 0, len(tools))
	for _, t := range tools {
		key := mcpkit.Key{Toolbox: t.ID.Toolbox, Server: t.ID.Server}
		agent, ok := agents[key]
		if !ok {
			continue
		}
		params, pretty := toolParams(t.InputSchema)
		doc := toolsearch.Tool{Name: t.ID.Name(), Tool: t.ID.Tool, Toolbox: t.ID.Toolbox, Server: t.ID.Server,
			Title: t.Title, Description: t.Description, Params: params,
			ServerDescription: servers[key], ToolboxDescription: describe[t.ID.Toolbox]}
		ci.byName[doc.Name] = len(docs)
		docs = append(docs, doc)
		e := searchEntry{tool: t, name: agent + "_" + t.ID.Tool, params: pretty}
		if s.o.Embedder != nil {
			e.text = embedText(doc) // only a hybrid search needs it
		}
		ci.entries = append(ci.entries, e)
	}
	ci.ix = toolsearch.New(docs)
	return ci
}

// toolParams are the parameters of a tool's own input schema (without what
// Nexus adds to it for listing), for search, and as a hit lists them:
// names, required ones marked "*".
func toolParams(raw json.RawMessage) ([]toolsearch.Param, string) {
	var schema map[string]any
	if json.Unmarshal(raw, &schema) != nil {
		return nil, ""
	}
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil, ""
	}
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	params := make([]toolsearch.Param, 0, len(names))
	var pretty strings.Builder
	for i, name := range names {
		if name == "context" {
			continue // seed 000's context, which every agent tool has
		}
		desc := ""
		if p, ok := props[name].(map[string]any); ok {
			desc, _ = p["description"].(string)
		}
		params = append(params, toolsearch.Param{Name: name, Description: desc, Required: required[name]})
		if i > 0 && pretty.Len() > 0 {
			pretty.WriteString(", ")
		}
		pretty.WriteString(name)
		if required[name] {
			pretty.WriteString("*")
		}
	}
	return params, pretty.String()
}

// searchTools is search_tools' handler.
func (s *Surface) searchTools(ctx context.Context, _ *registry.Call, in searchToolsIn) (*searchResult, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, errs.Invalid("query", "is empty: say what you want to do")
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if in.Toolbox != "" && !s.knownToolbox(ctx, in.Toolbox) {
		var names []string
		for _, tb := range s.cat.ToolboxesFor(ctx, s.p) {
			names = append(names, tb.Name)
		}
		return nil, errs.E(errs.NotFound, "Toolbox '%s' not found. Available toolboxes: %s", in.Toolbox, strings.Join(names, ", "))
	}
	ci := s.index()
	// Which tools the caller may use: a toolbox hidden from them, or a
	// tool, is not there for them (one verdict per toolbox).
	toolboxes := map[string]bool{}
	searched := 0
	keep := func(i int) bool {
		t := ci.entries[i].tool
		if in.Toolbox != "" && t.ID.Toolbox != in.Toolbox {
			return false
		}
		ok, seen := toolboxes[t.ID.Toolbox]
		if !seen {
			ok = s.p.ToolboxVisible(ctx, t.ID.Toolbox)
			toolboxes[t.ID.Toolbox] = ok
		}
		return ok && s.p.Visible(ctx, t)
	}
	for i := range ci.entries {
		if keep(i) {
			searched++
		}
	}
	hits, ranking := s.rank(ctx, ci, q, limit, keep)
	shown := q
	if r := []rune(q); len(r) > 200 {
		shown = string(r[:200]) + "…"
	}
	res := &searchResult{Query: shown, Tools: make([]searchHit, 0, len(hits)), Searched: searched, Ranking: ranking}
	for _, h := range hits {
		e := ci.entries[h.index]
		res.Tools = append(res.Tools, searchHit{Name: e.name, Flat: e.tool.Name(), Description: firstLine(e.tool.Description), Params: e.params,
			Toolbox: e.tool.ID.Toolbox, Server: e.tool.ID.Server, Tool: e.tool.ID.Tool, Source: string(e.tool.Source),
			Score: math.Round(h.score*100) / 100})
	}
	if lst, ok := s.cat.Toolboxes.(registry.Listings); ok {
		for _, tb := range lst.Unlisted() {
			if (in.Toolbox == "" || in.Toolbox == tb) && s.p.ToolboxVisible(ctx, tb) {
				res.Unindexed = append(res.Unindexed, tb)
			}
		}
	}
	switch {
	case len(res.Tools) == 0:
		res.Usage = "No tool fits this request well enough (the score threshold is documented in docs/surfaces.md). Say it in other words, " +
			"or see the toolboxes with get_tools."
	default:
		res.Usage = "Call a tool by its name at once (an MCP session; REST and nexus call take its flat name), passing context {sessionId, workspaceId} " +
			"beside its arguments; get_tools [\"name\", ...] gives their full schemas and adds them to this session's tools/list."
	}
	if len(res.Unindexed) > 0 {
		res.Usage += " Toolboxes in unindexed have never been listed: open_toolbox lists one and makes it searchable."
	}
	return res, nil
}

// knownToolbox reports whether the caller may know of toolbox.
func (s *Surface) knownToolbox(ctx context.Context, toolbox string) bool {
	for _, tb := range s.cat.ToolboxesFor(ctx, s.p) {
		if tb.Name == toolbox {
			return true
		}
	}
	return false
}

// ranked is a hit of the index: its entry and its score.
type ranked struct {
	index int
	score float64
}

// lexical ranks ci's tools for q with toolsearch.
func lexical(ci *catalogIndex, q string, limit int, keep func(int) bool) []ranked {
	hits := ci.ix.Search(q, limit, func(t *toolsearch.Tool) bool { return keep(ci.byName[t.Name]) })
	out := make([]ranked, len(hits))
	for i, h := range hits {
		out[i] = ranked{index: ci.byName[h.Tool.Name], score: h.Score}
	}
	return out
}
