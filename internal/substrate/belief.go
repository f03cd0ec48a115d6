package substrate

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
	"github.com/nexus-mcp/nexus/internal/timeq"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const beliefCols = `b.seq, b.id, b.workspace, b.content, b.confidence, b.domain_path, b.source_type, b.source_ref,
	b.source_title, b.valid_from, b.valid_until, b.status, b.supersedes, b.superseded_by, b.supersede_reason,
	b.created_at, b.updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanBelief(r rowScanner, extra ...any) (*Belief, error) {
	var (
		b                                                Belief
		conf, domain                                     string
		srcType, srcRef, srcTitle, sup, supBy, supReason sql.NullString
		validFrom, validUntil                            sql.NullInt64
		created, updated                                 int64
	)
	dest := append([]any{&b.seq, &b.ID, &b.Workspace, &b.Content, &conf, &domain, &srcType, &srcRef, &srcTitle,
		&validFrom, &validUntil, &b.Status, &sup, &supBy, &supReason, &created, &updated}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(conf), &b.Confidence); err != nil {
		return nil, fmt.Errorf("belief %s confidence: %w", b.ID, err)
	}
	if err := json.Unmarshal([]byte(domain), &b.DomainPath); err != nil {
		return nil, fmt.Errorf("belief %s domain_path: %w", b.ID, err)
	}
	b.Source = Source{Type: srcType.String, Ref: srcRef.String, Title: srcTitle.String}
	if validFrom.Valid {
		t := store.FromMicros(validFrom.Int64)
		b.ValidFrom = &t
	}
	if validUntil.Valid {
		t := store.FromMicros(validUntil.Int64)
		b.ValidUntil = &t
	}
	b.Supersedes, b.SupersededBy, b.SupersedeReason = sup.String, supBy.String, supReason.String
	b.CreatedAt, b.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	b.Entities = []EntityLink{}
	return &b, nil
}

// loadBelief returns the belief id of the workspace, with its entities.
func (s *Server) loadBelief(ctx context.Context, q querier, workspace, id string) (*Belief, error) {
	row := q.QueryRowContext(ctx, s.st.Q(`SELECT `+beliefCols+` FROM beliefs b WHERE b.id = ? AND b.workspace = ?`), id, workspace)
	b, err := scanBelief(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.Missing("belief", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load belief: %w", err)
	}
	if err := s.attachEntities(ctx, q, []*Belief{b}); err != nil {
		return nil, err
	}
	return b, nil
}

// attachEntities fills the Entities of each belief with one query.
func (s *Server) attachEntities(ctx context.Context, q querier, beliefs []*Belief) error {
	if len(beliefs) == 0 {
		return nil
	}
	byID := make(map[string]*Belief, len(beliefs))
	args := make([]any, 0, len(beliefs))
	for _, b := range beliefs {
		byID[b.ID] = b
		args = append(args, b.ID)
	}
	// On PostgreSQL the entities are read by their key, link by link (a
	// LATERAL with LIMIT is not flattened into a join): the planner
	// otherwise hashes the whole entities table for a few dozen links
	// (1.9 against 0.6 ms for 20 beliefs at 100,000 beliefs and 4,700
	// entities, and more as entities grow). SQLite's plan is that already.
	join := `JOIN entities e ON e.id = be.entity_id`
	if s.st.Dialect() == store.Postgres {
		join = `CROSS JOIN LATERAL (SELECT x.id, x.name, x.type FROM entities x WHERE x.id = be.entity_id LIMIT 1) e`
	}
	rows, err := q.QueryContext(ctx, s.st.Q(`SELECT be.belief_id, e.id, e.name, e.type, be.role
		FROM belief_entities be `+join+`
		WHERE be.belief_id IN (`+placeholders(len(args))+`) ORDER BY e.name, be.role`), args...)
	if err != nil {
		return fmt.Errorf("load belief entities: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var bid string
		var l EntityLink
		if err := rows.Scan(&bid, &l.ID, &l.Name, &l.Type, &l.Role); err != nil {
			return fmt.Errorf("load belief entities: %w", err)
		}
		if b := byID[bid]; b != nil {
			b.Entities = append(b.Entities, l)
		}
	}
	return rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// newBelief is what insertBelief stores.
type newBelief struct {
	id                          string // assigned before the write when empty
	externalID                  string
	content                     string
	confidence                  Confidence
	domainPath                  []string
	source                      Source
	entities                    []EntityInput
	validFrom, validUntil       *time.Time
	supersedes, supersedeReason string
}

// EntityInput is an entity to link, created if it does not exist.
type EntityInput struct {
	Name    string   `json:"name"`
	Type    string   `json:"type,omitempty"`
	Role    string   `json:"role,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// insertBelief stores a new active belief, creating and linking its entities.
