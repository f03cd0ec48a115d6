package noteindex

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The fuzzy matcher's scores (in the manner of fzf's): each letter of the
// query matched scores fuzzyMatch, plus a bonus for where it falls: the
// start of the text, the start of a word (after a separator), a camelCase
// hump or a letter-digit change. A letter matched right after the
// previous one scores the larger of its own bonus, the bonus of its run's
// first letter and fuzzyConsecutive. A gap between two matched letters
// costs fuzzyGapOpen and fuzzyGapExtend for each further character.
const (
	fuzzyMatch       = 16
	fuzzyStart       = 10
	fuzzyWord        = 8
	fuzzyCamel       = 7
	fuzzyConsecutive = 6
	fuzzyGapOpen     = 3
	fuzzyGapExtend   = 1
	// fuzzyMaxCells bounds the alignment table: past it the leftmost
	// alignment is scored instead of the best.
	fuzzyMaxCells = 1 << 16
)

// fuzzyTarget is a text prepared for fuzzy matching.
type fuzzyTarget struct {
	s     string
	r     []rune // lower case
	bonus []int8 // of each rune
	mask  uint64 // runesMask(r)
}

func newFuzzyTarget(s string) fuzzyTarget {
	var t fuzzyTarget
	t.set(s)
	return t
}

