package textsearch

import (
	"math"
)

// Doc is a text tokenized once, to be scored by [BM25Docs] against any
// number of queries without tokenizing it again (a bulk load scores each
// belief of a batch against many others). Read only once made.
type Doc struct {
	toks []docToken
	n    int // tokens in the text
}

// docToken is one distinct token of a Doc, with what [matcher.termOf]
// would compute of it for every query: its key and its stem.
type docToken struct {
	raw, key, stem string
	count          int
}

// NewDoc tokenizes text as [BM25] does.
func NewDoc(text string) Doc { return newDoc(text, map[string]string{}) }

// NewDocs is [NewDoc] on each of texts, stemming each distinct word once
// for all of them (the same words recur from text to text: stemming them
// again was a tenth of a bulk import's CPU, issue 23).
func NewDocs(texts []string) []Doc {
	stems := map[string]string{}
	docs := make([]Doc, len(texts))
	for i, t := range texts {
		docs[i] = newDoc(t, stems)
	}
	return docs
}

// newDoc is NewDoc with stems, the stems of words seen before, to use and
// fill.
func newDoc(text string, stems map[string]string) Doc {
	var d Doc
	at := map[string]int{}
	eachToken(text, nil, func(tok []byte) {
		d.n++
		if i, ok := at[string(tok)]; ok {
			d.toks[i].count++
			return
		}
		raw := string(tok)
		at[raw] = len(d.toks)
		st, ok := stems[raw]
		if !ok {
			st = Stem(raw)
			stems[raw] = st
		}
		d.toks = append(d.toks, docToken{raw: raw, key: Key(raw), stem: st, count: 1})
	})
	return d
}

// termOfToken is [matcher.termOf] on a Doc's token.
func (m *matcher) termOfToken(t *docToken) (string, bool) {
	if k, ok := m.key[t.raw]; ok {
		return k, true
	}
	if len(t.key) != len(t.raw) {
		if k, ok := m.key[t.key]; ok {
			return k, true
		}
	}
	for _, p := range m.prefixes {
		if len(t.raw) > len(p) && t.raw[:len(p)] == p {
			if m.isStem[t.stem] {
				return t.stem, true
			}
			return "", false
		}
	}
	return "", false
}

// BM25Docs is [BM25] on texts tokenized by [NewDoc]: the same scores (a
// token stands for a query term by the same matcher).
func BM25Docs(docs []Doc, terms []string, df map[string]int, n int) []float64 {
	return NewQuery(terms).BM25Docs(docs, df, n)
}

// Query is query terms prepared once (their stems and keys) to score any
// number of sets of Docs. Safe for concurrent use.
type Query struct {
	terms []string
	m     *matcher
}

// NewQuery prepares terms.
func NewQuery(terms []string) *Query { return &Query{terms: terms, m: newMatcher(terms)} }

// BM25Docs is [BM25Docs] for q's terms.
func (q *Query) BM25Docs(docs []Doc, df map[string]int, n int) []float64 {
	scores := make([]float64, len(docs))
	if len(docs) == 0 {
		return scores
	}
	m := q.m
	idf := make(map[string]float64, len(q.terms))
	for _, t := range q.terms {
		d := float64(df[t])
		N := math.Max(float64(n), d)
		k := m.key[t]
		idf[k] = math.Max(idf[k], math.Log(1+(N-d+0.5)/(d+0.5)))
	}
	total := 0
	for _, d := range docs {
		total += d.n
	}
	avg := math.Max(1, float64(total)/float64(len(docs)))
	tf := map[string]int{}
	for i, d := range docs {
		clear(tf)
		for i := range d.toks {
			if k, ok := m.termOfToken(&d.toks[i]); ok {
				tf[k] += d.toks[i].count
			}
		}
		norm := K1 * (1 - B + B*float64(d.n)/avg)
		for k, f := range tf {
			scores[i] += idf[k] * float64(f) * (K1 + 1) / (float64(f) + norm)
		}
	}
	return scores
}
