package substrate

// The write path of belief_create, belief_create_batch and `nexus import
// beliefs` (issue 12): one path for one belief and for a thousand.
//
//  1. Validate every item; an item refused is reported and the others go on.
//     Items whose external_id the workspace already holds are skipped.
//  2. Outside any write transaction, mark what the store holds (SQLite: the
//     highest belief sequence number; PostgreSQL: the current snapshot), then
//     find and judge each item's tension candidates in the store, the items
//     in parallel, and judge each item against the items before it in the
//     batch, in memory.
//  3. In one short write transaction: take the scopes the items touch
//     (PostgreSQL advisory locks per domain and entity, so unrelated creates
//     do not wait for each other; SQLite has one writer anyway), load the
//     beliefs committed since the mark and judge the items against them,
//     drop findings whose candidate is no longer active, insert the items
//     and their tensions.
//
// A create that commits while another is between its steps 2 and 3 is
// therefore still compared with it: whichever takes the shared scope second
// finds the first among the beliefs committed since its mark.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/tension"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// draft is one item of a create on its way to the store.
type draft struct {
	index int
	nb    newBelief
	// b is the belief as it will be stored, as far as the store knew in
	// step 2 (entities found by name or alias carry their ids).
	b      *Belief
	dk     string
	scoped bool     // has a domain path or entities: candidates must share one
	keys   []string // relation keys: "d:" domain, "e:" entity id, "n:" name or alias key
	terms  []string
	keyset map[string]bool   // textsearch.Key of each token of the content
	q      *textsearch.Query // terms prepared for scoring, made by query
	df     map[string]int
	n      int
	// cands are the store's candidates judged in step 2 (kept to judge
	// again if the stored entities differ from the draft's).
	cands    []*Belief
	compared map[string]bool
	findings []finding

	fail     *errs.Error // why the item was left out
	existing string      // the belief already holding the item's external_id
	stored   *Belief
	tensions []Tension
}

// query returns d's terms prepared for scoring. Not safe for concurrent
// use: one goroutine judges a draft at a time.
func (d *draft) query() *textsearch.Query {
	if d.q == nil {
		d.q = textsearch.NewQuery(d.terms)
	}
	return d.q
}

type finding struct {
	a       *Belief
	f       TensionFinding
	inBatch bool
}

// createMany creates items in workspace along the path above. batch reports
// an item's own fault (bad input) in its draft and goes on; otherwise the
// single item's fault is returned as the error. A store error fails the
// whole call and writes nothing.
func (s *Server) createMany(ctx context.Context, workspace string, items []BatchInput, batch bool) ([]*draft, error) {
	drafts := make([]*draft, len(items))
	var live []*draft
	for i, in := range items {
		d := &draft{index: i}
		drafts[i] = d
		nb, err := validateCreate(in)
		if err != nil {
			var e *errs.Error
			if !batch || !errors.As(err, &e) {
				return nil, err
			}
			d.fail = e
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("new belief id: %w", err)
		}
		nb.id = id.String()
		d.nb = nb
		live = append(live, d)
	}
	// Step 2 reads in one read transaction on SQLite (see reading); a batch
	// judged by several workers gives each its own.
	var (
		mark string
		size int
	)
	an := newMemo(s.cache)
	prepare := func(q querier) error {
		if err := s.skipExisting(ctx, q, workspace, live); err != nil {
			return err
		}
		live = slices.DeleteFunc(live, func(d *draft) bool { return d.existing != "" })
		var err error
		if mark, err = s.mark(ctx, q); err != nil {
			return err
		}
		size, err = s.observeSize(ctx, mark, batch)
		return err
	}
	if judgeWorkers(len(live)) <= 1 {
		err := s.reading(ctx, func(q querier) error {
			if err := prepare(q); err != nil {
				return err
			}
			return s.judgeInStore(ctx, q, an, workspace, live)
		})
		if err != nil {
			return nil, err
		}
	} else {
		if err := prepare(s.st.Prepared()); err != nil {
			return nil, err
		}
		if err := s.judgeInStore(ctx, nil, an, workspace, live); err != nil {
			return nil, err
		}
	}
	judgeInBatch(an, live)
	if s.judged != nil {
		s.judged()
	}

	// Every item was validated in step 1, so the store refuses none for its
	// input; if it does, the whole call fails and writes nothing. (No
	// savepoint per item: they cost round trips on PostgreSQL.)
	if err := s.write(ctx, an, workspace, live, mark); err != nil {
		return nil, err
	}
	s.cacheStored(an, live)
	s.analyzeGrown(ctx, size+len(live))
	return drafts, nil
}

