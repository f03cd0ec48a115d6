package tension

// Alignment of two analysed beliefs: shared and opposed terms, matched and
// conflicting values, polarity, the substituted slot and the subjects.

// valPair is two conflicting values, seq indices into a and b.
type valPair struct{ a, b int }

// evidence is the alignment of two beliefs.
type evidence struct {
	shared        []string // shared word keys (scope words included)
	resA, resB    []string // words only on one side, minus opposed and scope words
	antA, antB    []string // aligned opposed terms, index-matched
	matchedA      []bool   // per seq index of a: value matched in b
	matchedB      []bool
	matched       int       // matched value count
	conflicts     []valPair // conflicting values
	dateConflict  bool      // some conflicting pair is a date
	otherConflict bool      // some conflicting pair is not a date
	tqDiffer      bool      // both carry time-scoping dates that differ
	flip          bool      // polarity differs
	negA, negB    bool      // effective negation on each side
	functional    bool      // single-valued slot holds different values
	slotA, slotB  [2]int    // core index ranges of the substituted slot
	slotOK        bool      // residuals form one clean slot on each side
	directional   string    // cue of a reversed relation, or ""
	scopeDiff     bool      // scope qualifiers or top-level domains differ
	subjectDiff   bool      // the leading noun phrases name different things
	subjectNarrow bool      // one leading noun phrase refines the other by inserted words
}

// align computes the evidence used by the rules into p.ev, its slices cut
// from p's buffers.
func (p *pair) align() {
	x, y := p.x, p.y
	p.evs = evidence{}
	ev := &p.evs
	p.ev = ev
	// onlyA and resA hold at most len(x.words) words, onlyB and resB
	// len(y.words), antA and antB and shared at most the fewer.
	nx, ny, nm := len(x.words), len(y.words), min(len(x.words), len(y.words))
	words := grow(p.words, 2*nx+2*ny+3*nm)
	p.words = words
	cut := func(n int) []string {
		s := words[:0:n]
		words = words[n:]
		return s
	}
	onlyA, onlyB := cut(nx), cut(ny)
	ev.shared = cut(nm)
	ev.resA, ev.resB, ev.antA, ev.antB = cut(nx), cut(ny), cut(nm), cut(nm)
	flags := grow(p.flags, ny+len(x.seq)+len(y.seq))
	p.flags = flags
	clear(flags)
	usedB, flags := flags[:ny:ny], flags[ny:]
	ev.matchedA, ev.matchedB = flags[:len(x.seq):len(x.seq)], flags[len(x.seq):]
	i, j := 0, 0
	for i < len(x.words) || j < len(y.words) {
		switch {
		case j >= len(y.words) || (i < len(x.words) && x.words[i] < y.words[j]):
			onlyA = append(onlyA, x.words[i])
			i++
		case i >= len(x.words) || y.words[j] < x.words[i]:
			onlyB = append(onlyB, y.words[j])
			j++
		default:
			ev.shared = append(ev.shared, x.words[i])
			i++
			j++
		}
	}
	// Opposed terms: each word used at most once, scanned in sorted order.
	// (What does not depend on the pair is looked up once: this loop was
	// a sixth of a bulk load's CPU.)
	for k, wb := range onlyB {
		usedB[k] = scopeWords()[wb] // a scope word is never matched
	}
	for _, wa := range onlyA {
		if scopeWords()[wa] {
			continue
		}
		ants := antonyms()[wa]
		matched := false
		for k, wb := range onlyB {
			if usedB[k] || !(contains(ants, wb) || prefixed(wa, wb) || prefixed(wb, wa)) || !attached(x, wa, y, wb) {
				continue
			}
			usedB[k] = true
			ev.antA = append(ev.antA, wa)
			ev.antB = append(ev.antB, wb)
			matched = true
			break
		}
		if !matched {
			ev.resA = append(ev.resA, wa)
		}
	}
	for k, wb := range onlyB {
		if !usedB[k] {
			ev.resB = append(ev.resB, wb)
		}
	}
	ev.scopeDiff = !equalStrings(x.scopes, y.scopes) || (x.top != "" && y.top != "" && x.top != y.top)

	// Values: greedy matching in text order.
	for _, ia := range x.core {
		ta := &x.seq[ia]
		if ta.kind != valueTerm {
			continue
		}
		for _, ib := range y.core {
			if ev.matchedB[ib] || y.seq[ib].kind != valueTerm || !valueEqual(ta, &y.seq[ib]) {
				continue
			}
			ev.matchedA[ia], ev.matchedB[ib] = true, true
			ev.matched++
			break
		}
	}
	var tqA, tqB bool
	for _, ia := range x.core {
		if x.seq[ia].kind == valueTerm && !ev.matchedA[ia] && x.seq[ia].tq {
			tqA = true
		}
	}
	for _, ib := range y.core {
		if y.seq[ib].kind == valueTerm && !ev.matchedB[ib] && y.seq[ib].tq {
			tqB = true
		}
	}
	ev.tqDiffer = tqA && tqB
	for _, ia := range x.core {
		ta := &x.seq[ia]
		if ta.kind != valueTerm || ev.matchedA[ia] || ta.negged || ta.tq || ta.hypo {
			continue
		}
		for _, ib := range y.core {
			tb := &y.seq[ib]
			if tb.kind != valueTerm || ev.matchedB[ib] || tb.negged || tb.tq || tb.hypo || tb.class != ta.class || tb.qual != ta.qual {
				continue
			}
			if ta.class == classWeekday && daysOverlap(ta.key, tb.key) {
				continue // "weekends" and "Saturday" can both hold
			}
			ev.conflicts = append(ev.conflicts, valPair{ia, ib})
			if isDateClass(ta.class) {
				ev.dateConflict = true
			} else {
				ev.otherConflict = true
			}
		}
	}

	// Polarity.
	ev.negA = negParity(x, y, ev.antA, ev.matchedA)
	ev.negB = negParity(y, x, ev.antB, ev.matchedB)
	ev.flip = (ev.negA != ev.negB) != (len(ev.antA)%2 == 1)

	// Substituted slot.
	if len(ev.resA) > 0 && len(ev.resB) > 0 {
		var okA, okB bool
		ev.slotA, okA = findSlot(x, ev.resA, ev.matchedA)
		ev.slotB, okB = findSlot(y, ev.resB, ev.matchedB)
		ev.slotOK = okA && okB
		if ev.slotOK && !ev.flip && x.negs == y.negs {
			ev.functional = hasFrame(x, ev.slotA, ev.shared) && hasFrame(y, ev.slotB, ev.shared) &&
				sameFrame(x, y, ev.slotA, ev.slotB, ev.shared)
		}
	}
	ev.subjectDiff = subjectDiff(x, y, ev)
	if !ev.subjectDiff {
		ev.subjectNarrow = subjectNarrow(x, y, ev)
	}
	if len(ev.resA) == 0 && len(ev.resB) == 0 && len(ev.antA) == 0 && len(ev.conflicts) == 0 && !ev.flip {
		ev.directional = reversed(x, y)
	}
}

