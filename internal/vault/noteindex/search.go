package noteindex

import (
	"math"
	"slices"
	"strings"
)

// Query is a search of the notes.
type Query struct {
	// Text is the words searched for. Its "#tag" tokens are tag filters
	// (as Tags) and its "key:value" tokens property filters (as
	// Properties); both are removed from the words.
	Text string
	// Tags are tag filters, all of which must hold: a note passes "math"
	// when it has the tag "math" or one nested under it ("math/algebra"),
	// whatever the case.
	Tags []string
	// Properties are property filters, all of which must hold: the
	// note's property of the key (whatever its case) has a value that
	// holds the value given, whatever the case ("" for any value).
	Properties map[string]string
	// Paths are path filters, one of which must hold: each is a prefix of
	// the note's path ("courses/") or, when it holds one of * ? [ ] { },
	// a glob on the whole path, where ** matches anything and * anything
	// but '/'.
	Paths []string
	// Limit is the most hits returned (10 when ≤ 0).
	Limit int
	// IncludeContent asks for each hit's snippet and lines.
	IncludeContent bool
	// SnippetLength is the most characters of a snippet (200 when ≤ 0).
	SnippetLength int
}

// Hit is a note found.
type Hit struct {
	Path string
	// Title is the note's file's base name without extension.
	Title string
	// Score is in 0..1: the best hit of a search scores 1, unless only
	// fuzzy matches of the title were found, which score their own
	// (Fuzzy).
	Score float64
	// Method is how the note matched: "keyword" (BM25F), "fuzzy" (its
	// title, fuzzily), "combined" (both), or "filter" (a query of filters
	// only).
	Method string
	// Snippet is the part of the body where the query's words are, with
	// "..." where it is cut, or "File: <path>" when no word of the body
	// matched. Only with IncludeContent.
	Snippet string
	// Lines are the body's lines that hold a word of the query, at most
	// 5. Only with IncludeContent.
	Lines []Line
}

// Line is a line of a note: its number in the file (1-based) and its
// text.
type Line struct {
	N    int
	Text string
}

// Result is what a search found.
type Result struct {
	// Hits are the best notes, best first (ties by path; for a query of
	// filters only, newest first).
	Hits []Hit
	// Total is the number of notes that matched, before the limit.
	Total int
}

// Defaults of a Query.
const (
	defaultLimit   = 10
	defaultSnippet = 200
	// keywordShare is the keyword score's share of a note's score when
	// its title also matches fuzzily; the fuzzy score has the rest.
	keywordShare = 0.6
)

// cand is a note that matched a search.
type cand struct {
	n      *note
	r      float64 // BM25F score, without the phrase bonus
	f      float64 // fuzzy score of the title
	score  float64
	elig   bool // its body has every term: it may hold the phrase
	seen   bool // the phrase has been looked for
	phrase bool // its body holds the phrase
}

// found is a note a search returns.
type found struct {
	n      *note
	score  float64
	method string
}

// scratch is a search's working space, by note slot, kept zeroed between
// searches (Index.scratch).
type scratch struct {
	acc     []float64 // BM25F score
	cnt     []uint8   // terms found in the body
	pos     []int32   // 1 + index in the candidates; -1: filtered out
	touched []int32
	cands   []cand
	rows    fuzzyRows
}

func (ix *Index) getScratch() *scratch {
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if n := len(ix.notes); len(s.acc) < n {
		n += n / 4
		s.acc, s.cnt, s.pos = make([]float64, n), make([]uint8, n), make([]int32, n)
	}
	return s
}

// Search finds the notes for q.
//
// A note's keyword score is its BM25F score for the query's terms (fields
// title 3, headings 2, tags 2, property values 1.5, body 1; IDF over the
// notes indexed), plus the phrase bonus when its body holds the query's
// words together, in order (stemmed: "running the tests" finds "runs the
// test"): 0.5 times the sum of the terms' IDF. That is about what a
// title-weighted occurrence of each word adds over a body one (BM25F gives
// a word once in the title 1.57 IDF, once in the body 1), a little less, so
// that a note whose title names the query still outranks one that only
// says it in its body; TestPhraseBonusMeasured measures it. Keyword scores
// are divided by the best, so the best scores 1. A note whose title
// matches the query fuzzily (Fuzzy) scores 0.6 × keyword + 0.4 × fuzzy
// when it has both, else the one it has; scores are then divided by the
// best when any note matched by keyword. A query of filters only returns
// the notes that pass them, newest first, each scoring 1.
func (ix *Index) Search(q Query) Result {
	pq := parseQuery(q)
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	var top []found
	var total int
	ix.mu.RLock()
	switch {
	case pq.hasWords():
		top, total = ix.rank(pq, limit)
	case pq.hasFilters():
		top, total = ix.filtered(pq, limit)
	}
	ix.mu.RUnlock()
	// Notes are not changed once indexed: snippets are made unlocked.
	res := Result{Total: total, Hits: make([]Hit, 0, len(top))}
	length := q.SnippetLength
	if length <= 0 {
		length = defaultSnippet
	}
	for _, c := range top {
		h := Hit{Path: c.n.doc.Path, Title: c.n.title, Score: c.score, Method: c.method}
		if q.IncludeContent {
			h.Snippet, h.Lines = snippet(c.n, pq, length)
		}
		res.Hits = append(res.Hits, h)
	}
	return res
}