// cacheStored puts the beliefs the call stored, now committed, in the
// server's cache, with the analyses their drafts were judged with (when the
// stored entities are the draft's, the same input).
func (s *Server) cacheStored(an *memo, drafts []*draft) {
	for _, d := range drafts {
		b := d.stored
		if b == nil || b.seq == 0 {
			continue
		}
		var a *tension.Analyzed
		if sameEntities(d.b.Entities, b.Entities) {
			a = an.of(d.b)
		}
		s.cache.putStored(b, a)
		if s.st.Dialect() == store.SQLite {
			s.scopes.putStored(b)
		}
	}
}

// reading runs fn with a querier for step 2's reads. On SQLite that is a
// read transaction: outside one, every statement starts its own, and a
// statement that starts after another connection's commit finds its
// connection's page cache dropped (SQLite resets the cache of a WAL
// database that changed) and reads every page it needs again, so that with
// creates committing hundreds of times a second a create's dozen reads each
// started cold (issue 23: a quarter of a create's CPU went to reading and
// decoding pages and the system calls of mapping them again). One read
// transaction starts cold once. fn must not use the pool while it runs
// (the transaction holds a connection: waiting for another could wait for
// ever). On PostgreSQL fn runs on the pool: a transaction would only add
// round trips.
func (s *Server) reading(ctx context.Context, fn func(q querier) error) error {
	if s.st.Dialect() != store.SQLite {
		return fn(s.st.Prepared())
	}
	tx, err := s.st.DB().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(s.st.Prepared().InTx(tx))
}

// judgeWorkers is how many workers judge n drafts in the store.
func judgeWorkers(n int) int { return min(n, runtime.GOMAXPROCS(0)) }

// mark records what the store holds before the candidates are read.
func (s *Server) mark(ctx context.Context, q querier) (string, error) {
	var m string
	query := `SELECT CAST(COALESCE(MAX(seq), 0) AS TEXT) FROM beliefs`
	if s.st.Dialect() == store.Postgres {
		query = `SELECT pg_current_snapshot()::text`
	}
	if err := q.QueryRowContext(ctx, query).Scan(&m); err != nil {
		return "", fmt.Errorf("belief mark: %w", err)
	}
	return m, nil
}

