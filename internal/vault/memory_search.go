package vault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// searchMemory (vaultLibrarian, contract section 3) searches Nexus's memory
// rather than notes: what was said in the workspace's sessions (ranked as
// exchange_search ranks it), its tool calls, and its sessions', states' and
// workspaces' names and descriptions. The original ignored memoryTypes and
// dateRange; here both filter.

func (s *Server) searchMemoryMode() registry.Def {
	return def("searchMemory", "Search Nexus's memory of the workspace: what was said in its sessions (traces), its tool calls (toolCalls), and sessions, states and workspaces by name and description; memoryTypes and dateRange filter.", true, registry.Handle(s.searchMemory))
}

type searchMemoryIn struct {
	Query           string   `json:"query"`
	WorkspaceID     string   `json:"workspaceId"`
	Limit           int      `json:"limit"`
	FilterBySession bool     `json:"filterBySession"`
	MemoryTypes     []string `json:"memoryTypes"`
	DateRange       *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"dateRange"`
	ToolCallFilters map[string]any `json:"toolCallFilters"`
	SearchMethod    string         `json:"searchMethod"`
}

type memoryHit struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Content   string         `json:"content"`
	Tool      string         `json:"tool,omitempty"`
	Context   map[string]any `json:"context,omitempty"`
	Score     float64        `json:"score"`
	Timestamp int64          `json:"timestamp"`
}

func (s *Server) searchMemory(ctx context.Context, c *registry.Call, in searchMemoryIn) (result, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return result{}, errs.E(errs.BadRequest, "Query parameter is required and cannot be empty")
	}
	ws := c.Workspace
	if in.WorkspaceID != "" && in.WorkspaceID != ws {
		w, err := s.findWorkspace(ctx, c, in.WorkspaceID)
		if err != nil {
			return result{}, err
		}
		ws = w.ID
	}
	var after, before time.Time
	if in.DateRange != nil {
		var err error
		if after, err = parseDate(in.DateRange.Start); err != nil {
			return result{}, errs.Invalid("dateRange.start", "%q is not an ISO date or time", in.DateRange.Start)
		}
		if before, err = parseDate(in.DateRange.End); err != nil {
			return result{}, errs.Invalid("dateRange.end", "%q is not an ISO date or time", in.DateRange.End)
		}
	}
	inRange := func(t time.Time) bool {
		return (after.IsZero() || !t.Before(after)) && (before.IsZero() || t.Before(before))
	}
	want := func(t string) bool { return len(in.MemoryTypes) == 0 || slices.Contains(in.MemoryTypes, t) }
	session := ""
	if in.FilterBySession {
		session = c.SessionID
	}
	owner := ""
	if !c.User.Admin() {
		owner = c.User.ID
	}
	limit := cmpOr(in.Limit, 20)
	var hits []memoryHit
	lower := strings.ToLower(q)
	if want("traces") {
		found, err := s.conv.Search(ctx, conversation.Search{Workspace: ws, Query: q, SessionID: session, Limit: min(limit, conversation.MaxSearchLimit), After: after, Before: before, Owner: owner})
		if err != nil {
			return result{}, prefixed("Memory search failed", err)
		}
		best := 0.0
		for _, h := range found {
			best = max(best, h.Score)
		}
		for _, h := range found {
			score := 1.0
			if best > 0 {
				score = h.Score / best
			}
			hits = append(hits, memoryHit{Type: "traces", ID: h.Exchange.ID, Content: h.Exchange.Content, Score: round3(score), Timestamp: h.Exchange.CreatedAt.UnixMilli(),
				Context: map[string]any{"sessionId": h.Exchange.ConversationID, "role": h.Exchange.Role, "seq": h.Exchange.Seq}})
		}
	}
	if want("sessions") || want("states") {
		convs, err := s.conv.List(ctx, ws, conversation.Filter{Owner: owner, Limit: 1000})
		if err != nil {
			return result{}, prefixed("Memory search failed", err)
		}
		for _, cv := range convs {
			if session != "" && cv.ID != session {
				continue
			}
			if want("sessions") && inRange(cv.CreatedAt) {
				if sc := nameScore(lower, cv.Title, cv.ProjectContext); sc > 0 {
					hits = append(hits, memoryHit{Type: "sessions", ID: cv.ID, Content: strings.TrimSpace(cv.Title + ": " + cv.ProjectContext), Score: sc, Timestamp: cv.CreatedAt.UnixMilli(),
						Context: map[string]any{"workspaceId": ws}})
				}
			}
			if want("states") {
				sts, _ := s.states(ctx, ws, cv.ID)
				for _, st := range sts {
					if sc := nameScore(lower, st.Name, st.Description); sc > 0 && inRange(st.Created) {
						hits = append(hits, memoryHit{Type: "states", ID: st.ID, Content: st.Name + ": " + st.Description, Score: sc, Timestamp: st.Created.UnixMilli(),
							Context: map[string]any{"sessionId": cv.ID, "tags": nonNil(st.Tags)}})
					}
				}
			}
		}
	}
	if want("workspaces") {
		for _, w := range s.workspaces(ctx, c) {
			if sc := nameScore(lower, w.Name, w.Description); sc > 0 && inRange(time.UnixMilli(w.Created)) {
				hits = append(hits, memoryHit{Type: "workspaces", ID: w.ID, Content: strings.TrimSpace(w.Name + ": " + w.Description), Score: sc, Timestamp: w.Created,
					Context: map[string]any{"rootFolder": w.RootFolder}})
			}
		}
	}
	if want("toolCalls") {
		calls, err := s.toolCalls(ctx, ws, session, lower, after, before, limit)
		if err != nil {
			return result{}, prefixed("Memory search failed", err)
		}
		hits = append(hits, calls...)
	}
	slices.SortStableFunc(hits, func(a, b memoryHit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(b.Timestamp - a.Timestamp)
	})
	total := len(hits)
	hits = hits[:min(limit, total)]
	if hits == nil {
		hits = []memoryHit{}
	}
	return ok(map[string]any{"results": hits, "total": total, "hasMore": total > len(hits)}), nil
}

// nameScore is the original's score of a name and description that hold
// the query: 0.9 for the name, 0.8 for the description, both added.
func nameScore(query, name, desc string) float64 {
	score := 0.0
	if strings.Contains(strings.ToLower(name), query) {
		score += 0.9
	}
	if strings.Contains(strings.ToLower(desc), query) {
		score += 0.8
	}
	return score
}

// toolCalls are the workspace's tool calls whose server or tool holds the
// query.
func (s *Server) toolCalls(ctx context.Context, ws, session, query string, after, before time.Time, limit int) ([]memoryHit, error) {
	sqlq := `SELECT request_id, server, tool, session_id, started_at, outcome FROM traces WHERE workspace = ? AND (LOWER(tool) LIKE ? OR LOWER(server) LIKE ?)`
	like := "%" + strings.NewReplacer("%", "", "_", "").Replace(query) + "%"
	args := []any{ws, like, like}
	if session != "" {
		sqlq += ` AND session_id = ?`
		args = append(args, session)
	}
	if !after.IsZero() {
		sqlq += ` AND started_at >= ?`
		args = append(args, store.Micros(after))
	}
	if !before.IsZero() {
		sqlq += ` AND started_at < ?`
		args = append(args, store.Micros(before))
	}
	sqlq += ` ORDER BY started_at DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(sqlq), args...)
	if err != nil {
		return nil, fmt.Errorf("search tool calls: %w", err)
	}
	defer rows.Close()
	var out []memoryHit
	for rows.Next() {
		var id, server, tool, outcome string
		var sess *string
		var at int64
		if err := rows.Scan(&id, &server, &tool, &sess, &at, &outcome); err != nil {
			return nil, fmt.Errorf("search tool calls: %w", err)
		}
		h := memoryHit{Type: "toolCalls", ID: id, Content: server + " " + tool + ": " + outcome, Tool: server + "_" + tool, Score: 0.9, Timestamp: store.FromMicros(at).UnixMilli(), Context: map[string]any{}}
		if sess != nil {
			h.Context["sessionId"] = *sess
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
