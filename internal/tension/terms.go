package tension

// Terms: tokens classified as content words, values, negations, stop words
// and clause breaks.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// termKind is what a term is.
type termKind uint8

const (
	wordTerm  termKind = iota + 1 // content word (stemmed)
	valueTerm                     // number, date, time or other exclusive value
	negTerm                       // negation marker
	stopTerm                      // stop word, kept for frames and qualifiers
	breakTerm                     // clause boundary
)

// valueClass is the class of a value; only values of one class are compared.
type valueClass uint8

const (
	classNum      valueClass = iota + 1 // plain number or version
	classYear                           // 1900..2100 used as a year
	classDate                           // ISO date
	classMonth                          // month name
	classMonthDay                       // month name with a day
	classWeekday                        // day of the week
	classDaypart                        // morning, afternoon, evening, night
	classClock                          // time of day, in minutes
	classFreq                           // bare time unit: per minute, every day
	classDur                            // duration, in milliseconds
	classSize                           // data size, in bytes
	classPct                            // percentage
	classDist                           // distance, in metres
)

// isDateClass reports whether values of c are calendar dates.
func isDateClass(c valueClass) bool {
	return c == classYear || c == classDate || c == classMonth || c == classMonthDay
}

// term is one analysed token.
type term struct {
	key    string     // comparison key: stem for words, canonical text for values
	disp   string     // surface form for reasons
	kind   termKind   // word, value, negation, stop or break
	class  valueClass // value class
	num    float64    // numeric magnitude of numeric values
	ver    bool       // dotted number (compared as a version prefix)
	qual   string     // value qualifier: "~", ">", "<", ">=", "<=" or ""
	tq     bool       // date introduced by from/since/until/...: a time scope
	poss   bool       // possessive
	scope  bool       // environment scope word
	negged bool       // inside a negation's scope
	hypo   bool       // a value in a hypothetical clause ("it would be nice to meet one day"): not claimed
	inf    bool       // a word directly after "to": an infinitive's verb, not an assertion ("a book to read")
	named  bool       // a capitalised word that does not start the text: part of a name
	paren  bool       // a break made only of parentheses
}

// belief is an analysed belief.
type belief struct {
	seq    []term
	core   []int    // seq indices of content terms (words and values), scope words excluded
	words  []string // sorted unique keys of word terms, scope words included
	facts  []string // sorted unique keys of the word terms used at least once outside an infinitive
	scopes []string // sorted unique scope keys
	negs   int      // surface negation markers
	// addressed: the belief speaks to someone ("I'll let you know when
	// I'm free", "believe in yourself"): it holds a second-person pronoun.
	addressed bool
	top       string   // first domain path segment, lower-cased
	ents      []string // sorted unique entity word keys
}

// analyze turns one input into terms.
func analyze(in Input) belief {
	var x belief
	content := claimText(in.Content)
	if len(content) > maxBytes {
		cut := maxBytes
		for cut > 0 && !utf8.RuneStart(content[cut]) {
			cut--
		}
		content = content[:cut]
	}
	x.seq = designators(toTerms(lexText(content)))
	if len(x.seq) > maxTerms {
		x.seq = x.seq[:maxTerms]
	}
	for i := range x.seq {
		t := &x.seq[i]
		x.addressed = x.addressed || (t.kind == stopTerm || t.kind == wordTerm) && secondPerson[strings.ToLower(t.disp)]
		switch t.kind {
		case wordTerm:
			x.words = append(x.words, t.key)
			if t.scope {
				x.scopes = append(x.scopes, t.key)
			} else {
				x.core = append(x.core, i)
			}
		case valueTerm:
			x.core = append(x.core, i)
		case negTerm:
			x.negs++
			for j := i + 1; j < len(x.seq) && x.seq[j].kind != breakTerm; j++ {
				x.seq[j].negged = true
			}
		}
	}
	markIrrealis(x.seq)
	for i := range x.seq {
		if t := &x.seq[i]; t.kind == wordTerm && !t.inf {
			x.facts = append(x.facts, t.key)
		}
	}
	x.facts = uniq(x.facts)
	x.words = uniq(x.words)
	x.scopes = uniq(x.scopes)
	if len(in.DomainPath) > 0 {
		x.top = strings.ToLower(strings.TrimSpace(in.DomainPath[0]))
	}
	for _, e := range in.Entities {
		if len(e) > maxBytes || len(x.ents) > maxTerms {
			continue
		}
		for _, t := range toTerms(lexText(e)) {
			if t.kind == wordTerm {
				x.ents = append(x.ents, t.key)
			}
		}
	}
	x.ents = uniq(x.ents)
	return x
}