// grow returns s resliced to n elements, allocated afresh when s is too
// small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// subject returns the seq indices of x's leading content run: the content
// terms after any leading stop words, up to the first stop word or
// negation. A run that reaches a clause break or the end of the text
// ("Nexus supports Windows") has no identifiable subject and yields nil.
func subject(x *belief) []int {
	var out []int
	for i := range x.seq {
		t := &x.seq[i]
		switch t.kind {
		case wordTerm, valueTerm:
			if !t.scope {
				out = append(out, i)
			}
		case stopTerm, negTerm:
			if len(out) > 0 {
				return out
			}
			if t.kind == negTerm {
				return nil
			}
		case breakTerm:
			// A run that opens the text, or that a parenthesis closes, is
			// the subject when the text goes on ("SFU IS 309 (Special
			// Topics): ...", "In term 202320 Langara COOP 2303 section C01
			// (...) has ..."); a run that is the whole text ("Nexus
			// supports Windows") or a fronted phrase ("From the station,
			// ...") is none.
			if len(out) > 0 && (out[0] == 0 || t.paren) && contentAfter(x, i) {
				return out
			}
			return nil
		}
	}
	return nil
}

// contentAfter reports whether a content term follows seq index i.
func contentAfter(x *belief, i int) bool {
	for j := i + 1; j < len(x.seq); j++ {
		if k := x.seq[j].kind; k == wordTerm || k == valueTerm {
			return true
		}
	}
	return false
}

// subjectDiff reports whether both leading subjects contain a term the
// other's subject lacks ("Langara CPSC 1160 has ..." vs "Langara CPSC 1150
// has ..."). Aligned opposed terms and conflicting values are the
// disagreement itself and do not count.
func subjectDiff(x, y *belief, ev *evidence) bool {
	sx, sy := subject(x), subject(y)
	if len(sx) == 0 || len(sy) == 0 {
		return false
	}
	return subjectExtra(x, sx, y, sy, ev.antA, ev, true) && subjectExtra(y, sy, x, sx, ev.antB, ev, false)
}

