package substrate

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unique"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Lexical search (docs/substrate.md, "Relevance"). The database finds
// candidates through its full-text index (SQLite FTS5 or PostgreSQL GIN);
// Nexus scores them with BM25 in Go, the same way on both stores:
//
//  1. The query's terms are looked up in the term statistics (document
//     frequency, cached for [statsTTL]).
//  2. The rarest terms whose document frequencies add up to at most
//     [candidateCap] select the candidates; very common terms (low IDF) only
//     score. When that finds fewer beliefs than wanted, all terms select.
//  3. At most [candidateCap] candidates under the filters are read, newest
//     first, and scored with BM25 over all query terms.

const (
	// candidateCap bounds the beliefs one search reads and scores.
	candidateCap = 1000
	// statsTTL is how long a term's document frequency is reused.
	statsTTL = 5 * time.Minute
	// maxStats bounds the term statistics cache.
	maxStats = 20000
	// pgIndexMatches: on PostgreSQL, candidates matching at most this many
	// times the cap are read through the full-text index (see
	// candidatesSQL).
	pgIndexMatches = 10
	// maxRead bounds, in multiples of the cap, the full-text matches (in
	// the whole store) the selective terms of a search may have (see
	// selectTerms).
	maxRead = 10
)

// docFreq returns the number of beliefs (in all workspaces) whose content
// matches term.
func (s *Server) docFreq(ctx context.Context, q querier, term string) (int, error) {
	fetch := func(q querier) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var query, arg string
			if s.st.Dialect() == store.Postgres {
				// A common term: from PostgreSQL's statistics (common_pg.go).
				if f, ok, err := s.commonTermFreq(ctx, term); err != nil {
					return 0, err
				} else if ok {
					n, err := s.corpusSize(ctx, q)
					if err != nil {
						return 0, err
					}
					return max(1, int(f*float64(n)+0.5)), nil
				}
				query, arg = `SELECT COUNT(*) FROM beliefs WHERE tsv @@ to_tsquery('english', $1)`, term
			} else {
				query, arg = `SELECT COUNT(*) FROM beliefs_fts WHERE beliefs_fts MATCH ?`, textsearch.FTS5Match([]string{term})
			}
			// One plan for every term (not PlanEach): the full-text index's,
			// the only index the query can use, and the right one for the
			// terms that reach it (common terms come from the statistics).
			var n int
			if err := q.QueryRowContext(ctx, query, arg).Scan(&n); err != nil {
				return 0, fmt.Errorf("term statistics: %w", err)
			}
			return n, nil
		}
	}
	return s.stats.Get(ctx, "df:"+term, fetch(q), fetch(s.st.DB()))
}

