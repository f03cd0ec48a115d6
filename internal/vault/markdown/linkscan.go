package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// At each ']' followed by '(', goldmark's link parser reads an inline link's
// destination: it scans the rest of the line for a space or an unbalanced
// ')'. Where the link then fails, as in "[a](" repeated, the next ']' scans
// the same line again: quadratic in the line's length. linkScan predicts
// that failure, by the very rules of goldmark's parser (parseLink,
// parseLinkDestination, parseLinkTitle and FindClosure in goldmark v1.8),
// in time linear in the line's length for all the ']' of a line, so that
// the link parser can be spared the attempt (see linkRecorder). It only
// predicts a failure when it is sure of it; a success, or anything it cannot
// tell, is left to goldmark, whose scan then ends at the link's end.

// scanBudget is how far linkScan scans a destination directly before it
// indexes the whole line: most destinations end well within it.
const scanBudget = 64

// linkScan predicts inline link failures within one goldmark call.
type linkScan struct {
	src    []byte
	parent ast.Node
	lines  *text.Segments // the lines of the block being parsed, parent's

	// An index of one line, lines.At(line), from offset from: for each
	// offset at which goldmark's destination scan may start, where the scan
	// stops (dest) and where the first '>' that would end a destination
	// "<...>" is (angle, -1 for none); dest is -1 where no scan can start.
	line, from  int
	dest, angle []int32
	drop        []int32 // scratch for building dest

	titleAt, titleEnd int // the last title read: where it starts and ends (-1: none)

	work int // bytes read, for the tests
}

// fails reports whether goldmark's link parser will certainly not read an
// inline link at the "](" at offset at of src, in block parent.
func (s *linkScan) fails(parent ast.Node, src []byte, at int) bool {
	if parent != s.parent || len(src) != len(s.src) || len(src) > 0 && &src[0] != &s.src[0] {
		*s = linkScan{src: src, parent: parent, lines: parent.Lines(), line: -1, titleAt: -1,
			dest: s.dest[:0], angle: s.angle[:0], drop: s.drop[:0], work: s.work}
	}
	k := s.lineOf(at)
	if k < 0 || at+1 >= s.lines.At(k).Stop {
		return false
	}
	// parseLink: skip '(' and spaces; "()" is an empty link.
	k, i, ok := s.skipSpaces(k, at+2)
	if !ok {
		return true // no destination: parseLinkDestination fails
	}
	if k < 0 || s.src[i] == ')' {
		return false
	}
	// parseLinkDestination reads the line from i.
	stop := s.lines.At(k).Stop
	if s.src[i] == '<' {
		end := s.angleEnd(k, i+1, stop)
		if end < 0 {
			return true
		}
		i = end + 1
	} else {
		i = s.destEnd(k, i, stop)
	}
	// Then spaces, and ')' or a title.
	if i >= stop {
		if k == s.lines.Len()-1 {
			return true
		}
		return false // the reader's Advance at a line's end: leave it to goldmark
	}
	k, i, ok = s.skipSpaces(k, i)
	if !ok {
		return true
	}
	if k < 0 {
		return false
	}
	var closer byte
	switch c := s.src[i]; c {
	case ')':
		return false
	case '"', '\'':
		closer = c
	case '(':
		closer = ')'
	default:
		return true
	}
	end, known := s.title(k, i, closer)
	if !known {
		return false
	}
	if end < 0 {
		return true
	}
	k, i, ok = s.skipSpaces(s.lineOf(end), end+1)
	if !ok {
		return true
	}
	return k >= 0 && s.src[i] != ')'
}

