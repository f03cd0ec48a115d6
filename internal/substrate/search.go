package substrate

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/store"
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
	// maxQueryTerms bounds the terms a search uses, whatever the query's length.
	maxQueryTerms = 32
	// candidateCap bounds the beliefs one search reads and scores.
	candidateCap = 1000
	// statsTTL is how long a term's document frequency is reused.
	statsTTL = 5 * time.Minute
	// maxStats bounds the term statistics cache.
	maxStats = 20000
	// BM25 parameters.
	bm25K1 = 1.2
	bm25B  = 0.75
)

// stopWords are dropped from search queries: they match nearly everything
// and carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can do does for from has have how i in is it its
		me my of on or our so than that the their them then there these they this to was we were what when where which
		who why will with would you your about into over also any all`) {
		m[w] = true
	}
	return m
}()

// tokens splits text into lower-cased runs of letters and digits.
func tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// queryTerms extracts the search terms of a natural-language query: tokens
// without stop words or duplicates, at most [maxQueryTerms]. Only letters and
// digits survive, so terms are safe inside FTS5 and tsquery expressions.
func queryTerms(q string) []string {
	var terms []string
	for _, t := range tokens(q) {
		if len(t) > 64 || stopWords[t] || slices.Contains(terms, t) {
			continue
		}
		terms = append(terms, t)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return terms
}

// scoreKey folds simple English plurals so that scoring counts "transfers"
// for "transfer" as the index's stemmer matched it.
func scoreKey(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss"):
		return t[:len(t)-1]
	}
	return t
}

// termStats caches document frequencies (over all workspaces) and the
// corpus size for IDF. A value older than statsTTL is still used while one
// background query refreshes it, so searches never wait on statistics they
// have seen before. Values only steer candidate selection and weights.
type termStats struct {
	mu  sync.Mutex
	m   map[string]*statEntry
	now func() time.Time
}

type statEntry struct {
	v          int
	at         time.Time
	refreshing bool
}

func newTermStats() *termStats {
	return &termStats{m: map[string]*statEntry{}, now: time.Now}
}

// lookup returns the cached value of key and whether it is cached at all;
// stale reports that the caller should refresh it (only one caller is told).
func (ts *termStats) lookup(key string) (v int, ok, stale bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e, ok := ts.m[key]
	if !ok {
		return 0, false, false
	}
	if ts.now().Sub(e.at) > statsTTL && !e.refreshing {
		e.refreshing = true
		return e.v, true, true
	}
	return e.v, true, false
}

func (ts *termStats) put(key string, v int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.m) >= maxStats {
		clear(ts.m)
	}
	ts.m[key] = &statEntry{v: v, at: ts.now()}
}

// stat returns the statistic key, computing it with fetch on first use and
// refreshing it in the background once stale.
func (s *Server) stat(ctx context.Context, q querier, key string, fetch func(context.Context, querier) (int, error)) (int, error) {
	v, ok, stale := s.stats.lookup(key)
	if stale {
		go func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if n, err := fetch(rctx, s.st.DB()); err == nil {
				s.stats.put(key, n)
			} else {
				s.log.Warn("refresh term statistics", "key", key, "err", err)
				s.stats.put(key, v)
			}
		}()
	}
	if ok {
		return v, nil
	}
	n, err := fetch(ctx, q)
	if err != nil {
		return 0, err
	}
	s.stats.put(key, n)
	return n, nil
}

// docFreq returns the number of beliefs whose content matches term.
func (s *Server) docFreq(ctx context.Context, q querier, term string) (int, error) {
	return s.stat(ctx, q, term, func(ctx context.Context, q querier) (int, error) {
		var query, arg string
		if s.st.Dialect() == store.Postgres {
			query, arg = `SELECT COUNT(*) FROM beliefs WHERE tsv @@ to_tsquery('english', $1)`, term
		} else {
			query, arg = `SELECT COUNT(*) FROM beliefs_fts WHERE beliefs_fts MATCH ?`, `"`+term+`"`
		}
		var n int
		if err := q.QueryRowContext(ctx, query, arg).Scan(&n); err != nil {
			return 0, fmt.Errorf("term statistics: %w", err)
		}
		return n, nil
	})
}

// corpusSize approximates the number of beliefs by the highest sequence
// number, which costs one index lookup.
func (s *Server) corpusSize(ctx context.Context, q querier) (int, error) {
	return s.stat(ctx, q, "\x00corpus", func(ctx context.Context, q querier) (int, error) {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM beliefs`).Scan(&n); err != nil {
			return 0, fmt.Errorf("corpus size: %w", err)
		}
		return n, nil
	})
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
	score     float64 // relevance_score, set by belief_query
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
	terms := queryTerms(query)
	if len(terms) == 0 {
		if f.requireTerms {
			return &searchResult{}, nil
		}
		return s.candidates(ctx, q, nil, f)
	}
	df := make(map[string]int, len(terms))
	var matching []string
	for _, t := range terms {
		n, err := s.docFreq(ctx, q, t)
		if err != nil {
			return nil, err
		}
		df[t] = n
		if n > 0 {
			matching = append(matching, t)
		}
	}
	if len(matching) == 0 {
		return &searchResult{}, nil
	}
	slices.SortStableFunc(matching, func(a, b string) int { return df[a] - df[b] })
	selective, sum := matching[:1], df[matching[0]]
	for _, t := range matching[1:] {
		if sum += df[t]; sum > f.cap() {
			break
		}
		selective = append(selective, t)
	}
	res, err := s.candidates(ctx, q, selective, f)
	if err != nil {
		return nil, err
	}
	if len(selective) < len(matching) && !res.capped && len(res.hits) < f.want {
		if res, err = s.candidates(ctx, q, matching, f); err != nil {
			return nil, err
		}
	}
	n, err := s.corpusSize(ctx, q)
	if err != nil {
		return nil, err
	}
	scoreBM25(res.hits, terms, df, n)
	return res, nil
}