// corpusSize approximates the number of beliefs by the highest sequence
// number, which costs one index lookup.
func (s *Server) corpusSize(ctx context.Context, q querier) (int, error) {
	fetch := func(q querier) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var n int
			if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM beliefs`).Scan(&n); err != nil {
				return 0, fmt.Errorf("corpus size: %w", err)
			}
			return n, nil
		}
	}
	return s.stats.Get(ctx, "n", fetch(q), fetch(s.st.DB()))
}

type searchFilter struct {
	workspace         string
	includeSuperseded bool
	domainPrefix      string   // match domain_key by prefix
	domainExact       string   // for tension candidates: same domain...
	entityIDs         []string // ...or a shared entity (OR'd with domainExact)
	excludeIDs        []string
	// requireTerms makes a query without terms find nothing (instead of the
	// newest beliefs).
	requireTerms bool
	// want is how many hits the caller needs: when the selective terms find
	// fewer, all terms select candidates. Zero disables that second pass.
	want int
	// maxCandidates bounds the candidates read and scored; zero means
	// candidateCap.
	maxCandidates int
	// matches estimates how many beliefs (in all workspaces) match the
	// terms, from their document frequencies; PostgreSQL's plan follows it.
	matches int
	// window, when set, bounds the full-text matches examined (newest
	// first) before the filters: a search's work stays bounded even when
	// the filters keep few of them or the term statistics are stale (a
	// store growing fast under a bulk load). Tension candidates use it;
	// belief_query does not, so that it finds old matches too.
	window int
	// validAt keeps the beliefs valid at that instant: valid_from absent or
	// at or before it, valid_until absent or after it. validAfter and
	// validBefore keep those whose validity [valid_from, valid_until)
	// overlaps the window between them (either may be absent). Only
	// candidatesSQL applies them (belief_query; windowed searches do not
	// use them).
	validAt, validAfter, validBefore *time.Time
	// workspaceStats has BM25 weigh the terms with the workspace's
	// statistics instead of the store's (belief_query).
	workspaceStats bool
	// known holds document frequencies the caller has already read.
	known map[string]int
	// memo, when set with a window on SQLite, has the search read each
	// match's row once per call (see windowCandidates).
	memo *memo
}

func (f *searchFilter) cap() int {
	if f.maxCandidates > 0 {
		return f.maxCandidates
	}
	return candidateCap
}

// hit is a search candidate: what ranking needs, not the full belief.
type hit struct {
	seq       int64
	content   string
	overall   float64
	createdAt time.Time
	validFrom *time.Time
	lexical   float64 // BM25, higher is better
	// coverage is the share of the query's IDF the belief's matching
	// terms carry (textsearch.BM25Coverage); belief_query weighs lexical
	// by it.
	coverage float64
	// dated reports that the belief became valid within the window the
	// query's dates name (belief_query ranks those first).
	dated bool
	score float64 // relevance_score, set by belief_query
}

// recency is 1 for a belief created (or valid from) now, halving every
// recencyHalfLife.
func (h *hit) recency(now time.Time) float64 {
	t := h.createdAt
	if h.validFrom != nil && h.validFrom.After(t) {
		t = *h.validFrom
	}
	age := now.Sub(t)
	if age <= 0 {
		return 1
	}
	return math.Pow(0.5, float64(age)/float64(recencyHalfLife))
}

type searchResult struct {
	hits   []hit
	total  int  // candidates found under the filters
	capped bool // more than candidateCap matched; total is a lower bound
}

// search finds the beliefs under f that match the query and scores them.
func (s *Server) search(ctx context.Context, q querier, query string, f searchFilter) (*searchResult, error) {
	terms := textsearch.Terms(query)
	if len(terms) == 0 {
		if f.requireTerms {
			return &searchResult{}, nil
		}
		return s.candidates(ctx, q, nil, f)
	}
	df := make(map[string]int, len(terms))
	var matching []string
	for _, t := range terms {
		n, ok := f.known[t]
		if !ok {
			var err error
			if n, err = s.docFreq(ctx, q, t); err != nil {
				return nil, err
			}
		}
		df[t] = n
		if n > 0 {
			matching = append(matching, t)
		}
	}
	if len(matching) == 0 {
		return &searchResult{}, nil
	}
	sdf, n, err := s.scoringStats(ctx, q, terms, df, f)
	if err != nil {
		return nil, err
	}
	selective, matches := selectTerms(matching, df, sdf, f.cap())
	f.matches = matches
	res, err := s.candidates(ctx, q, selective, f)
	if err != nil {
		return nil, err
	}
	if len(selective) < len(matching) && !res.capped && len(res.hits) < f.want {
		f.matches = 0
		for _, t := range matching {
			f.matches += df[t]
		}
		if res, err = s.candidates(ctx, q, matching, f); err != nil {
			return nil, err
		}
	}
	scoreBM25(res.hits, terms, sdf, n)
	return res, nil
}

// selectTerms picks the terms that select candidates: the rarest under the
// filters first (by sdf, the search's statistics: its workspace's for
// belief_query), as long as their matches under the filters add up to at
// most limit and their matches in the whole store (df, what the index
// reads) to at most maxRead. It returns them and the estimate of the
// matches the index reads (counting the first term left out, as
// PostgreSQL's plan expects; see candidatesSQL).
//
// In a workspace that holds the whole store the two counts are one and the
// rule is the old one: terms whose frequencies add up to at most limit. In
// a workspace of a shared store, a term common elsewhere but not in the
// workspace still selects, so an answer that shares only that word with the
// question is a candidate.
func selectTerms(matching []string, df, sdf map[string]int, limit int) ([]string, int) {
	slices.SortStableFunc(matching, func(a, b string) int {
		if c := sdf[a] - sdf[b]; c != 0 {
			return c
		}
		return df[a] - df[b]
	})
	selective := matching[:1]
	inFilter, read := sdf[matching[0]], df[matching[0]]
	for _, t := range matching[1:] {
		inFilter += sdf[t]
		read += df[t]
		if inFilter > limit || read > maxRead*limit {
			break
		}
		selective = append(selective, t)
	}
	return selective, read
}

// scoringStats returns the document frequencies and corpus size BM25 weighs
// the terms with. A search with workspaceStats counts them in its workspace
// alone (see [Server.workspaceDocFreq]): a term common in the workspace is
// common for its ranking, however rare it is in the rest of the store. Other
// searches, and a workspace that holds the whole store, use the store's
// statistics (df, already read for selection).
func (s *Server) scoringStats(ctx context.Context, q querier, terms []string, df map[string]int, f searchFilter) (map[string]int, int, error) {
	if f.workspaceStats {
		sole, err := s.soleWorkspace(ctx, q, f.workspace)
		if err != nil {
			return nil, 0, err
		}
		if !sole {
			n, err := s.workspaceSize(ctx, q, f.workspace)
			if err != nil {
				return nil, 0, err
			}
			wdf := make(map[string]int, len(terms))
			for _, t := range terms {
				if df[t] == 0 {
					continue
				}
				if wdf[t], err = s.workspaceDocFreq(ctx, q, f.workspace, t); err != nil {
					return nil, 0, err
				}
			}
			return wdf, n, nil
		}
	}
	n, err := s.corpusSize(ctx, q)
	return df, n, err
}

// soleWorkspace reports whether ws is the only workspace with beliefs (two
// index seeks, cached as the other statistics): its statistics are then the
// store's.
func (s *Server) soleWorkspace(ctx context.Context, q querier, ws string) (bool, error) {
	fetch := func(q querier) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var other int
			if err := q.QueryRowContext(ctx, s.st.Q(`SELECT CASE WHEN EXISTS (SELECT 1 FROM beliefs WHERE workspace < ?)
				OR EXISTS (SELECT 1 FROM beliefs WHERE workspace > ?) THEN 1 ELSE 2 END`), ws, ws).Scan(&other); err != nil {
				return 0, fmt.Errorf("workspace statistics: %w", err)
			}
			return other, nil // 2: sole (the cache does not keep zeros)
		}
	}
	v, err := s.stats.Get(ctx, "sole:"+ws, fetch(q), fetch(s.st.DB()))
	return v == 2, err
}

// workspaceSize is the number of beliefs of workspace ws (one scan of its
// index entries, cached).
func (s *Server) workspaceSize(ctx context.Context, q querier, ws string) (int, error) {
	fetch := func(q querier) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var n int
			if err := q.QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM beliefs WHERE workspace = ?`), ws).Scan(&n); err != nil {
				return 0, fmt.Errorf("workspace statistics: %w", err)
			}
			return n, nil
		}
	}
	return s.stats.Get(ctx, "n:"+ws, fetch(q), fetch(s.st.DB()))
}

