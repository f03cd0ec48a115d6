package vault

import "github.com/nexus-mcp/nexus/internal/errs"

// Fuzzy replacement (replaceContent, deleteContent). When the text to
// replace is not in the note as given, the original looked for it with
// diff-match-patch's match_main, which reads its threshold the other way
// round from the parameter's documentation ("1.0 = exact": there 0 is
// exact, so the default 0.95 accepted nearly anything), favours matches
// near the start of the note, and fails on a text over 32 characters
// (contract section 5, item 3). Nexus does what the documentation
// promises: the part of the note most similar to the text, where
// similarity is 1 - (edits to turn one into the other) / (the text's
// length), is replaced if its similarity is at least the threshold (1.0:
// only the exact text; 0.95 by default: 1 edit in 20 characters), wherever
// it is in the note. The search is Sellers' approximate substring
// matching, in time proportional to the note's length times the text's.

// maxFuzzyCells bounds a fuzzy search's work (note length x text length,
// in characters).
const maxFuzzyCells = 50_000_000

// fuzzyFind returns the part of text (as rune offsets start, end) most
// similar to pattern and its similarity, 0..1.
func fuzzyFind(text, pattern []rune) (start, end int, similarity float64, err error) {
	m := len(pattern)
	if m == 0 || len(text) == 0 {
		return 0, 0, 0, nil
	}
	if len(text)*m > maxFuzzyCells {
		return 0, 0, 0, errs.E(errs.UnprocessableEntity, "the note (%d characters) and the text (%d) are too long to compare closely; give the exact text to replace", len(text), m)
	}
	// prev[i], cur[i]: the fewest edits turning pattern[:i] into a
	// substring of text ending at the current position; from[i] where that
	// substring starts.
	prev, cur := make([]int, m+1), make([]int, m+1)
	fromPrev, fromCur := make([]int, m+1), make([]int, m+1)
	for i := range prev {
		prev[i] = i
	}
	best, bestEnd, bestStart := m+1, 0, 0
	for j := 1; j <= len(text); j++ {
		cur[0], fromCur[0] = 0, j // a match may start anywhere
		for i := 1; i <= m; i++ {
			cost := 1
			if pattern[i-1] == text[j-1] {
				cost = 0
			}
			d, f := prev[i-1]+cost, fromPrev[i-1] // substitute or match
			if prev[i]+1 < d {
				d, f = prev[i]+1, fromPrev[i] // text has an extra character
			}
			if cur[i-1]+1 < d {
				d, f = cur[i-1]+1, fromCur[i-1] // text lacks a character
			}
			cur[i], fromCur[i] = d, f
		}
		if cur[m] < best {
			best, bestEnd, bestStart = cur[m], j, fromCur[m]
		}
		prev, cur = cur, prev
		fromPrev, fromCur = fromCur, fromPrev
	}
	return bestStart, bestEnd, 1 - float64(best)/float64(m), nil
}