// rank scores the notes for a query with words: the best limit of them,
// and how many matched. ix.mu is held for reading.
func (ix *Index) rank(pq *parsed, limit int) ([]found, int) {
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	bonus := ix.keyword(pq, s)
	ix.fuzzy(pq, s)
	for _, d := range s.touched {
		s.acc[d], s.cnt[d], s.pos[d] = 0, 0, 0
	}
	s.touched = s.touched[:0]
	cands := s.cands
	defer func() {
		clear(cands) // no note kept alive by the pool
		s.cands = cands[:0]
	}()

	// The best keyword score, the phrase bonus counted: the notes that may
	// hold the phrase are looked at while one could beat it.
	best := 0.0
	for i := range cands {
		best = max(best, cands[i].r)
	}
	if bonus > 0 {
		for i := range cands {
			if c := &cands[i]; c.elig && c.r+bonus > best {
				c.seen, c.phrase = true, c.n.hasPhrase(pq.phrase)
				if c.phrase {
					best = c.r + bonus
				}
			}
		}
	}
	score := func(c *cand, phrase bool) float64 {
		kw := 0.0
		if c.r > 0 {
			r := c.r
			if phrase {
				r += bonus
			}
			kw = min(r/best, 1)
		}
		if kw > 0 && c.f > 0 {
			return keywordShare*kw + (1-keywordShare)*c.f
		}
		return max(kw, c.f)
	}
	better := func(i, j int32) bool {
		return cmpScore(cands[i].score, cands[j].score, cands[i].n, cands[j].n) < 0
	}
	for i := range cands {
		cands[i].score = score(&cands[i], cands[i].phrase)
	}
	// The phrase is looked for only in the notes it could bring among the
	// best limit: those whose score with it reaches the limit-th best
	// score without it.
	floor := math.Inf(-1)
	if bonus > 0 {
		low := newTopK(limit, better)
		for i := range cands {
			low.push(int32(i))
		}
		if w, ok := low.worst(); ok {
			floor = cands[w].score
		}
		for i := range cands {
			if c := &cands[i]; c.elig && !c.seen && score(c, true) >= floor {
				c.seen, c.phrase = true, c.n.hasPhrase(pq.phrase)
				c.score = score(c, c.phrase)
			}
		}
	}
	top := newTopK(limit, better)
	for i := range cands {
		top.push(int32(i))
	}
	hits := make([]found, 0, min(limit, len(cands)))
	for _, i := range top.sorted() {
		c := &cands[i]
		h := found{n: c.n, score: c.score, method: "fuzzy"}
		switch {
		case c.r > 0 && c.f > 0:
			h.method = "combined"
		case c.r > 0:
			h.method = "keyword"
		}
		hits = append(hits, h)
	}
	if best > 0 && len(hits) > 0 && hits[0].score > 0 {
		norm := hits[0].score
		for i := range hits {
			hits[i].score = min(hits[i].score/norm, 1)
		}
	}
	return hits, len(cands)
}