// workspaceDocFreq returns the number of beliefs of workspace ws whose
// content matches term. It reads each of the term's matches in the store
// once (cached as [Server.docFreq]).
func (s *Server) workspaceDocFreq(ctx context.Context, q querier, ws, term string) (int, error) {
	fetch := func(q querier) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var query, arg string
			if s.st.Dialect() == store.Postgres {
				query, arg = `SELECT COUNT(*) FROM beliefs WHERE workspace = $1 AND tsv @@ to_tsquery('english', $2)`, term
			} else {
				query, arg = `SELECT COUNT(*) FROM beliefs_fts JOIN beliefs b ON b.seq = beliefs_fts.rowid
					WHERE b.workspace = ? AND beliefs_fts MATCH ?`, textsearch.FTS5Match([]string{term})
			}
			var n int
			if err := q.QueryRowContext(ctx, query, ws, arg).Scan(&n); err != nil {
				return 0, fmt.Errorf("term statistics: %w", err)
			}
			return n, nil
		}
	}
	return s.stats.Get(ctx, "df:"+ws+"\x00"+term, fetch(q), fetch(s.st.DB()))
}

// candidates reads up to candidateCap beliefs under f that match any of
// terms (all beliefs under f when terms is empty), newest first.
func (s *Server) candidates(ctx context.Context, q querier, terms []string, f searchFilter) (*searchResult, error) {
	if f.memo != nil && f.window > 0 && len(terms) > 0 && s.st.Dialect() == store.SQLite {
		return s.windowCandidates(ctx, q, terms, f)
	}
	if s.fromScope(f) && len(terms) > 0 {
		query, args, planEach := s.scopedCandidatesSQL(terms, f)
		if planEach {
			args = s.st.PlanEach(args)
		}
		return s.readCandidates(ctx, q, query, args, f.cap())
	}
	query, args := s.candidatesSQL(terms, f)
	return s.readCandidates(ctx, q, query, s.st.PlanEach(args), f.cap())
}

