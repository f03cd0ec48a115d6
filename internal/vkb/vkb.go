// Package vkb is Valence conversation memory (seed 002, valence-vkb; SPEC
// section 3): sessions and their exchanges over the one conversation model
// ([conversation.Store]), behavioural patterns, and insights that become
// substrate beliefs.
//
// Tools by file: session.go (session_start, session_end, session_get,
// session_list, session_find_by_room), exchange.go (exchange_add,
// exchange_list), pattern.go (pattern_record, pattern_reinforce,
// pattern_list, pattern_search), insight.go (insight_extract, insight_list).
package vkb

import (
	"embed"
	"fmt"
	"log/slog"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// ServerName is the server (and agent) name of the vkb tools.
const ServerName = "vkb"

//go:embed schemas/*.json
var schemas embed.FS

// Server holds the vkb's dependencies.
type Server struct {
	st   *store.Store
	conv *conversation.Store
	sub  *substrate.Server
	log  *slog.Logger
	now  func() time.Time
}

// New returns a vkb server over the conversation store and the substrate
// (for insights).
func New(st *store.Store, conv *conversation.Store, sub *substrate.Server, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{st: st, conv: conv, sub: sub, log: log, now: store.Now}
}

// Register adds the vkb tools to reg.
func (s *Server) Register(reg *registry.Registry) error {
	defs := []struct {
		name, description string
		readOnly          bool
		handler           registry.Handler
	}{
		{"session_start", "Begin a new conversation session.", false, registry.Bind(s.sessionStart)},
		{"session_end", "Close a session with summary and themes.", false, registry.Bind(s.sessionEnd)},
		{"session_get", "Get session details.", true, registry.Bind(s.sessionGet)},
		{"session_list", "List sessions with filters, newest first.", true, registry.Bind(s.sessionList)},
		{"session_find_by_room", "Find a session by external room ID (for chat platform integrations); the newest match, active sessions first.", true, registry.Bind(s.sessionFindByRoom)},
		{"exchange_add", "Record a conversation turn.", false, registry.Bind(s.exchangeAdd)},
		{"exchange_list", "Get exchanges from a session, in order.", true, registry.Bind(s.exchangeList)},
		{"pattern_record", "Record a new behavioral pattern.", false, registry.Bind(s.patternRecord)},
		{"pattern_reinforce", "Strengthen an existing pattern: confidence c becomes c + (1 - c) x 0.1 (at most 0.99); the supporting session is added to the evidence once.", false, registry.Bind(s.patternReinforce)},
		{"pattern_list", "List patterns with filters.", true, registry.Bind(s.patternList)},
		{"pattern_search", "Search patterns by their descriptions (lexical relevance).", true, registry.Bind(s.patternSearch)},
		{"insight_extract", "Extract an insight from a session to create a belief (source: the session), with tension detection.", false, registry.Bind(s.insightExtract)},
		{"insight_list", "List the insights of a session or of the workspace, newest first, with their beliefs.", true, registry.Bind(s.insightList)},
	}
	for _, d := range defs {
		schema, err := schemas.ReadFile("schemas/" + d.name + ".json")
		if err != nil {
			return fmt.Errorf("vkb: schema of %s: %w", d.name, err)
		}
		if err := reg.Add(registry.Tool{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: ServerName, Tool: d.name},
			Description: d.description, InputSchema: schema, Source: registry.Local, Family: registry.Valence,
			ReadOnly: d.readOnly, Handler: d.handler,
		}); err != nil {
			return err
		}
	}
	return nil
}
