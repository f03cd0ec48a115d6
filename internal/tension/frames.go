package tension

// Frames of the single-valued slot, reversed relations and opposed words.

import (
	"strings"
)

// hasFrame reports whether x states a single-valued slot around the core
// range s (see sameFrame).
func hasFrame(x *belief, s [2]int, shared []string) bool {
	return frameCopulaAfter(x, s) || frameCopulaBefore(x, s) || frameCue(x, s, shared) != ""
}

// sameFrame reports whether both beliefs use the same kind of frame:
//
//	A: "the R ... is <slot>"      (slot right after a copula preceded by "the" or a possessive)
//	B: "<slot> is the R ..."      (slot right before "is the" / "as the", or "is X's R")
//	C: "... <cue> ... <slot>"     (a shared single-valued cue word before the slot)
//
// A and B are one frame turned around ("X's favourite colour is green" /
// "purple is X's favourite colour"), so either matches either.
func sameFrame(x, y *belief, sx, sy [2]int, shared []string) bool {
	if (frameCopulaAfter(x, sx) || frameCopulaBefore(x, sx)) && (frameCopulaAfter(y, sy) || frameCopulaBefore(y, sy)) {
		return true
	}
	c := frameCue(x, sx, shared)
	return c != "" && c == frameCue(y, sy, shared)
}

func frameCopulaAfter(x *belief, s [2]int) bool {
	p := x.core[s[0]]
	j := p - 1
	for j >= 0 && x.seq[j].kind == stopTerm && !copulas()[x.seq[j].key] {
		j--
	}
	if j < 0 || x.seq[j].kind != stopTerm || !copulas()[x.seq[j].key] || x.seq[j].key == "as" {
		return false
	}
	for k := j - 1; k >= 0 && x.seq[k].kind != breakTerm; k-- {
		if x.seq[k].kind == stopTerm && x.seq[k].key == "the" || x.seq[k].poss {
			return true
		}
	}
	return false
}

func frameCopulaBefore(x *belief, s [2]int) bool {
	q := x.core[s[1]]
	if q+2 >= len(x.seq) || x.seq[q+1].kind != stopTerm || !copulas()[x.seq[q+1].key] {
		return false
	}
	if x.seq[q+2].kind == stopTerm && x.seq[q+2].key == "the" {
		return true
	}
	// "is Jonah Miller's ...": a possessive name opens the attribute.
	for k := q + 2; k < len(x.seq) && x.seq[k].kind == wordTerm; k++ {
		if x.seq[k].poss {
			return true
		}
	}
	return false
}

// frameCue returns the first shared cue word that precedes the slot, when
// the slot ends its clause: the cue's value, not an argument of the
// relation ("transfers to UNBC as no credit" vs "transfers to VIU as no
// credit" name two destinations, not two values of one).
func frameCue(x *belief, s [2]int, shared []string) string {
	if !clauseFinal(x, x.core[s[1]]) || listItem(x, x.core[s[0]]) {
		return ""
	}
	for k := 0; k < s[0]; k++ {
		t := &x.seq[x.core[k]]
		if t.kind == wordTerm && cueWords()[t.key] && !cueVerbs()[t.disp] && hasSorted(shared, t.key) {
			return t.key
		}
	}
	return ""
}

// reversed returns a directional cue around which two shared terms swap
// sides ("A reports to B" vs "B reports to A"), or "".
func reversed(x, y *belief) string {
	for i := range x.seq {
		c := x.seq[i].key
		if x.seq[i].kind == breakTerm || x.seq[i].kind == valueTerm || !dirCues()[c] {
			continue
		}
		for j := range y.seq {
			if y.seq[j].key != c || y.seq[j].kind != x.seq[i].kind {
				continue
			}
			bx, ax := around(x, i)
			by, ay := around(y, j)
			if swapped(bx, ax, by, ay) && swapped(ax, bx, ay, by) {
				return x.seq[i].disp
			}
		}
	}
	return ""
}

// swapped reports whether a term is on side s1 of the cue in x and only on
// the other side in y (s2 in y, not s1 in y, not the other side in x): it
// changed sides. A term on both sides of the cue ("completion of X
// requires completion of Y") changes nothing.
func swapped(s1x, s2x, s1y, s2y []string) bool {
	for _, u := range s1x {
		if contains(s2y, u) && !contains(s1y, u) && !contains(s2x, u) {
			return true
		}
	}
	return false
}

// around returns the content keys before and after seq index p within its
// clause.
func around(x *belief, p int) (before, after []string) {
	for k := p - 1; k >= 0 && x.seq[k].kind != breakTerm; k-- {
		if x.seq[k].kind == wordTerm || x.seq[k].kind == valueTerm {
			before = append(before, x.seq[k].key)
		}
	}
	for k := p + 1; k < len(x.seq) && x.seq[k].kind != breakTerm; k++ {
		if x.seq[k].kind == wordTerm || x.seq[k].kind == valueTerm {
			after = append(after, x.seq[k].key)
		}
	}
	return before, after
}

// prefixed reports whether neg is base with a negating prefix
// ("unstable"/"stable", "invalid"/"valid").
func prefixed(neg, base string) bool {
	if len(base) < 5 || len(neg) <= len(base) || !strings.HasSuffix(neg, base) {
		return false
	}
	switch neg[:len(neg)-len(base)] {
	case "un", "non", "in", "im", "ir", "il":
		return true
	}
	return false
}

// clauseFinal reports whether the term at seq index i ends its clause's
// arguments: words may continue it ("the MIT license"), but no further
// phrase follows ("to UNBC as no credit"), nor a further item of a list
// ("as STAT 2225 (3) & STAT 1181 (3)"). Parentheses do not end the clause.
func clauseFinal(x *belief, i int) bool {
	stop := false
	for j := i + 1; j < len(x.seq) && (x.seq[j].kind != breakTerm || x.seq[j].paren); j++ {
		switch t := &x.seq[j]; t.kind {
		case stopTerm, negTerm:
			stop = true
		case wordTerm, valueTerm:
			if stop && !t.scope {
				return false
			}
		}
	}
	return true
}

// listItem reports whether the phrase holding seq index i follows a
// conjunction: an item of a list ("STAT 1181 (3) & STAT 2225"), not one
// value.
func listItem(x *belief, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch t := &x.seq[j]; t.kind {
		case wordTerm, valueTerm:
			continue
		case breakTerm:
			if t.paren {
				continue
			}
			return false
		case stopTerm:
			return conjunctions()[t.key]
		default:
			return false
		}
	}
	return false
}
