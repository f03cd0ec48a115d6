// Package textsearch holds the lexical search pieces shared by the local
// servers: query terms, tokenization, BM25 scoring and a cache of term
// statistics. The database finds candidates through its full-text index;
// this package ranks them the same way on SQLite and PostgreSQL.
package textsearch

import (
	"context"
	_ "embed"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// MaxTerms bounds the terms a search uses, whatever the query's length.
const MaxTerms = 32

// BM25 parameters.
const (
	K1 = 1.2
	B  = 0.75
)

//go:embed stopwords.txt
var stopWordFile string

// stopWords are dropped from search queries: they match nearly everything
// and carry no topic. The list (stopwords.txt) is the project's one list of
// stop words; the tension detector reads it too ([StopWords]).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(stopWordFile, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			m[line] = true
		}
	}
	return m
}()

// IsStopWord reports whether w (lower case) is a stop word.
func IsStopWord(w string) bool { return stopWords[w] }

// StopWords returns the stop words as a set (a copy).
func StopWords() map[string]bool { return maps.Clone(stopWords) }

// Tokens splits text into lower-cased runs of letters and digits.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Terms extracts the search terms of a natural-language query: tokens
// without stop words or duplicates, at most [MaxTerms]. Only letters and
// digits survive, so terms are safe inside FTS5 and tsquery expressions.
func Terms(q string) []string {
	var terms []string
	for _, t := range Tokens(q) {
		if len(t) > 64 || stopWords[t] || slices.Contains(terms, t) {
			continue
		}
		terms = append(terms, t)
		if len(terms) == MaxTerms {
			break
		}
	}
	return terms
}

// FTS5Match is an SQLite FTS5 MATCH expression matching any of terms.
func FTS5Match(terms []string) string { return `"` + strings.Join(terms, `" OR "`) + `"` }

// TSQuery is a PostgreSQL to_tsquery expression matching any of terms.
func TSQuery(terms []string) string { return strings.Join(terms, " | ") }

// Key folds simple English plurals so that scoring counts "transfers" for
// "transfer" as the index's stemmer matched it.
func Key(t string) string {
	switch {
	case len(t) > 4 && strings.HasSuffix(t, "ies"):
		return t[:len(t)-3] + "y"
	case len(t) > 3 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss"):
		return t[:len(t)-1]
	}
	return t
}

// Stem is the Snowball English (Porter2) stem of token t (lower case): the
// stemmer of PostgreSQL's 'english' configuration, and nearly always the
// stem SQLite FTS5's 'porter' tokenizer (Porter's original algorithm)
// gives. Scoring counts a text's token for a query term when their stems
// are equal, as the full-text index matched it.
func Stem(t string) string { return english.Stem(t, true) }

// BM25 scores each text for the query terms: BM25 (k1 [K1], b [B]) with IDF
// from df (document frequency of each term) over a corpus of n documents and
// the average length taken over texts. A token counts for a term when their
// stems are equal ([Stem]) or their [Key]s are (the plural rule, which
// covers the few words where FTS5's Porter and Snowball part); query terms
// with the same stem count once, with the larger IDF.
func BM25(texts []string, terms []string, df map[string]int, n int) []float64 {
	scores, _ := BM25Coverage(texts, terms, df, n)
	return scores
}

// BM25Coverage is [BM25], also returning each text's coverage of the
// query: the share (0..1) of the query terms' summed IDF that the terms the
// text matches carry. A text that matches the rare terms of a query covers
// most of it; one that matches only a common term, little.
func BM25Coverage(texts []string, terms []string, df map[string]int, n int) (scores, coverage []float64) {
	scores = make([]float64, len(texts))
	coverage = make([]float64, len(texts))
	if len(texts) == 0 {
		return scores, coverage
	}
	m := newMatcher(terms)
	for _, t := range terms {
		d := float64(df[t])
		N := math.Max(float64(n), d)
		k := m.key[t]
		m.idf[k] = math.Max(m.idf[k], math.Log(1+(N-d+0.5)/(d+0.5)))
	}
	sumIDF := 0.0
	for _, v := range m.idf {
		sumIDF += v
	}
	lens := make([]int, len(texts))
	tfs := make([]map[string]int, len(texts))
	total := 0
	var buf []byte
	for i, text := range texts {
		tfs[i] = map[string]int{}
		lens[i], buf = m.count(text, tfs[i], buf)
		total += lens[i]
	}
	avg := math.Max(1, float64(total)/float64(len(texts)))
	for i := range texts {
		norm := K1 * (1 - B + B*float64(lens[i])/avg)
		covered := 0.0
		for k, f := range tfs[i] {
			scores[i] += m.idf[k] * float64(f) * (K1 + 1) / (float64(f) + norm)
			covered += m.idf[k]
		}
		if sumIDF > 0 {
			coverage[i] = covered / sumIDF
		}
	}
	return scores, coverage
}

