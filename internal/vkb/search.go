package vkb

import (
	"context"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/timeq"
)

type exchangeSearchIn struct {
	Query        string `json:"query"`
	SessionID    string `json:"session_id"`
	Limit        int    `json:"limit"`
	ContextTurns *int   `json:"context_turns"`
	ValidAfter   string `json:"valid_after"`
	ValidBefore  string `json:"valid_before"`
	Now          string `json:"now"`
}

// searchWindow is the validity window a search applied, with where it came
// from.
type searchWindow struct {
	From *time.Time `json:"from,omitempty"`
	To   *time.Time `json:"to,omitempty"`
	// FromQuery reports that the query named dates ("in June 2023"),
	// which were read as this window and not searched as words.
	FromQuery bool `json:"from_query"`
}

type exchangeSearchResult struct {
	Success bool               `json:"success"`
	Hits    []conversation.Hit `json:"hits"`
	// Insights are the beliefs insight_extract created from the
	// workspace's (or the session's) conversations that match the query,
	// best first.
	Insights []InsightHit `json:"insights"`
	// Window is the validity window applied, when there is one.
	Window *searchWindow `json:"window,omitempty"`
}

// exchangeSearch ranks the workspace's (or one session's) exchanges for
// the query; see [conversation.Store.Search] and docs/vkb.md.
func (s *Server) exchangeSearch(ctx context.Context, c *registry.Call, in exchangeSearchIn) (*exchangeSearchResult, error) {
	q := conversation.Search{Workspace: c.Workspace, Query: in.Query, SessionID: in.SessionID, Limit: in.Limit, ContextTurns: 1,
		Owner: c.User.OnlyOwn()}
	if in.ContextTurns != nil {
		q.ContextTurns = *in.ContextTurns
	}
	var err error
	if q.After, err = rfc3339("valid_after", in.ValidAfter); err != nil {
		return nil, err
	}
	if q.Before, err = rfc3339("valid_before", in.ValidBefore); err != nil {
		return nil, err
	}
	now := s.now()
	if in.Now != "" {
		if now, err = rfc3339("now", in.Now); err != nil {
			return nil, err
		}
	}
	res := &exchangeSearchResult{Success: true, Insights: []InsightHit{}}
	if w, rest, ok := timeq.Parse(in.Query, now); ok {
		// The query's dates narrow the window the caller gave.
		q.Query = rest
		if q.After.IsZero() || w.From.After(q.After) {
			q.After = w.From
		}
		if q.Before.IsZero() || w.To.Before(q.Before) {
			q.Before = w.To
		}
		res.Window = &searchWindow{FromQuery: true}
		if !q.After.Before(q.Before) {
			// The caller's window and the query's do not meet: nothing
			// can match.
			res.Window.From, res.Window.To = &w.From, &w.To
			res.Hits = []conversation.Hit{}
			return res, nil
		}
	}
	if !q.After.IsZero() || !q.Before.IsZero() {
		if res.Window == nil {
			res.Window = &searchWindow{}
		}
		if !q.After.IsZero() {
			res.Window.From = &q.After
		}
		if !q.Before.IsZero() {
			res.Window.To = &q.Before
		}
	}
	if res.Hits, err = s.conv.Search(ctx, q); err != nil {
		return nil, err
	}
	if res.Insights, err = s.searchInsights(ctx, q); err != nil {
		return nil, err
	}
	return res, nil
}

// rfc3339 reads an optional RFC 3339 time argument.
func rfc3339(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, errs.Invalid(field, "%q is not an RFC 3339 date-time (e.g. 2025-01-15T10:30:00Z)", v)
	}
	return t.UTC(), nil
}
