package substrate

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Tension statuses.
const (
	TensionDetected      = "detected"
	TensionInvestigating = "investigating"
	TensionResolved      = "resolved"
	TensionAccepted      = "accepted"
)

// tensionCandidates is how many related, lexically similar beliefs are
// checked against a new belief.
const tensionCandidates = 20

// tensionSearchCap bounds the related beliefs read and scored to choose
// them. Issue 23: 100 -> 40 and a window of 300 -> 100 matches; reading
// and scoring the window was 62% of belief_create's CPU (see
// docs/benchmarks.md, "Tension precision and write throughput").
const tensionSearchCap = 40

// tensionWindow bounds the full-text matches examined to find them (the
// newest; see searchFilter.window).
const tensionWindow = 100

// detectTensions compares b with the active beliefs of its workspace that
// share an entity or its domain path and match it lexically (or, when b has
// neither, that match it lexically), stores a tension for each pair
// [DetectTension] reports, and returns them.
func (s *Server) detectTensions(ctx context.Context, tx *sql.Tx, b *Belief, exclude string) ([]Tension, error) {
	f := searchFilter{workspace: b.Workspace, excludeIDs: []string{b.ID}, requireTerms: true, maxCandidates: tensionSearchCap, window: tensionWindow}
	if exclude != "" {
		f.excludeIDs = append(f.excludeIDs, exclude)
	}
	if dk, _ := domainKey(b.DomainPath); dk != "" {
		f.domainExact = dk
	}
	for _, e := range b.Entities {
		f.entityIDs = append(f.entityIDs, e.ID)
	}
	res, err := s.search(ctx, tx, b.Content, f)
	if err != nil {
		return nil, fmt.Errorf("tension candidates: %w", err)
	}
	hits := res.hits
	slices.SortStableFunc(hits, func(x, y hit) int { return cmp.Compare(y.lexical, x.lexical) })
	if len(hits) > tensionCandidates {
		hits = hits[:tensionCandidates]
	}
	seqs := make([]int64, len(hits))
	for i, h := range hits {
		seqs[i] = h.seq
	}
	cands, err := s.loadBeliefsBySeq(ctx, tx, seqs)
	if err != nil {
		return nil, err
	}
	newIn := tensionInput(b)
	out := []Tension{}
	for _, a := range cands {
		finding, ok := DetectTension(tensionInput(a), newIn)
		if !ok {
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("new tension id: %w", err)
		}
		t := Tension{
			ID: id.String(), Type: finding.Type, Severity: finding.Severity, Status: TensionDetected,
			Description: finding.Reason, BeliefAID: a.ID, BeliefBID: b.ID, Workspace: b.Workspace, CreatedAt: b.CreatedAt,
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO tensions (id, workspace, belief_a, belief_b, type, severity,
			severity_rank, status, description, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.ID, t.Workspace, t.BeliefAID, t.BeliefBID, t.Type, t.Severity, severityRank[t.Severity], t.Status,
			t.Description, store.Micros(t.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store tension: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

func tensionInput(b *Belief) TensionInput {
	in := TensionInput{
		Content: b.Content, DomainPath: b.DomainPath, ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil,
		Confidence: b.Confidence.Overall,
	}
	for _, e := range b.Entities {
		in.Entities = append(in.Entities, e.Name)
	}
	return in
}

const tensionCols = `t.id, t.workspace, t.belief_a, t.belief_b, t.type, t.severity, t.status, t.description,
	t.resolution, t.action, t.created_at, t.resolved_at, t.judge`

func scanTension(r rowScanner, extra ...any) (*Tension, error) {
	var t Tension
	var resolution, action, judged sql.NullString
	var created int64
	var resolved sql.NullInt64
	if err := r.Scan(append([]any{&t.ID, &t.Workspace, &t.BeliefAID, &t.BeliefBID, &t.Type, &t.Severity, &t.Status,
		&t.Description, &resolution, &action, &created, &resolved, &judged}, extra...)...); err != nil {
		return nil, err
	}
	if judged.Valid {
		t.Judge = &Judgment{}
		if err := json.Unmarshal([]byte(judged.String), t.Judge); err != nil {
			return nil, fmt.Errorf("tension %s: judgment: %w", t.ID, err)
		}
	}
	t.Resolution, t.Action = resolution.String, action.String
	t.CreatedAt = store.FromMicros(created)
	if resolved.Valid {
		r := store.FromMicros(resolved.Int64)
		t.ResolvedAt = &r
	}
	return &t, nil
}

type tensionFilter struct {
	workspace   string
	status      string
	minSeverity string
	entityID    string
	beliefID    string
	limit       int
}

// listTensions returns the tensions under f, newest first, with both beliefs.
func (s *Server) listTensions(ctx context.Context, f tensionFilter) ([]Tension, error) {
	where := []string{"t.workspace = ?"}
	args := []any{f.workspace}
	if f.status != "" {
		where = append(where, "t.status = ?")
		args = append(args, f.status)
	}
	if f.minSeverity != "" {
		where = append(where, "t.severity_rank >= ?")
		args = append(args, severityRank[f.minSeverity])
	}
	if f.beliefID != "" {
		where = append(where, "(t.belief_a = ? OR t.belief_b = ?)")
		args = append(args, f.beliefID, f.beliefID)
	}
	if f.entityID != "" {
		where = append(where, `(t.belief_a IN (SELECT belief_id FROM belief_entities WHERE entity_id = ?)
			OR t.belief_b IN (SELECT belief_id FROM belief_entities WHERE entity_id = ?))`)
		args = append(args, f.entityID, f.entityID)
	}
	args = append(args, f.limit)
	db := s.st.DB()
	rows, err := db.QueryContext(ctx, s.st.Q(`SELECT `+tensionCols+` FROM tensions t WHERE `+strings.Join(where, " AND ")+
		` ORDER BY t.severity_rank DESC, t.created_at DESC, t.id DESC LIMIT ?`), args...)
	if err != nil {
		return nil, fmt.Errorf("list tensions: %w", err)
	}
	var out []Tension
	for rows.Next() {
		t, err := scanTension(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("list tensions: %w", err)
		}
		out = append(out, *t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tensions: %w", err)
	}
	for i := range out {
		if err := s.attachTensionBeliefs(ctx, db, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Server) attachTensionBeliefs(ctx context.Context, q querier, t *Tension) error {
	var err error
	if t.BeliefA, err = s.loadBelief(ctx, q, t.Workspace, t.BeliefAID); err != nil {
		return fmt.Errorf("tension %s: %w", t.ID, err)
	}
	if t.BeliefB, err = s.loadBelief(ctx, q, t.Workspace, t.BeliefBID); err != nil {
		return fmt.Errorf("tension %s: %w", t.ID, err)
	}
	return nil
}

// --- tension_list ------------------------------------------------------------

type tensionListIn struct {
	Status   string `json:"status"`
	Severity string `json:"severity"`
	EntityID string `json:"entity_id"`
	Limit    int    `json:"limit"`
}

type tensionListResult struct {
	Success  bool      `json:"success"`
	Tensions []Tension `json:"tensions"`
}

func (s *Server) tensionList(ctx context.Context, c *registry.Call, in tensionListIn) (*tensionListResult, error) {
	if in.EntityID != "" {
		if _, err := s.loadEntity(ctx, s.st.DB(), c.Workspace, in.EntityID); err != nil {
			return nil, err
		}
	}
	ts, err := s.listTensions(ctx, tensionFilter{workspace: c.Workspace, status: in.Status, minSeverity: in.Severity,
		entityID: in.EntityID, limit: in.Limit})
	if err != nil {
		return nil, err
	}
	if ts == nil {
		ts = []Tension{}
	}
	return &tensionListResult{Success: true, Tensions: ts}, nil
}

// --- tension_resolve ---------------------------------------------------------

type tensionResolveIn struct {
	TensionID  string `json:"tension_id"`
	Resolution string `json:"resolution"`
	Action     string `json:"action"`
}

type tensionResolveResult struct {
	Success bool     `json:"success"`
	Tension *Tension `json:"tension"`
}

// tensionResolve applies the action to both beliefs and closes the tension
// in one transaction: supersede_a marks belief a superseded by b,
// supersede_b the reverse, archive_both archives both (status resolved);
// keep_both changes no belief (status accepted).
func (s *Server) tensionResolve(ctx context.Context, c *registry.Call, in tensionResolveIn) (*tensionResolveResult, error) {
	resolution := strings.TrimSpace(in.Resolution)
	if resolution == "" {
		return nil, errs.Invalid("resolution", "must not be blank")
	}
	var out *Tension
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		t, err := scanTension(tx.QueryRowContext(ctx, s.st.Q(`SELECT `+tensionCols+` FROM tensions t WHERE t.id = ? AND t.workspace = ?`),
			in.TensionID, c.Workspace))
		if errors.Is(err, sql.ErrNoRows) {
			return errs.Missing("tension", in.TensionID)
		}
		if err != nil {
			return fmt.Errorf("load tension: %w", err)
		}
		if t.Status == TensionResolved || t.Status == TensionAccepted {
			return errs.E(errs.Conflict, "tension %q is already %s", t.ID, t.Status)
		}
		now := s.now()
		us := store.Micros(now)
		// setStatus moves an active belief to status; a belief that is no
		// longer active makes the whole resolution fail.
		setStatus := func(id, status, supersededBy string) error {
			r, err := tx.ExecContext(ctx, s.st.Q(`UPDATE beliefs SET status = ?, superseded_by = ?, updated_at = ?
				WHERE id = ? AND workspace = ? AND status = ?`), status, nullStr(supersededBy), us, id, c.Workspace, StatusActive)
			if err != nil {
				return fmt.Errorf("update belief: %w", err)
			}
			if n, _ := r.RowsAffected(); n != 1 {
				return errs.E(errs.Conflict, "belief %q is no longer active; resolve with keep_both or archive the tension's other belief first", id)
			}
			return nil
		}
		status := TensionResolved
		switch in.Action {
		case "supersede_a":
			err = setStatus(t.BeliefAID, StatusSuperseded, t.BeliefBID)
		case "supersede_b":
			err = setStatus(t.BeliefBID, StatusSuperseded, t.BeliefAID)
		case "archive_both":
			if err = setStatus(t.BeliefAID, StatusArchived, ""); err == nil {
				err = setStatus(t.BeliefBID, StatusArchived, "")
			}
		case "keep_both":
			status = TensionAccepted
		default: // the schema's enum makes this unreachable
			err = errs.Invalid("action", "unknown action %q", in.Action)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE tensions SET status = ?, resolution = ?, action = ?, resolved_at = ? WHERE id = ?`),
			status, resolution, in.Action, us, t.ID); err != nil {
			return fmt.Errorf("update tension: %w", err)
		}
		t.Status, t.Resolution, t.Action, t.ResolvedAt = status, resolution, in.Action, &now
		if err := s.attachTensionBeliefs(ctx, tx, t); err != nil {
			return err
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tensionResolveResult{Success: true, Tension: out}, nil
}
