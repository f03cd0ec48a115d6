// Package substrate is the Valence knowledge substrate (seed 002,
// valence-substrate; SPEC section 3): beliefs with confidence dimensions,
// entities linked with roles, supersession chains, lexical relevance blended
// with confidence and recency, and deterministic tension detection.
//
// Tools by file: belief.go (belief_create, belief_supersede, belief_get,
// belief_query), entity.go (entity_get, entity_search), tension.go
// (tension_list, tension_resolve; detection in detect.go).
package substrate

import (
	"embed"
	"fmt"
	"log/slog"
	"time"

	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// ServerName is the server (and agent) name of the substrate tools.
const ServerName = "substrate"

//go:embed schemas/*.json
var schemas embed.FS

// Server holds the substrate's dependencies.
type Server struct {
	st    *store.Store
	log   *slog.Logger
	now   func() time.Time
	stats *textsearch.Stats
}

// New returns a substrate server over st.
func New(st *store.Store, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{st: st, log: log, now: store.Now, stats: textsearch.NewStats(statsTTL, maxStats, log)}
}

type toolDef struct {
	name, description string
	readOnly          bool
	handler           registry.Handler
}

// Register adds the substrate tools to reg.
func (s *Server) Register(reg *registry.Registry) error {
	defs := []toolDef{
		{"belief_query", "Search beliefs by content, domain, or entity. Relevance blends lexical match, confidence and recency (relevance_score).", true, registry.Bind(s.beliefQuery)},
		{"belief_create", "Create a new belief with optional entity links. Entities are created if they do not exist; tensions with existing beliefs are detected and returned.", false, registry.Bind(s.beliefCreate)},
		{"belief_supersede", "Replace an old belief with a new one, maintaining history.", false, registry.Bind(s.beliefSupersede)},
		{"belief_get", "Get a single belief by ID with full details.", true, registry.Bind(s.beliefGet)},
		{"entity_get", "Get entity details with optional beliefs.", true, registry.Bind(s.entityGet)},
		{"entity_search", "Find entities by name or type.", true, registry.Bind(s.entitySearch)},
		{"tension_list", "List contradictions/tensions between beliefs.", true, registry.Bind(s.tensionList)},
		{"tension_resolve", "Mark a tension as resolved with explanation.", false, registry.Bind(s.tensionResolve)},
	}
	for _, d := range defs {
		schema, err := schemas.ReadFile("schemas/" + d.name + ".json")
		if err != nil {
			return fmt.Errorf("substrate: schema of %s: %w", d.name, err)
		}
		err = reg.Add(registry.Tool{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: d.name},
			Description: d.description,
			InputSchema: schema,
			Source:      registry.Local,
			Family:      registry.Valence,
			ReadOnly:    d.readOnly,
			Handler:     d.handler,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