// matcher finds the query terms among a text's tokens. A term is known by
// its stem (its key); a token is stemmed only when it starts as a term's
// stem does (a stem is its word's prefix but for its last letter: "hop"
// for "hoping", "happi" for "happy"), and each such token once.
type matcher struct {
	key      map[string]string  // term, its Key and its stem -> the term's key (its stem)
	idf      map[string]float64 // key -> IDF
	prefixes []string           // what a token starts with to be stemmed
	stems    map[string]string  // token -> stem, for the tokens stemmed
	isStem   map[string]bool    // the terms' stems (the keys of idf)
}

func newMatcher(terms []string) *matcher {
	m := &matcher{key: map[string]string{}, idf: map[string]float64{}, stems: map[string]string{}, isStem: map[string]bool{}}
	for _, t := range terms {
		st := Stem(t)
		m.isStem[st] = true
		m.key[t], m.key[st] = st, st
		if _, ok := m.key[Key(t)]; !ok {
			m.key[Key(t)] = st
		}
		p := st[:max(min(2, len(st)), len(st)-1)]
		if !slices.Contains(m.prefixes, p) {
			m.prefixes = append(m.prefixes, p)
		}
	}
	return m
}

// termOf returns the key of the term token stands for, if any.
func (m *matcher) termOf(tok []byte) (string, bool) {
	if k, ok := m.key[string(tok)]; ok {
		return k, true
	}
	if k := Key(string(tok)); len(k) != len(tok) {
		if k, ok := m.key[k]; ok {
			return k, true
		}
	}
	for _, p := range m.prefixes {
		if len(tok) > len(p) && string(tok[:len(p)]) == p {
			st, ok := m.stems[string(tok)]
			if !ok {
				st = Stem(string(tok))
				m.stems[string(tok)] = st
			}
			if _, ok := m.idf[st]; ok {
				return st, true
			}
			return "", false
		}
	}
	return "", false
}

// count tokenizes text as [Tokens] does, counting into tf the tokens that
// stand for a term (by its key), and returns the number of tokens. buf is
// scratch space, returned for reuse.
func (m *matcher) count(text string, tf map[string]int, buf []byte) (int, []byte) {
	n := 0
	buf = eachToken(text, buf, func(tok []byte) {
		n++
		if k, ok := m.termOf(tok); ok {
			tf[k]++
		}
	})
	return n, buf
}

// eachToken calls fn with each token of text, lower-cased, as [Tokens]
// splits it, without allocating a string per token: the slice is reused
// after fn returns. buf is scratch space, returned for reuse.
func eachToken(text string, buf []byte, fn func(tok []byte)) []byte {
	return EachToken(text, buf, func(tok []byte, _, _ int) { fn(tok) })
}