//
// Its entity links (and on SQLite its entry in the full-text index) are
// written at once, or, when w is not nil, when the caller flushes w at the
// end of its transaction ([Server.flushWrites]); the entities w holds
// already are not looked up again.
func (s *Server) insertBelief(ctx context.Context, tx querier, workspace string, nb newBelief, w *txWrites) (*Belief, error) {
	own := w == nil
	if own {
		w = newTxWrites()
	}
	r, err := s.beliefRow(ctx, tx, workspace, nb, w)
	if err != nil {
		return nil, err
	}
	if err := s.insertBeliefs(ctx, tx, []beliefRow{r}, w); err != nil {
		return nil, err
	}
	if own {
		if err := s.flushWrites(ctx, tx, w); err != nil {
			return nil, err
		}
	}
	return r.b, nil
}

// beliefRow is a belief ready to insert: its entities exist, and args are
// its row's values in the order of insertCols.
type beliefRow struct {
	b    *Belief
	args []any
}

// insertCols are the columns insertBeliefs writes; PostgreSQL's rows also
// carry their scope (scope_pg.go).
const insertCols = `id, workspace, content, confidence, confidence_overall, domain_path, domain_key, source_type, source_ref,
	source_title, valid_from, valid_until, status, supersedes, supersede_reason, created_at, updated_at, external_id`

// insertChunk bounds the rows of one multi-row insert of beliefs (19
// parameters each: under SQLite's 32,766 and PostgreSQL's 65,535).
const insertChunk = 500

// beliefRow makes nb's row in workspace, creating or finding its entities
// (the entities w holds already are not looked up again).
func (s *Server) beliefRow(ctx context.Context, tx querier, workspace string, nb newBelief, w *txWrites) (beliefRow, error) {
	dk, err := domainKey(nb.domainPath)
	if err != nil {
		return beliefRow{}, err
	}
	if nb.domainPath == nil {
		nb.domainPath = []string{}
	}
	if nb.id == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return beliefRow{}, fmt.Errorf("new belief id: %w", err)
		}
		nb.id = id.String()
	}
	now := s.now()
	b := &Belief{
		ID: nb.id, Content: nb.content, Confidence: nb.confidence, DomainPath: nb.domainPath,
		Source: nb.source, Status: StatusActive, ValidFrom: nb.validFrom, ValidUntil: nb.validUntil,
		Supersedes: nb.supersedes, SupersedeReason: nb.supersedeReason, Workspace: workspace,
		CreatedAt: now, UpdatedAt: now, Entities: []EntityLink{},
	}
	// The entities first: on PostgreSQL the row carries its scope (the
	// domain and the entities' ids, scope.go), which tension searches find
	// it by.
	type linkKey struct{ entity, role string }
	linked := map[linkKey]bool{}
	var entityIDs []string
	for i, ein := range nb.entities {
		role := ein.Role
		if role == "" {
			role = "subject"
		}
		e, err := s.txEntity(ctx, tx, w, workspace, ein, fmt.Sprintf("entities[%d]", i))
		if err != nil {
			return beliefRow{}, err
		}
		k := linkKey{e.ID, role}
		if linked[k] {
			continue
		}
		linked[k] = true
		entityIDs = append(entityIDs, e.ID)
		b.Entities = append(b.Entities, EntityLink{ID: e.ID, Name: e.Name, Type: e.Type, Role: role})
	}
	args := []any{b.ID, workspace, b.Content, mustJSON(b.Confidence), b.Confidence.Overall, mustJSON(b.DomainPath), dk,
		nullStr(b.Source.Type), nullStr(b.Source.Ref), nullStr(b.Source.Title), nullTime(b.ValidFrom), nullTime(b.ValidUntil),
		b.Status, nullStr(b.Supersedes), nullStr(b.SupersedeReason), store.Micros(now), store.Micros(now), nullStr(nb.externalID)}
	if s.st.Dialect() == store.Postgres {
		args = append(args, append([]string{}, scopeKeys(workspace, dk, entityIDs)...))
	}
	return beliefRow{b: b, args: args}, nil
}

