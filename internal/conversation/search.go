package conversation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Searching exchanges (exchange_search, issue 23; docs/vkb.md). The
// database finds candidates through its full-text index of exchange
// content (SQLite FTS5 exchanges_fts, PostgreSQL exchanges.tsv under GIN);
// Nexus scores them with BM25 in Go, the same way on both stores:
//
//  1. The query's terms (textsearch.Terms) are looked up in the term
//     statistics of the workspace: how many of its exchanges match each
//     term, and how many it has (cached for [searchStatsTTL]).
//  2. The rarest terms whose document frequencies add up to at most
//     [SearchCandidates] select the candidates; very common terms only
//     score. When that finds fewer exchanges than wanted, all terms select.
//     When even the rarest term is common (more matches than
//     [SearchCandidates]), the exchanges with all of the rarest few terms
//     (see conjunction) are the candidates, if there are enough of them.
//  3. The candidates (newest first, at most [SearchCandidates], under the
//     session and validity filters) are scored with BM25 on Snowball
//     English stems, the stemmer of the PostgreSQL index (SQLite's porter
//     tokenizer is the older Porter stemmer: a few words stem apart).
//  4. A turn's score adds a share of its neighbours' BM25 (two turns each
//     side, see before and after): a question is often asked in one
//     speaker's words and answered by the other's next turns. So the turns
//     beside a match are candidates even when they match nothing
//     themselves.
//  5. The best turns are returned with their neighbours (the context).

const (
	// SearchCandidates bounds the exchanges one search reads and scores.
	SearchCandidates = 500
	// DefaultSearchLimit and MaxSearchLimit bound the hits of a search.
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
	// MaxContextTurns bounds the turns returned on each side of a hit.
	MaxContextTurns = 5
	// searchStatsTTL is how long a workspace's term statistic is reused.
	searchStatsTTL = 5 * time.Minute
	// dfSample is the number of a term's matches whose workspaces SQLite
	// reads to count the term's matches in a workspace (see docFreq).
	dfSample = 2000
	// pgIndexMatches: on PostgreSQL, candidates matching at most this many
	// times SearchCandidates exchanges are read through the full-text
	// index (see candidates).
	pgIndexMatches = 8
	// maxSearchStats bounds the statistics cache.
	maxSearchStats = 20000
)

// Neighbour weights (measured on LoCoMo, docs/benchmarks.md,
// "exchange_search (issue 23)"): a turn's score adds before[d-1] times the
// BM25 of the turn d places before it and after[d-1] times that of the
// turn d places after it.
var (
	before = [...]float64{0.5, 0.25}
	after  = [...]float64{0.4, 0.25}
)

// Search is an exchange search.
type Search struct {
	// Workspace is searched (required).
	Workspace string
	// Query is natural-language text; its terms rank the exchanges. A query
	// without terms lists the exchanges under the filters, newest first.
	Query string
	// SessionID, when set, limits the search to one conversation.
	SessionID string
	// Limit is the number of hits (default [DefaultSearchLimit], at most
	// [MaxSearchLimit]).
	Limit int
	// ContextTurns is the number of turns returned before and after each
	// hit (at most [MaxContextTurns]).
	ContextTurns int
	// After and Before bound the exchanges' time (created_at) to
	// [After, Before); a zero time leaves that side open.
	After, Before time.Time
	// Owner, when set, limits the search to the conversations of that user
	// (what a user who is not an admin sees, as [Filter.Owner]).
	Owner string
}

// Hit is an exchange found by [Store.Search].
type Hit struct {
	Exchange Exchange `json:"exchange"`
	// Score is the hit's relevance (BM25 blended with its neighbours'; 0
	// for a query without terms).
	Score float64 `json:"score"`
	// Context holds the turns before and after the hit in its session, in
	// order (the hit itself left out).
	Context []Exchange `json:"context"`
}

// searchStats caches per-workspace term statistics. It starts no
// goroutine: a stale value is read again by the search that finds it
// stale.
type searchStats struct {
	mu sync.Mutex
	m  map[string]statValue
}

type statValue struct {
	v  int
	at time.Time
}