// readCandidates runs a candidates query (candidatesSQL's or
// scopedCandidatesSQL's; args marked by PlanEach where the query needs it)
// and keeps at most limit hits, saying whether there were more.
func (s *Server) readCandidates(ctx context.Context, q querier, query string, args []any, limit int) (*searchResult, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search beliefs: %w", err)
	}
	defer rows.Close()
	res := &searchResult{}
	for rows.Next() {
		var h hit
		var created int64
		var validFrom sql.NullInt64
		if err := rows.Scan(&h.seq, &h.content, &h.overall, &created, &validFrom); err != nil {
			return nil, fmt.Errorf("search beliefs: %w", err)
		}
		h.createdAt = store.FromMicros(created)
		if validFrom.Valid {
			t := store.FromMicros(validFrom.Int64)
			h.validFrom = &t
		}
		res.hits = append(res.hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search beliefs: %w", err)
	}
	if len(res.hits) > limit {
		res.hits, res.capped = res.hits[:limit], true
	}
	res.total = len(res.hits)
	return res, nil
}

// windowCandidates is candidates on SQLite for a search with a window and a
// memo, with the filters applied in Go: it reads the window's full-text
// matches, then each match's row through the memo, which reads a row once
// per call. The items of a batch share most of their matches (a record
// restated year after year), and joining each match with its belief and
// probing its entity links in SQL, search after search, was a third of a
// bulk load's CPU. The candidates are those candidatesSQL would find.
func (s *Server) windowCandidates(ctx context.Context, q querier, terms []string, f searchFilter) (*searchResult, error) {
	// The window is a literal: bound, it would make SQLite prepare the
	// statement again at each run (the limit is pushed into FTS5).
	rows, err := q.QueryContext(ctx, `SELECT rowid FROM beliefs_fts WHERE beliefs_fts MATCH ? ORDER BY rowid DESC LIMIT `+
		strconv.Itoa(f.window), textsearch.FTS5Match(terms))
	if err != nil {
		return nil, fmt.Errorf("search beliefs: %w", err)
	}
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search beliefs: %w", err)
		}
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search beliefs: %w", err)
	}
	// Newest first, a block at a time, until more than the cap pass the
	// filters: rows past that are not read (as the query's LIMIT stops
	// candidatesSQL).
	// Most matches are in another scope: drop them by their scope rows
	// (cached for every belief met) before reading any match row.
	scopes, found, err := s.scopeRows(ctx, q, seqs)
	if err != nil {
		return nil, err
	}
	ws, dk := unique.Make(f.workspace), unique.Make(f.domainExact)
	entities := make([]unique.Handle[string], len(f.entityIDs))
	for i, e := range f.entityIDs {
		entities[i] = unique.Make(e)
	}
	in := seqs[:0]
	for i, seq := range seqs {
		if found[i] && f.inScope(scopes[i], ws, dk, entities) {
			in = append(in, seq)
		}
	}
	seqs = in
	res := &searchResult{}
	for len(seqs) > 0 && !res.capped {
		block := seqs[:min(len(seqs), matchRowBatch)]
		seqs = seqs[len(block):]
		matches, err := f.memo.matchRows(ctx, s, q, block, f.scoped)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if !f.takes(m) {
				continue
			}
			res.hits = append(res.hits, m.hit)
			if len(res.hits) > f.cap() {
				res.hits, res.capped = res.hits[:f.cap()], true
				break
			}
		}
	}
	res.total = len(res.hits)
	return res, nil
}

// takes reports whether a match passes f's filters as candidatesSQL
// applies them (all but the domain prefix, which tension searches do not
// use).
func (f *searchFilter) takes(m *matchRow) bool {
	if f.includeSuperseded && m.status == StatusArchived || !f.includeSuperseded && m.status != StatusActive {
		return false
	}
	return f.scoped(m)
}

// scoped reports whether a match passes f's filters other than its status:
// those on what never changes once a belief is stored.
func (f *searchFilter) scoped(m *matchRow) bool {
	if m.workspace != f.workspace || slices.Contains(f.excludeIDs, m.id) {
		return false
	}
	if f.domainExact == "" && len(f.entityIDs) == 0 {
		return true
	}
	if f.domainExact != "" && m.domainKey == f.domainExact {
		return true
	}
	for _, e := range m.entityIDs {
		if slices.Contains(f.entityIDs, e) {
			return true
		}
	}
	return false
}