// insertBeliefs inserts rows, insertChunk to a statement (one round trip
// for a chunk of a bulk load rather than one a belief: on PostgreSQL the
// row-by-row inserts were a third of an import's statement time, issue
// 23), and queues their entity links and, on SQLite, their full-text
// entries in w.
func (s *Server) insertBeliefs(ctx context.Context, tx querier, rows []beliefRow, w *txWrites) error {
	pg := s.st.Dialect() == store.Postgres
	row := "(" + placeholders(18) + ")"
	if pg {
		row = "(" + placeholders(18) + ", ?::text[])"
	}
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), insertChunk)]
		rows = rows[len(chunk):]
		args := make([]any, 0, len(chunk)*len(chunk[0].args))
		for _, r := range chunk {
			args = append(args, r.args...)
		}
		cols := insertCols
		if pg {
			cols += ", scope"
		}
		q := s.st.Q(`INSERT INTO beliefs (` + cols + `) VALUES ` + strings.TrimSuffix(strings.Repeat(row+",", len(chunk)), ","))
		// Both read the sequence numbers back: SQLite's full-text index is
		// keyed by them, and the server's cache of stored beliefs
		// (beliefcache.go) by them on both (on PostgreSQL, without them,
		// every later create read this server's new beliefs back from the
		// store as candidates: rows and entity links).
		pending := &w.fts
		if pg {
			pending = nil
		}
		if err := s.insertReturning(ctx, tx, q, args, chunk, pending); err != nil {
			return err
		}
		for _, r := range chunk {
			for _, l := range r.b.Entities {
				w.links = append(w.links, linkRow{r.b.ID, l.ID, l.Role})
			}
			slices.SortFunc(r.b.Entities, func(x, y EntityLink) int { return strings.Compare(x.Name+"\x00"+x.Role, y.Name+"\x00"+y.Role) })
		}
	}
	return nil
}

// insertReturning runs the insert q of chunk, reading each row's sequence
// number back (on SQLite its rowid, which the full-text index is keyed by)
// and noting it in pending, if not nil.
func (s *Server) insertReturning(ctx context.Context, tx querier, q string, args []any, chunk []beliefRow, pending *ftsPending) error {
	res, err := tx.QueryContext(ctx, q+` RETURNING id, seq`, args...)
	if err != nil {
		return fmt.Errorf("insert beliefs: %w", err)
	}
	defer res.Close()
	byID := make(map[string]*Belief, len(chunk))
	for _, r := range chunk {
		byID[r.b.ID] = r.b
	}
	n := 0
	for res.Next() {
		var (
			id  string
			seq int64
		)
		if err := res.Scan(&id, &seq); err != nil {
			return fmt.Errorf("insert beliefs: %w", err)
		}
		b := byID[id]
		if b == nil {
			return fmt.Errorf("insert beliefs: unexpected row %q returned", id)
		}
		b.seq = seq
		if pending != nil {
			pending.note(seq)
		}
		n++
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("insert beliefs: %w", err)
	}
	if n != len(chunk) {
		return fmt.Errorf("insert beliefs: %d of %d rows returned", n, len(chunk))
	}
	return nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return store.Micros(*t)
}

// --- belief_create ---------------------------------------------------------