func (c *searchStats) get(ctx context.Context, key string, fetch func(context.Context) (int, error)) (int, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && time.Since(e.at) < searchStatsTTL {
		return e.v, nil
	}
	n, err := fetch(ctx)
	if err != nil {
		return 0, err
	}
	if n == 0 { // a term no exchange has may be in the next one
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSearchStats {
		c.m = map[string]statValue{}
	}
	c.m[key] = statValue{v: n, at: time.Now()}
	return n, nil
}

// docFreq is the number of the workspace's exchanges matching term.
func (s *Store) docFreq(ctx context.Context, workspace, term string) (int, error) {
	return s.stats.get(ctx, "df\x00"+workspace+"\x00"+term, func(ctx context.Context) (int, error) {
		var n int
		if s.st.Dialect() == store.Postgres {
			err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM exchanges WHERE tsv @@ to_tsquery('english', $1) AND workspace = $2`,
				s.st.PlanEach([]any{term, workspace})...).Scan(&n)
			if err != nil {
				return 0, fmt.Errorf("exchange term statistics: %w", err)
			}
			return n, nil
		}
		// SQLite: the workspace's share of the term's newest dfSample
		// matches (exact when there are fewer), times its matches in all
		// workspaces (counted in the index alone: reading each match's row
		// for its workspace made a common term cost tens of milliseconds).
		match := textsearch.FTS5Match([]string{term})
		var seen int
		err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(e.workspace = ?), 0) FROM
			(SELECT rowid FROM exchanges_fts WHERE exchanges_fts MATCH ? ORDER BY rowid DESC LIMIT `+strconv.Itoa(dfSample)+`) m
			CROSS JOIN exchanges e ON e.rowid = m.rowid`, workspace, match).Scan(&seen, &n)
		if err != nil {
			return 0, fmt.Errorf("exchange term statistics: %w", err)
		}
		if seen < dfSample || n == 0 {
			return n, nil
		}
		var all int
		if err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM exchanges_fts WHERE exchanges_fts MATCH ?`, match).Scan(&all); err != nil {
			return 0, fmt.Errorf("exchange term statistics: %w", err)
		}
		return max(n, int(float64(all)*float64(n)/float64(seen))), nil
	})
}

// corpusSize is the number of the workspace's exchanges.
func (s *Store) corpusSize(ctx context.Context, workspace string) (int, error) {
	return s.stats.get(ctx, "n\x00"+workspace, func(ctx context.Context) (int, error) {
		var n int
		if err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM exchanges WHERE workspace = ?`), workspace).Scan(&n); err != nil {
			return 0, fmt.Errorf("exchange corpus size: %w", err)
		}
		return n, nil
	})
}

// turnKey names a turn: its conversation and sequence number.
type turnKey struct {
	conv string
	seq  int
}

// candidate is a full-text match.
type candidate struct {
	key     turnKey
	content string
	lexical float64
}