// toTerms classifies lexed tokens.
func toTerms(lx []lexeme) []term {
	out := make([]term, 0, len(lx))
	prevCaps := -1 // index in out of the last word term from an all-caps token
	for i := 0; i < len(lx); i++ {
		l := lx[i]
		switch {
		case l.brk:
			out = append(out, term{kind: breakTerm, paren: l.paren})
			continue
		case l.neg:
			out = append(out, term{key: "not", disp: "not", kind: negTerm})
			continue
		case l.num:
			// Course and standard codes: an all-caps word directly followed
			// by an integer of 3+ digits ("CPSC 1150", "ISO 8601") is one
			// identifier, not a quantity.
			if prevCaps >= 0 && prevCaps == len(out)-1 && len(l.s) >= 3 && allDigits(l.s) {
				t := &out[prevCaps]
				t.key += l.s
				t.disp += " " + l.s
				prevCaps = -1
				continue
			}
			if identityNumber(lx, i, out, prevCaps) {
				// "SUBJ 74", "course 74", "institution 0": the number names
				// the thing; "#12" is an identifier by itself.
				if l.hash {
					out = append(out, term{key: "#" + l.s, disp: "#" + l.s, kind: wordTerm, named: true})
				} else {
					t := &out[len(out)-1]
					t.key += l.s
					t.disp += " " + l.s
					t.named = true
				}
				prevCaps = -1
				continue
			}
			var t term
			t, i = parseNumber(lx, i, out)
			out = append(out, t)
			prevCaps = -1
			continue
		}
		w := l.s
		prevCaps = -1
		if l.caps && i+1 < len(lx) && lx[i+1].num && allDigits(lx[i+1].s) && !l.poss {
			// An all-caps code before a number is a course or standard
			// code even when it spells a stop word ("IS 309", "AS 101").
			prevCaps = len(out)
			out = append(out, term{key: w, disp: w, kind: wordTerm, named: true})
			continue
		}
		if w == "cannot" {
			out = append(out, term{key: "can", disp: "can", kind: stopTerm}, term{key: "not", disp: "cannot", kind: negTerm})
			continue
		}
		if negWords()[w] {
			out = append(out, term{key: "not", disp: w, kind: negTerm})
			if w == "no" && i+1 < len(lx) && lx[i+1].s == "longer" {
				i++
			}
			continue
		}
		if breakWords()[w] {
			out = append(out, term{kind: breakTerm})
			continue
		}
		if w == "may" && !mayIsMonth(lx, i) {
			out = append(out, term{key: w, disp: w, kind: stopTerm})
			continue
		}
		if w == "on" && particle(lx, i) {
			// "turned on in production", "logging is on": the particle
			// is opposable to "off", so it is a content word here.
			out = append(out, term{key: w, disp: w, kind: wordTerm})
			continue
		}
		if f, ok := freqWords()[lx[min(i+1, len(lx)-1)].s]; ok && i > 0 && i+1 < len(lx) && (w == "a" || w == "an") && timesWords[lx[i-1].s] {
			// "twice a week", "multiple times a day": how often, not how long.
			out = append(out, term{key: f, disp: w + " " + lx[i+1].s, kind: valueTerm, class: classFreq})
			i++
			continue
		}
		if u, ok := articleUnit(lx, i); ok {
			// "an hour", "a day and a half": one unit (and a half).
			t := term{key: fmtNum(u.factor), disp: w + " " + lx[i+1].s, kind: valueTerm, class: u.class, num: u.factor}
			i++
			if i+3 < len(lx) && lx[i+1].s == "and" && (lx[i+2].s == "a" || lx[i+2].s == "an") && lx[i+3].s == "half" {
				t.num *= 1.5
				t.key = fmtNum(t.num)
				t.disp += " and a half"
				i += 3
			}
			t.qual = qualifier(out)
			out = append(out, t)
			continue
		}
		if stopWords()[w] && w != "may" || timeScopeWords()[w] {
			// Time-scope words that are not stop words ("effective",
			// "observed") introduce a date; they are no content.
			out = append(out, term{key: w, disp: w, kind: stopTerm})
			continue
		}
		if v, ok := numberWords()[w]; ok {
			t := term{key: fmtNum(v), disp: w, kind: valueTerm, class: classNum, num: v}
			t, i = foldUnit(lx, i, t)
			t.qual = qualifier(out)
			out = append(out, t)
			continue
		}
		if m, ok := months()[w]; ok {
			t := term{key: strconv.Itoa(m), disp: w, kind: valueTerm, class: classMonth}
			if n := i + 1; n < len(lx) && lx[n].slash && allDigits(lx[n].s) && (len(lx[n].s) == 2 || len(lx[n].s) == 4) {
				// "Sep/13", "May/1999": a month of a year.
				t.class = classDate
				t.key = strconv.Itoa(m) + "/" + lx[n].s[len(lx[n].s)-2:]
				t.disp = w + "/" + lx[n].s
				i++
			} else if i+1 < len(lx) && lx[i+1].num && allDigits(lx[i+1].s) && len(lx[i+1].s) <= 2 {
				d, _ := strconv.Atoi(lx[i+1].s)
				if d >= 1 && d <= 31 {
					t.class = classMonthDay
					t.key = strconv.Itoa(m) + "-" + strconv.Itoa(d)
					t.disp = w + " " + lx[i+1].s
					i++
				}
			}
			t.tq = timeScoped(out)
			out = append(out, t)
			continue
		}
		if d, ok := weekdays()[w]; ok {
			out = append(out, term{key: d, disp: w, kind: valueTerm, class: classWeekday})
			continue
		}
		if d, ok := dayparts()[w]; ok {
			if n := len(out); n >= 3 && out[n-1].key == "the" && out[n-2].key == "in" && out[n-3].kind == valueTerm && clockLike(&out[n-3]) {
				// "8:30 in the morning", "7 in the evening": one time of day.
				c := &out[n-3]
				if c.class == classNum {
					c.class, c.num, c.qual = classClock, c.num*60, ""
				}
				if d != "morning" && c.num < 12*60 {
					c.num += 12 * 60
					c.key = fmtNum(c.num)
				}
				c.disp += " in the " + w
				out = out[:n-2]
				continue
			}
			out = append(out, term{key: d, disp: w, kind: valueTerm, class: classDaypart})
			continue
		}
		if f, ok := freqWords()[w]; ok && !(strings.HasSuffix(w, "ly") && beforeNoun(lx, i)) {
			out = append(out, term{key: f, disp: w, kind: valueTerm, class: classFreq})
			continue
		}
		key := w
		if c, ok := synonyms()[w]; ok {
			key = c
		}
		t := term{disp: w, kind: wordTerm, poss: l.poss, named: l.caps || l.upper && (i > 0 || l.poss)}
		if scopeWords()[key] {
			t.key = key
			t.scope = true
		} else {
			t.key = stem(key)
		}
		if l.caps && !t.poss {
			prevCaps = len(out)
		}
		out = append(out, t)
	}
	return out
}