// lineOf returns the index of the line holding offset at, or -1.
func (s *linkScan) lineOf(at int) int {
	lo, hi := 0, s.lines.Len()
	for lo < hi {
		m := (lo + hi) / 2
		if s.lines.At(m).Stop <= at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < s.lines.Len() && s.lines.At(lo).Start <= at {
		return lo
	}
	return -1
}

// skipSpaces skips spaces from offset i of line k, on to the next lines as
// goldmark's SkipSpaces does. It returns false at the end of the block, and
// k = -1 if it cannot tell where goldmark would stop.
func (s *linkScan) skipSpaces(k, i int) (int, int, bool) {
	for {
		seg := s.lines.At(k)
		for i < seg.Stop && util.IsSpace(s.src[i]) {
			i++
			s.work++
		}
		if i < seg.Stop {
			return k, i, true
		}
		if k+1 >= s.lines.Len() {
			return k, i, false
		}
		if seg.Stop <= seg.Start || s.src[seg.Stop-1] != '\n' {
			return -1, 0, true // a line not ended by a newline: leave it to goldmark
		}
		k++
		i = s.lines.At(k).Start
	}
}

// destEnd returns where goldmark's scan of a destination that starts at
// offset i of line k, which ends at stop, stops: at a space or an
// unbalanced ')', or at stop.
func (s *linkScan) destEnd(k, i, stop int) int {
	if i >= stop {
		return stop
	}
	if s.line == k && i >= s.from && s.dest[i-s.from] >= 0 {
		return int(s.dest[i-s.from])
	}
	opened := 0
	for j := i; j < stop && j < i+scanBudget; j++ {
		s.work++
		switch c := s.src[j]; {
		case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
			j++
		case c == '(':
			opened++
		case c == ')':
			opened--
			if opened < 0 {
				return j
			}
		case util.IsSpace(c):
			return j
		}
		if j+1 >= stop {
			return stop
		}
	}
	if e := s.index(k, i, stop); e >= 0 {
		return int(s.dest[i-s.from])
	}
	return s.slowDestEnd(i, stop)
}

// slowDestEnd is destEnd without index; a safety net never used in practice.
func (s *linkScan) slowDestEnd(i, stop int) int {
	opened := 0
	for j := i; j < stop; j++ {
		s.work++
		switch c := s.src[j]; {
		case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
			j++
		case c == '(':
			opened++
		case c == ')':
			opened--
			if opened < 0 {
				return j
			}
		case util.IsSpace(c):
			return j
		}
	}
	return stop
}

// angleEnd returns the offset of the '>' that ends a destination "<...>"
// whose text starts at offset i of line k, which ends at stop; -1 if none.
func (s *linkScan) angleEnd(k, i, stop int) int {
	if i >= stop {
		return -1
	}
	if s.line == k && i >= s.from && s.dest[i-s.from] >= 0 {
		return int(s.angle[i-s.from])
	}
	for j := i; j < stop && j < i+scanBudget; j++ {
		s.work++
		switch c := s.src[j]; {
		case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
			j++
		case c == '>':
			return j
		}
		if j+1 >= stop {
			return -1
		}
	}
	if s.index(k, i, stop) >= 0 {
		return int(s.angle[i-s.from])
	}
	for j := i; j < stop; j++ {
		s.work++
		switch c := s.src[j]; {
		case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
			j++
		case c == '>':
			return j
		}
	}
	return -1
}

// index makes sure line k is indexed from an offset at or before i, which
// must be where a token starts: scans only start after '(', '<' or a space,
// which a backslash escape cannot straddle, so the tokens read from any
// earlier offset of the line end right before i. It returns -1 if i cannot
// be looked up.
func (s *linkScan) index(k, i, stop int) int {
	if s.line != k || i < s.from {
		s.build(k, i, stop)
	}
	if s.dest[i-s.from] < 0 {
		return -1
	}
	return i
}

// build indexes line k, which ends at stop, from offset from.
func (s *linkScan) build(k, from, stop int) {
	n := stop - from
	s.line, s.from = k, from
	s.dest = grow(s.dest, n)
	s.angle = grow(s.angle, n)
	s.drop = grow(s.drop, 2*n+3)
	s.work += 2 * n
	// Left to right: where tokens start (an escape "\x" is one), and the
	// parenthesis depth before each, kept in angle for now.
	depth := int32(0)
	for j := from; j < stop; j++ {
		s.dest[j-from] = 0
		s.angle[j-from] = depth
		switch c := s.src[j]; {
		case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
			j++
			s.dest[j-from] = -1
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
	}
	// Right to left: the nearest space, the nearest ')' taking the depth
	// below each token's, the nearest '>'.
	for i := range s.drop[:2*n+3] {
		s.drop[i] = -1
	}
	space, gt := int32(stop), int32(-1)
	for j := stop - 1; j >= from; j-- {
		if s.dest[j-from] < 0 {
			continue
		}
		d := s.angle[j-from] + int32(n) + 1
		switch c := s.src[j]; {
		case c == ')':
			s.drop[d] = int32(j)
		case c == '>':
			gt = int32(j)
		case util.IsSpace(c):
			space = int32(j)
		}
		e := space
		if p := s.drop[d]; p >= 0 && p < e {
			e = p
		}
		s.dest[j-from], s.angle[j-from] = e, gt
	}
}

// grow returns b resized to n.
func grow(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// title reads a link title whose opener is at offset i of line k as
// goldmark's FindClosure does: it returns the offset of the closer, -1 if
// none, and false if it cannot tell. The last answer is remembered: the
// ']' of a line often share their title.
func (s *linkScan) title(k, i int, closer byte) (int, bool) {
	if s.titleAt == i {
		return s.titleEnd, true
	}
	opener := s.src[i]
	seg := s.lines.At(k)
	if i+1 >= seg.Stop {
		return 0, false // the reader's Advance at a line's end: leave it to goldmark
	}
	end := -1
	j := i + 1
scan:
	for {
		stop := seg.Stop
		for ; j < stop; j++ {
			s.work++
			c := s.src[j]
			switch {
			case c == '\\' && j < stop-1 && util.IsPunct(s.src[j+1]):
				j++
			case c == closer:
				end = j
				break scan
			case c == opener:
				break scan
			}
		}
		if k+1 >= s.lines.Len() {
			break
		}
		k++
		seg = s.lines.At(k)
		j = seg.Start
	}
	if end >= 0 && end+1 >= s.lines.At(s.lineOf(end)).Stop {
		return 0, false // the reader's Advance at a line's end: leave it to goldmark
	}
	s.titleAt, s.titleEnd = i, end
	return end, true
}
