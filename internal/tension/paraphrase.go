package tension

// Rules for paraphrases: two beliefs that say one thing in different words
// ("closes at 9 pm" / "stays open until 11 pm", "prefers tea to coffee" /
// "likes coffee more than tea"). They apply only where the words differ on
// both sides, and only under a strong anchor: the beliefs are about the
// same thing.

import (
	"math"
	"strings"
)

// daySets are the days a weekday value covers.
var daySets = map[string][]string{
	"weekend": {"saturday", "sunday"},
	"weekday": {"monday", "tuesday", "wednesday", "thursday", "friday"},
}

// days returns the days weekday value key covers.
func days(key string) []string {
	if d, ok := daySets[key]; ok {
		return d
	}
	return []string{key}
}

// daysOverlap reports whether two weekday values share a day.
func daysOverlap(a, b string) bool { return intersects(days(a), days(b)) }

// daysContain reports whether weekday value a covers every day of b.
func daysContain(a, b string) bool {
	for _, d := range days(b) {
		if !contains(days(a), d) {
			return false
		}
	}
	return true
}

// minAnchorShared is how many content words two paraphrases must share.
const minAnchorShared = 2

// approxTolerance is how far apart two values, one of them approximate
// ("about 30 days"), must be to conflict.
const approxTolerance = 1.3

// anchored reports whether the two beliefs of p are about the same thing
// although their words differ: same domain and scope, at least
// minAnchorShared shared content words, no name on each side that the other
// lacks ("Kitsilano branch" vs "Central Library"), no substituted modifier
// ("session tokens" vs "refresh tokens"), nothing owned by a name that the
// other lacks ("Sam's partner"), and no narrower subject ("flash
// photography" vs "photography"). A value compared across paraphrases also
// needs no fronted qualifier clause on one side only ("Each way, ...").
func anchored(p *pair) bool {
	if p.anchor == 0 {
		p.anchor = -1
		if isAnchored(p) {
			p.anchor = 1
		}
	}
	return p.anchor > 0
}

func isAnchored(p *pair) bool {
	ev := p.ev
	if !sameDomain(p.a, p.b) || ev.scopeDiff || len(p.x.scopes) != len(p.y.scopes) {
		return false
	}
	n := 0
	for _, w := range ev.shared {
		if !scopeWords()[w] {
			n++
		}
	}
	if n < minAnchorShared {
		return false
	}
	if namedExtra(p.x, p.y) || namedExtra(p.y, p.x) || residualIdentifier(ev.resA) && residualIdentifier(ev.resB) {
		return false
	}
	if modifierSubstituted(p.x, p.y) || possessedResidual(p.x, p.y) || possessedResidual(p.y, p.x) {
		return false
	}
	return !subjectNarrow(p.x, p.y, ev)
}

// frontedQualifier reports whether x opens with a clause whose content
// words y never uses ("Each way, ...", "After compression, ..."): a
// qualifier of the situation that the other belief does not share.
func frontedQualifier(x, y *belief) bool {
	n := 0
	for i := range x.seq {
		t := &x.seq[i]
		switch t.kind {
		case breakTerm:
			return n > 0 && i < len(x.seq)-1
		case wordTerm:
			if hasSorted(y.words, t.key) {
				return false
			}
			n++
		case valueTerm:
			return false
		}
	}
	return false
}

// namedExtra reports whether x has a name word that y does not use. A
// name that owns a shared word only makes it more specific ("Camosun's
// Lansdowne campus" vs "the Lansdowne campus").
func namedExtra(x, y *belief) bool {
	for i := range x.seq {
		t := &x.seq[i]
		if t.kind != wordTerm || !t.named || hasSorted(y.words, t.key) {
			continue
		}
		if t.poss && i+1 < len(x.seq) && x.seq[i+1].kind == wordTerm && hasSorted(y.words, x.seq[i+1].key) {
			continue
		}
		return true
	}
	return false
}

// modifierSubstituted reports whether a shared word is modified by a
// different word on each side, each missing from the other belief ("the
// data team" vs "the platform team").
func modifierSubstituted(x, y *belief) bool {
	for i := 1; i < len(x.seq); i++ {
		t, m := &x.seq[i], &x.seq[i-1]
		if t.kind != wordTerm || m.kind != wordTerm || prepositions()[m.disp] || !hasSorted(y.words, t.key) || hasSorted(y.words, m.key) {
			continue
		}
		for j := 1; j < len(y.seq); j++ {
			u, n := &y.seq[j], &y.seq[j-1]
			if u.kind == wordTerm && u.key == t.key && n.kind == wordTerm && !prepositions()[n.disp] && n.key != m.key && !hasSorted(x.words, n.key) {
				return true
			}
		}
	}
	return false
}