// beforeNoun reports whether lx[i] is directly followed by a content word,
// so an adjective there names a kind ("the weekly backup") rather than
// stating a value ("the backup runs weekly").
func beforeNoun(lx []lexeme, i int) bool {
	if i+1 >= len(lx) {
		return false
	}
	n := lx[i+1]
	if n.brk || n.num || n.neg || n.poss {
		return false
	}
	w := n.s
	return !stopWords()[w] && !negWords()[w] && !breakWords()[w]
}

// particle reports whether the preposition at lx[i] stands alone as a
// particle: it ends the clause or is directly followed by another
// preposition or a conjunction ("is on", "turned on in staging").
func particle(lx []lexeme, i int) bool {
	if i+1 >= len(lx) || lx[i+1].brk {
		return true
	}
	return afterParticle()[lx[i+1].s]
}

// mayIsMonth reports whether "may" at lx[i] is the month.
func mayIsMonth(lx []lexeme, i int) bool {
	if i+1 < len(lx) && lx[i+1].num {
		return true
	}
	if i > 0 {
		switch lx[i-1].s {
		case "in", "of", "early", "late", "mid", "since", "until", "from":
			return true
		}
	}
	return false
}

// articleUnit reports the unit after the article at lx[i] ("an hour", "a
// week"): a measure unit, not a plain multiplier or a percentage.
func articleUnit(lx []lexeme, i int) (unitDef, bool) {
	if (lx[i].s != "a" && lx[i].s != "an") || i+1 >= len(lx) {
		return unitDef{}, false
	}
	u, ok := units()[lx[i+1].s]
	if !ok || u.class == classNum || u.class == classPct || len(lx[i+1].s) < 3 {
		return unitDef{}, false
	}
	return u, true
}