// CreateInput is belief_create's arguments; other packages use it to create
// beliefs from Go (vkb's insight_extract, the demo data).
type CreateInput struct {
	Content     string           `json:"content"`
	Confidence  *ConfidenceInput `json:"confidence,omitempty"`
	DomainPath  []string         `json:"domain_path,omitempty"`
	SourceType  string           `json:"source_type,omitempty"`
	SourceRef   string           `json:"source_ref,omitempty"`
	SourceTitle string           `json:"source_title,omitempty"`
	Entities    []EntityInput    `json:"entities,omitempty"`
	ValidFrom   string           `json:"valid_from,omitempty"`
	ValidUntil  string           `json:"valid_until,omitempty"`
}

// BatchInput is one belief of belief_create_batch and of nexus import
// beliefs: belief_create's arguments and the caller's own id of the belief.
type BatchInput struct {
	CreateInput
	// ExternalID, when set, makes the creation idempotent: a belief whose
	// external_id the workspace already holds is not created again.
	ExternalID string `json:"external_id,omitempty"`
}

// CreateResult is belief_create's response.
type CreateResult struct {
	Success  bool      `json:"success"`
	Belief   *Belief   `json:"belief"`
	Tensions []Tension `json:"tensions"`
}

// Create stores a belief in workspace and detects its tensions: the
// candidates are found and judged before the write transaction, which then
// only re-checks what changed meanwhile (see create.go). It is
// belief_create's implementation.
func (s *Server) Create(ctx context.Context, workspace string, in CreateInput) (*CreateResult, error) {
	out, err := s.createMany(ctx, workspace, []BatchInput{{CreateInput: in}}, false)
	if err != nil {
		return nil, err
	}
	d := out[0]
	if d.existing != "" {
		b, err := s.Get(ctx, workspace, d.existing)
		if err != nil {
			return nil, err
		}
		return &CreateResult{Success: true, Belief: b, Tensions: []Tension{}}, nil
	}
	// With a model judge, the flagged pairs are put to the model now that
	// the write has committed (judge.go).
	return &CreateResult{Success: true, Belief: d.stored, Tensions: s.judgeTensions(ctx, workspace, d.tensions)}, nil
}

// CreateTx is [Server.Create] inside the caller's transaction, so that other
// local servers can create a belief together with their own records (vkb's
// insight_extract). Its tension candidates are found inside that
// transaction.
func (s *Server) CreateTx(ctx context.Context, tx *sql.Tx, workspace string, in CreateInput) (*CreateResult, error) {
	nb, err := validateCreate(BatchInput{CreateInput: in})
	if err != nil {
		return nil, err
	}
	b, err := s.insertBelief(ctx, tx, workspace, nb, nil)
	if err != nil {
		return nil, err
	}
	res := &CreateResult{Success: true, Belief: b}
	if res.Tensions, err = s.detectTensions(ctx, tx, b, ""); err != nil {
		return nil, err
	}
	return res, nil
}

// validateCreate checks belief_create's arguments and returns the belief to
// store.
func validateCreate(in BatchInput) (newBelief, error) {
	content := strings.TrimSpace(in.Content)
	if content == "" {
		return newBelief{}, errs.Invalid("content", "must not be blank")
	}
	from, err := parseTime("valid_from", in.ValidFrom)
	if err != nil {
		return newBelief{}, err
	}
	until, err := parseTime("valid_until", in.ValidUntil)
	if err != nil {
		return newBelief{}, err
	}
	if from != nil && until != nil && !until.After(*from) {
		return newBelief{}, errs.Invalid("valid_until", "must be after valid_from")
	}
	for i, e := range in.Entities {
		if normalizeKey(e.Name) == "" {
			return newBelief{}, errs.Invalid(fmt.Sprintf("entities[%d].name", i), "must not be blank")
		}
	}
	if _, err := domainKey(in.DomainPath); err != nil {
		return newBelief{}, err
	}
	ext := strings.TrimSpace(in.ExternalID)
	if len(ext) > maxExternalID {
		return newBelief{}, errs.Invalid("external_id", "is %d bytes; at most %d", len(ext), maxExternalID)
	}
	return newBelief{
		content: content, confidence: in.Confidence.resolve(DefaultConfidence), domainPath: in.DomainPath,
		source:   Source{Type: in.SourceType, Ref: in.SourceRef, Title: in.SourceTitle},
		entities: in.Entities, validFrom: from, validUntil: until, externalID: ext,
	}, nil
}

