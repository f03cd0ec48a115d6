// Package vkb is Valence conversation memory (seed 002, valence-vkb; SPEC
// section 3): sessions and their exchanges over the one conversation model
// ([conversation.Store]), behavioural patterns, and insights that become
// substrate beliefs.
//
// Tools by file: session.go (session_start, session_end, session_get,
// session_list, session_rename, session_delete, session_find_by_room), exchange.go (exchange_add,
// exchange_list), search.go (exchange_search), pattern.go (pattern_record, pattern_reinforce,
// pattern_list, pattern_search), insight.go (insight_extract, insight_list).
package vkb

import (
	"embed"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	return registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.tools()...)
}

// tools are the vkb's tools, in the order they are documented.
func (s *Server) tools() []registry.Def {
	destructive := true
	return []registry.Def{
		{Name: "session_start", Description: "Begin a new conversation session.",
			Family: registry.Valence, Schema: schema("session_start"), Handler: registry.Handle(s.sessionStart)},
		{Name: "session_end", Description: "Close a session with summary and themes.",
			Family: registry.Valence, Schema: schema("session_end"), Handler: registry.Handle(s.sessionEnd)},
		{Name: "session_get", Description: "Get session details.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("session_get"), Handler: registry.Handle(s.sessionGet)},
		{Name: "session_list", Description: "List sessions with filters, newest first.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("session_list"), Handler: registry.Handle(s.sessionList)},
		{Name: "session_rename", Description: "Set a session's title (trimmed, 1-200 characters). Only the session's owner (or an admin) may rename it.",
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true},
			Family:      registry.Valence, Schema: schema("session_rename"), Handler: registry.Handle(s.sessionRename)},
		{Name: "session_delete", Description: "Delete a session with its exchanges, for good. Only the session's owner (or an admin) may delete it.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
			Family:      registry.Valence, Schema: schema("session_delete"), Handler: registry.Handle(s.sessionDelete)},
		{Name: "session_find_by_room", Description: "Find a session by external room ID (for chat platform integrations); the newest match, active sessions first.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("session_find_by_room"), Handler: registry.Handle(s.sessionFindByRoom)},
		{Name: "exchange_add", Description: "Record a conversation turn.",
			Family: registry.Valence, Schema: schema("exchange_add"), Handler: registry.Handle(s.exchangeAdd)},
		{Name: "exchange_list", Description: "Get exchanges from a session, in order.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("exchange_list"), Handler: registry.Handle(s.exchangeList)},
		{Name: "exchange_search", Description: "Search the exchanges of the workspace (or of one session) by relevance; each hit comes with its neighbouring turns. Dates named in the query ('in June 2023', 'last week') filter by the exchanges' time.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("exchange_search"), Handler: registry.Handle(s.exchangeSearch)},
		{Name: "pattern_record", Description: "Record a new behavioral pattern.",
			Family: registry.Valence, Schema: schema("pattern_record"), Handler: registry.Handle(s.patternRecord)},
		{Name: "pattern_reinforce", Description: "Strengthen an existing pattern: confidence c becomes c + (1 - c) x 0.1 (at most 0.99); the supporting session is added to the evidence once.",
			Family: registry.Valence, Schema: schema("pattern_reinforce"), Handler: registry.Handle(s.patternReinforce)},
		{Name: "pattern_list", Description: "List patterns with filters.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("pattern_list"), Handler: registry.Handle(s.patternList)},
		{Name: "pattern_search", Description: "Search patterns by their descriptions (lexical relevance).",
			ReadOnly: true, Family: registry.Valence, Schema: schema("pattern_search"), Handler: registry.Handle(s.patternSearch)},
		{Name: "insight_extract", Description: "Extract an insight from a session to create a belief (source: the session), with tension detection.",
			Family: registry.Valence, Schema: schema("insight_extract"), Handler: registry.Handle(s.insightExtract)},
		{Name: "insight_list", Description: "List the insights of a session or of the workspace, newest first, with their beliefs.",
			ReadOnly: true, Family: registry.Valence, Schema: schema("insight_list"), Handler: registry.Handle(s.insightList)},
	}
}

// schema is the embedded input schema of tool name (schemas/<name>.json);
// without one, registration fails ("no input schema").
func schema(name string) json.RawMessage {
	b, _ := schemas.ReadFile("schemas/" + name + ".json")
	return b
}
