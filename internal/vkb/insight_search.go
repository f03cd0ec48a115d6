package vkb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// maxInsightsSearched bounds the insights one exchange_search reads: the
// newest of the workspace (or session) under the window.
const maxInsightsSearched = 1000

// InsightHit is an insight found by exchange_search: a belief that
// insight_extract created from a session, with its content.
type InsightHit struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	BeliefID  string    `json:"belief_id"`
	Content   string    `json:"content"`
	Score     float64   `json:"score"`
	CreatedAt time.Time `json:"created_at"`
}

// searchInsights ranks the insights of q's workspace (or session, or
// owner's sessions) whose
// beliefs are active, created in q's window, for q's query: the same BM25
// as the exchanges' (conversation.RankTexts), its statistics over these
// insights. Those without a query term are left out; at most q.Limit.
func (s *Server) searchInsights(ctx context.Context, q conversation.Search) ([]InsightHit, error) {
	out := []InsightHit{}
	if len(textsearch.Terms(q.Query)) == 0 {
		return out, nil
	}
	where := []string{"i.workspace = ?", "b.workspace = ?", "b.status = ?"}
	args := []any{q.Workspace, q.Workspace, substrate.StatusActive}
	if q.SessionID != "" {
		where = append(where, "i.session_id = ?")
		args = append(args, q.SessionID)
	}
	if q.Owner != "" {
		where = append(where, "i.session_id IN (SELECT c.id FROM conversations c WHERE c.workspace = ? AND c.owner_id = ?)")
		args = append(args, q.Workspace, q.Owner)
	}
	if !q.After.IsZero() {
		where = append(where, "i.created_at >= ?")
		args = append(args, store.Micros(q.After))
	}
	if !q.Before.IsZero() {
		where = append(where, "i.created_at < ?")
		args = append(args, store.Micros(q.Before))
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT i.id, i.session_id, i.belief_id, i.created_at, b.content
		FROM insights i JOIN beliefs b ON b.id = i.belief_id WHERE `+strings.Join(where, " AND ")+`
		ORDER BY i.created_at DESC, i.id DESC LIMIT ?`), append(args, maxInsightsSearched)...)
	if err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	defer rows.Close()
	var all []InsightHit
	for rows.Next() {
		var h InsightHit
		var created int64
		if err := rows.Scan(&h.ID, &h.SessionID, &h.BeliefID, &created, &h.Content); err != nil {
			return nil, fmt.Errorf("search insights: %w", err)
		}
		h.CreatedAt = store.FromMicros(created)
		all = append(all, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search insights: %w", err)
	}
	texts := make([]string, len(all))
	for i, h := range all {
		texts[i] = h.Content
	}
	for i, sc := range conversation.RankTexts(q.Query, texts) {
		if sc > 0 {
			all[i].Score = sc
			out = append(out, all[i])
		}
	}
	slices.SortStableFunc(out, func(a, b InsightHit) int { return cmp.Compare(b.Score, a.Score) })
	limit := q.Limit
	if limit == 0 {
		limit = conversation.DefaultSearchLimit
	}
	return out[:min(len(out), limit)], nil
}