// maxExternalID bounds an external_id.
const maxExternalID = 256

func (s *Server) beliefCreate(ctx context.Context, c *registry.Call, in CreateInput) (*CreateResult, error) {
	return s.Create(ctx, c.Workspace, in)
}

// --- belief_supersede ------------------------------------------------------

type beliefSupersedeIn struct {
	OldBeliefID string           `json:"old_belief_id"`
	NewContent  string           `json:"new_content"`
	Reason      string           `json:"reason"`
	Confidence  *ConfidenceInput `json:"confidence"`
}

type supersedeResult struct {
	Success   bool      `json:"success"`
	OldBelief *Belief   `json:"old_belief"`
	NewBelief *Belief   `json:"new_belief"`
	Tensions  []Tension `json:"tensions"`
}

func (s *Server) beliefSupersede(ctx context.Context, c *registry.Call, in beliefSupersedeIn) (*supersedeResult, error) {
	content := strings.TrimSpace(in.NewContent)
	if content == "" {
		return nil, errs.Invalid("new_content", "must not be blank")
	}
	reason := strings.TrimSpace(in.Reason)
	if reason == "" {
		return nil, errs.Invalid("reason", "must not be blank")
	}
	res := &supersedeResult{Success: true}
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		old, err := s.loadBelief(ctx, tx, c.Workspace, in.OldBeliefID)
		if err != nil {
			return err
		}
		if old.Status != StatusActive {
			msg := fmt.Sprintf("belief %q is %s", old.ID, old.Status)
			if old.SupersededBy != "" {
				msg += fmt.Sprintf(" (superseded by %q); supersede the newest belief of the chain instead", old.SupersededBy)
			}
			return errs.E(errs.Conflict, "%s", msg)
		}
		ents := make([]EntityInput, 0, len(old.Entities))
		for _, e := range old.Entities {
			ents = append(ents, EntityInput{Name: e.Name, Type: e.Type, Role: e.Role})
		}
		nb := newBelief{
			content: content, confidence: in.Confidence.resolve(old.Confidence.Overall), domainPath: old.DomainPath,
			source: old.Source, entities: ents, supersedes: old.ID, supersedeReason: reason,
		}
		if in.Confidence == nil {
			nb.confidence = old.Confidence
		}
		nw, err := s.insertBelief(ctx, tx, c.Workspace, nb, nil)
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, s.st.Q(`UPDATE beliefs SET status = ?, superseded_by = ?, updated_at = ?
			WHERE id = ? AND workspace = ? AND status = ?`),
			StatusSuperseded, nw.ID, store.Micros(nw.CreatedAt), old.ID, c.Workspace, StatusActive)
		if err != nil {
			return fmt.Errorf("supersede belief: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errs.E(errs.Conflict, "belief %q was superseded concurrently", old.ID)
		}
		old.Status, old.SupersededBy, old.UpdatedAt = StatusSuperseded, nw.ID, nw.CreatedAt
		res.OldBelief, res.NewBelief = old, nw
		res.Tensions, err = s.detectTensions(ctx, tx, nw, old.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Tensions = s.judgeTensions(ctx, c.Workspace, res.Tensions)
	return res, nil
}

// --- belief_get ------------------------------------------------------------

type beliefGetIn struct {
	BeliefID        string `json:"belief_id"`
	IncludeHistory  bool   `json:"include_history"`
	IncludeTensions bool   `json:"include_tensions"`
}

type beliefGetResult struct {
	Success  bool      `json:"success"`
	Belief   *Belief   `json:"belief"`
	History  []*Belief `json:"history,omitempty"`
	Tensions []Tension `json:"tensions,omitempty"`
}

// maxChain bounds how far a supersession chain is followed.
const maxChain = 1000

func (s *Server) beliefGet(ctx context.Context, c *registry.Call, in beliefGetIn) (*beliefGetResult, error) {
	db := s.st.DB()
	b, err := s.loadBelief(ctx, db, c.Workspace, in.BeliefID)
	if err != nil {
		return nil, err
	}
	res := &beliefGetResult{Success: true, Belief: b}
	if in.IncludeHistory {
		// Walk back to the root, then forward to the newest, oldest first.
		var back []*Belief
		for cur := b; cur.Supersedes != "" && len(back) < maxChain; {
			prev, err := s.loadBelief(ctx, db, c.Workspace, cur.Supersedes)
			if err != nil {
				return nil, fmt.Errorf("history of %s: %w", b.ID, err)
			}
			back = append(back, prev)
			cur = prev
		}
		slices.Reverse(back)
		res.History = append(back, b)
		for cur := b; cur.SupersededBy != "" && len(res.History) < 2*maxChain; {
			next, err := s.loadBelief(ctx, db, c.Workspace, cur.SupersededBy)
			if err != nil {
				return nil, fmt.Errorf("history of %s: %w", b.ID, err)
			}
			res.History = append(res.History, next)
			cur = next
		}
	}
	if in.IncludeTensions {
		res.Tensions, err = s.listTensions(ctx, tensionFilter{workspace: c.Workspace, beliefID: b.ID, limit: 100})
		if err != nil {
			return nil, err
		}
		if res.Tensions == nil {
			res.Tensions = []Tension{}
		}
	}
	return res, nil
}

// --- belief_query ----------------------------------------------------------

type beliefQueryIn struct {
	Query             string   `json:"query"`
	DomainFilter      []string `json:"domain_filter"`
	EntityID          string   `json:"entity_id"`
	IncludeSuperseded bool     `json:"include_superseded"`
	ValidAt           string   `json:"valid_at"`
	ValidAfter        string   `json:"valid_after"`
	ValidBefore       string   `json:"valid_before"`
	Now               string   `json:"now"`
	Limit             int      `json:"limit"`
}

// validity reads belief_query's validity window into f.
func (in *beliefQueryIn) validity(f *searchFilter) error {
	var err error
	if f.validAt, err = parseTime("valid_at", in.ValidAt); err != nil {
		return err
	}
	if f.validAfter, err = parseTime("valid_after", in.ValidAfter); err != nil {
		return err
	}
	if f.validBefore, err = parseTime("valid_before", in.ValidBefore); err != nil {
		return err
	}
	if f.validAfter != nil && f.validBefore != nil && !f.validBefore.After(*f.validAfter) {
		return errs.Invalid("valid_before", "must be after valid_after")
	}
	return nil
}

type queryResult struct {
	Success    bool      `json:"success"`
	Beliefs    []*Belief `json:"beliefs"`
	TotalCount int       `json:"total_count"`
	// TotalCountExact is false when more beliefs matched than the search
	// examines (see docs/substrate.md); total_count is then a lower bound.
	TotalCountExact bool `json:"total_count_exact"`
	// QueryWindow is the window of time the query's dates name, when it
	// names any (see [queryWindow]).
	QueryWindow *queryWindow `json:"query_window,omitempty"`
}

// queryWindow is the window [From, To) that the dates named in a
// belief_query's query ("in June 2023", "last week") cover, read relative to
// now and narrowed to the caller's validity arguments (valid_after,
// valid_before, valid_at). The beliefs that became valid within it
// (valid_from in it) rank before the others; the words are not searched.
type queryWindow struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Empty reports that the query's dates and the caller's validity
	// arguments do not meet: no belief ranks first (the others are
	// returned as usual); From and To are then the query's dates alone.
	Empty bool `json:"empty,omitempty"`
}