// clockLike reports whether t can be a time of day before "in the
// morning": a clock time, or a whole hour from 1 to 12.
func clockLike(t *term) bool {
	return t.class == classClock || t.class == classNum && !t.ver && t.num >= 1 && t.num <= 12 && t.num == float64(int(t.num))
}

// designators joins, in a leading run of content terms that a clause break
// closes (a heading: "In term 202310 Langara CHEM 1114 section 005 (...)"),
// a word and the integer of three or more digits right after it into one
// identifier: the number names the thing the belief is about, it does not
// measure it.
func designators(seq []term) []term {
	i := 0
	for i < len(seq) && seq[i].kind == stopTerm {
		i++
	}
	end := i
	for end < len(seq) && (seq[end].kind == wordTerm || seq[end].kind == valueTerm) {
		end++
	}
	if end >= len(seq) || seq[end].kind != breakTerm {
		return seq
	}
	for ; i < end; i++ {
		t := &seq[i]
		if t.kind != wordTerm && t.kind != valueTerm {
			break
		}
		if t.kind == valueTerm && t.class == classNum && !t.ver && t.qual == "" && len(t.key) >= 3 && allDigits(t.key) &&
			i > 0 && seq[i-1].kind == wordTerm && !seq[i-1].scope {
			seq[i-1].key += t.key
			seq[i-1].disp += " " + t.disp
			seq = append(seq[:i], seq[i+1:]...)
			i--
			end--
		}
	}
	return seq
}

// identityNumber reports whether the number at lx[i] names a thing rather
// than measuring it (issue 23): a plain integer written "#12", or directly
// after an all-caps code word (the word at out index caps, "SUBJ 74",
// "CPSC 1150") or an identity noun ("course 74", "room 12"), and not
// followed by a unit ("course 3 hours" is not course 3).
func identityNumber(lx []lexeme, i int, out []term, caps int) bool {
	l := lx[i]
	if !allDigits(l.s) {
		return false
	}
	if l.hash {
		return true
	}
	n := len(out)
	if n == 0 || out[n-1].kind != wordTerm || i == 0 || lx[i-1].brk || lx[i-1].num {
		return false
	}
	if i+1 < len(lx) && !lx[i+1].brk {
		if _, unit := units()[lx[i+1].s]; unit {
			return false
		}
	}
	return caps == n-1 || identityNouns()[lx[i-1].s]
}

// timesWords count several occurrences: "a day" after them is a
// frequency, not a period ("once a day" is every day).
var timesWords = map[string]bool{"times": true, "twice": true, "thrice": true}

// secondPerson are the pronouns that address the listener.
var secondPerson = map[string]bool{"you": true, "your": true, "yours": true, "yourself": true, "yourselves": true, "ya": true}

// hypotheticals are the modals that make a clause a wish, a guess or a
// counterfactual rather than a statement of fact.
var hypotheticals = map[string]bool{"would": true, "could": true, "might": true}

// markIrrealis marks the terms of seq that are not asserted as facts: the
// values of a clause holding a hypothetical modal ("it would be nice to go
// one day": "one day" is no duration anyone claims; "the move could take
// two weeks" is a guess) and the words directly after "to" (an infinitive
// of purpose or intent: "a great book to read" does not say it was read).
func markIrrealis(seq []term) {
	start := 0
	for i := 0; i <= len(seq); i++ {
		if i < len(seq) && seq[i].kind != breakTerm {
			if i > 0 && seq[i].kind == wordTerm && seq[i-1].kind == stopTerm && seq[i-1].key == "to" {
				seq[i].inf = true
			}
			continue
		}
		hypo := false
		for k := start; k < i; k++ {
			if seq[k].kind == stopTerm && hypotheticals[seq[k].key] {
				hypo = true
				break
			}
		}
		for k := start; hypo && k < i; k++ {
			if seq[k].kind == valueTerm {
				seq[k].hypo = true
			}
		}
		start = i + 1
	}
}