// Search finds the exchanges that best match q. An unknown session is a
// NOT_FOUND; a limit, context size or window out of range a BAD_REQUEST.
func (s *Store) Search(ctx context.Context, q Search) ([]Hit, error) {
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	if q.Limit < 1 || q.Limit > MaxSearchLimit {
		return nil, errs.Invalid("limit", "must be from 1 to %d, got %d", MaxSearchLimit, q.Limit)
	}
	if q.ContextTurns < 0 || q.ContextTurns > MaxContextTurns {
		return nil, errs.Invalid("context_turns", "must be from 0 to %d, got %d", MaxContextTurns, q.ContextTurns)
	}
	if !q.After.IsZero() && !q.Before.IsZero() && !q.After.Before(q.Before) {
		return nil, errs.Invalid("valid_after", "%s is not before valid_before %s", q.After.Format(time.RFC3339), q.Before.Format(time.RFC3339))
	}
	if q.SessionID != "" {
		if _, err := s.Get(ctx, q.Workspace, q.SessionID); err != nil {
			return nil, err
		}
	}
	terms := textsearch.Terms(q.Query)
	if len(terms) == 0 {
		// No search terms: the vector side alone, else the newest.
		if keys, score, ok := s.fuseVectors(ctx, q, nil, nil); ok {
			return s.loadRanked(ctx, q, keys, score)
		}
		return s.newest(ctx, q)
	}
	df := make(map[string]int, len(terms))
	var matching []string
	for _, t := range terms {
		n, err := s.docFreq(ctx, q.Workspace, t)
		if err != nil {
			return nil, err
		}
		if df[t] = n; n > 0 {
			matching = append(matching, t)
		}
	}
	if len(matching) == 0 {
		// No exchange has a term of the query; its meaning may still match.
		keys, score, _ := s.fuseVectors(ctx, q, nil, nil)
		return s.loadRanked(ctx, q, keys, score)
	}
	slices.SortStableFunc(matching, func(a, b string) int { return df[a] - df[b] })
	selective, sum := matching[:1], df[matching[0]]
	for _, t := range matching[1:] {
		if sum += df[t]; sum > SearchCandidates {
			break
		}
		selective = append(selective, t)
	}
	n, err := s.corpusSize(ctx, q.Workspace)
	if err != nil {
		return nil, err
	}
	var cands []candidate
	if conj := conjunction(matching, df, n); len(conj) > 1 {
		if cands, _, err = s.candidates(ctx, q, conj, true, expected(conj, df, n)); err != nil {
			return nil, err
		}
		if len(cands) < q.Limit {
			cands = nil
		}
	}
	if cands == nil {
		var capped bool
		cands, capped, err = s.candidates(ctx, q, selective, false, total(selective, df))
		if err != nil {
			return nil, err
		}
		if len(selective) < len(matching) && !capped && len(cands) < q.Limit {
			if cands, _, err = s.candidates(ctx, q, matching, false, total(matching, df)); err != nil {
				return nil, err
			}
		}
	}
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.content
	}
	for i, sc := range stemBM25(texts, terms, df, n) {
		cands[i].lexical = sc
	}
	keys, score := blend(cands)
	keys, score, _ = s.fuseVectors(ctx, q, keys, score)
	return s.loadRanked(ctx, q, keys, score)
}

// conjunction returns the rarest of the matching terms (sorted by their
// document frequencies df in a corpus of n) whose conjunction is expected
// (the terms taken as independent) to match at most SearchCandidates
// exchanges, when even the rarest term matches more; otherwise nil.
// Every term of such a query is common: the exchanges with several of its
// terms are the ones BM25 ranks first, and reading the newest of thousands
// of matches of one term costs PostgreSQL tens of milliseconds (its
// full-text index has no order, so it reads every match or walks the
// workspace's exchanges newest first until enough match).
func conjunction(matching []string, df map[string]int, n int) []string {
	if len(matching) < 2 || df[matching[0]] <= SearchCandidates || n <= 0 {
		return nil
	}
	for i := 2; i < len(matching); i++ {
		if expected(matching[:i], df, n) <= SearchCandidates {
			return matching[:i]
		}
	}
	return matching
}

// expected is the number of exchanges expected to have all of terms, the
// terms taken as independent, in a corpus of n.
func expected(terms []string, df map[string]int, n int) int {
	est := float64(df[terms[0]])
	for _, t := range terms[1:] {
		est *= float64(df[t]) / float64(max(n, 1))
	}
	return int(math.Ceil(est))
}

// total is the sum of the document frequencies of terms: at least the
// number of exchanges having any of them.
func total(terms []string, df map[string]int) int {
	n := 0
	for _, t := range terms {
		n += df[t]
	}
	return n
}