// subjectNarrow reports whether one leading subject is the other's plus
// inserted words that the other belief does not use at all ("Nexus logs
// ..." vs "Nexus audit logs ..."): the narrower claim may be an exception,
// so differing values are not a conflict.
func subjectNarrow(x, y *belief, ev *evidence) bool {
	sx, sy := subject(x), subject(y)
	if len(sx) == 0 || len(sy) == 0 || len(sx) == len(sy) {
		return false
	}
	if len(sx) < len(sy) {
		x, y, sx, sy = y, x, sy, sx
		return subjectRefines(x, sx, y, sy, ev.resB)
	}
	return subjectRefines(x, sx, y, sy, ev.resA)
}

// subjectRefines reports whether the longer subject sx of x contains
// every term of the shorter subject sy of y, in order, and its other terms
// are residual words of x (res).
func subjectRefines(x *belief, sx []int, y *belief, sy []int, res []string) bool {
	k := 0
	for _, i := range sx {
		t := &x.seq[i]
		if k < len(sy) && y.seq[sy[k]].kind == t.kind && y.seq[sy[k]].key == t.key {
			k++
			continue
		}
		if t.kind != wordTerm || !hasSorted(res, t.key) {
			return false
		}
	}
	return k == len(sy)
}

// subjectExtra reports whether subject sx of x has a term missing from
// subject sy of y.
func subjectExtra(x *belief, sx []int, y *belief, sy []int, ant []string, ev *evidence, isA bool) bool {
	for _, i := range sx {
		t := &x.seq[i]
		if t.kind == wordTerm && contains(ant, t.key) {
			continue
		}
		if t.kind == valueTerm && inConflict(ev, i, isA) {
			continue
		}
		found := false
		for _, j := range sy {
			if y.seq[j].kind == t.kind && y.seq[j].key == t.key {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

func inConflict(ev *evidence, i int, isA bool) bool {
	for _, p := range ev.conflicts {
		if isA && p.a == i || !isA && p.b == i {
			return true
		}
	}
	return false
}

// negParity reports whether x carries an odd number of effective
// negations. A negation's scope runs to the clause end and is split into
// conjuncts at "and"/"or"/"nor". A negation is effective when it negates
// content the other belief states: every content term of the first
// conjunct, or its first term and every term of a later conjunct ("does not
// support BSD or Windows"), is present in the other belief, is an aligned
// opposed term, or is a matched value. The first term, when it is a
// finite verb, must be asserted in the other belief too, not only named in
// an infinitive: "I haven't read them" denies no reading in "a great book
// to read".
func negParity(x, y *belief, ant []string, matched []bool) bool {
	other := y.words
	odd := false
	for i := range x.seq {
		if x.seq[i].kind != negTerm {
			continue
		}
		seg, n := 0, 0 // current conjunct, its term count
		headIn, firstAll := false, false
		segAll, laterAll := true, false
		for j := i + 1; j <= len(x.seq); j++ {
			end := j == len(x.seq) || x.seq[j].kind == breakTerm || x.seq[j].kind == negTerm
			if end || x.seq[j].kind == stopTerm && conjunctions()[x.seq[j].key] && n > 0 {
				if n > 0 {
					if seg == 0 {
						firstAll = segAll
					} else if segAll {
						laterAll = true
					}
					seg++
				}
				n, segAll = 0, true
				if end {
					break
				}
				continue
			}
			t := &x.seq[j]
			in := false
			switch t.kind {
			case wordTerm:
				if t.scope {
					continue
				}
				in = hasSorted(other, t.key) || contains(ant, t.key)
			case valueTerm:
				in = matched[j]
			default:
				continue
			}
			if seg == 0 && n == 0 {
				headIn = in
				if in && t.kind == wordTerm && !t.inf && !contains(ant, t.key) && !hasSorted(y.facts, t.key) {
					// The head is only an infinitive's verb over there.
					headIn, in = false, false
				}
				if in && t.kind == wordTerm && !sameAnaphor(x, j, y) {
					// "haven't read them" vs "check it out ... a book I've
					// read": another referent.
					headIn, in = false, false
				}
			}
			n++
			segAll = segAll && in
		}
		if firstAll || headIn && laterAll {
			odd = !odd
		}
	}
	return odd
}

// objectPronouns gives the grammatical number of the pronouns that stand
// for a thing named outside the belief.
var objectPronouns = map[string]int{"it": 1, "this": 1, "them": 2, "these": 2, "those": 2}

// sameAnaphor reports whether the object of the word at x.seq[i] can be
// the same in y. When a pronoun directly follows it ("read them"), the
// referent is outside x: y must use the same word with a pronoun of the
// same number ("read those"). "It" (one book) and "them" (other books) are
// different things, and a noun object in y may be anything else. Without
// a pronoun object there is nothing to check.
func sameAnaphor(x *belief, i int, y *belief) bool {
	if i+1 >= len(x.seq) || x.seq[i+1].kind != stopTerm {
		return true
	}
	n := objectPronouns[x.seq[i+1].key]
	if n == 0 {
		return true
	}
	for k := 0; k+1 < len(y.seq); k++ {
		if y.seq[k].kind == wordTerm && y.seq[k].key == x.seq[i].key &&
			y.seq[k+1].kind == stopTerm && objectPronouns[y.seq[k+1].key] == n {
			return true
		}
	}
	return false
}

// findSlot finds the residual words (and unmatched non-date values) of x in
// core order and reports their [start, end] core range when they form one
// clean slot: contiguous in core order, adjacent in the text (no stop word
// between them), at most maxSlot terms and no possessive.
func findSlot(x *belief, res []string, matched []bool) ([2]int, bool) {
	start, end := -1, -1
	for k, si := range x.core {
		t := &x.seq[si]
		in := false
		switch t.kind {
		case wordTerm:
			in = hasSorted(res, t.key)
		case valueTerm:
			in = !matched[si] && !isDateClass(t.class)
		}
		if !in {
			continue
		}
		if t.poss || t.negged {
			return [2]int{}, false
		}
		if start < 0 {
			start = k
		} else if k != end+1 || si != x.core[end]+1 {
			return [2]int{}, false
		}
		end = k
	}
	if start < 0 || end-start+1 > maxSlot {
		return [2]int{}, false
	}
	return [2]int{start, end}, true
}

// inSubject reports whether core range s of x lies in x's leading subject:
// a substituted subject ("Langara ANTH 1170 transfers ..." vs "Langara ANTH
// 1195 transfers ...") names another thing, not another detail.
func inSubject(x *belief, s [2]int) bool {
	subj := subject(x)
	for k := s[0]; k <= s[1]; k++ {
		for _, i := range subj {
			if i == x.core[k] {
				return true
			}
		}
	}
	return false
}

// attached reports whether opposed terms wa (of x) and wb (of y) attach to
// the same thing (issue 23): one of the attachReach nearest content terms
// before or after one of wa's occurrences in its clause is also near one of
// wb's ("logging
// is enabled" vs "logging is disabled", "dark mode" vs "light mode"), or
// neither has a content word beside it. "come up with ideas" vs "calming us
// down" oppose nothing: up and down are said of different things.
func attached(x *belief, wa string, y *belief, wb string) bool {
	// Two modifiers ("less processed food" vs "more veggies", "dark mode"
	// vs "light mode") are said of what follows them.
	mod := modifier(x, wa) && modifier(y, wb)
	na, nb := neighbours(x, wa, mod), neighbours(y, wb, mod)
	if len(na) == 0 && len(nb) == 0 {
		return true
	}
	for _, k := range na {
		if contains(nb, k) {
			return true
		}
	}
	return false
}

// attachReach is how many content terms on each side of an opposed term
// count as what it is said of.
const attachReach = 2

// neighbours returns the keys of the nearest content terms on either side
// of each occurrence of word key w in x, within its clause; with modifiers,
// only those after it.
func neighbours(x *belief, w string, modifiers bool) []string {
	var out []string
	for i := range x.seq {
		if x.seq[i].kind != wordTerm || x.seq[i].key != w {
			continue
		}
		steps := []int{-1, 1}
		if modifiers {
			steps = steps[1:]
		}
		for _, step := range steps {
			n := 0
			for j := i + step; j >= 0 && j < len(x.seq) && n < attachReach; j += step {
				t := &x.seq[j]
				if t.kind == breakTerm {
					break
				}
				if t.kind == wordTerm || t.kind == valueTerm {
					out = append(out, t.key)
					n++
				}
			}
		}
	}
	return out
}

// modifier reports whether word key w of x is directly followed by a
// content word: it modifies that word.
func modifier(x *belief, w string) bool {
	for i := range x.seq {
		if x.seq[i].kind == wordTerm && x.seq[i].key == w && i+1 < len(x.seq) && x.seq[i+1].kind == wordTerm && !x.seq[i+1].scope {
			return true
		}
	}
	return false
}