// set makes t the target of s, reusing t's space.
func (t *fuzzyTarget) set(s string) {
	t.s, t.r, t.bonus = s, t.r[:0], t.bonus[:0]
	var prev rune
	for i, r := range s {
		var b int8
		switch {
		case i == 0:
			b = fuzzyStart
		case !isWordRune(prev) && isWordRune(r):
			b = fuzzyWord
		case unicode.IsLower(prev) && unicode.IsUpper(r),
			unicode.IsLetter(prev) && unicode.IsDigit(r),
			unicode.IsDigit(prev) && unicode.IsLetter(r):
			b = fuzzyCamel
		}
		t.r = append(t.r, fold(r))
		t.bonus = append(t.bonus, b)
		prev = r
	}
	t.mask = runesMask(t.r)
	if cap(t.r) > len(t.r)+8 { // a note's target is kept: no slack
		t.r, t.bonus = slices.Clip(t.r), slices.Clip(t.bonus)
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// fold is r in lower case without its accents ("É" is "e"), so that
// "creme" finds "Crème brûlée": a letter whose canonical decomposition is a
// base letter and combining marks is its base letter.
func fold(r rune) rune {
	if r < utf8.RuneSelf {
		return unicode.ToLower(r)
	}
	d := norm.NFD.String(string(r))
	base, size := utf8.DecodeRuneInString(d)
	for _, m := range d[size:] {
		if !unicode.Is(unicode.Mn, m) {
			return unicode.ToLower(r)
		}
	}
	return unicode.ToLower(base)
}

// runesMask is a bit for each of a-z and 0-9 among rs, and one of 28 bits
// for any other rune: a text lacking a bit of the query's lacks a letter
// of it.
func runesMask(rs []rune) uint64 {
	var m uint64
	for _, r := range rs {
		switch {
		case 'a' <= r && r <= 'z':
			m |= 1 << (r - 'a')
		case '0' <= r && r <= '9':
			m |= 1 << (26 + r - '0')
		default:
			m |= 1 << (36 + uint32(r)%28)
		}
	}
	return m
}

// fuzzyQuery is a query prepared for fuzzy matching.
type fuzzyQuery struct {
	text  string // as typed, trimmed: an exact match
	runes int    // in text
	q     []rune // lower case, spaces left out
	mask  uint64
}

func newFuzzyQuery(query string) fuzzyQuery {
	fq := fuzzyQuery{text: strings.TrimSpace(query)}
	fq.runes = utf8.RuneCountInString(fq.text)
	for _, r := range fq.text {
		if !unicode.IsSpace(r) {
			fq.q = append(fq.q, fold(r))
		}
	}
	fq.mask = runesMask(fq.q)
	return fq
}

// fuzzyRows is scratch space for fuzzyScore, reused across calls.
type fuzzyRows struct {
	m0, c0, m1, c1 []int32
}

// Fuzzy scores s for query, an ordered-subsequence match ignoring case
// (and the query's spaces): ok is false unless the query's letters are all
// in s in order. The score is 1 when s is the query (but for case), else
// at most 0.95: highest when the query is a prefix of s, then when its
// letters fall on the starts of s's words, lowest when they are scattered
// inside words; a query covering more of s scores a little higher. An ok
// match scores at least 0.01.
func Fuzzy(query, s string) (score float64, ok bool) {
	t := newFuzzyTarget(s)
	fq := newFuzzyQuery(query)
	return fq.score(&t, &fuzzyRows{})
}

// score is Fuzzy on a prepared query and target.
func (fq *fuzzyQuery) score(t *fuzzyTarget, rows *fuzzyRows) (float64, bool) {
	n, m := len(fq.q), len(t.r)
	if n == 0 {
		return 0, false
	}
	if m == fq.runes && strings.EqualFold(fq.text, t.s) { // same runes, but for case
		return 1, true
	}
	if n > m || fq.mask&^t.mask != 0 {
		return 0, false
	}
	// The leftmost alignment, if any: the letters are there in order.
	j := 0
	for _, c := range fq.q {
		for j < m && t.r[j] != c {
			j++
		}
		if j == m {
			return 0, false
		}
		j++
	}
	var raw int32
	if n*m > fuzzyMaxCells {
		raw = fq.leftmost(t)
	} else {
		raw = fq.best(t, rows)
	}
	align := min(max(float64(raw)/float64(n*(fuzzyMatch+fuzzyStart)), 0), 1)
	cover := float64(n) / float64(m)
	return max(0.95*(0.9*align+0.1*cover), 0.01), true
}

// noScore marks a cell of the alignment table that no alignment reaches.
const noScore = -1 << 29

// best is the score of the best alignment of the query on t (the query
// is a subsequence of t): a dynamic programme over the query's letters and
// t's runes, where cell j of a row is the best score of the query's
// letters so far with the last matched at t.r[j].
func (fq *fuzzyQuery) best(t *fuzzyTarget, rows *fuzzyRows) int32 {
	m := len(t.r)
	grow := func(s []int32) []int32 {
		if cap(s) < m {
			return make([]int32, m)
		}
		return s[:m]
	}
	rows.m0, rows.c0, rows.m1, rows.c1 = grow(rows.m0), grow(rows.c0), grow(rows.m1), grow(rows.c1)
	pm, pc, cm, cc := rows.m0, rows.c0, rows.m1, rows.c1
	for j, r := range t.r {
		if r == fq.q[0] {
			pm[j], pc[j] = fuzzyMatch+int32(t.bonus[j]), int32(t.bonus[j])
		} else {
			pm[j] = noScore
		}
	}
	for i := 1; i < len(fq.q); i++ {
		c := fq.q[i]
		gap := int32(noScore) // best score of an alignment ending before j-1, less its gap to j
		for j := range m {
			if j >= 2 {
				gap = max(gap-fuzzyGapExtend, pm[j-2]-fuzzyGapOpen)
			}
			if j < i || t.r[j] != c {
				cm[j] = noScore
				continue
			}
			b := int32(t.bonus[j])
			best, carry := int32(noScore), b
			if pm[j-1] > noScore/2 {
				best = pm[j-1] + fuzzyMatch + max(b, pc[j-1], fuzzyConsecutive)
				carry = max(pc[j-1], b)
			}
			if gap > noScore/2 {
				if g := gap + fuzzyMatch + b; g > best {
					best, carry = g, b
				}
			}
			cm[j], cc[j] = best, carry
		}
		pm, pc, cm, cc = cm, cc, pm, pc
	}
	return slices.Max(pm)
}

// leftmost scores the leftmost alignment of the query on t.
func (fq *fuzzyQuery) leftmost(t *fuzzyTarget) int32 {
	var score, carry int32
	last := -2
	j := 0
	for _, c := range fq.q {
		for t.r[j] != c {
			j++
		}
		b := int32(t.bonus[j])
		switch {
		case j == last+1:
			score += fuzzyMatch + max(b, carry, fuzzyConsecutive)
			carry = max(carry, b)
		case last >= 0:
			score += fuzzyMatch + b - fuzzyGapOpen - int32(j-last-2)*fuzzyGapExtend
			carry = b
		default:
			score += fuzzyMatch + b
			carry = b
		}
		last = j
		j++
	}
	return score
}

// Entry is a file or folder of the vault, for FuzzyPaths.
type Entry struct {
	Path   string
	Folder bool
}

// PathHit is an entry FuzzyPaths found.
type PathHit struct {
	Entry
	Score float64
	// Method says what matched best: "fuzzy_name" (the base name) or
	// "fuzzy_path" (the whole path).
	Method string
}

// FuzzyPaths ranks entries for query by the best of Fuzzy(query, base
// name) and 0.8 × Fuzzy(query, full path), best first, ties by path; it
// returns at most limit of them (10 when limit ≤ 0) and the number that
// matched. A file's base name is matched with and without its extension
// (the better counts); a folder's path may end in '/'.
func FuzzyPaths(query string, entries []Entry, limit int) (hits []PathHit, total int) {
	if limit <= 0 {
		limit = 10
	}
	fq := newFuzzyQuery(query)
	if len(fq.q) == 0 {
		return nil, 0
	}
	var rows fuzzyRows
	var t fuzzyTarget
	top := newTopK(limit, func(a, b PathHit) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Path < b.Path
	})
	for _, e := range entries {
		p := strings.TrimSuffix(e.Path, "/")
		if !hasLetters(p, fq.mask) {
			continue // neither the path nor the name has all the query's letters
		}
		t.set(p)
		full, ok := fq.score(&t, &rows)
		if !ok {
			continue // nor has its name, a part of it
		}
		full *= 0.8
		base := p[strings.LastIndexByte(p, '/')+1:]
		t.set(base)
		name, _ := fq.score(&t, &rows)
		if stem := titleOf(base); !e.Folder && stem != base {
			t.set(stem)
			s, _ := fq.score(&t, &rows)
			name = max(name, s)
		}
		total++
		h := PathHit{Entry: e, Score: name, Method: "fuzzy_name"}
		if full > name {
			h.Score, h.Method = full, "fuzzy_path"
		}
		top.push(h)
	}
	return top.sorted(), total
}

// hasLetters reports whether s has every letter of mask (runesMask).
func hasLetters(s string, mask uint64) bool {
	var m uint64
	for _, r := range s {
		m |= runesMask([]rune{unicode.ToLower(r)})
	}
	return mask&^m == 0
}

// topK keeps the k best items pushed: a heap whose root is the worst kept.
type topK[T any] struct {
	k      int
	items  []T
	better func(a, b T) bool
}

func newTopK[T any](k int, better func(a, b T) bool) *topK[T] {
	return &topK[T]{k: k, better: better}
}

// worst is the worst item kept, once k are (ok false before).
func (h *topK[T]) worst() (x T, ok bool) {
	if len(h.items) < h.k || h.k == 0 {
		var zero T
		return zero, false
	}
	return h.items[0], true
}

func (h *topK[T]) push(x T) {
	if h.k <= 0 {
		return
	}
	if len(h.items) < h.k {
		h.items = append(h.items, x)
		for i := len(h.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.better(h.items[p], h.items[i]) {
				break
			}
			h.items[i], h.items[p] = h.items[p], h.items[i]
			i = p
		}
		return
	}
	if !h.better(x, h.items[0]) {
		return
	}
	h.items[0] = x
	for i := 0; ; {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(h.items) && h.better(h.items[w], h.items[l]) {
			w = l
		}
		if r < len(h.items) && h.better(h.items[w], h.items[r]) {
			w = r
		}
		if w == i {
			return
		}
		h.items[i], h.items[w] = h.items[w], h.items[i]
		i = w
	}
}

// sorted returns the items kept, best first.
func (h *topK[T]) sorted() []T {
	slices.SortFunc(h.items, func(a, b T) int {
		switch {
		case h.better(a, b):
			return -1
		case h.better(b, a):
			return 1
		}
		return 0
	})
	return h.items
}