// candidates reads up to candidateCap beliefs under f that match any of
// terms (all beliefs under f when terms is empty), newest first.
func (s *Server) candidates(ctx context.Context, q querier, terms []string, f searchFilter) (*searchResult, error) {
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
		args = append(args, strings.Join(terms, " | "))
	default:
		from = "beliefs_fts JOIN beliefs b ON b.seq = beliefs_fts.rowid"
		order = "beliefs_fts.rowid DESC"
		where = append(where, "beliefs_fts MATCH ?")
		args = append(args, `"`+strings.Join(terms, `" OR "`)+`"`)
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
		// would materialize every link of a popular entity first.
		related = append(related, "EXISTS (SELECT 1 FROM belief_entities be WHERE be.belief_id = b.id AND be.entity_id IN ("+placeholders(len(f.entityIDs))+"))")
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
	rows, err := q.QueryContext(ctx, s.st.Q(`SELECT b.seq, b.content, b.confidence_overall, b.created_at, b.valid_from FROM `+from+` WHERE `+strings.Join(where, " AND ")+
		` ORDER BY `+order+` LIMIT ?`), args...)
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
	if len(res.hits) > f.cap() {
		res.hits, res.capped = res.hits[:f.cap()], true
	}
	res.total = len(res.hits)
	return res, nil
}

// scoreBM25 sets each hit's lexical score: BM25 (k1 1.2, b 0.75) of the
// query terms in the belief's content, with IDF from the term statistics
// and the average length taken over the hits.
func scoreBM25(hits []hit, terms []string, df map[string]int, n int) {
	if len(hits) == 0 {
		return
	}
	idf := map[string]float64{}
	for _, t := range terms {
		d := float64(df[t])
		N := math.Max(float64(n), d)
		k := scoreKey(t)
		idf[k] = math.Max(idf[k], math.Log(1+(N-d+0.5)/(d+0.5)))
	}
	lens := make([]int, len(hits))
	tfs := make([]map[string]int, len(hits))
	total := 0
	var buf []byte
	for i, h := range hits {
		tfs[i] = map[string]int{}
		lens[i], buf = countTerms(h.content, idf, tfs[i], buf)
		total += lens[i]
	}
	avg := math.Max(1, float64(total)/float64(len(hits)))
	for i := range hits {
		score := 0.0
		norm := bm25K1 * (1 - bm25B + bm25B*float64(lens[i])/avg)
		for k, f := range tfs[i] {
			score += idf[k] * float64(f) * (bm25K1 + 1) / (float64(f) + norm)
		}
		hits[i].lexical = score
	}
}

// countTerms tokenizes text as [tokens] does, counting into tf the tokens
// whose [scoreKey] is a key of terms, and returns the number of tokens. buf
// is scratch space, returned for reuse; the scan allocates only for matches.
func countTerms(text string, terms map[string]float64, tf map[string]int, buf []byte) (int, []byte) {
	n := 0
	flush := func() {
		if len(buf) == 0 {
			return
		}
		n++
		if _, ok := terms[string(buf)]; ok {
			tf[string(buf)]++
		} else if k := scoreKey(string(buf)); len(k) != len(buf) {
			if _, ok := terms[k]; ok {
				tf[k]++
			}
		}
		buf = buf[:0]
	}
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			buf = append(buf, byte(r))
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			buf = append(buf, byte(r+'a'-'A'))
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return n, buf
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
