package noteindex

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// maxTermLen is the longest token indexed as a term (as textsearch.Terms
// drops longer ones from queries).
const maxTermLen = 64

// maxStemCache bounds the stem cache: past it, the cache starts afresh.
const maxStemCache = 1 << 17

// stemEntry is what the index makes of a token.
type stemEntry struct {
	stem  string // its stem (textsearch.Stem), or the token when too long
	hash  uint32 // of stem: the token in a note's seq
	index bool   // it is a term: not a stop word, not too long
}

// analyzeToken is the stemEntry of token tok (lower case).
func analyzeToken(tok string) stemEntry {
	e := stemEntry{stem: tok, index: len(tok) <= maxTermLen && !textsearch.IsStopWord(tok)}
	if len(tok) <= maxTermLen {
		e.stem = textsearch.Stem(tok)
	}
	e.hash = hashString(e.stem)
	return e
}

// stemCache remembers the stemEntry of each token seen: a vault's
// vocabulary is small next to its words, and stemming is most of the cost
// of indexing a note.
type stemCache struct {
	mu sync.Mutex
	m  map[string]stemEntry
}

// get returns tok's entry. c.mu is held.
func (c *stemCache) get(tok []byte) stemEntry {
	if e, ok := c.m[string(tok)]; ok {
		return e
	}
	s := string(tok)
	e := analyzeToken(s)
	if len(c.m) >= maxStemCache {
		clear(c.m)
	}
	c.m[s] = e
	return e
}

// hashString is the 32-bit FNV-1a hash of s.
func hashString(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// eachToken is textsearch.EachToken: one tokenizer for the project.
func eachToken(text string, buf []byte, fn func(tok []byte, start, end int)) []byte {
	return textsearch.EachToken(text, buf, fn)
}

// titleWords splits a title into lower-cased words: at anything but a
// letter or digit ('-', '_', ' ', '.'), and inside a word at camelCase
// humps (linearAlgebra, HTMLParser) and between letters and digits
// (MATH100). A word so split is kept whole too, so that "math100" finds
// MATH100 as "math 100" does.
func titleWords(title string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		parts := 0
		start := 0
		var prev rune
		for i, r := range w {
			if i > 0 {
				next, _ := utf8.DecodeRuneInString(w[i+utf8.RuneLen(r):])
				if unicode.IsLower(prev) && unicode.IsUpper(r) || // linearAlgebra
					unicode.IsUpper(prev) && unicode.IsUpper(r) && unicode.IsLower(next) || // HTMLParser
					unicode.IsDigit(prev) != unicode.IsDigit(r) { // MATH100
					out = append(out, strings.ToLower(w[start:i]))
					parts++
					start = i
				}
			}
			prev = r
		}
		out = append(out, strings.ToLower(w[start:]))
		if parts > 0 {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// titleOf is the title of the note at path: its base name without
// extension.
func titleOf(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[:i]
	}
	return base
}

// termTF is a term of a note with its frequency in each field.
type termTF struct {
	key string
	tf  [nFields]uint8
}

// fieldTerms collects a note's terms, field by field.
type fieldTerms struct {
	at    map[string]int
	terms []termTF
	lens  [nFields]uint32
}

func (ft *fieldTerms) add(f int, e stemEntry) {
	if !e.index {
		return
	}
	ft.lens[f]++
	i, ok := ft.at[e.stem]
	if !ok {
		i = len(ft.terms)
		ft.at[e.stem] = i
		ft.terms = append(ft.terms, termTF{key: e.stem})
	}
	if ft.terms[i].tf[f] < maxTF(f) {
		ft.terms[i].tf[f]++
	}
}

// analyze tokenizes and stems d: the note to index, its terms and its
// fields' lengths. It takes only the stem cache's lock.
func (ix *Index) analyze(d Doc) (*note, []termTF, [nFields]uint32) {
	n := &note{doc: d, title: titleOf(d.Path)}
	n.fz = newFuzzyTarget(n.title)
	for _, t := range d.Tags {
		if t = normTag(t); t != "" {
			n.tags = append(n.tags, t)
		}
	}
	for k, v := range d.Properties {
		n.props = append(n.props, prop{key: normKey(k), value: strings.ToLower(v)})
	}
	ft := fieldTerms{at: make(map[string]int, 64)}
	var buf []byte
	ix.stems.mu.Lock()
	defer ix.stems.mu.Unlock()
	for _, w := range titleWords(n.title) {
		ft.add(fTitle, ix.stems.get([]byte(w)))
	}
	text := func(f int, s string) {
		buf = eachToken(s, buf, func(tok []byte, _, _ int) { ft.add(f, ix.stems.get(tok)) })
	}
	for _, h := range d.Headings {
		text(fHeadings, h)
	}
	for _, t := range d.Tags {
		text(fTags, t)
	}
	for _, p := range n.props {
		text(fProps, p.value)
	}
	n.seq = make([]uint32, 0, len(d.Body)/6)
	buf = eachToken(d.Body, buf, func(tok []byte, _, _ int) {
		e := ix.stems.get(tok)
		n.seq = append(n.seq, e.hash)
		ft.add(fBody, e)
	})
	if cap(n.seq)-len(n.seq) > len(n.seq)/4 {
		n.seq = append([]uint32(nil), n.seq...)
	}
	n.pairs = newPairFilter(n.seq)
	return n, ft.terms, ft.lens
}

// pairFilter is a Bloom filter of the pairs of adjacent tokens of a body
// (8 bits a pair, 2 probes: 5% false positives): a phrase one of whose
// pairs it lacks is not in the body, and the body need not be read. It
// spares most of the phrase checks of a query of common words.
type pairFilter []uint64

// pairHash mixes the hashes of two adjacent tokens.
func pairHash(a, b uint32) uint64 {
	h := uint64(a)<<32 | uint64(b)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func newPairFilter(seq []uint32) pairFilter {
	if len(seq) < 2 {
		return nil
	}
	words := 1
	for words*64 < 8*(len(seq)-1) {
		words *= 2
	}
	f := make(pairFilter, words)
	for i := 1; i < len(seq); i++ {
		f.add(pairHash(seq[i-1], seq[i]))
	}
	return f
}

func (f pairFilter) add(h uint64) {
	mask := uint64(len(f))*64 - 1 // len(f) is a power of 2
	for _, b := range [2]uint64{h & mask, (h >> 32) & mask} {
		f[b/64] |= 1 << (b % 64)
	}
}

func (f pairFilter) has(h uint64) bool {
	if len(f) == 0 {
		return false
	}
	mask := uint64(len(f))*64 - 1
	for _, b := range [2]uint64{h & mask, (h >> 32) & mask} {
		if f[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

// mayHold reports whether a body of this filter may hold phrase.
func (f pairFilter) mayHold(phrase []uint32) bool {
	for i := 1; i < len(phrase); i++ {
		if !f.has(pairHash(phrase[i-1], phrase[i])) {
			return false
		}
	}
	return true
}

// normTag is a tag as filters compare it: without '#' or outer '/', lower
// case.
func normTag(t string) string {
	return strings.ToLower(strings.Trim(strings.TrimPrefix(strings.TrimSpace(t), "#"), "/"))
}

// normKey is a property key as filters compare it.
func normKey(k string) string { return strings.ToLower(strings.TrimSpace(k)) }