// matchRow is what a windowed search needs of a full-text match.
type matchRow struct {
	hit
	id, workspace, status, domainKey string
	entityIDs                        []string
}

// matchRowsQuery reads n match rows; n is one of a few sizes, so that few
// statements are prepared.
func matchRowsQuery(n int) string {
	return `SELECT b.seq, b.id, b.workspace, b.status, b.domain_key, b.content, b.confidence_overall, b.created_at,
		b.valid_from, (SELECT group_concat(be.entity_id, ' ') FROM belief_entities be WHERE be.belief_id = b.id)
		FROM beliefs b WHERE b.seq IN (` + placeholders(n) + `)`
}

// matchRowBatch is the step of the sizes of matchRowsQuery.
const matchRowBatch = 50

// loadMatchRows reads the match rows of seqs (those that exist).
func (s *Server) loadMatchRows(ctx context.Context, q querier, seqs []int64) ([]*matchRow, error) {
	var out []*matchRow
	for len(seqs) > 0 {
		chunk := seqs[:min(len(seqs), 6*matchRowBatch)]
		seqs = seqs[len(chunk):]
		rows, err := q.QueryContext(ctx, matchRowsQuery(padded(len(chunk))), paddedSeqs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read matches: %w", err)
		}
		for rows.Next() {
			m := &matchRow{}
			var created int64
			var validFrom sql.NullInt64
			var entities sql.NullString
			if err := rows.Scan(&m.seq, &m.id, &m.workspace, &m.status, &m.domainKey, &m.content, &m.overall,
				&created, &validFrom, &entities); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read matches: %w", err)
			}
			m.createdAt = store.FromMicros(created)
			if validFrom.Valid {
				t := store.FromMicros(validFrom.Int64)
				m.validFrom = &t
			}
			m.entityIDs = strings.Fields(entities.String)
			out = append(out, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read matches: %w", err)
		}
	}
	return out, nil
}

// statuses reads the status of the beliefs seqs (those that exist).
func (s *Server) statuses(ctx context.Context, q querier, seqs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(seqs))
	for len(seqs) > 0 {
		chunk := seqs[:min(len(seqs), 6*matchRowBatch)]
		seqs = seqs[len(chunk):]
		rows, err := q.QueryContext(ctx, `SELECT seq, status FROM beliefs WHERE seq IN (`+placeholders(padded(len(chunk)))+`)`,
			paddedSeqs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read statuses: %w", err)
		}
		for rows.Next() {
			var seq int64
			var st string
			if err := rows.Scan(&seq, &st); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read statuses: %w", err)
			}
			out[seq] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read statuses: %w", err)
		}
	}
	return out, nil
}

// padded rounds n up to a multiple of matchRowBatch, so that queries over
// n sequence numbers come in few sizes and few statements are prepared.
func padded(n int) int { return (n + matchRowBatch - 1) / matchRowBatch * matchRowBatch }

// paddedSeqs is seqs as arguments, padded to [padded] with 0 (no belief has
// sequence number 0).
func paddedSeqs(seqs []int64) []any {
	args := make([]any, padded(len(seqs)))
	for i := range args {
		args[i] = int64(0)
		if i < len(seqs) {
			args[i] = seqs[i]
		}
	}
	return args
}