// possessedResidual reports whether x names something owned ("Sam's
// partner", "her colleague") by a word y does not use: another subject.
func possessedResidual(x, y *belief) bool {
	for i := 0; i+1 < len(x.seq); i++ {
		t, n := &x.seq[i], &x.seq[i+1]
		if (t.poss || t.kind == stopTerm && possessives[t.key]) && n.kind == wordTerm && !hasSorted(y.words, n.key) {
			return true
		}
	}
	return false
}

// possessives are possessive determiners.
var possessives = wordSet("his", "her", "their", "its", "our", "my", "your")

// measured is a value that can be compared across paraphrases: a duration,
// size, distance, percentage or time of day, or a count of a named thing.
func measured(x *belief, i int) bool {
	switch x.seq[i].class {
	case classDur, classSize, classDist, classPct, classClock:
		return true
	case classNum:
		return !x.seq[i].ver && valueLabel(x, i) != ""
	}
	return false
}

// valueLabel returns the word a plain number counts or labels: the content
// word right after it ("five engineers") or else right before it ("port
// 8080"), or "".
func valueLabel(x *belief, i int) string {
	if i+1 < len(x.seq) && x.seq[i+1].kind == wordTerm {
		return x.seq[i+1].key
	}
	if i > 0 && x.seq[i-1].kind == wordTerm {
		return x.seq[i-1].key
	}
	return ""
}

// boundConflict reports whether values a and b of one class cannot both
// hold, given their qualifiers: exact values differ, an exact or
// approximate value lies outside a bound ("90 minutes" vs "under an hour"),
// or an approximate value is more than approxTolerance away. Two bounds, and
// an increment ("another 300 words"), never conflict here.
func boundConflict(a, b *term) bool {
	bound := func(q string) bool { return q == "<" || q == "<=" || q == ">" || q == ">=" }
	known := func(q string) bool { return q == "" || q == "~" || bound(q) }
	if !known(a.qual) || !known(b.qual) {
		return false // an increment ("another 300") or a comparison, not a value
	}
	if bound(a.qual) {
		a, b = b, a
	}
	switch {
	case bound(a.qual):
		return false
	case b.qual == "<":
		return a.num >= b.num
	case b.qual == "<=":
		return a.num > b.num
	case b.qual == ">":
		return a.num <= b.num
	case b.qual == ">=":
		return a.num < b.num
	case a.qual == "~" || b.qual == "~":
		lo, hi := math.Min(a.num, b.num), math.Max(a.num, b.num)
		return lo <= 0 || hi/lo > approxTolerance
	case a.qual == "" && b.qual == "":
		return !closeTo(a.num, b.num)
	}
	return false
}

// paraphrasedValue finds the one pair of measured values that conflict
// while every other value matches. It returns seq indices into x and y.
func paraphrasedValue(p *pair) (int, int, bool) {
	x, y, ev := p.x, p.y, p.ev
	ca, cb := -1, -1
	for _, i := range x.core {
		if x.seq[i].kind == valueTerm && !ev.matchedA[i] {
			if ca >= 0 || x.seq[i].tq || x.seq[i].hypo || !measured(x, i) {
				return 0, 0, false
			}
			ca = i
		}
	}
	for _, j := range y.core {
		if y.seq[j].kind == valueTerm && !ev.matchedB[j] {
			if cb >= 0 || y.seq[j].tq || y.seq[j].hypo || !measured(y, j) {
				return 0, 0, false
			}
			cb = j
		}
	}
	if ca < 0 || cb < 0 {
		return 0, 0, false
	}
	a, b := &x.seq[ca], &y.seq[cb]
	if a.class != b.class || a.class == classNum && valueLabel(x, ca) != valueLabel(y, cb) {
		return 0, 0, false
	}
	return ca, cb, boundConflict(a, b)
}

