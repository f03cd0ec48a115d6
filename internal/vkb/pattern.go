package vkb

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Pattern lifecycle (docs/vkb.md).
const (
	// EstablishedAt is the number of supporting sessions that makes a
	// pattern established.
	EstablishedAt = 5
	// FadingAfter is how long a pattern may go without reinforcement before
	// it reads as fading.
	FadingAfter = 30 * 24 * time.Hour
	// MaxConfidence caps reinforcement.
	MaxConfidence = 0.99
	// ReinforceRate is the share of the remaining doubt one reinforcement removes.
	ReinforceRate = 0.1
)

// Pattern statuses.
const (
	Emerging    = "emerging"
	Established = "established"
	Fading      = "fading"
)

// Pattern is a behavioural pattern in full.
type Pattern struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	Description    string    `json:"description"`
	Confidence     float64   `json:"confidence"`
	Status         string    `json:"status"`
	Evidence       []string  `json:"evidence"`
	Workspace      string    `json:"workspace"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	ReinforcedAt   time.Time `json:"last_reinforced_at"`
	RelevanceScore *float64  `json:"relevance_score,omitempty"`

	stored string // status as stored: emerging or established
}

const patternCols = `p.id, p.workspace, p.type, p.description, p.confidence, p.status, p.evidence, p.created_at, p.updated_at, p.reinforced_at`

type rowScanner interface{ Scan(dest ...any) error }

// scanPattern reads a pattern and derives its status at now.
func scanPattern(r rowScanner, now time.Time) (*Pattern, error) {
	var p Pattern
	var evidence string
	var created, updated, reinforced int64
	if err := r.Scan(&p.ID, &p.Workspace, &p.Type, &p.Description, &p.Confidence, &p.stored, &evidence, &created, &updated, &reinforced); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(evidence), &p.Evidence); err != nil {
		return nil, fmt.Errorf("pattern %s evidence: %w", p.ID, err)
	}
	p.CreatedAt, p.UpdatedAt, p.ReinforcedAt = store.FromMicros(created), store.FromMicros(updated), store.FromMicros(reinforced)
	p.Status = p.stored
	if now.Sub(p.ReinforcedAt) > FadingAfter {
		p.Status = Fading
	}
	return &p, nil
}

// storedStatus is the status a pattern with n supporting sessions stores.
func storedStatus(n int) string {
	if n >= EstablishedAt {
		return Established
	}
	return Emerging
}

// checkSessions fails with NOT_FOUND unless every id names a session of the
// workspace.
func (s *Server) checkSessions(ctx context.Context, workspace, field string, ids []string) error {
	for i, id := range ids {
		if _, err := s.conv.Get(ctx, workspace, id); err != nil {
			if errors.Is(err, errs.Kind(errs.NotFound)) {
				return errs.E(errs.NotFound, "%s[%d]: session %q not found", field, i, id)
			}
			return err
		}
	}
	return nil
}

type patternResult struct {
	Success bool     `json:"success"`
	Pattern *Pattern `json:"pattern"`
}

type patternRecordIn struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Evidence    []string `json:"evidence"`
	Confidence  float64  `json:"confidence"`
}

func (s *Server) patternRecord(ctx context.Context, c *registry.Call, in patternRecordIn) (*patternResult, error) {
	typ, desc := strings.TrimSpace(in.Type), strings.TrimSpace(in.Description)
	if typ == "" {
		return nil, errs.Invalid("type", "must not be blank")
	}
	if desc == "" {
		return nil, errs.Invalid("description", "must not be blank")
	}
	evidence := []string{}
	for _, id := range in.Evidence {
		if !slices.Contains(evidence, id) {
			evidence = append(evidence, id)
		}
	}
	if err := s.checkSessions(ctx, c.Workspace, "evidence", evidence); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("new pattern id: %w", err)
	}
	now := s.now()
	p := &Pattern{ID: id.String(), Type: typ, Description: desc, Confidence: in.Confidence, Evidence: evidence,
		Workspace: c.Workspace, CreatedAt: now, UpdatedAt: now, ReinforcedAt: now, stored: storedStatus(len(evidence))}
	p.Status = p.stored
	ev, _ := json.Marshal(evidence)
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO patterns (id, workspace, type, description, confidence, status,
		evidence, created_at, updated_at, reinforced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		p.ID, p.Workspace, p.Type, p.Description, p.Confidence, p.stored, string(ev),
		store.Micros(now), store.Micros(now), store.Micros(now)); err != nil {
		return nil, fmt.Errorf("insert pattern: %w", err)
	}
	return &patternResult{Success: true, Pattern: p}, nil
}

type patternReinforceIn struct {
	PatternID string `json:"pattern_id"`
	SessionID string `json:"session_id"`
}

// Reinforce returns the confidence after one reinforcement of c.
func Reinforce(c float64) float64 {
	return math.Min(MaxConfidence, math.Round((c+(1-c)*ReinforceRate)*1e6)/1e6)
}

// patternReinforce raises the pattern's confidence (every call counts) and
// adds the supporting session to the evidence once, in one transaction.
func (s *Server) patternReinforce(ctx context.Context, c *registry.Call, in patternReinforceIn) (*patternResult, error) {
	if in.SessionID != "" {
		if err := s.checkSessions(ctx, c.Workspace, "session_id", []string{in.SessionID}); err != nil {
			return nil, errs.E(errs.NotFound, "session %q not found", in.SessionID)
		}
	}
	var out *Pattern
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		q := `SELECT ` + patternCols + ` FROM patterns p WHERE p.id = ? AND p.workspace = ?`
		if s.st.Dialect() == store.Postgres {
			q += ` FOR UPDATE`
		}
		now := s.now()
		p, err := scanPattern(tx.QueryRowContext(ctx, s.st.Q(q), in.PatternID, c.Workspace), now)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.Missing("pattern", in.PatternID)
		}
		if err != nil {
			return fmt.Errorf("load pattern: %w", err)
		}
		p.Confidence = Reinforce(p.Confidence)
		if in.SessionID != "" && !slices.Contains(p.Evidence, in.SessionID) {
			p.Evidence = append(p.Evidence, in.SessionID)
		}
		p.stored = storedStatus(len(p.Evidence))
		p.Status, p.UpdatedAt, p.ReinforcedAt = p.stored, now, now
		ev, _ := json.Marshal(p.Evidence)
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE patterns SET confidence = ?, status = ?, evidence = ?, updated_at = ?, reinforced_at = ?
			WHERE id = ?`), p.Confidence, p.stored, string(ev), store.Micros(now), store.Micros(now), p.ID); err != nil {
			return fmt.Errorf("reinforce pattern: %w", err)
		}
		out = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &patternResult{Success: true, Pattern: out}, nil
}