// keyword scores by BM25F the notes that have a term of the query and
// pass its filters, into s.cands, and returns the phrase bonus (0 when
// the query has no phrase).
func (ix *Index) keyword(pq *parsed, s *scratch) float64 {
	n := float64(ix.live)
	var norm [nFields]float64 // of a field's length: b/avg
	for f := range nFields {
		norm[f] = ix.p.b[f] / max(float64(ix.total[f])/max(n, 1), 1)
	}
	k1 := ix.p.k1
	found, sumIDF := 0, 0.0
	for _, key := range pq.terms {
		id, ok := ix.dict[key]
		if !ok {
			continue
		}
		found++
		ps := ix.terms[id].postings
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		sumIDF += idf
		wBody, bBody, nBody := ix.p.weight[fBody], ix.p.b[fBody], norm[fBody]
		for _, p := range ps {
			d := p.doc()
			l := &ix.lens[d]
			var tf float64
			if p.bodyOnly() { // most are
				tf = wBody * float64(p.tf(fBody)) / (1 - bBody + nBody*float64(l[fBody]))
			} else {
				for f := range nFields {
					if v := p.tf(f); v != 0 {
						tf += ix.p.weight[f] * float64(v) / (1 - ix.p.b[f] + norm[f]*float64(l[f]))
					}
				}
			}
			if s.acc[d] == 0 {
				s.touched = append(s.touched, d)
			}
			s.acc[d] += idf * tf * (k1 + 1) / (tf + k1)
			if p.tf(fBody) != 0 {
				s.cnt[d]++
			}
		}
	}
	bonus := 0.0
	if len(pq.phrase) > 0 && found == len(pq.terms) {
		bonus = ix.p.phrase * sumIDF
	}
	for _, d := range s.touched {
		nt := ix.notes[d]
		if !pq.match(nt) {
			s.pos[d] = -1
			continue
		}
		s.cands = append(s.cands, cand{n: nt, r: s.acc[d], elig: bonus > 0 && int(s.cnt[d]) == len(pq.terms)})
		s.pos[d] = int32(len(s.cands))
	}
	return bonus
}

// fuzzy matches the query on the titles of the notes that pass its
// filters, adding to s.cands. It reads each note's title letters (a word
// of memory a note), and matches only the titles that have all the
// query's.
func (ix *Index) fuzzy(pq *parsed, s *scratch) {
	fq := &pq.fz
	if len(fq.q) == 0 {
		return
	}
	for d, m := range ix.masks {
		if fq.mask&^m != 0 || s.pos[d] < 0 {
			continue
		}
		n := ix.notes[d]
		if n == nil {
			continue
		}
		f, ok := fq.score(&n.fz, &s.rows)
		if !ok {
			continue
		}
		if i := s.pos[d]; i > 0 {
			s.cands[i-1].f = f
		} else if pq.match(n) {
			s.cands = append(s.cands, cand{n: n, f: f})
		}
	}
}

// filtered returns the notes that pass a query of filters only, newest
// first: the best limit and how many. ix.mu is held for reading.
func (ix *Index) filtered(pq *parsed, limit int) ([]found, int) {
	top := newTopK(limit, func(a, b found) bool {
		if !a.n.doc.Modified.Equal(b.n.doc.Modified) {
			return a.n.doc.Modified.After(b.n.doc.Modified)
		}
		return a.n.doc.Path < b.n.doc.Path
	})
	total := 0
	visit := func(d int32) {
		if n := ix.notes[d]; n != nil && pq.match(n) {
			total++
			top.push(found{n: n, score: 1, method: "filter"})
		}
	}
	// The notes of the rarest tag, or property key, are the candidates;
	// with neither, every note is.
	var from []int32
	switch {
	case len(pq.tags) > 0:
		from = ix.tagDocs[pq.tags[0]]
		for _, t := range pq.tags[1:] {
			if ds := ix.tagDocs[t]; len(ds) < len(from) {
				from = ds
			}
		}
	case len(pq.props) > 0:
		from = ix.propDocs[pq.props[0].key]
		for _, p := range pq.props[1:] {
			if ds := ix.propDocs[p.key]; len(ds) < len(from) {
				from = ds
			}
		}
	default:
		for d := range ix.notes {
			visit(int32(d))
		}
	}
	for _, d := range from {
		visit(d)
	}
	return top.sorted(), total
}

// cmpScore orders scores high first, ties by path.
func cmpScore(a, b float64, na, nb *note) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return strings.Compare(na.doc.Path, nb.doc.Path)
}

// hasPhrase reports whether n's body holds phrase.
func (n *note) hasPhrase(phrase []uint32) bool {
	return n.pairs.mayHold(phrase) && phraseAt(n.seq, phrase) >= 0
}

// phraseAt is the index in seq where phrase first starts, or -1.
func phraseAt(seq, phrase []uint32) int {
	if len(phrase) == 0 {
		return -1
	}
	for i := 0; i+len(phrase) <= len(seq); i++ {
		if seq[i] == phrase[0] && slices.Equal(seq[i:i+len(phrase)], phrase) {
			return i
		}
	}
	return -1
}