// preference returns the ordered pair of keys a belief prefers, one over
// the other ("tea to coffee", "Terraform over Pulumi", "winter more than
// summer", "spaces instead of tabs"), restricted to keys the other belief
// uses; ok is false when there is none.
func preference(x, other *belief) (first, second string, ok bool) {
	for i := range x.seq {
		if !preferenceMarker(x, i) {
			continue
		}
		for k := i - 1; k >= 0 && x.seq[k].kind != breakTerm; k-- {
			if c := &x.seq[k]; (c.kind == wordTerm || c.kind == valueTerm) && !comparatives()[c.disp] && otherUses(other, c) {
				first = c.key
				break
			}
		}
		for k := i + 1; k < len(x.seq) && x.seq[k].kind != breakTerm; k++ {
			if c := &x.seq[k]; (c.kind == wordTerm || c.kind == valueTerm) && !comparatives()[c.disp] && otherUses(other, c) {
				second = c.key
				break
			}
		}
		if first != "" && second != "" && first != second {
			return first, second, true
		}
		first, second = "", ""
	}
	return "", "", false
}

// preferenceMarker reports whether seq index i of x marks a preference
// order: "over", "than", "ahead of", "instead of", or "to" after a word of
// preferring.
func preferenceMarker(x *belief, i int) bool {
	switch x.seq[i].disp {
	case "over", "than", "ahead", "instead":
		return true
	case "to":
		for k := i - 1; k >= 0 && x.seq[k].kind != breakTerm; k-- {
			if x.seq[k].kind == wordTerm && preferWords()[x.seq[k].key] {
				return true
			}
		}
	}
	return false
}

// otherUses reports whether belief other has a word or value like t.
func otherUses(other *belief, t *term) bool {
	if t.kind == wordTerm {
		return hasSorted(other.words, t.key)
	}
	for i := range other.seq {
		if other.seq[i].kind == valueTerm && other.seq[i].class == t.class && other.seq[i].key == t.key {
			return true
		}
	}
	return false
}

// neverAtTime reports whether one belief rules out a time that the other
// states ("never works weekends" vs "is on shift every Saturday"): a
// negated day or part of the day on one side covers a day or part of the
// day stated without negation on the other, which has no negation.
func neverAtTime(p *pair) bool { return neverAtTimeText(p) != "" }

// neverAtTimeText describes the time ruled out and the time stated, or is
// "" when there is none.
func neverAtTimeText(p *pair) string {
	if i, j := negatedTimeCovers(p.x, p.y); i >= 0 {
		return "a rules out " + quote(p.x.seq[i].disp) + ", b states " + quote(p.y.seq[j].disp)
	}
	if j, i := negatedTimeCovers(p.y, p.x); j >= 0 {
		return "b rules out " + quote(p.y.seq[j].disp) + ", a states " + quote(p.x.seq[i].disp)
	}
	return ""
}

// negatedTimeCovers returns the seq indices of a negated time in x and of a
// time it covers in y, or -1, -1.
func negatedTimeCovers(x, y *belief) (int, int) {
	if y.negs > 0 {
		return -1, -1
	}
	for i := range x.seq {
		a := &x.seq[i]
		if a.kind != valueTerm || !a.negged || a.class != classWeekday && a.class != classDaypart {
			continue
		}
		for j := range y.seq {
			b := &y.seq[j]
			if b.kind != valueTerm || b.class != a.class {
				continue
			}
			if a.class == classWeekday && daysContain(a.key, b.key) || a.class == classDaypart && a.key == b.key {
				return i, j
			}
		}
	}
	return -1, -1
}

// onlyOther reports whether one belief restricts something to a value
// ("runs on weekdays only", "exclusively in the fall") and the other states
// a value of the same class outside it ("a Saturday shuttle").
func onlyOther(p *pair) bool { return onlyOtherText(p) != "" }

// onlyOtherText describes the only value and the other value, or is ""
// when there is none.
func onlyOtherText(p *pair) string {
	if i, j := onlyExcludes(p.x, p.y, p.ev.matchedB); i >= 0 {
		return "a allows only " + quote(p.x.seq[i].disp) + ", b states " + quote(p.y.seq[j].disp)
	}
	if j, i := onlyExcludes(p.y, p.x, p.ev.matchedA); j >= 0 {
		return "b allows only " + quote(p.y.seq[j].disp) + ", a states " + quote(p.x.seq[i].disp)
	}
	return ""
}