// judgeInStore resolves each draft's entities, finds its tension candidates
// in the store and judges them: with q when one worker does (see
// judgeWorkers), else the drafts in parallel, each worker in its own read
// transaction (q is then unused).
func (s *Server) judgeInStore(ctx context.Context, q querier, an *memo, workspace string, drafts []*draft) error {
	workers := judgeWorkers(len(drafts))
	if workers <= 1 {
		for _, d := range drafts {
			if err := s.judgeDraft(ctx, q, an, workspace, d); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		fail error
	)
	for range workers {
		wg.Go(func() {
			err := s.reading(ctx, func(q querier) error {
				for {
					mu.Lock()
					if next == len(drafts) || fail != nil {
						mu.Unlock()
						return nil
					}
					d := drafts[next]
					next++
					mu.Unlock()
					if err := s.judgeDraft(ctx, q, an, workspace, d); err != nil {
						return err
					}
				}
			})
			if err != nil {
				mu.Lock()
				if fail == nil {
					fail = err
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return fail
}

// judgeDraft fills d from the store (read only): the belief it will be, its
// relation keys and terms, and its findings against the store.
func (s *Server) judgeDraft(ctx context.Context, db querier, an *memo, workspace string, d *draft) error {
	d.dk, _ = domainKey(d.nb.domainPath)
	d.scoped = d.dk != "" || len(d.nb.entities) > 0
	if d.dk != "" {
		d.keys = append(d.keys, "d:"+d.dk)
	}
	b := &Belief{ID: d.nb.id, Workspace: workspace, Content: d.nb.content, Confidence: d.nb.confidence,
		DomainPath: d.nb.domainPath, ValidFrom: d.nb.validFrom, ValidUntil: d.nb.validUntil, Status: StatusActive}
	f := searchFilter{workspace: workspace, requireTerms: true, maxCandidates: tensionSearchCap, window: tensionWindow, domainExact: d.dk}
	type linkKey struct{ entity, role string }
	linked := map[linkKey]bool{}
	for _, ein := range d.nb.entities {
		name := strings.Join(strings.Fields(ein.Name), " ")
		key := normalizeKey(name)
		role := cmp.Or(ein.Role, "subject")
		d.keys = append(d.keys, "n:"+key)
		for _, a := range ein.Aliases {
			if ak := normalizeKey(a); ak != "" {
				d.keys = append(d.keys, "n:"+ak)
			}
		}
		e, err := an.findEntity(ctx, s, db, workspace, key)
		if err != nil {
			return err
		}
		link := EntityLink{Name: name, Role: role}
		ident := "n:" + key
		if e != nil {
			link.ID, link.Name, link.Type = e.ID, e.Name, e.Type
			ident = "e:" + e.ID
			d.keys = append(d.keys, ident)
			f.entityIDs = append(f.entityIDs, e.ID)
		}
		if k := (linkKey{ident, role}); !linked[k] {
			linked[k] = true
			b.Entities = append(b.Entities, link)
		}
	}
	slices.SortFunc(b.Entities, func(x, y EntityLink) int { return strings.Compare(x.Name+"\x00"+x.Role, y.Name+"\x00"+y.Role) })
	slices.Sort(d.keys)
	d.keys = slices.Compact(d.keys)
	d.b = b
	d.compared = map[string]bool{}
	d.terms = textsearch.Terms(b.Content)
	d.keyset = keySet(b.Content)
	d.df = make(map[string]int, len(d.terms))
	for _, t := range d.terms {
		n, err := an.docFreq(ctx, s, db, t)
		if err != nil {
			return err
		}
		d.df[t] = n
	}
	n, err := s.corpusSize(ctx, db)
	if err != nil {
		return err
	}
	d.n = n
	// A scoped belief whose domain and entities the store has never seen
	// has no candidates there; a belief that claims nothing (questions,
	// social talk) is in tension with nothing.
	if d.scoped && f.domainExact == "" && len(f.entityIDs) == 0 || !tension.HasClaim(b.Content) {
		return nil
	}
	f.known = d.df
	f.memo = an
	res, err := s.search(ctx, db, b.Content, f)
	if err != nil {
		return fmt.Errorf("tension candidates: %w", err)
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
	if d.cands, err = an.loadBeliefsBySeq(ctx, s, db, seqs); err != nil {
		return err
	}
	d.findings = judge(an, an.of(d.b), d.cands, d.compared, false)
	return nil
}

// judge compares b (analysed) with each candidate not yet compared and
// returns what the detector reports; an caches their analyses.
func judge(an *memo, b *tension.Analyzed, cands []*Belief, compared map[string]bool, inBatch bool) []finding {
	var out []finding
	for _, a := range cands {
		if compared[a.ID] {
			continue
		}
		compared[a.ID] = true
		if f, ok := tension.DetectAnalyzed(an.of(a), b); ok {
			out = append(out, finding{a: a, f: f, inBatch: inBatch})
		}
	}
	return out
}

// keySet is the set of textsearch.Key of text's tokens.
func keySet(text string) map[string]bool {
	toks := textsearch.Tokens(text)
	out := make(map[string]bool, len(toks))
	for _, t := range toks {
		out[textsearch.Key(t)] = true
	}
	return out
}

// related reports whether a belief with relation keys keys (and scoped as
// given) would take other as a candidate: the same domain or a shared
// entity, or anything when it has neither.
func related(scoped bool, keys, other []string) bool {
	if !scoped {
		return true
	}
	for _, k := range keys {
		if _, ok := slices.BinarySearch(other, k); ok {
			return true
		}
	}
	return false
}

// selective returns d's rarest terms whose document frequencies add up to at
// most tensionSearchCap (at least one), as the store search selects
// candidates.
func selective(d *draft) []string {
	terms := slices.Clone(d.terms)
	slices.SortStableFunc(terms, func(a, b string) int { return d.df[a] - d.df[b] })
	var out []string
	sum := 0
	for i, t := range terms {
		if sum += d.df[t]; i > 0 && sum > tensionSearchCap {
			break
		}
		out = append(out, t)
	}
	return out
}

// writeDrafts is step 3: in tx, the drafts' scopes, the beliefs committed
// since mark, the inserts and the tensions.
func (s *Server) writeDrafts(ctx context.Context, tx *sql.Tx, an *memo, workspace string, drafts []*draft, mark string, g *txGroup) error {
	if len(drafts) == 0 {
		return nil
	}
	if err := s.lockScopes(ctx, tx, workspace, drafts); err != nil {
		return err
	}
	// Another writer may have stored an external id since step 1.
	var withExt []*draft
	for _, d := range drafts {
		if d.nb.externalID != "" {
			withExt = append(withExt, d)
		}
	}
	if err := s.skipExisting(ctx, tx, workspace, withExt); err != nil {
		return err
	}
	ptx := s.st.Prepared().InTx(tx)
	// The rows first (entities found or created), which complete each
	// item's relation keys; then the beliefs committed since the mark that
	// could be a candidate of one of the items.
	w := newTxWrites()
	var (
		rows    []beliefRow
		written []*draft
		keys    [][]string
	)
	for _, d := range drafts {
		if d.existing != "" {
			continue
		}
		r, err := s.beliefRow(ctx, ptx, workspace, d.nb, w)
		if err != nil {
			return err
		}
		rows = append(rows, r)
		written = append(written, d)
		keys = append(keys, storedKeys(d, r.b))
	}
	since, err := s.committedSince(ctx, ptx, an, workspace, mark, g, sinceScope(written, keys))
	if err != nil {
		return err
	}
	sinceKeys := make([][]string, len(since))
	for i, b := range since {
		sinceKeys[i] = b.keys()
	}
	sinceIx := newMemIndex(since, sinceKeys)
	gone, err := s.inactive(ctx, ptx, workspace, drafts)
	if err != nil {
		return err
	}
	// An earlier item of the call that was not stored (left out, or its
	// external id found meanwhile) is no tension's belief.
	for _, d := range drafts {
		if d.existing != "" {
			gone[d.nb.id] = true
		}
	}
	// The rows in one multi-row insert per chunk (raw tx: its text varies
	// with the count, not worth preparing), then each item's tensions,
	// whose other belief may be an earlier item.
	if err := s.insertBeliefs(ctx, tx, rows, w); err != nil {
		return err
	}
	for i, d := range written {
		if err := s.finish(ctx, ptx, an, d, rows[i].b, keys[i], sinceIx, gone); err != nil {
			return err
		}
	}
	if g != nil {
		// The group indexes its beliefs at its end.
		for _, d := range drafts {
			if d.stored != nil {
				g.earlier = append(g.earlier, d.stored)
			}
		}
		g.fts.add(w.fts)
		w.fts = ftsPending{}
		return s.flushWrites(ctx, ptx, w)
	}
	// Last, so that no later statement flushes part of it (see ftsPending).
	last := w.fts.last
	if err := s.flushWrites(ctx, ptx, w); err != nil {
		return err
	}
	return s.compactIndex(ctx, ptx, last)
}

// finish judges the stored belief b against the beliefs committed since the
// mark, keeps the findings whose candidate is still there, and stores the
// tensions.
func (s *Server) finish(ctx context.Context, tx querier, an *memo, d *draft, b *Belief, keys []string, since *memIndex, gone map[string]bool) error {
	d.stored = b
	// Copies: a group written again alone (group.go) finishes again.
	findings, compared := slices.Clip(d.findings), maps.Clone(d.compared)
	if !sameEntities(d.b.Entities, b.Entities) {
		// The store resolved an entity otherwise than step 2 saw it (created
		// or renamed meanwhile): judge the store's candidates again.
		var batchCands []*Belief
		for _, f := range findings {
			if f.inBatch {
				batchCands = append(batchCands, f.a)
			}
		}
		compared = map[string]bool{}
		in := tension.Analyze(tensionInput(b))
		findings = append(judge(an, in, d.cands, compared, false), judge(an, in, batchCands, compared, true)...)
	}
	pool := slices.DeleteFunc(since.candidates(d, keys, len(since.beliefs)), func(j int) bool { return compared[since.beliefs[j].ID] })
	findings = append(findings, judge(an, an.of(d.b), since.best(d, pool), compared, false)...)
	d.tensions = []Tension{}
	for _, f := range findings {
		if gone[f.a.ID] {
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("new tension id: %w", err)
		}
		t := Tension{
			ID: id.String(), Type: f.f.Type, Severity: f.f.Severity, Status: TensionDetected,
			Description: f.f.Reason, BeliefAID: f.a.ID, BeliefBID: b.ID, Workspace: b.Workspace, CreatedAt: b.CreatedAt,
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO tensions (id, workspace, belief_a, belief_b, type, severity,
			severity_rank, status, description, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.ID, t.Workspace, t.BeliefAID, t.BeliefBID, t.Type, t.Severity, severityRank[t.Severity], t.Status,
			t.Description, store.Micros(t.CreatedAt)); err != nil {
			return fmt.Errorf("store tension: %w", err)
		}
		d.tensions = append(d.tensions, t)
	}
	return nil
}

func sameEntities(a, b []EntityLink) bool {
	return slices.EqualFunc(a, b, func(x, y EntityLink) bool { return x.Name == y.Name && x.Role == y.Role })
}

// keys are a stored belief's relation keys.
func (b *Belief) keys() []string {
	var out []string
	if dk, _ := domainKey(b.DomainPath); dk != "" {
		out = append(out, "d:"+dk)
	}
	for _, e := range b.Entities {
		out = append(out, "e:"+e.ID)
	}
	slices.Sort(out)
	return out
}

// inactive returns which of the store candidates the drafts found tensions
// with are no longer active (superseded or archived since step 2).
func (s *Server) inactive(ctx context.Context, q querier, workspace string, drafts []*draft) (map[string]bool, error) {
	var ids []string
	for _, d := range drafts {
		for _, f := range d.findings {
			if !f.inBatch {
				ids = append(ids, f.a.ID)
			}
		}
	}
	gone := map[string]bool{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		// By id alone: the unique index on id is the plan, whatever the
		// planner would make of the workspace and status.
		rows, err := q.QueryContext(ctx, s.st.Q(inactiveQuery(len(chunk))), args...)
		if err != nil {
			return nil, fmt.Errorf("re-check candidates: %w", err)
		}
		for rows.Next() {
			var id, ws, status string
			if err := rows.Scan(&id, &ws, &status); err != nil {
				rows.Close()
				return nil, fmt.Errorf("re-check candidates: %w", err)
			}
			if ws == workspace && status != StatusActive {
				gone[id] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("re-check candidates: %w", err)
		}
	}
	return gone, nil
}

// externalQuery finds the beliefs of a workspace holding n external ids.
func externalQuery(n int) string {
	return `SELECT external_id, id FROM beliefs WHERE workspace = ? AND external_id IN (` + placeholders(n) + `)`
}

// inactiveQuery reads the workspace and status of n beliefs by id.
func inactiveQuery(n int) string {
	return `SELECT id, workspace, status FROM beliefs WHERE id IN (` + placeholders(n) + `)`
}

// lockScopes takes, on PostgreSQL, the advisory locks of the scopes the
// drafts touch, until the transaction ends: the workspace shared (exclusive
// when a draft has neither domain nor entities, since any belief is its
// candidate), then each domain and entity key exclusive, in one order, so
// that two creates that could be in tension take turns and unrelated ones do
// not wait. SQLite needs none: its write transactions already take turns.
func (s *Server) lockScopes(ctx context.Context, tx *sql.Tx, workspace string, drafts []*draft) error {
	if s.st.Dialect() != store.Postgres {
		return nil
	}
	exclusive := false
	var keys []int64
	for _, d := range drafts {
		exclusive = exclusive || !d.scoped
		for _, k := range d.keys {
			keys = append(keys, lockKey(workspace, k))
		}
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.ExecContext(ctx, `SELECT `+fn+`($1)`, lockKey(workspace, "")); err != nil {
		return fmt.Errorf("lock workspace: %w", err)
	}
	if exclusive || len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if _, err := tx.ExecContext(ctx, `SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS u(k)`, keys); err != nil {
		return fmt.Errorf("lock belief scopes: %w", err)
	}
	return nil
}

// lockKey is the advisory lock key of a relation key in workspace.
func lockKey(workspace, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("belief-scope\x00" + workspace + "\x00" + key))
	return int64(h.Sum64())
}