// candidates reads the exchanges under q's filters that match any of
// terms (all of them when all is set), newest first, at most
// SearchCandidates; capped reports that more matched. matches is about how
// many exchanges of the workspace match (see pgIndexMatches).
func (s *Store) candidates(ctx context.Context, q Search, terms []string, all bool, matches int) ([]candidate, bool, error) {
	var query string
	var args []any
	if s.st.Dialect() == store.Postgres {
		match := textsearch.TSQuery(terms)
		if all {
			match = strings.Join(terms, " & ")
		}
		query = `SELECT e.conversation_id, e.seq, e.content FROM exchanges e WHERE e.tsv @@ to_tsquery('english', ?) AND e.workspace = ?`
		args = []any{match, q.Workspace}
	} else {
		match := textsearch.FTS5Match(terms)
		if all {
			match = `"` + strings.Join(terms, `" AND "`) + `"`
		}
		query = `SELECT e.conversation_id, e.seq, e.content FROM exchanges_fts JOIN exchanges e ON e.rowid = exchanges_fts.rowid
			WHERE exchanges_fts MATCH ? AND e.workspace = ?`
		args = []any{match, q.Workspace}
	}
	where, wargs := filters(q)
	if s.st.Dialect() == store.Postgres {
		// PostgreSQL reads matches through the full-text index and sorts
		// them, or walks the workspace's exchanges newest first until
		// enough match. Its planner walks too soon: for 2,400 matches of
		// 100,000 exchanges the walk read 21,000 rows (23-35 ms) where the
		// index read 2,400 (11 ms). Up to pgIndexMatches times the cap,
		// "+ 0" keeps it from the walk, as belief_query does.
		order := "e.created_at"
		if matches <= pgIndexMatches*SearchCandidates {
			order += " + 0"
		}
		query += where + ` ORDER BY ` + order + ` DESC LIMIT ?`
	} else {
		// Newest appended first: FTS5 walks its index backwards and stops
		// at the limit, with no sort.
		query += where + ` ORDER BY exchanges_fts.rowid DESC LIMIT ?`
	}
	args = append(append(args, wargs...), SearchCandidates+1)
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(query), s.st.PlanEach(args)...)
	if err != nil {
		return nil, false, fmt.Errorf("search exchanges: %w", err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.key.conv, &c.key.seq, &c.content); err != nil {
			return nil, false, fmt.Errorf("search exchanges: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("search exchanges: %w", err)
	}
	if len(out) > SearchCandidates {
		return out[:SearchCandidates], true, nil
	}
	return out, false, nil
}

// filters is the SQL (" AND ...") and arguments of q's session, owner and
// validity filters on exchanges e.
func filters(q Search) (string, []any) {
	var b strings.Builder
	var args []any
	if q.SessionID != "" {
		b.WriteString(" AND e.conversation_id = ?")
		args = append(args, q.SessionID)
	}
	if q.Owner != "" {
		b.WriteString(" AND e.conversation_id IN (SELECT c.id FROM conversations c WHERE c.workspace = ? AND c.owner_id = ?)")
		args = append(args, q.Workspace, q.Owner)
	}
	if !q.After.IsZero() {
		b.WriteString(" AND e.created_at >= ?")
		args = append(args, store.Micros(q.After))
	}
	if !q.Before.IsZero() {
		b.WriteString(" AND e.created_at < ?")
		args = append(args, store.Micros(q.Before))
	}
	return b.String(), args
}

// newest lists the exchanges under q's filters, newest first (a query
// without terms).
func (s *Store) newest(ctx context.Context, q Search) ([]Hit, error) {
	where, args := filters(q)
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT e.conversation_id, e.seq FROM exchanges e WHERE e.workspace = ?`+where+
		` ORDER BY e.created_at DESC LIMIT ?`), append(append([]any{q.Workspace}, args...), q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("search exchanges: %w", err)
	}
	var keys []turnKey
	for rows.Next() {
		var k turnKey
		if err := rows.Scan(&k.conv, &k.seq); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search exchanges: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search exchanges: %w", err)
	}
	hits, err := s.loadHits(ctx, q, keys, nil)
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// blend adds to each candidate's score shares of its neighbours' and
// returns the turns so scored, best first, with their scores.
func blend(cands []candidate) ([]turnKey, map[turnKey]float64) {
	lex := make(map[turnKey]float64, len(cands))
	for _, c := range cands {
		if c.lexical > 0 {
			lex[c.key] = c.lexical
		}
	}
	score := make(map[turnKey]float64, 2*len(lex))
	for k, v := range lex {
		score[k] += v
		for i, w := range before { // k is i+1 turns before k.seq+i+1
			score[turnKey{k.conv, k.seq + i + 1}] += w * v
		}
		for i, w := range after {
			if k.seq-i-1 >= 1 {
				score[turnKey{k.conv, k.seq - i - 1}] += w * v
			}
		}
	}
	type scored struct {
		turnKey
		score float64
	}
	ranked := make([]scored, 0, len(score))
	for k, v := range score {
		ranked = append(ranked, scored{k, v})
	}
	slices.SortFunc(ranked, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := strings.Compare(b.conv, a.conv); c != 0 {
			return c
		}
		return b.seq - a.seq
	})
	keys := make([]turnKey, len(ranked))
	for i, r := range ranked {
		keys[i] = r.turnKey
	}
	return keys, score
}

// loadRanked returns the first q.Limit turns of keys (best first) that
// exist and pass q's filters, with their context, scored by score.
func (s *Store) loadRanked(ctx context.Context, q Search, keys []turnKey, score map[turnKey]float64) ([]Hit, error) {
	// A key beside a match may not exist (the turn after the last) or lie
	// outside the window: load a few more than needed, until enough.
	hits := []Hit{}
	for len(keys) > 0 && len(hits) < q.Limit {
		batch := keys[:min(len(keys), q.Limit-len(hits)+2)]
		keys = keys[len(batch):]
		more, err := s.loadHits(ctx, q, batch, score)
		if err != nil {
			return nil, err
		}
		hits = append(hits, more...)
	}
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}

// loadHits reads the turns of keys (in that order; those that do not exist
// or fall outside q's window are left out) with q.ContextTurns turns of
// context on each side.
func (s *Store) loadHits(ctx context.Context, q Search, keys []turnKey, score map[turnKey]float64) ([]Hit, error) {
	hits := []Hit{}
	if len(keys) == 0 {
		return hits, nil
	}
	var cond []string
	var args []any
	for _, k := range keys {
		cond = append(cond, "(conversation_id = ? AND seq >= ? AND seq <= ?)")
		args = append(args, k.conv, k.seq-q.ContextTurns, k.seq+q.ContextTurns)
	}
	// The workspace is checked in Go: in SQL, SQLite would walk the
	// workspace's index instead of seeking each conversation's turns.
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, conversation_id, seq, role, content, tool_uses, created_at, workspace
		FROM exchanges WHERE `+strings.Join(cond, " OR ")), args...)
	if err != nil {
		return nil, fmt.Errorf("load exchanges: %w", err)
	}
	defer rows.Close()
	turns := map[turnKey]Exchange{}
	for rows.Next() {
		var e Exchange
		var tu string
		var created int64
		var ws string
		if err := rows.Scan(&e.ID, &e.ConversationID, &e.Seq, &e.Role, &e.Content, &tu, &created, &ws); err != nil {
			return nil, fmt.Errorf("load exchanges: %w", err)
		}
		if ws != q.Workspace {
			continue
		}
		if err := json.Unmarshal([]byte(tu), &e.ToolUses); err != nil {
			return nil, fmt.Errorf("exchange %s tool_uses: %w", e.ID, err)
		}
		e.CreatedAt = store.FromMicros(created)
		turns[turnKey{e.ConversationID, e.Seq}] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load exchanges: %w", err)
	}
	for _, k := range keys {
		e, ok := turns[k]
		if !ok || !q.After.IsZero() && e.CreatedAt.Before(q.After) || !q.Before.IsZero() && !e.CreatedAt.Before(q.Before) {
			continue
		}
		h := Hit{Exchange: e, Score: score[k], Context: []Exchange{}}
		for seq := k.seq - q.ContextTurns; seq <= k.seq+q.ContextTurns; seq++ {
			if c, ok := turns[turnKey{k.conv, seq}]; ok && seq != k.seq {
				h.Context = append(h.Context, c)
			}
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// stemBM25 scores each text for the query terms: BM25 (textsearch.K1, B)
// over Snowball English stems, with IDF from df (each term's document
// frequency; terms of one stem take the largest) over a corpus of n and
// the average length taken over texts.
func stemBM25(texts, terms []string, df map[string]int, n int) []float64 {
	scores := make([]float64, len(texts))
	if len(texts) == 0 {
		return scores
	}
	idf := map[string]float64{}
	for _, t := range terms {
		d := float64(df[t])
		N := math.Max(float64(n), d)
		st := english.Stem(t, false)
		idf[st] = math.Max(idf[st], math.Log(1+(N-d+0.5)/(d+0.5)))
	}
	sc := newStemCounter(idf)
	lens := make([]int, len(texts))
	tfs := make([]map[string]int, len(texts))
	total := 0
	for i, text := range texts {
		tfs[i] = map[string]int{}
		lens[i] = sc.count(text, tfs[i])
		total += lens[i]
	}
	avg := math.Max(1, float64(total)/float64(len(texts)))
	for i := range texts {
		norm := textsearch.K1 * (1 - textsearch.B + textsearch.B*float64(lens[i])/avg)
		for st, f := range tfs[i] {
			scores[i] += idf[st] * float64(f) * (textsearch.K1 + 1) / (float64(f) + norm)
		}
	}
	return scores
}

// stemCounter counts the tokens of texts whose stem is a query stem. A
// word's Snowball stem starts with all of the word but for the stem's last
// letter (which may be a y turned i), so only words with such a prefix are
// stemmed, each once per search.
type stemCounter struct {
	stems  map[string]float64
	byByte map[byte][]string // stem prefixes by first byte
	memo   map[string]string // word -> its stem, "" when no query stem
	buf    []byte
}

func newStemCounter(stems map[string]float64) *stemCounter {
	sc := &stemCounter{stems: stems, byByte: map[byte][]string{}, memo: map[string]string{}}
	for st := range stems {
		if st == "" {
			continue
		}
		p := st[:max(1, len(st)-1)]
		sc.byByte[p[0]] = append(sc.byByte[p[0]], p)
	}
	return sc
}

// count tokenizes text as textsearch.Tokens does, counting the query stems
// into tf, and returns the number of tokens.
func (sc *stemCounter) count(text string, tf map[string]int) int {
	n := 0
	flush := func() {
		if len(sc.buf) == 0 {
			return
		}
		n++
		if ps, ok := sc.byByte[sc.buf[0]]; ok {
			if st, ok := sc.memo[string(sc.buf)]; ok {
				if st != "" {
					tf[st]++
				}
			} else {
				w := string(sc.buf)
				st := ""
				for _, p := range ps {
					if strings.HasPrefix(w, p) {
						if s := english.Stem(w, false); hasStem(sc.stems, s) {
							st = s
						}
						break
					}
				}
				sc.memo[w] = st
				if st != "" {
					tf[st]++
				}
			}
		}
		sc.buf = sc.buf[:0]
	}
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			sc.buf = append(sc.buf, byte(r))
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			sc.buf = append(sc.buf, byte(r+'a'-'A'))
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			sc.buf = utf8.AppendRune(sc.buf, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return n
}

func hasStem(stems map[string]float64, s string) bool {
	_, ok := stems[s]
	return ok
}

// RankTexts scores texts for query with Search's BM25 (Snowball stems,
// textsearch.K1 and B), the statistics taken over texts themselves: for
// small sets searched alongside exchanges, such as the insights of a
// workspace. A text without a query term scores 0.
func RankTexts(query string, texts []string) []float64 {
	terms := textsearch.Terms(query)
	if len(terms) == 0 || len(texts) == 0 {
		return make([]float64, len(texts))
	}
	stems := map[string]float64{}
	for _, t := range terms {
		stems[english.Stem(t, false)] = 1
	}
	sc := newStemCounter(stems)
	byStem := map[string]int{}
	for _, text := range texts {
		tf := map[string]int{}
		sc.count(text, tf)
		for st := range tf {
			byStem[st]++
		}
	}
	df := make(map[string]int, len(terms))
	for _, t := range terms {
		df[t] = byStem[english.Stem(t, false)]
	}
	return stemBM25(texts, terms, df, len(texts))
}