// onlyExcludes returns the seq indices of a restricted value in x and of a
// value of y outside it, or -1, -1.
func onlyExcludes(x, y *belief, matchedY []bool) (int, int) {
	if y.negs > 0 {
		return -1, -1
	}
	for i := range x.seq {
		a := &x.seq[i]
		if a.kind != valueTerm || a.negged || !categorical(a.class) || !restricted(x, i) {
			continue
		}
		for j := range y.seq {
			b := &y.seq[j]
			if b.kind != valueTerm || b.class != a.class || matchedY[j] || b.negged || restricted(y, j) {
				continue
			}
			if a.class == classWeekday && !daysOverlap(a.key, b.key) || a.class != classWeekday && a.key != b.key {
				return i, j
			}
		}
	}
	return -1, -1
}

// restricted reports whether the value at seq index i of x is marked as
// the only one: "only" or a synonym right before or after it.
func restricted(x *belief, i int) bool {
	for _, k := range []int{i - 1, i + 1} {
		if k >= 0 && k < len(x.seq) && onlyWords[x.seq[k].disp] {
			return true
		}
	}
	return false
}

// onlyWords restrict a value to itself.
var onlyWords = wordSet("only", "exclusively", "solely")

// polarityAgrees reports whether the beliefs of p state their values with
// one polarity, once a boundary "until" is read: "stays open until 11 pm"
// is "closes at 11 pm" (an opposed term turned), "doesn't open until 8:30"
// is "opens at 8:30" (a negation turned). i and j are the conflicting
// values' seq indices in x and y.
func polarityAgrees(p *pair, i, j int) bool {
	nx, ny, ant := p.x.negs, p.y.negs, len(p.ev.antA)
	ux, uy := untilBefore(p.x, i), untilBefore(p.y, j)
	switch {
	case nx+ny == 0 && ant == 0:
		return !p.ev.flip
	case ant == 0 && nx == 1 && ny == 0:
		return ux && !uy
	case ant == 0 && nx == 0 && ny == 1:
		return uy && !ux
	case ant == 1 && nx+ny == 0:
		return ux != uy
	}
	return false
}

// untilBefore reports whether the value at seq index i of x is introduced
// by "until" or "till".
func untilBefore(x *belief, i int) bool {
	return i > 0 && (x.seq[i-1].disp == "until" || x.seq[i-1].disp == "till")
}

// startDate returns the seq index of the date x gives for a beginning:
// "since 2021", or a date after a verb of beginning ("joined Acme in 2019",
// "was founded on 2020-03-01"); -1 if none.
func startDate(x *belief) int {
	for i := range x.seq {
		t := &x.seq[i]
		if t.kind != valueTerm || !isDateClass(t.class) || i == 0 {
			continue
		}
		switch x.seq[i-1].disp {
		case "since":
			return i
		case "in", "on":
			for k := i - 2; k >= 0 && k >= i-5 && x.seq[k].kind != breakTerm; k-- {
				if x.seq[k].kind == wordTerm && startVerbs()[x.seq[k].key] {
					return i
				}
			}
		}
	}
	return -1
}

// differentStart reports whether both beliefs date one beginning and the
// dates differ, every other value matching ("joined Acme in 2019" vs "has
// been employed by Acme since 2021").
func differentStart(p *pair) bool {
	i, j := startDate(p.x), startDate(p.y)
	if i < 0 || j < 0 || p.x.seq[i].class != p.y.seq[j].class || p.x.seq[i].key == p.y.seq[j].key {
		return false
	}
	for _, k := range p.x.core {
		if k != i && p.x.seq[k].kind == valueTerm && !p.ev.matchedA[k] {
			return false
		}
	}
	for _, k := range p.y.core {
		if k != j && p.y.seq[k].kind == valueTerm && !p.ev.matchedB[k] {
			return false
		}
	}
	return true
}

// hasUntil reports whether x has a value introduced by "until": a state
// that ends, whose opposite then begins ("open until 6 pm" is "closes at
// 6 pm").
func hasUntil(x *belief) bool {
	for i := range x.seq {
		if x.seq[i].kind == valueTerm && untilBefore(x, i) {
			return true
		}
	}
	return false
}

// categorical reports whether values of c name one of a few options
// (days, parts of the day, dates) rather than count something: "only one
// of ..." restricts a count, not an option.
func categorical(c valueClass) bool {
	return c == classWeekday || c == classDaypart || isDateClass(c)
}

// residualIdentifier reports whether res holds an identifier, a word with a
// digit ("section002", "cpsc1150"): identifiers differing on both sides
// name two things.
func residualIdentifier(res []string) bool {
	for _, w := range res {
		if strings.ContainsAny(w, "0123456789") {
			return true
		}
	}
	return false
}