// dated reads the dates query names, relative to now: it returns the query
// without them and the window they name, narrowed to f's validity bounds
// (nil when the query names none).
func dated(query string, now time.Time, f *searchFilter) (string, *queryWindow) {
	w, rest, ok := timeq.Parse(query, now)
	if !ok {
		return query, nil
	}
	from, to := w.From.UTC(), w.To.UTC()
	if f.validAfter != nil && f.validAfter.After(from) {
		from = *f.validAfter
	}
	if f.validBefore != nil && f.validBefore.Before(to) {
		to = *f.validBefore
	}
	if f.validAt != nil && f.validAt.Add(time.Microsecond).Before(to) {
		// Beliefs valid at valid_at became valid at or before it (the
		// stores keep microseconds).
		to = f.validAt.Add(time.Microsecond)
	}
	if !from.Before(to) {
		return rest, &queryWindow{From: w.From.UTC(), To: w.To.UTC(), Empty: true}
	}
	return rest, &queryWindow{From: from, To: to}
}

// Relevance weights (docs/substrate.md): relevance_score =
// wLexical*lexical + wConfidence*confidence.overall + wRecency*recency.
const (
	wLexical    = 0.6
	wConfidence = 0.25
	wRecency    = 0.15
	// recencyHalfLife is the age at which the recency term halves.
	recencyHalfLife = 90 * 24 * time.Hour
)