// candidatesSQL is the query of candidates (and its arguments).
func (s *Server) candidatesSQL(terms []string, f searchFilter) (string, []any) {
	var (
		where []string
		args  []any
		from  = "beliefs b"
		order = "b.seq DESC"
	)
	switch {
	case len(terms) == 0:
	case s.st.Dialect() == store.Postgres:
		where = append(where, "b.tsv @@ to_tsquery('english', ?)")
		args = append(args, textsearch.TSQuery(terms))
		// Few matches: read them all from the full-text index and keep the
		// newest ("seq + 0" keeps the planner off the primary key, whose
		// backward walk would read every newer belief to find them). Many:
		// walk newest first and stop at the cap.
		if f.matches <= pgIndexMatches*f.cap() {
			order = "b.seq + 0 DESC"
		}
	case f.window > 0:
		// CROSS JOIN: SQLite keeps the matches as the outer loop.
		from = "(SELECT rowid FROM beliefs_fts WHERE beliefs_fts MATCH ? ORDER BY rowid DESC LIMIT ?) m CROSS JOIN beliefs b ON b.seq = m.rowid"
		order = "m.rowid DESC"
		args = append(args, textsearch.FTS5Match(terms), f.window)
	default:
		from = "beliefs_fts JOIN beliefs b ON b.seq = beliefs_fts.rowid"
		order = "beliefs_fts.rowid DESC"
		where = append(where, "beliefs_fts MATCH ?")
		args = append(args, textsearch.FTS5Match(terms))
	}
	where = append(where, "b.workspace = ?")
	args = append(args, f.workspace)
	if f.includeSuperseded {
		where = append(where, "b.status <> ?")
		args = append(args, StatusArchived)
	} else {
		where = append(where, "b.status = ?")
		args = append(args, StatusActive)
	}
	if f.validAt != nil {
		where = append(where, "(b.valid_from IS NULL OR b.valid_from <= ?)", "(b.valid_until IS NULL OR b.valid_until > ?)")
		args = append(args, store.Micros(*f.validAt), store.Micros(*f.validAt))
	}
	if f.validAfter != nil {
		where = append(where, "(b.valid_until IS NULL OR b.valid_until > ?)")
		args = append(args, store.Micros(*f.validAfter))
	}
	if f.validBefore != nil {
		where = append(where, "(b.valid_from IS NULL OR b.valid_from < ?)")
		args = append(args, store.Micros(*f.validBefore))
	}
	if f.domainPrefix != "" {
		where = append(where, `b.domain_key LIKE ? ESCAPE '\'`)
		args = append(args, likePrefix(f.domainPrefix))
	}
	var related []string
	var relatedArgs []any
	if f.domainExact != "" {
		related = append(related, "b.domain_key = ?")
		relatedArgs = append(relatedArgs, f.domainExact)
	}
	if len(f.entityIDs) > 0 {
		// EXISTS probes the link table's primary key per candidate; IN (SELECT ...)
		// would materialize every link of a popular entity first. On SQLite
		// the probe seeks the candidate's links once and reads its few
		// (the unary + keeps entity_id out of the seek), instead of one seek
		// per entity id: 0.56 -> 0.31 ms per tension search at 100,000
		// beliefs, three entity ids (sqlite3, 500 runs).
		col := "be.entity_id"
		if s.st.Dialect() == store.SQLite {
			col = "+be.entity_id"
		}
		related = append(related, "EXISTS (SELECT 1 FROM belief_entities be WHERE be.belief_id = b.id AND "+col+" IN ("+placeholders(len(f.entityIDs))+"))")
		for _, id := range f.entityIDs {
			relatedArgs = append(relatedArgs, id)
		}
	}
	if len(related) > 0 {
		where = append(where, "("+strings.Join(related, " OR ")+")")
		args = append(args, relatedArgs...)
	}
	for _, id := range f.excludeIDs {
		where = append(where, "b.id <> ?")
		args = append(args, id)
	}
	args = append(args, f.cap()+1)
	return s.st.Q(`SELECT b.seq, b.content, b.confidence_overall, b.created_at, b.valid_from FROM ` + from + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY ` + order + ` LIMIT ?`), args
}

// scoreBM25 sets each hit's lexical score (BM25 of all query terms) and
// its coverage of the query.
func scoreBM25(hits []hit, terms []string, df map[string]int, n int) {
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.content
	}
	scores, coverage := textsearch.BM25Coverage(texts, terms, df, n)
	for i, score := range scores {
		hits[i].lexical, hits[i].coverage = score, coverage[i]
	}
}

// loadBeliefsBySeq returns the beliefs with the given sequence numbers, in
// that order, with their entities.
func (s *Server) loadBeliefsBySeq(ctx context.Context, q querier, seqs []int64) ([]*Belief, error) {
	if len(seqs) == 0 {
		return []*Belief{}, nil
	}
	args := make([]any, len(seqs))
	for i, v := range seqs {
		args[i] = v
	}
	rows, err := q.QueryContext(ctx, s.st.Q(`SELECT `+beliefCols+` FROM beliefs b WHERE b.seq IN (`+placeholders(len(seqs))+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("load beliefs: %w", err)
	}
	defer rows.Close()
	bySeq := make(map[int64]*Belief, len(seqs))
	for rows.Next() {
		b, err := scanBelief(rows)
		if err != nil {
			return nil, fmt.Errorf("load beliefs: %w", err)
		}
		bySeq[b.seq] = b
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load beliefs: %w", err)
	}
	out := make([]*Belief, 0, len(seqs))
	for _, v := range seqs {
		if b := bySeq[v]; b != nil {
			out = append(out, b)
		}
	}
	return out, s.attachEntities(ctx, q, out)
}