type patternListIn struct {
	Type          string  `json:"type"`
	Status        string  `json:"status"`
	MinConfidence float64 `json:"min_confidence"`
	Limit         int     `json:"limit"`
}

type patternListResult struct {
	Success  bool       `json:"success"`
	Patterns []*Pattern `json:"patterns"`
}

// patternWhere builds the filter of pattern_list and pattern_search; the
// fading status is derived from the last reinforcement.
func (s *Server) patternWhere(workspace, typ, status string, minConfidence float64) (string, []any) {
	where := []string{"p.workspace = ?", "p.confidence >= ?"}
	args := []any{workspace, minConfidence}
	if typ != "" {
		where = append(where, "p.type = ?")
		args = append(args, typ)
	}
	cutoff := store.Micros(s.now().Add(-FadingAfter))
	switch status {
	case Fading:
		where = append(where, "p.reinforced_at < ?")
		args = append(args, cutoff)
	case Emerging, Established:
		where = append(where, "p.status = ?", "p.reinforced_at >= ?")
		args = append(args, status, cutoff)
	}
	return strings.Join(where, " AND "), args
}

func (s *Server) queryPatterns(ctx context.Context, query string, args ...any) ([]*Pattern, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("list patterns: %w", err)
	}
	defer rows.Close()
	now := s.now()
	out := []*Pattern{}
	for rows.Next() {
		p, err := scanPattern(rows, now)
		if err != nil {
			return nil, fmt.Errorf("list patterns: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *Server) patternList(ctx context.Context, c *registry.Call, in patternListIn) (*patternListResult, error) {
	where, args := s.patternWhere(c.Workspace, in.Type, in.Status, in.MinConfidence)
	list, err := s.queryPatterns(ctx, `SELECT `+patternCols+` FROM patterns p WHERE `+where+
		` ORDER BY p.confidence DESC, p.reinforced_at DESC, p.id LIMIT ?`, append(args, in.Limit)...)
	if err != nil {
		return nil, err
	}
	return &patternListResult{Success: true, Patterns: list}, nil
}

type patternSearchIn struct {
	Query string `json:"query"`
	Type  string `json:"type"`
	Limit int    `json:"limit"`
}

// patternSearchCap bounds the patterns one search reads and scores.
const patternSearchCap = 1000

// patternSearch finds patterns whose description matches any query term
// through the full-text index and ranks them by BM25 (document frequencies
// taken over the matches), ties to the more confident pattern.
func (s *Server) patternSearch(ctx context.Context, c *registry.Call, in patternSearchIn) (*patternListResult, error) {
	terms := textsearch.Terms(in.Query)
	if len(terms) == 0 {
		return &patternListResult{Success: true, Patterns: []*Pattern{}}, nil
	}
	where, args := s.patternWhere(c.Workspace, in.Type, "", 0)
	var q string
	if s.st.Dialect() == store.Postgres {
		q = `SELECT ` + patternCols + ` FROM patterns p WHERE p.tsv @@ to_tsquery('english', ?) AND ` + where + ` ORDER BY p.seq DESC LIMIT ?`
	} else {
		q = `SELECT ` + patternCols + ` FROM patterns_fts JOIN patterns p ON p.seq = patterns_fts.rowid
			WHERE patterns_fts MATCH ? AND ` + where + ` ORDER BY patterns_fts.rowid DESC LIMIT ?`
	}
	match := textsearch.FTS5Match(terms)
	if s.st.Dialect() == store.Postgres {
		match = textsearch.TSQuery(terms)
	}
	list, err := s.queryPatterns(ctx, q, s.st.PlanEach(append(append([]any{match}, args...), patternSearchCap))...)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(list))
	for i, p := range list {
		texts[i] = p.Description
	}
	df := map[string]int{}
	for _, t := range terms {
		k := textsearch.Key(t)
		for _, text := range texts {
			for _, tok := range textsearch.Tokens(text) {
				if textsearch.Key(tok) == k {
					df[t]++
					break
				}
			}
		}
	}
	for i, score := range textsearch.BM25(texts, terms, df, len(list)) {
		sc := math.Round(score*1e4) / 1e4
		list[i].RelevanceScore = &sc
	}
	slices.SortStableFunc(list, func(a, b *Pattern) int {
		if c := cmp.Compare(*b.RelevanceScore, *a.RelevanceScore); c != 0 {
			return c
		}
		return cmp.Compare(b.Confidence, a.Confidence)
	})
	if len(list) > in.Limit {
		list = list[:in.Limit]
	}
	return &patternListResult{Success: true, Patterns: list}, nil
}