func (s *Server) beliefQuery(ctx context.Context, c *registry.Call, in beliefQueryIn) (*queryResult, error) {
	f := searchFilter{workspace: c.Workspace, includeSuperseded: in.IncludeSuperseded, want: in.Limit, workspaceStats: true}
	if err := in.validity(&f); err != nil {
		return nil, err
	}
	if len(in.DomainFilter) > 0 {
		dk, err := domainKey(in.DomainFilter)
		if err != nil {
			return nil, errs.Invalid("domain_filter", "%s", strings.TrimPrefix(err.(*errs.Error).Message, "domain_path: "))
		}
		f.domainPrefix = dk
	}
	if in.EntityID != "" {
		if _, err := s.loadEntity(ctx, s.st.DB(), c.Workspace, in.EntityID); err != nil {
			return nil, err
		}
		f.entityIDs = []string{in.EntityID}
	}
	now := s.now()
	if in.Now != "" {
		t, err := parseTime("now", in.Now)
		if err != nil {
			return nil, err
		}
		now = *t
	}
	query, win := dated(in.Query, now, &f)
	res, err := s.search(ctx, s.st.Prepared(), query, f)
	if err != nil {
		return nil, err
	}
	maxLex := 0.0
	for i, h := range res.hits {
		// Weighed by its coverage of the query: a belief matching the
		// query's rare terms outranks one matching a common term often.
		res.hits[i].lexical = h.lexical * h.coverage
		maxLex = math.Max(maxLex, res.hits[i].lexical)
	}
	hits := res.hits
	for i := range hits {
		lex := 0.0
		if maxLex > 0 {
			lex = hits[i].lexical / maxLex
		}
		hits[i].score = math.Round((wLexical*lex+wConfidence*hits[i].overall+wRecency*hits[i].recency(now))*1e4) / 1e4
		hits[i].dated = win != nil && !win.Empty && hits[i].validFrom != nil &&
			!hits[i].validFrom.Before(win.From) && hits[i].validFrom.Before(win.To)
	}
	slices.SortFunc(hits, func(x, y hit) int {
		if x.dated != y.dated {
			if x.dated {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		return cmp.Compare(y.seq, x.seq)
	})
	// Hybrid search (issue 23): fused with the vector ranking when an
	// embedding model is configured (hybrid.go).
	hits, res.total = s.fuseVectors(ctx, c.Workspace, query, f, hits, in.Limit, res.total)
	if len(hits) > in.Limit {
		hits = hits[:in.Limit]
	}
	seqs := make([]int64, len(hits))
	scores := make(map[int64]float64, len(hits))
	for i, h := range hits {
		seqs[i], scores[h.seq] = h.seq, h.score
	}
	out, err := s.loadBeliefsBySeq(ctx, s.st.Prepared(), seqs)
	if err != nil {
		return nil, err
	}
	for _, b := range out {
		score := scores[b.seq]
		b.RelevanceScore = &score
	}
	return &queryResult{Success: true, Beliefs: out, TotalCount: res.total, TotalCountExact: !res.capped, QueryWindow: win}, nil
}

// Get returns belief id of the workspace with its entities (NOT_FOUND when
// there is none).
func (s *Server) Get(ctx context.Context, workspace, id string) (*Belief, error) {
	return s.loadBelief(ctx, s.st.DB(), workspace, id)
}