// EachToken calls fn with each token of text and its byte offsets in text:
// the lower-cased runs of letters and digits that [Tokens] splits text
// into, without a string per token (tok is reused after fn returns). buf is
// scratch space, returned for reuse.
func EachToken(text string, buf []byte, fn func(tok []byte, start, end int)) []byte {
	buf = buf[:0]
	start := -1
	for i, r := range text {
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			buf = append(buf, byte(r))
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			buf = append(buf, byte(r+'a'-'A'))
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		default:
			if start >= 0 {
				fn(buf, start, i)
				buf = buf[:0]
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		fn(buf, start, len(text))
	}
	return buf
}

// Stats caches integer statistics (document frequencies, corpus sizes) for
// TTL. A value older than TTL is still returned while one background fetch
// refreshes it, so a search never waits on a statistic it has seen before.
// Values only steer candidate selection and weights, so slightly old ones
// are fine.
type Stats struct {
	TTL time.Duration
	// Max bounds the entries of each of the cache's two generations: when
	// the newer is full it becomes the older, and the older is dropped; an
	// entry found in the older moves to the newer. (Clearing the whole
	// cache when full, as it did, made a store whose vocabulary is larger
	// than Max count its common terms again and again: on PostgreSQL, at
	// 100,000 beliefs, a third of the database's time under belief_create.)
	Max int
	Log *slog.Logger

	mu   sync.Mutex
	m    map[string]*statEntry
	old  map[string]*statEntry
	size int // the corpus size last observed (Observe)
	// closed is set by Close: no refresh starts after it. refreshes
	// counts those running; stop cancels them.
	closed    bool
	refreshes sync.WaitGroup
	stop      chan struct{}
}

type statEntry struct {
	v          int
	at         time.Time
	size       int // the corpus size observed when v was read
	refreshing bool
}

// Observe records the corpus's current size. A value read when the corpus
// was less than half as large is stale, whatever its age: under a bulk load
// the corpus grows tenfold within a TTL, and a term counted rare at the
// start is common by the end (a search that takes it for selective reads
// its whole posting list).
func (s *Stats) Observe(size int) {
	s.mu.Lock()
	s.size = max(s.size, size)
	s.mu.Unlock()
}

// NewStats returns a cache with the given TTL holding at most max entries.
func NewStats(ttl time.Duration, max int, log *slog.Logger) *Stats {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Stats{TTL: ttl, Max: max, Log: log, m: map[string]*statEntry{}, stop: make(chan struct{})}
}

// Close cancels the background refreshes running and waits for them to
// end; none starts after it (a stale value is returned as it is). Call it
// before closing the store the refreshes read.
func (s *Stats) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	s.mu.Unlock()
	s.refreshes.Wait()
}

// Get returns the statistic key: computed with fetch(ctx) on first use (and
// while it is zero),
// refreshed with refresh (a fetch that must not depend on ctx's
// transaction) in the background once stale.
func (s *Stats) Get(ctx context.Context, key string, fetch, refresh func(context.Context) (int, error)) (int, error) {
	v, ok, stale := s.lookup(key)
	if stale {
		go func() {
			defer s.refreshes.Done()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			go func() {
				select {
				case <-s.stop:
					cancel()
				case <-rctx.Done():
				}
			}()
			n, err := refresh(rctx)
			if err != nil {
				select {
				case <-s.stop: // cancelled by Close: nothing went wrong
				default:
					s.Log.Warn("refresh search statistic", "key", key, "err", err)
				}
				n = v
			}
			s.put(key, n)
		}()
	}
	// A zero is not kept: a term no belief had a moment ago may be in the
	// one just created, and counting a term nothing matches costs one index
	// probe.
	if ok && v > 0 {
		return v, nil
	}
	n, err := fetch(ctx)
	if err != nil {
		return 0, err
	}
	s.put(key, n)
	return n, nil
}

func (s *Stats) lookup(key string) (v int, ok, stale bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok {
		if e, ok = s.old[key]; !ok {
			return 0, false, false
		}
		delete(s.old, key)
		s.keep(key, e)
	}
	if (time.Since(e.at) > s.TTL || s.size > 2*max(e.size, 1)) && !e.refreshing && !s.closed {
		e.refreshing = true
		s.refreshes.Add(1) // under mu, so that Close waits for it
		return e.v, true, true
	}
	return e.v, true, false
}

func (s *Stats) put(key string, v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.old, key)
	s.keep(key, &statEntry{v: v, at: time.Now(), size: s.size})
}

// keep puts e in the newer generation, which becomes the older when full.
// s.mu is held.
func (s *Stats) keep(key string, e *statEntry) {
	if _, ok := s.m[key]; !ok && len(s.m) >= max(s.Max, 1) {
		s.old, s.m = s.m, make(map[string]*statEntry, len(s.m))
	}
	s.m[key] = e
}
