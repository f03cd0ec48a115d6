// Package substrate is the Valence knowledge substrate (seed 002,
// valence-substrate; SPEC section 3): beliefs with confidence dimensions,
// entities linked with roles, supersession chains, lexical relevance blended
// with confidence and recency, and deterministic tension detection.
//
// Tools by file: belief.go (belief_create, belief_supersede, belief_get,
// belief_query), belief_batch.go (belief_create_batch), entity.go
// (entity_get, entity_search), tension.go (tension_list, tension_resolve;
// detection in detect.go).
package substrate

import (
	stdembed "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// ServerName is the server (and agent) name of the substrate tools.
const ServerName = "substrate"

//go:embed schemas/*.json
var schemas stdembed.FS

// Server holds the substrate's dependencies.
type Server struct {
	st    *store.Store
	log   *slog.Logger
	now   func() time.Time
	stats *textsearch.Stats
	// analyzed is the belief count at PostgreSQL's last ANALYZE by this
	// server (see analyzeGrown).
	analyzed atomic.Int64
	// ftsIndexed counts the beliefs this server put in SQLite's full-text
	// index since it last compacted it (see compactIndex).
	ftsIndexed atomic.Int64
	// vectors, when set, makes belief_query hybrid (hybrid.go).
	vectors *embed.Index
	// judged, when set (tests), runs after a create has judged its
	// candidates and before its write transaction.
	judged func()
	// groupWrite, when set (tests), runs on SQLite when a group of
	// creates is about to be written, before the queue is taken.
	groupWrite func()
	// judge, when set (UseJudge), asks a chat model about the tensions
	// the rules flag (judge.go).
	judge *modelJudge
	// cache keeps stored beliefs' rows and analyses across creates
	// (beliefcache.go).
	cache *beliefCache
	// scopes keeps stored beliefs' scopes for tension windows on SQLite
	// (scopecache.go).
	scopes *scopeCache
	// group queues creates to write together on SQLite (group.go).
	group writeGroup
	// common holds PostgreSQL's statistics of the most common terms
	// (common_pg.go).
	common commonTerms
}

// New returns a substrate server over st.
func New(st *store.Store, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{st: st, log: log, now: store.Now, stats: textsearch.NewStats(statsTTL, maxStats, log),
		cache: newBeliefCache(beliefCacheSize), scopes: newScopeCache(scopeCacheSize)}
}

// Close ends the server's background work (the refreshes of its search
// statistics) and the model judge's calls in flight; call it before closing
// the store.
func (s *Server) Close() {
	s.judge.close()
	s.stats.Close()
}

// Register adds the substrate tools to reg.
func (s *Server) Register(reg *registry.Registry) error {
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.tools()...); err != nil {
		return err
	}
	// A belief as a resource: nexus://beliefs/ID is belief_get of ID.
	return reg.AddLocalTemplate(registry.LocalTemplate{
		Template: &mcp.ResourceTemplate{URITemplate: BeliefURITemplate, Name: "belief", Title: "Belief",
			Description: "A belief of the knowledge base with its details (belief_get), in the caller's workspace: nexus://beliefs/ID.",
			MIMEType:    "application/json"},
		Tool: "belief_get",
		Args: func(v map[string]string) (map[string]any, error) {
			if v["id"] == "" {
				return nil, fmt.Errorf("a belief URI names the belief: nexus://beliefs/ID")
			}
			return map[string]any{"belief_id": v["id"]}, nil
		},
	})
}

// BeliefURITemplate is the URI template of a belief as a resource.
const BeliefURITemplate = "nexus://beliefs/{id}"

// tools are the substrate's tools, in the order they are documented.
func (s *Server) tools() []registry.Def {
	return []registry.Def{
		{Name: "belief_query", Description: "Search beliefs by content, domain, or entity. Relevance blends lexical match, confidence and recency (relevance_score).",
			ReadOnly: true, Family: registry.Valence, Schema: schema("belief_query"), Handler: registry.Handle(s.beliefQuery)},
		{Name: "belief_create", Description: "Create a new belief with optional entity links. Entities are created if they do not exist; tensions with existing beliefs are detected and returned.",
			Family: registry.Valence, Schema: schema("belief_create"), Handler: registry.Handle(notifying(s, s.beliefCreate))},
		{Name: "belief_create_batch", Description: "Create up to 1,000 beliefs in one transaction, each as belief_create's arguments plus an optional external_id (a belief whose external_id the workspace already holds is not created again: its result says existing): per-item results (the belief's id and its tensions, or why it was left out); each belief is checked for tensions with the store and with the beliefs before it in the batch.",
			Family: registry.Valence, Schema: schema("belief_create_batch"), Handler: registry.Handle(notifying(s, s.beliefCreateBatch))},
		{Name: "belief_supersede", Description: "Replace an old belief with a new one, maintaining history.",
			Family: registry.Valence, Schema: schema("belief_supersede"), Handler: registry.Handle(notifying(s, s.beliefSupersede))},
		{Name: "belief_get", Description: "Get a single belief by ID with full details.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("belief_get"), Handler: registry.Handle(s.beliefGet)},
		{Name: "entity_get", Description: "Get entity details with optional beliefs.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("entity_get"), Handler: registry.Handle(s.entityGet)},
		{Name: "entity_search", Description: "Find entities by name or type.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("entity_search"), Handler: registry.Handle(s.entitySearch)},
		{Name: "tension_list", Description: "List contradictions/tensions between beliefs.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("tension_list"), Handler: registry.Handle(s.tensionList)},
		{Name: "tension_resolve", Description: "Mark a tension as resolved with explanation.",
			Family: registry.Valence, Schema: schema("tension_resolve"), Handler: registry.Handle(s.tensionResolve)},
	}
}

// schema is the embedded input schema of tool name (schemas/<name>.json);
// without one, registration fails ("no input schema").
func schema(name string) json.RawMessage {
	b, _ := schemas.ReadFile("schemas/" + name + ".json")
	return b
}
