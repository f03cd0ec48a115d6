package noteindex

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a hit's content.
const (
	maxLines = 5
	// maxMatches is the most matching words of a body a snippet weighs.
	maxMatches = 256
)

// span is a token of a body: its byte offsets and its line (0-based, in
// the body).
type span struct{ start, end, line int }

// snippet makes a hit's snippet and lines: the part of the body around
// the query's phrase, else where most of its terms are close together,
// and the first lines holding a term. The tokens that match are found in
// the note's seq (the stems of its body's tokens, hashed), so the body is
// not stemmed again, only split.
func snippet(n *note, pq *parsed, length int) (string, []Line) {
	var idx []int // the tokens of the body that match a term
	for i, h := range n.seq {
		if slices.Contains(pq.termHashes, h) {
			idx = append(idx, i)
			if len(idx) == maxMatches {
				break
			}
		}
	}
	if len(idx) == 0 {
		return "File: " + n.doc.Path, nil
	}
	at := phraseAt(n.seq, pq.phrase)
	want := idx
	if at >= 0 && !slices.Contains(idx, at) {
		want = slices.Insert(slices.Clone(idx), sortedIndex(idx, at), at)
	}
	spans := spansOf(n.doc.Body, want)
	if len(spans) == 0 {
		return "File: " + n.doc.Path, nil // not reached: seq is the body's tokens
	}
	body := n.doc.Body

	// The anchor: the phrase, else the match that starts the window
	// holding most distinct terms.
	anchor := -1
	for i, t := range want {
		if t == at && i < len(spans) {
			anchor = spans[i].start
		}
	}
	if anchor < 0 {
		bestCount := 0
		var terms []uint32
		for i := range spans {
			terms = terms[:0]
			for j := i; j < len(spans) && spans[j].start-spans[i].start < length*3/4; j++ {
				if h := n.seq[want[j]]; !slices.Contains(terms, h) {
					terms = append(terms, h)
				}
			}
			if len(terms) > bestCount {
				bestCount, anchor = len(terms), spans[i].start
			}
		}
	}

	var lines []Line
	first := max(n.doc.BodyLine, 1)
	for i, sp := range spans {
		if want[i] == at && !slices.Contains(idx, at) {
			continue // the phrase's start, not a term
		}
		if len(lines) > 0 && lines[len(lines)-1].N == first+sp.line {
			continue
		}
		if len(lines) == maxLines {
			break
		}
		ls := strings.LastIndexByte(body[:sp.start], '\n') + 1
		le := strings.IndexByte(body[sp.start:], '\n')
		if le < 0 {
			le = len(body)
		} else {
			le += sp.start
		}
		text := strings.TrimRight(body[ls:le], "\r")
		if utf8.RuneCountInString(text) > length {
			text = window(text, sp.start-ls, length)
		}
		lines = append(lines, Line{N: first + sp.line, Text: text})
	}
	return window(body, anchor, length), lines
}

// sortedIndex is where x goes in the ascending s.
func sortedIndex(s []int, x int) int {
	i, _ := slices.BinarySearch(s, x)
	return i
}

// spansOf finds the tokens of body numbered in idx (ascending), splitting
// it as eachToken does.
func spansOf(body string, idx []int) []span {
	out := make([]span, 0, len(idx))
	tok, line, start := 0, 0, -1
	flush := func(end int) {
		if tok == idx[len(out)] {
			out = append(out, span{start: start, end: end, line: line})
		}
		tok++
		start = -1
	}
	for i, r := range body {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
			if len(out) == len(idx) {
				return out
			}
		}
		if r == '\n' {
			line++
		}
	}
	if start >= 0 {
		flush(len(body))
	}
	return out
}

// window is about length characters of text around byte offset anchor:
// from a little before it (a word's start, when there is one near), with
// runs of white space made one space, cut at a word's end, and "..."
// where text goes on before or after.
func window(text string, anchor, length int) string {
	start := anchor
	for k := 0; k < length/5 && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	if start > 0 {
		if i := strings.IndexFunc(text[start:anchor], unicode.IsSpace); i >= 0 {
			start += i
		}
		for start < anchor {
			r, size := utf8.DecodeRuneInString(text[start:])
			if !unicode.IsSpace(r) {
				break
			}
			start += size
		}
	}
	out := make([]rune, 0, length+8)
	cut := false
	for _, r := range text[start:] {
		if unicode.IsSpace(r) {
			if len(out) > 0 && len(out) < length && out[len(out)-1] != ' ' {
				out = append(out, ' ')
			}
			continue
		}
		if len(out) >= length {
			cut = true
			break
		}
		out = append(out, r)
	}
	if cut { // at the last space, when that leaves most of the window
		for i := len(out) - 1; i > len(out)/2; i-- {
			if out[i] == ' ' {
				out = out[:i]
				break
			}
		}
	}
	s := strings.TrimSpace(string(out))
	if strings.TrimSpace(text[:start]) != "" {
		s = "..." + s
	}
	if cut {
		s += "..."
	}
	return s
}
