package substrate

// Deterministic tension (contradiction) detection between two beliefs.
//
// DetectTension is called once per candidate when a belief is created; the
// caller has already narrowed the candidates to active beliefs that share an
// entity or a domain path with the new one and match it lexically. The
// detector tokenizes both statements, aligns them (shared terms, opposed
// terms, matching values) and applies a small set of documented rules. The
// rules, thresholds and the measured quality on the labelled set are in
// docs/tensions.md; keep the two in step.
//
// Everything here is pure: package-level tables are built once at init and
// only read afterwards, and no output depends on map iteration order.

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// TensionInput is one belief as the detector sees it.
type TensionInput struct {
	Content    string
	DomainPath []string   // e.g. ["tech","database"]
	Entities   []string   // linked entity names, any case
	ValidFrom  *time.Time // nil = unknown/open
	ValidUntil *time.Time // nil = open
	Confidence float64    // overall 0..1
}

// TensionFinding is a detected tension between two beliefs.
type TensionFinding struct {
	Type     string // "contradiction" | "temporal_conflict" | "scope_conflict" | "partial_overlap"
	Severity string // "low" | "medium" | "high" | "critical"
	Reason   string // one human sentence naming the rule and the evidence
}

// Tension types reported in [TensionFinding.Type].
const (
	TensionTypeContradiction    = "contradiction"
	TensionTypeTemporalConflict = "temporal_conflict"
	TensionTypeScopeConflict    = "scope_conflict"
	TensionTypePartialOverlap   = "partial_overlap"
)

// Tension severities reported in [TensionFinding.Severity], weakest first.
const (
	TensionSeverityLow      = "low"
	TensionSeverityMedium   = "medium"
	TensionSeverityHigh     = "high"
	TensionSeverityCritical = "critical"
)

// Thresholds; docs/tensions.md explains each.
const (
	// tnMinOverlap is the minimum overlap coefficient of aligned content
	// terms (shared terms plus aligned opposed terms/values/slots over the
	// smaller belief's term count) before any rule may fire.
	tnMinOverlap = 0.6
	// tnMinJaccard is the minimum Jaccard index of aligned content terms.
	tnMinJaccard = 0.2
	// tnMaxSlot is the most terms a substituted slot may span on one side.
	tnMaxSlot = 3
	// tnPartialMinShared is how many word terms two beliefs must share for
	// a partial overlap.
	tnPartialMinShared = 3
	// tnConfident is the confidence both beliefs must reach to raise the
	// severity one level.
	tnConfident = 0.8
	// tnWeak is the confidence below which both beliefs lower the severity
	// one level.
	tnWeak = 0.5
	// tnMaxReasonTerms caps how many shared terms a reason lists.
	tnMaxReasonTerms = 6
	// tnMaxBytes and tnMaxTerms bound the work per belief: beliefs are
	// short statements, and only this much of a longer one is analysed, so
	// the pairwise steps stay cheap on pathological input.
	tnMaxBytes = 2048
	tnMaxTerms = 128
)

// DetectTension reports whether existing belief a and new belief b are in
// tension. It is deterministic, allocation-light and safe for concurrent use.
// See docs/tensions.md for the rules.
func DetectTension(a, b TensionInput) (TensionFinding, bool) {
	// Rule V1: disjoint validity windows explain any difference.
	if tnHasWindow(a) && tnHasWindow(b) && tnDisjoint(a, b) {
		return TensionFinding{}, false
	}
	x := tnAnalyze(a)
	y := tnAnalyze(b)
	if len(x.core) == 0 || len(y.core) == 0 {
		return TensionFinding{}, false
	}
	ev := tnAlign(&x, &y)
	return tnDecide(a, b, &x, &y, &ev)
}

// ---------------------------------------------------------------------------
// Lexing

// tnLex is one raw token.
type tnLex struct {
	s    string // lower-cased; joined hyphenated words lose their hyphens
	caps bool   // every letter is upper-case in the source (2+ letters)
	num  bool   // starts with a digit
	brk  bool   // clause boundary
	neg  bool   // "not" split off a contraction
	poss bool   // possessive 's
}

func tnIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// tnLexText splits src into tokens. Numbers keep decimal points, version
// dots, thousands separators, clock colons and ISO date hyphens; words keep
// inner apostrophes (then split into contractions) and join hyphens.
func tnLexText(src string) []tnLex {
	out := make([]tnLex, 0, 24)
	brk := func() {
		if len(out) > 0 && !out[len(out)-1].brk {
			out = append(out, tnLex{brk: true})
		}
	}
	n := len(src)
	for i := 0; i < n; {
		r, w := utf8.DecodeRuneInString(src[i:])
		switch {
		case r < utf8.RuneSelf && tnIsDigit(byte(r)):
			j := i + 1
			for j < n {
				c := src[j]
				switch {
				case tnIsDigit(c):
					j++
					continue
				case (c == '.' || c == ':') && j+1 < n && tnIsDigit(src[j+1]):
					j++
					continue
				case c == ',' && tnThousands(src, j):
					j++
					continue
				case c == '-' && (j-i == 4 || j-i == 7) && tnAllDigits(src[i:i+4]) && tnIsoPart(src, j):
					j++
					continue
				}
				break
			}
			out = append(out, tnLex{s: src[i:j], num: true})
			if j < n && src[j] == '%' {
				out = append(out, tnLex{s: "%"})
				j++
			} else if j < n {
				// Letters glued to a number are a unit or ordinal suffix.
				k := j
				for k < n {
					r2, w2 := utf8.DecodeRuneInString(src[k:])
					if !unicode.IsLetter(r2) {
						break
					}
					k += w2
				}
				if k > j && (k >= n || !tnIsWordRune(src, k)) {
					out = append(out, tnLex{s: strings.ToLower(src[j:k])})
					j = k
				}
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i + w
			for j < n {
				r2, w2 := utf8.DecodeRuneInString(src[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) {
					j += w2
					continue
				}
				if r2 == '\'' || r2 == '’' || r2 == '-' || r2 == '.' {
					if j+w2 < n {
						r3, _ := utf8.DecodeRuneInString(src[j+w2:])
						if unicode.IsLetter(r3) || (r2 == '-' || r2 == '.') && unicode.IsDigit(r3) {
							j += w2
							continue
						}
					}
				}
				break
			}
			out = tnAppendWord(out, src[i:j])
			i = j
		default:
			switch r {
			case ',', ';', ':', '.', '!', '?', '(', ')', '[', ']', '{', '}', '"', '“', '”', '—', '–', '…', '|':
				brk()
			case '-':
				if i+1 < n && src[i+1] == ' ' && i > 0 && src[i-1] == ' ' {
					brk()
				}
			case '~':
				out = append(out, tnLex{s: "about"})
			}
			i += w
		}
	}
	return out
}

// tnIsWordRune reports whether the rune at src[k] is a letter or digit.
func tnIsWordRune(src string, k int) bool {
	r, _ := utf8.DecodeRuneInString(src[k:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// tnThousands reports whether src[j] is a comma followed by exactly three
// digits (a thousands separator such as 1,000).
func tnThousands(src string, j int) bool {
	if j+4 > len(src) || !tnIsDigit(src[j+1]) || !tnIsDigit(src[j+2]) || !tnIsDigit(src[j+3]) {
		return false
	}
	return j+4 == len(src) || !tnIsDigit(src[j+4])
}

// tnIsoPart reports whether src[j] is a hyphen followed by exactly two
// digits, continuing an ISO date (2024-03 or 2024-03-01).
func tnIsoPart(src string, j int) bool {
	if j+3 > len(src) || !tnIsDigit(src[j+1]) || !tnIsDigit(src[j+2]) {
		return false
	}
	return j+3 == len(src) || !tnIsDigit(src[j+3])
}

// tnAppendWord appends the tokens of one word, splitting contractions.
func tnAppendWord(out []tnLex, raw string) []tnLex {
	caps := tnAllCaps(raw)
	low := strings.ToLower(raw)
	if strings.ContainsAny(low, "-.’") {
		// Join "read-only" and "node.js"; keep version dots ("v1.2.3").
		dots := strings.ContainsAny(low, "0123456789")
		low = strings.Map(func(r rune) rune {
			switch {
			case r == '-' || r == '.' && !dots:
				return -1
			case r == '’':
				return '\''
			}
			return r
		}, low)
	}
	idx := strings.IndexByte(low, '\'')
	if idx < 0 {
		return append(out, tnLex{s: low, caps: caps})
	}
	base, suf := low[:idx], low[idx+1:]
	switch {
	case suf == "t" && strings.HasSuffix(base, "n"):
		base = base[:len(base)-1]
		switch base {
		case "ca":
			base = "can"
		case "wo":
			base = "will"
		case "sha":
			base = "shall"
		case "ai":
			base = "is"
		}
		if base != "" {
			out = append(out, tnLex{s: base})
		}
		return append(out, tnLex{s: "not", neg: true})
	case suf == "s":
		return append(out, tnLex{s: base, caps: caps, poss: true})
	case suf == "re" || suf == "ll" || suf == "ve" || suf == "d" || suf == "m":
		return append(out, tnLex{s: base})
	}
	return append(out, tnLex{s: base + strings.ReplaceAll(suf, "'", ""), caps: caps})
}

// tnAllCaps reports whether s has at least two letters, all upper-case.
func tnAllCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if !unicode.IsUpper(r) {
				return false
			}
			letters++
		}
	}
	return letters >= 2
}

// ---------------------------------------------------------------------------
// Terms

type tnKind uint8

const (
	tnWord  tnKind = iota + 1 // content word (stemmed)
	tnValue                   // number, date, time or other exclusive value
	tnNeg                     // negation marker
	tnStop                    // stop word, kept for frames and qualifiers
	tnBreak                   // clause boundary
)

// tnClass is the class of a value; only values of one class are compared.
type tnClass uint8

const (
	tnNum      tnClass = iota + 1 // plain number or version
	tnYear                        // 1900..2100 used as a year
	tnDate                        // ISO date
	tnMonth                       // month name
	tnMonthDay                    // month name with a day
	tnWeekday                     // day of the week
	tnDaypart                     // morning, afternoon, evening, night
	tnClock                       // time of day, in minutes
	tnFreq                        // bare time unit: per minute, every day
	tnDur                         // duration, in milliseconds
	tnSize                        // data size, in bytes
	tnPct                         // percentage
)

// tnDateClass reports whether values of c are calendar dates.
func tnDateClass(c tnClass) bool {
	return c == tnYear || c == tnDate || c == tnMonth || c == tnMonthDay
}

// tnTerm is one analysed token.
type tnTerm struct {
	key    string  // comparison key: stem for words, canonical text for values
	disp   string  // surface form for reasons
	kind   tnKind  // word, value, negation, stop or break
	class  tnClass // value class
	num    float64 // numeric magnitude of numeric values
	ver    bool    // dotted number (compared as a version prefix)
	qual   string  // value qualifier: "~", ">", "<", ">=", "<=" or ""
	tq     bool    // date introduced by from/since/until/...: a time scope
	poss   bool    // possessive
	scope  bool    // environment scope word
	negged bool    // inside a negation's scope
}

// tnBelief is an analysed belief.
type tnBelief struct {
	seq    []tnTerm
	core   []int    // seq indices of content terms (words and values), scope words excluded
	words  []string // sorted unique keys of word terms, scope words included
	scopes []string // sorted unique scope keys
	negs   int      // surface negation markers
	top    string   // first domain path segment, lower-cased
	ents   []string // sorted unique entity word keys
}

// tnAnalyze turns one input into terms.
func tnAnalyze(in TensionInput) tnBelief {
	var x tnBelief
	content := in.Content
	if len(content) > tnMaxBytes {
		cut := tnMaxBytes
		for cut > 0 && !utf8.RuneStart(content[cut]) {
			cut--
		}
		content = content[:cut]
	}
	x.seq = tnTerms(tnLexText(content))
	if len(x.seq) > tnMaxTerms {
		x.seq = x.seq[:tnMaxTerms]
	}
	for i := range x.seq {
		t := &x.seq[i]
		switch t.kind {
		case tnWord:
			x.words = append(x.words, t.key)
			if t.scope {
				x.scopes = append(x.scopes, t.key)
			} else {
				x.core = append(x.core, i)
			}
		case tnValue:
			x.core = append(x.core, i)
		case tnNeg:
			x.negs++
			for j := i + 1; j < len(x.seq) && x.seq[j].kind != tnBreak; j++ {
				x.seq[j].negged = true
			}
		}
	}
	x.words = tnUniq(x.words)
	x.scopes = tnUniq(x.scopes)
	if len(in.DomainPath) > 0 {
		x.top = strings.ToLower(strings.TrimSpace(in.DomainPath[0]))
	}
	for _, e := range in.Entities {
		if len(e) > tnMaxBytes || len(x.ents) > tnMaxTerms {
			continue
		}
		for _, t := range tnTerms(tnLexText(e)) {
			if t.kind == tnWord {
				x.ents = append(x.ents, t.key)
			}
		}
	}
	x.ents = tnUniq(x.ents)
	return x
}

// tnTerms classifies lexed tokens.
func tnTerms(lx []tnLex) []tnTerm {
	out := make([]tnTerm, 0, len(lx))
	prevCaps := -1 // index in out of the last word term from an all-caps token
	for i := 0; i < len(lx); i++ {
		l := lx[i]
		switch {
		case l.brk:
			out = append(out, tnTerm{kind: tnBreak})
			continue
		case l.neg:
			out = append(out, tnTerm{key: "not", disp: "not", kind: tnNeg})
			continue
		case l.num:
			// Course and standard codes: an all-caps word directly followed
			// by an integer of 3+ digits ("CPSC 1150", "ISO 8601") is one
			// identifier, not a quantity.
			if prevCaps >= 0 && prevCaps == len(out)-1 && len(l.s) >= 3 && tnAllDigits(l.s) {
				t := &out[prevCaps]
				t.key += l.s
				t.disp += " " + l.s
				prevCaps = -1
				continue
			}
			var t tnTerm
			t, i = tnNumber(lx, i, out)
			out = append(out, t)
			prevCaps = -1
			continue
		}
		w := l.s
		prevCaps = -1
		if w == "cannot" {
			out = append(out, tnTerm{key: "can", disp: "can", kind: tnStop}, tnTerm{key: "not", disp: "cannot", kind: tnNeg})
			continue
		}
		if tnNegWords[w] {
			out = append(out, tnTerm{key: "not", disp: w, kind: tnNeg})
			if w == "no" && i+1 < len(lx) && lx[i+1].s == "longer" {
				i++
			}
			continue
		}
		if tnBreakWords[w] {
			out = append(out, tnTerm{kind: tnBreak})
			continue
		}
		if w == "may" && !tnMayIsMonth(lx, i) {
			out = append(out, tnTerm{key: w, disp: w, kind: tnStop})
			continue
		}
		if w == "on" && tnParticle(lx, i) {
			// "turned on in production", "logging is on": the particle
			// is opposable to "off", so it is a content word here.
			out = append(out, tnTerm{key: w, disp: w, kind: tnWord})
			continue
		}
		if tnStopWords[w] {
			out = append(out, tnTerm{key: w, disp: w, kind: tnStop})
			continue
		}
		if v, ok := tnNumberWords[w]; ok {
			t := tnTerm{key: tnFmt(v), disp: w, kind: tnValue, class: tnNum, num: v}
			t, i = tnUnit(lx, i, t)
			t.qual = tnQualifier(out)
			out = append(out, t)
			continue
		}
		if m, ok := tnMonths[w]; ok {
			t := tnTerm{key: strconv.Itoa(m), disp: w, kind: tnValue, class: tnMonth}
			if i+1 < len(lx) && lx[i+1].num && tnAllDigits(lx[i+1].s) && len(lx[i+1].s) <= 2 {
				d, _ := strconv.Atoi(lx[i+1].s)
				if d >= 1 && d <= 31 {
					t.class = tnMonthDay
					t.key = strconv.Itoa(m) + "-" + strconv.Itoa(d)
					t.disp = w + " " + lx[i+1].s
					i++
				}
			}
			t.tq = tnTimeScoped(out)
			out = append(out, t)
			continue
		}
		if d, ok := tnWeekdays[w]; ok {
			out = append(out, tnTerm{key: d, disp: w, kind: tnValue, class: tnWeekday})
			continue
		}
		if d, ok := tnDayparts[w]; ok {
			out = append(out, tnTerm{key: d, disp: w, kind: tnValue, class: tnDaypart})
			continue
		}
		if f, ok := tnFreqWords[w]; ok && !(strings.HasSuffix(w, "ly") && tnBeforeNoun(lx, i)) {
			out = append(out, tnTerm{key: f, disp: w, kind: tnValue, class: tnFreq})
			continue
		}
		key := w
		if c, ok := tnSynonyms[w]; ok {
			key = c
		}
		t := tnTerm{disp: w, kind: tnWord, poss: l.poss}
		if tnScopeWords[key] {
			t.key = key
			t.scope = true
		} else {
			t.key = tnStem(key)
		}
		if l.caps && !t.poss {
			prevCaps = len(out)
		}
		out = append(out, t)
	}
	return out
}

// tnBeforeNoun reports whether lx[i] is directly followed by a content word,
// so an adjective there names a kind ("the weekly backup") rather than
// stating a value ("the backup runs weekly").
func tnBeforeNoun(lx []tnLex, i int) bool {
	if i+1 >= len(lx) {
		return false
	}
	n := lx[i+1]
	if n.brk || n.num || n.neg || n.poss {
		return false
	}
	w := n.s
	return !tnStopWords[w] && !tnNegWords[w] && !tnBreakWords[w]
}

// tnParticle reports whether the preposition at lx[i] stands alone as a
// particle: it ends the clause or is directly followed by another
// preposition or a conjunction ("is on", "turned on in staging").
func tnParticle(lx []tnLex, i int) bool {
	if i+1 >= len(lx) || lx[i+1].brk {
		return true
	}
	return tnAfterParticle[lx[i+1].s]
}

// tnMayIsMonth reports whether "may" at lx[i] is the month.
func tnMayIsMonth(lx []tnLex, i int) bool {
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

func tnAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tnIsDigit(s[i]) {
			return false
		}
	}
	return true
}

// tnFmt formats a number canonically.
func tnFmt(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// tnNumber classifies the number at lx[i] and any unit after it. It returns
// the term and the index of the last token consumed.
func tnNumber(lx []tnLex, i int, prev []tnTerm) (tnTerm, int) {
	s := lx[i].s
	t := tnTerm{key: s, disp: s, kind: tnValue, class: tnNum}
	switch {
	case len(s) >= 7 && s[4] == '-':
		// ISO date (YYYY-MM or YYYY-MM-DD).
		t.class = tnDate
		t.tq = tnTimeScoped(prev)
		return t, i
	case strings.IndexByte(s, ':') >= 0:
		parts := strings.Split(s, ":")
		h, _ := strconv.Atoi(parts[0])
		m, _ := strconv.Atoi(parts[1])
		if i+1 < len(lx) && (lx[i+1].s == "pm" || lx[i+1].s == "am") {
			h = tnTwelve(h, lx[i+1].s == "pm")
			t.disp += " " + lx[i+1].s
			i++
		}
		t.class = tnClock
		t.num = float64(h*60 + m)
		t.key = tnFmt(t.num)
		return t, i
	}
	clean := strings.ReplaceAll(s, ",", "")
	if strings.Count(clean, ".") >= 2 {
		t.ver = true
		t.key = clean
		t.qual = tnQualifier(prev)
		return t, i
	}
	v, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(v, 0) {
		t.key = clean
		return t, i
	}
	t.num = v
	t.key = clean
	t.ver = strings.IndexByte(clean, '.') >= 0
	t.qual = tnQualifier(prev)
	next := i + 1
	if next < len(lx) && !lx[next].brk {
		u := lx[next].s
		if u == "am" || u == "pm" {
			if h := int(v); float64(h) == v && h >= 0 && h <= 12 {
				t.class = tnClock
				t.num = float64(tnTwelve(h, u == "pm") * 60)
				t.key = tnFmt(t.num)
				t.ver = false
				t.disp += " " + u
				return t, next
			}
		}
		if m, ok := tnMonths[u]; ok && !t.ver && v >= 1 && v <= 31 && float64(int(v)) == v {
			t.class = tnMonthDay
			t.key = strconv.Itoa(m) + "-" + strconv.Itoa(int(v))
			t.disp += " " + u
			t.tq = tnTimeScoped(prev)
			return t, next
		}
	}
	before := i
	t, i = tnUnit(lx, i, t)
	if i == before && !t.ver && len(clean) == 4 && v >= 1900 && v <= 2100 && tnYearContext(lx, i) {
		t.class = tnYear
		t.tq = tnTimeScoped(prev)
	}
	return t, i
}

// tnTwelve converts a 12-hour clock hour to 24-hour.
func tnTwelve(h int, pm bool) int {
	h %= 12
	if pm {
		h += 12
	}
	return h
}

// tnYearContext reports whether a 4-digit number at lx[i] reads as a year:
// it is not directly followed by a content word ("2000 requests").
func tnYearContext(lx []tnLex, i int) bool {
	if i+1 >= len(lx) {
		return true
	}
	n := lx[i+1]
	if n.brk || n.num || n.neg {
		return true
	}
	if _, ok := tnMonths[n.s]; ok {
		return true
	}
	return tnStopWords[n.s] || tnBreakWords[n.s]
}

// tnUnit folds a unit after a numeric value at lx[i] into t.
func tnUnit(lx []tnLex, i int, t tnTerm) (tnTerm, int) {
	if i+1 >= len(lx) || lx[i+1].brk || lx[i+1].num {
		return t, i
	}
	u := lx[i+1].s
	if u == "st" || u == "nd" || u == "rd" || u == "th" {
		return t, i + 1
	}
	uu, ok := tnUnits[u]
	if !ok || t.class != tnNum {
		return t, i
	}
	if uu.class == tnNum {
		t.num *= uu.factor
	} else {
		t.class = uu.class
		t.num *= uu.factor
	}
	t.ver = false
	t.key = tnFmt(t.num)
	t.disp += " " + u
	return t, i + 1
}

// tnQualifier returns the bound or approximation qualifier ("over 100",
// "about 5", "up to 10") in the last few terms before a value.
func tnQualifier(prev []tnTerm) string {
	for k, n := len(prev)-1, 0; k >= 0 && n < 3; k, n = k-1, n+1 {
		t := prev[k]
		if t.kind == tnBreak {
			break
		}
		if q, ok := tnQualifiers[t.disp]; ok {
			return q
		}
	}
	return ""
}

// tnTimeScoped reports whether a date is introduced by a time-scoping word
// ("from 2024-07-01", "since 2021", "until May 3").
func tnTimeScoped(prev []tnTerm) bool {
	if len(prev) == 0 {
		return false
	}
	t := prev[len(prev)-1]
	return t.kind == tnStop && tnTimeScopeWords[t.key]
}

// tnStem strips plural and verb endings. It is crude but consistent, which
// is all the comparison needs.
func tnStem(w string) string {
	if len(w) <= 3 || !tnLettersOnly(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ly") && len(w) > 6:
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = tnUndouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 3:
		w = tnUndouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

func tnLettersOnly(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// tnUndouble drops one of a doubled final consonant ("runn" -> "run").
func tnUndouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'a', 'e', 'i', 'o', 'u', 'l', 's', 'z':
			return w
		}
		return w[:n-1]
	}
	return w
}

// ---------------------------------------------------------------------------
// Alignment

// tnValPair is two conflicting values, seq indices into a and b.
type tnValPair struct{ a, b int }

// tnEvidence is the alignment of two beliefs.
type tnEvidence struct {
	shared        []string // shared word keys (scope words included)
	resA, resB    []string // words only on one side, minus opposed and scope words
	antA, antB    []string // aligned opposed terms, index-matched
	matchedA      []bool   // per seq index of a: value matched in b
	matchedB      []bool
	matched       int         // matched value count
	conflicts     []tnValPair // conflicting values
	dateConflict  bool        // some conflicting pair is a date
	otherConflict bool        // some conflicting pair is not a date
	tqDiffer      bool        // both carry time-scoping dates that differ
	flip          bool        // polarity differs
	negA, negB    bool        // effective negation on each side
	functional    bool        // single-valued slot holds different values
	slotA, slotB  [2]int      // core index ranges of the substituted slot
	slotOK        bool        // residuals form one clean slot on each side
	directional   string      // cue of a reversed relation, or ""
	scopeDiff     bool        // scope qualifiers or top-level domains differ
	subjectDiff   bool        // the leading noun phrases name different things
	subjectNarrow bool        // one leading noun phrase refines the other by inserted words
}

// tnAlign computes the evidence used by the rules.
func tnAlign(x, y *tnBelief) tnEvidence {
	var ev tnEvidence
	var onlyA, onlyB []string
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
	usedB := make([]bool, len(onlyB))
	for _, wa := range onlyA {
		if tnScopeWords[wa] {
			continue
		}
		matched := false
		for k, wb := range onlyB {
			if usedB[k] || tnScopeWords[wb] || !tnOpposed(wa, wb) {
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
		if !usedB[k] && !tnScopeWords[wb] {
			ev.resB = append(ev.resB, wb)
		}
	}
	ev.scopeDiff = !tnEqual(x.scopes, y.scopes) || (x.top != "" && y.top != "" && x.top != y.top)

	// Values: greedy matching in text order.
	ev.matchedA = make([]bool, len(x.seq))
	ev.matchedB = make([]bool, len(y.seq))
	for _, ia := range x.core {
		ta := &x.seq[ia]
		if ta.kind != tnValue {
			continue
		}
		for _, ib := range y.core {
			if ev.matchedB[ib] || y.seq[ib].kind != tnValue || !tnValueEqual(ta, &y.seq[ib]) {
				continue
			}
			ev.matchedA[ia], ev.matchedB[ib] = true, true
			ev.matched++
			break
		}
	}
	var tqA, tqB bool
	for _, ia := range x.core {
		if x.seq[ia].kind == tnValue && !ev.matchedA[ia] && x.seq[ia].tq {
			tqA = true
		}
	}
	for _, ib := range y.core {
		if y.seq[ib].kind == tnValue && !ev.matchedB[ib] && y.seq[ib].tq {
			tqB = true
		}
	}
	ev.tqDiffer = tqA && tqB
	for _, ia := range x.core {
		ta := &x.seq[ia]
		if ta.kind != tnValue || ev.matchedA[ia] || ta.negged || ta.tq {
			continue
		}
		for _, ib := range y.core {
			tb := &y.seq[ib]
			if tb.kind != tnValue || ev.matchedB[ib] || tb.negged || tb.tq || tb.class != ta.class || tb.qual != ta.qual {
				continue
			}
			ev.conflicts = append(ev.conflicts, tnValPair{ia, ib})
			if tnDateClass(ta.class) {
				ev.dateConflict = true
			} else {
				ev.otherConflict = true
			}
		}
	}

	// Polarity.
	ev.negA = tnNegParity(x, y.words, ev.antA, ev.matchedA)
	ev.negB = tnNegParity(y, x.words, ev.antB, ev.matchedB)
	ev.flip = (ev.negA != ev.negB) != (len(ev.antA)%2 == 1)

	// Substituted slot.
	if len(ev.resA) > 0 && len(ev.resB) > 0 {
		var okA, okB bool
		ev.slotA, okA = tnSlot(x, ev.resA, ev.matchedA)
		ev.slotB, okB = tnSlot(y, ev.resB, ev.matchedB)
		ev.slotOK = okA && okB
		if ev.slotOK && !ev.flip && x.negs == y.negs {
			ev.functional = tnFrame(x, ev.slotA, ev.shared) && tnFrame(y, ev.slotB, ev.shared) &&
				tnSameFrame(x, y, ev.slotA, ev.slotB, ev.shared)
		}
	}
	ev.subjectDiff = tnSubjectDiff(x, y, &ev)
	if !ev.subjectDiff {
		ev.subjectNarrow = tnSubjectNarrow(x, y, &ev)
	}
	if len(ev.resA) == 0 && len(ev.resB) == 0 && len(ev.antA) == 0 && len(ev.conflicts) == 0 && !ev.flip {
		ev.directional = tnReversed(x, y)
	}
	return ev
}

// tnSubject returns the seq indices of x's leading content run: the content
// terms after any leading stop words, up to the first stop word or
// negation. A run that reaches a clause break or the end of the text
// ("Nexus supports Windows") has no identifiable subject and yields nil.
func tnSubject(x *tnBelief) []int {
	var out []int
	for i := range x.seq {
		t := &x.seq[i]
		switch t.kind {
		case tnWord, tnValue:
			if !t.scope {
				out = append(out, i)
			}
		case tnStop, tnNeg:
			if len(out) > 0 {
				return out
			}
			if t.kind == tnNeg {
				return nil
			}
		case tnBreak:
			return nil
		}
	}
	return nil
}

// tnSubjectDiff reports whether both leading subjects contain a term the
// other's subject lacks ("Langara CPSC 1160 has ..." vs "Langara CPSC 1150
// has ..."). Aligned opposed terms and conflicting values are the
// disagreement itself and do not count.
func tnSubjectDiff(x, y *tnBelief, ev *tnEvidence) bool {
	sx, sy := tnSubject(x), tnSubject(y)
	if len(sx) == 0 || len(sy) == 0 {
		return false
	}
	return tnSubjectExtra(x, sx, y, sy, ev.antA, ev, true) && tnSubjectExtra(y, sy, x, sx, ev.antB, ev, false)
}

// tnSubjectNarrow reports whether one leading subject is the other's plus
// inserted words that the other belief does not use at all ("Nexus logs
// ..." vs "Nexus audit logs ..."): the narrower claim may be an exception,
// so differing values are not a conflict.
func tnSubjectNarrow(x, y *tnBelief, ev *tnEvidence) bool {
	sx, sy := tnSubject(x), tnSubject(y)
	if len(sx) == 0 || len(sy) == 0 || len(sx) == len(sy) {
		return false
	}
	if len(sx) < len(sy) {
		x, y, sx, sy = y, x, sy, sx
		return tnSubjectRefines(x, sx, y, sy, ev.resB)
	}
	return tnSubjectRefines(x, sx, y, sy, ev.resA)
}

// tnSubjectRefines reports whether the longer subject sx of x contains
// every term of the shorter subject sy of y, in order, and its other terms
// are residual words of x (res).
func tnSubjectRefines(x *tnBelief, sx []int, y *tnBelief, sy []int, res []string) bool {
	k := 0
	for _, i := range sx {
		t := &x.seq[i]
		if k < len(sy) && y.seq[sy[k]].kind == t.kind && y.seq[sy[k]].key == t.key {
			k++
			continue
		}
		if t.kind != tnWord || !tnHas(res, t.key) {
			return false
		}
	}
	return k == len(sy)
}

// tnSubjectExtra reports whether subject sx of x has a term missing from
// subject sy of y.
func tnSubjectExtra(x *tnBelief, sx []int, y *tnBelief, sy []int, ant []string, ev *tnEvidence, isA bool) bool {
	for _, i := range sx {
		t := &x.seq[i]
		if t.kind == tnWord && tnContains(ant, t.key) {
			continue
		}
		if t.kind == tnValue && tnInConflict(ev, i, isA) {
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

func tnInConflict(ev *tnEvidence, i int, isA bool) bool {
	for _, p := range ev.conflicts {
		if isA && p.a == i || !isA && p.b == i {
			return true
		}
	}
	return false
}

// tnNegParity reports whether x carries an odd number of effective
// negations. A negation's scope runs to the clause end and is split into
// conjuncts at "and"/"or"/"nor". A negation is effective when it negates
// content the other belief states: every content term of the first
// conjunct, or its first term and every term of a later conjunct ("does not
// support BSD or Windows"), is present in the other belief, is an aligned
// opposed term, or is a matched value.
func tnNegParity(x *tnBelief, other, ant []string, matched []bool) bool {
	odd := false
	for i := range x.seq {
		if x.seq[i].kind != tnNeg {
			continue
		}
		seg, n := 0, 0 // current conjunct, its term count
		headIn, firstAll := false, false
		segAll, laterAll := true, false
		for j := i + 1; j <= len(x.seq); j++ {
			end := j == len(x.seq) || x.seq[j].kind == tnBreak || x.seq[j].kind == tnNeg
			if end || x.seq[j].kind == tnStop && tnConjunctions[x.seq[j].key] && n > 0 {
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
			case tnWord:
				if t.scope {
					continue
				}
				in = tnHas(other, t.key) || tnContains(ant, t.key)
			case tnValue:
				in = matched[j]
			default:
				continue
			}
			if seg == 0 && n == 0 {
				headIn = in
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

// tnSlot finds the residual words (and unmatched non-date values) of x in
// core order and reports their [start, end] core range when they form one
// clean slot: contiguous in core order, adjacent in the text (no stop word
// between them), at most tnMaxSlot terms and no possessive.
func tnSlot(x *tnBelief, res []string, matched []bool) ([2]int, bool) {
	start, end := -1, -1
	for k, si := range x.core {
		t := &x.seq[si]
		in := false
		switch t.kind {
		case tnWord:
			in = tnHas(res, t.key)
		case tnValue:
			in = !matched[si] && !tnDateClass(t.class)
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
	if start < 0 || end-start+1 > tnMaxSlot {
		return [2]int{}, false
	}
	return [2]int{start, end}, true
}

// tnFrame reports whether x states a single-valued slot around the core
// range s (see tnSameFrame).
func tnFrame(x *tnBelief, s [2]int, shared []string) bool {
	return tnFrameCopulaAfter(x, s) || tnFrameCopulaBefore(x, s) || tnFrameCue(x, s, shared) != ""
}

// tnSameFrame reports whether both beliefs use the same kind of frame:
//
//	A: "the R ... is <slot>"      (slot right after a copula preceded by "the" or a possessive)
//	B: "<slot> is the R ..."      (slot right before "is the" / "as the")
//	C: "... <cue> ... <slot>"     (a shared single-valued cue word before the slot)
func tnSameFrame(x, y *tnBelief, sx, sy [2]int, shared []string) bool {
	if tnFrameCopulaAfter(x, sx) && tnFrameCopulaAfter(y, sy) {
		return true
	}
	if tnFrameCopulaBefore(x, sx) && tnFrameCopulaBefore(y, sy) {
		return true
	}
	c := tnFrameCue(x, sx, shared)
	return c != "" && c == tnFrameCue(y, sy, shared)
}

func tnFrameCopulaAfter(x *tnBelief, s [2]int) bool {
	p := x.core[s[0]]
	j := p - 1
	for j >= 0 && x.seq[j].kind == tnStop && !tnCopulas[x.seq[j].key] {
		j--
	}
	if j < 0 || x.seq[j].kind != tnStop || !tnCopulas[x.seq[j].key] || x.seq[j].key == "as" {
		return false
	}
	for k := j - 1; k >= 0 && x.seq[k].kind != tnBreak; k-- {
		if x.seq[k].kind == tnStop && x.seq[k].key == "the" || x.seq[k].poss {
			return true
		}
	}
	return false
}

func tnFrameCopulaBefore(x *tnBelief, s [2]int) bool {
	q := x.core[s[1]]
	return q+2 < len(x.seq) && x.seq[q+1].kind == tnStop && tnCopulas[x.seq[q+1].key] &&
		x.seq[q+2].kind == tnStop && x.seq[q+2].key == "the"
}

// tnFrameCue returns the first shared cue word that precedes the slot.
func tnFrameCue(x *tnBelief, s [2]int, shared []string) string {
	for k := 0; k < s[0]; k++ {
		t := &x.seq[x.core[k]]
		if t.kind == tnWord && tnCueWords[t.key] && !tnCueVerbs[t.disp] && tnHas(shared, t.key) {
			return t.key
		}
	}
	return ""
}

// tnReversed returns a directional cue around which two shared terms swap
// sides ("A reports to B" vs "B reports to A"), or "".
func tnReversed(x, y *tnBelief) string {
	for i := range x.seq {
		c := x.seq[i].key
		if x.seq[i].kind == tnBreak || x.seq[i].kind == tnValue || !tnDirCues[c] {
			continue
		}
		for j := range y.seq {
			if y.seq[j].key != c || y.seq[j].kind != x.seq[i].kind {
				continue
			}
			bx, ax := tnAround(x, i)
			by, ay := tnAround(y, j)
			if tnIntersects(bx, ay) && tnIntersects(ax, by) {
				return x.seq[i].disp
			}
		}
	}
	return ""
}

// tnAround returns the content keys before and after seq index p within its
// clause.
func tnAround(x *tnBelief, p int) (before, after []string) {
	for k := p - 1; k >= 0 && x.seq[k].kind != tnBreak; k-- {
		if x.seq[k].kind == tnWord || x.seq[k].kind == tnValue {
			before = append(before, x.seq[k].key)
		}
	}
	for k := p + 1; k < len(x.seq) && x.seq[k].kind != tnBreak; k++ {
		if x.seq[k].kind == tnWord || x.seq[k].kind == tnValue {
			after = append(after, x.seq[k].key)
		}
	}
	return before, after
}

// tnValueEqual reports whether two values denote the same thing.
func tnValueEqual(a, b *tnTerm) bool {
	if a.class != b.class || a.qual != b.qual {
		return false
	}
	switch a.class {
	case tnNum:
		if a.key == b.key {
			return true
		}
		// A version refines a shorter one: "3.12" vs "3.12.4", "16" vs "16.2".
		if strings.HasPrefix(a.key, b.key+".") || strings.HasPrefix(b.key, a.key+".") {
			return true
		}
		if a.ver && strings.Count(a.key, ".") > 1 || b.ver && strings.Count(b.key, ".") > 1 {
			return false
		}
		return tnClose(a.num, b.num)
	case tnDur, tnSize, tnPct, tnClock:
		return tnClose(a.num, b.num)
	}
	return a.key == b.key
}

func tnClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// tnOpposed reports whether two word keys are opposed terms.
func tnOpposed(a, b string) bool {
	if tnContains(tnAntonyms[a], b) {
		return true
	}
	return tnPrefixed(a, b) || tnPrefixed(b, a)
}

// tnPrefixed reports whether neg is base with a negating prefix
// ("unstable"/"stable", "invalid"/"valid").
func tnPrefixed(neg, base string) bool {
	if len(base) < 5 || len(neg) <= len(base) || !strings.HasSuffix(neg, base) {
		return false
	}
	switch neg[:len(neg)-len(base)] {
	case "un", "non", "in", "im", "ir", "il":
		return true
	}
	return false
}

// ---------------------------------------------------------------------------
// Decision

// Rule identifiers. The rule that fires sets the base severity (see
// docs/tensions.md, "Severity").
const (
	tnRuleNegation = iota + 1
	tnRuleOpposed
	tnRuleValue
	tnRuleDate
	tnRuleSlot
	tnRuleReversed
	tnRulePartial
)

// tnDecide applies the rules to the alignment of a and b, in order, and
// builds the finding.
func tnDecide(a, b TensionInput, x, y *tnBelief, ev *tnEvidence) (TensionFinding, bool) {
	// Both beliefs are scoped to stated periods that differ: not a tension.
	if ev.tqDiffer {
		return TensionFinding{}, false
	}
	substituted := len(ev.resA) > 0 && len(ev.resB) > 0
	rule := 0
	switch {
	case substituted && !ev.functional:
		// Different subjects or objects: polarity and values say nothing.
	case ev.functional:
		rule = tnRuleSlot
	case ev.subjectDiff && (ev.flip || len(ev.conflicts) > 0):
		// Same words, different subjects: likewise.
	case ev.subjectNarrow && !ev.flip && len(ev.conflicts) > 0:
		// A narrower subject with another value may be an exception.
	case ev.flip && ev.otherConflict:
		// Opposite polarity under different values of one class ("closed
		// on Mondays" vs "opens on Tuesdays") describes two situations.
	case ev.flip && len(ev.antA) > 0 && !ev.negA && !ev.negB:
		rule = tnRuleOpposed
	case ev.flip:
		rule = tnRuleNegation
	case ev.otherConflict:
		rule = tnRuleValue
	case ev.dateConflict:
		rule = tnRuleDate
	case ev.directional != "":
		rule = tnRuleReversed
	}
	conflict := rule != 0
	// Differing calendar dates next to another conflict are time qualifiers
	// ("in 2019 ... MySQL" vs "in 2023 ... PostgreSQL"): consistent.
	if conflict && rule != tnRuleDate && ev.dateConflict {
		return TensionFinding{}, false
	}
	aligned := len(ev.antA)
	if ev.otherConflict || ev.dateConflict {
		aligned++
	}
	if ev.functional {
		aligned++
	}
	if len(x.scopes) > 0 && len(y.scopes) > 0 && !tnEqual(x.scopes, y.scopes) {
		aligned++
	}
	if !conflict {
		// Partial overlap: one clean substituted slot that is not the
		// subject, either the final object or named entities on both sides.
		tail := ev.slotA[1] == len(x.core)-1 && ev.slotB[1] == len(y.core)-1
		named := tnSlotNamed(x, ev.slotA) && tnSlotNamed(y, ev.slotB)
		if ev.slotOK && !ev.flip && x.negs == y.negs && len(ev.conflicts) == 0 && !ev.scopeDiff &&
			ev.slotA[0] > 0 && ev.slotB[0] > 0 && (tail || named) &&
			len(ev.shared) >= tnPartialMinShared && tnGate(x, y, ev, 1) {
			rule = tnRulePartial
		} else {
			return TensionFinding{}, false
		}
	} else if !tnGate(x, y, ev, aligned) {
		return TensionFinding{}, false
	}

	typ := TensionTypeContradiction
	base := 3 // high
	switch rule {
	case tnRuleSlot, tnRuleDate:
		base = 2
	case tnRulePartial:
		base = 1
		typ = TensionTypePartialOverlap
	}
	if rule == tnRuleDate {
		typ = TensionTypeTemporalConflict
	}
	window := ""
	if rule != tnRulePartial {
		switch {
		case ev.scopeDiff:
			typ = TensionTypeScopeConflict
			base--
		case tnHasWindow(a) && tnHasWindow(b) && (a.ValidUntil != nil || b.ValidUntil != nil):
			typ = TensionTypeTemporalConflict
			window = "validity windows overlap (" + tnWindow(a) + " vs " + tnWindow(b) + "); "
		}
	}
	sev := base
	if rule != tnRulePartial {
		ca, cb := tnConf(a.Confidence), tnConf(b.Confidence)
		if math.Min(ca, cb) >= tnConfident {
			sev++
		} else if math.Max(ca, cb) < tnWeak {
			sev--
		}
	}
	sev = min(max(sev, 1), 4)

	return TensionFinding{
		Type:     typ,
		Severity: [...]string{TensionSeverityLow, TensionSeverityMedium, TensionSeverityHigh, TensionSeverityCritical}[sev-1],
		Reason:   window + tnScopeNote(x, y, ev, typ) + tnReason(rule, x, y, ev),
	}, true
}

// tnGate is the topical similarity gate: at least one shared term, two
// aligned terms in all, overlap coefficient >= tnMinOverlap and Jaccard >=
// tnMinJaccard, both over content terms where aligned opposed terms, value
// conflicts and slots count as shared.
func tnGate(x, y *tnBelief, ev *tnEvidence, aligned int) bool {
	shared := len(ev.shared) + ev.matched
	if shared < 1 || shared+aligned < 2 {
		return false
	}
	na := len(x.words) + tnCountValues(x)
	nb := len(y.words) + tnCountValues(y)
	s := float64(shared + aligned)
	if s/float64(min(na, nb)) < tnMinOverlap {
		return false
	}
	den := float64(na+nb) - s
	return den <= 0 || s/den >= tnMinJaccard
}

func tnCountValues(x *tnBelief) int {
	n := 0
	for _, i := range x.core {
		if x.seq[i].kind == tnValue {
			n++
		}
	}
	return n
}

// tnConf clamps a confidence into [0, 1]; NaN counts as 0.
func tnConf(c float64) float64 {
	if math.IsNaN(c) || c < 0 {
		return 0
	}
	return math.Min(c, 1)
}

func tnScopeNote(x, y *tnBelief, ev *tnEvidence, typ string) string {
	if typ != TensionTypeScopeConflict {
		return ""
	}
	sa, sb := strings.Join(x.scopes, "+"), strings.Join(y.scopes, "+")
	if sa == sb {
		sa, sb = "domain "+x.top, "domain "+y.top
	}
	if sa == "" {
		sa = "unscoped"
	}
	if sb == "" {
		sb = "unscoped"
	}
	return "scope " + sa + " vs " + sb + "; "
}

func tnReason(rule int, x, y *tnBelief, ev *tnEvidence) string {
	on := " on shared terms {" + tnSharedList(x, ev.shared) + "}"
	switch rule {
	case tnRuleNegation:
		side, other := "b", "a"
		if ev.negA {
			side, other = "a", "b"
		}
		extra := ""
		if len(ev.antA) > 0 {
			extra = " (with opposed terms " + tnQuote(tnDisp(x, ev.antA[0])) + " vs " + tnQuote(tnDisp(y, ev.antB[0])) + ")"
		}
		return "negation: " + side + " negates what " + other + " asserts" + extra + on
	case tnRuleOpposed:
		return "opposed terms: " + tnQuote(tnDisp(x, ev.antA[0])) + " vs " + tnQuote(tnDisp(y, ev.antB[0])) + on
	case tnRuleValue, tnRuleDate:
		name := "different values: "
		if rule == tnRuleDate {
			name = "different dates: "
		}
		for _, p := range ev.conflicts {
			if tnDateClass(x.seq[p.a].class) == (rule == tnRuleDate) {
				return name + tnQuote(x.seq[p.a].disp) + " vs " + tnQuote(y.seq[p.b].disp) + on
			}
		}
	case tnRuleSlot:
		return "single-valued slot: " + tnQuote(tnSlotText(x, ev.slotA)) + " vs " + tnQuote(tnSlotText(y, ev.slotB)) + on
	case tnRuleReversed:
		return "reversed relation around " + tnQuote(ev.directional) + on
	case tnRulePartial:
		return "partial overlap: differing detail " + tnQuote(tnSlotText(x, ev.slotA)) + " vs " + tnQuote(tnSlotText(y, ev.slotB)) + on
	}
	return "tension" + on
}

// tnSlotNamed reports whether every word in core range s of x belongs to
// one of x's linked entity names.
func tnSlotNamed(x *tnBelief, s [2]int) bool {
	for k := s[0]; k <= s[1]; k++ {
		t := &x.seq[x.core[k]]
		if t.kind != tnWord || !tnHas(x.ents, t.key) {
			return false
		}
	}
	return true
}

func tnQuote(s string) string { return `"` + s + `"` }

func tnSlotText(x *tnBelief, s [2]int) string {
	parts := make([]string, 0, s[1]-s[0]+1)
	for k := s[0]; k <= s[1]; k++ {
		parts = append(parts, x.seq[x.core[k]].disp)
	}
	return strings.Join(parts, " ")
}

// tnDisp returns the surface form of word key in x.
func tnDisp(x *tnBelief, key string) string {
	for i := range x.seq {
		if x.seq[i].kind == tnWord && x.seq[i].key == key {
			return x.seq[i].disp
		}
	}
	return key
}

// tnSharedList lists up to tnMaxReasonTerms shared terms, sorted.
func tnSharedList(x *tnBelief, shared []string) string {
	out := make([]string, 0, min(len(shared), tnMaxReasonTerms))
	for _, k := range shared {
		out = append(out, tnDisp(x, k))
	}
	sort.Strings(out)
	if len(out) > tnMaxReasonTerms {
		out = append(out[:tnMaxReasonTerms], "…")
	}
	return strings.Join(out, ", ")
}

func tnWindow(in TensionInput) string {
	f, u := "open", "open"
	if in.ValidFrom != nil {
		f = in.ValidFrom.UTC().Format("2006-01-02")
	}
	if in.ValidUntil != nil {
		u = in.ValidUntil.UTC().Format("2006-01-02")
	}
	return f + ".." + u
}

func tnHasWindow(in TensionInput) bool { return in.ValidFrom != nil || in.ValidUntil != nil }

// tnDisjoint reports whether the validity windows of a and b do not
// overlap; ValidUntil is exclusive, so a window ending when the other
// starts is disjoint.
func tnDisjoint(a, b TensionInput) bool {
	if a.ValidUntil != nil && b.ValidFrom != nil && !a.ValidUntil.After(*b.ValidFrom) {
		return true
	}
	return b.ValidUntil != nil && a.ValidFrom != nil && !b.ValidUntil.After(*a.ValidFrom)
}

// ---------------------------------------------------------------------------
// Small sorted-set helpers

func tnUniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	sort.Strings(s)
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// tnHas reports whether sorted s contains v.
func tnHas(s []string, v string) bool {
	i := sort.SearchStrings(s, v)
	return i < len(s) && s[i] == v
}

// tnContains reports whether unsorted s contains v.
func tnContains(s []string, v string) bool {
	for _, w := range s {
		if w == v {
			return true
		}
	}
	return false
}

func tnEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func tnIntersects(a, b []string) bool {
	for _, v := range a {
		if tnContains(b, v) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Vocabulary. Built once at init, read-only afterwards.

func tnSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	// tnNegWords negate the rest of their clause.
	tnNegWords = tnSet("not", "no", "never", "none", "nothing", "nobody", "neither", "nor",
		"without", "unable", "nowhere")

	// tnBreakWords end a clause (and so a negation's scope).
	tnBreakWords = tnSet("but", "however", "although", "though", "whereas", "while", "because",
		"unless", "except")

	// tnStopWords carry no topic. Opposable words such as before/after,
	// up/down, more/less and over/under are deliberately absent.
	tnStopWords = tnSet("a", "an", "the", "this", "that", "these", "those", "is", "are", "was",
		"were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had", "having",
		"will", "would", "shall", "should", "can", "could", "may", "might", "must", "of", "to", "in",
		"on", "at", "by", "for", "with", "from", "as", "into", "onto", "about", "via", "per", "than",
		"then", "and", "or", "if", "so", "also", "just", "too", "very", "really", "still", "yet",
		"already", "now", "currently", "anymore", "again", "it", "its", "they", "them", "their",
		"there", "here", "we", "us", "our", "you", "your", "i", "me", "my", "he", "him", "his", "she",
		"her", "hers", "who", "whom", "whose", "which", "what", "when", "where", "why", "how", "all",
		"any", "some", "each", "every", "both", "either", "such", "same", "other", "around",
		"approximately", "roughly", "nearly", "almost", "least", "most", "since", "until", "till",
		"through", "between", "during", "etc", "eg", "ie", "vs", "versus", "s", "get", "gets",
		"got", "well", "one's", "whether", "within", "across", "instead", "usually", "typically",
		"generally", "always")

	// tnAfterParticle are the words after which "on" is a particle.
	tnAfterParticle = tnSet("in", "for", "at", "by", "during", "since", "until", "when", "and",
		"or", "but", "after", "before", "across", "within", "from", "except", "unless")

	// tnConjunctions split a negation's scope into conjuncts.
	tnConjunctions = tnSet("and", "or", "nor")

	// tnCopulas introduce a value in frames A and B.
	tnCopulas = tnSet("is", "are", "was", "were", "be", "been", "as")

	// tnTimeScopeWords introduce a date that scopes a claim in time.
	tnTimeScopeWords = tnSet("from", "since", "until", "till", "through", "between", "during", "to")

	// tnQualifiers mark a number as a bound or an approximation; numbers
	// are only compared under equal qualifiers.
	tnQualifiers = map[string]string{
		"about": "~", "around": "~", "approximately": "~", "roughly": "~", "nearly": "~", "almost": "~",
		"over": ">", "above": ">", "more": ">", "exceeds": ">", "under": "<", "below": "<",
		"less": "<", "fewer": "<", "least": ">=", "most": "<=", "up": "<=", "than": "than",
	}

	// tnScopeWords qualify a statement with an environment.
	tnScopeWords = tnSet("production", "staging", "development", "qa", "uat", "sandbox", "preview",
		"canary", "local")

	// tnSynonyms canonicalise spellings before stemming.
	tnSynonyms = map[string]string{
		"prod": "production", "dev": "development", "stg": "staging", "postgres": "postgresql",
		"pg": "postgresql", "k8s": "kubernetes", "db": "database", "golang": "go", "js": "javascript",
		"favourite": "favorite", "favourites": "favorite", "colour": "color", "repo": "repository",
		"repos": "repositories", "env": "environment", "config": "configuration",
		"auth": "authentication", "sync": "synchronous", "async": "asynchronous",
		"synchronously": "synchronous", "asynchronously": "asynchronous", "e-mail": "email",
		"readwrite": "writable", "rw": "writable", "ro": "readonly", "optin": "optin",
	}

	// tnCueWords name single-valued attributes (frame C).
	tnCueWords = tnStemSet("written", "implemented", "headquartered", "located", "based", "born",
		"lives", "transfers", "default", "primary", "favorite", "preferred", "official", "capital",
		"timezone", "owner", "licensed")

	// tnCueVerbs are surface forms whose stem is a cue word but which are
	// multi-valued verbs: one can prefer many things ("prefers dark mode in
	// her editor" and "... in her terminal"). They are not cues.
	tnCueVerbs = tnSet("prefer", "prefers", "preferring")

	// tnDirCues are relations whose direction matters (frame for the
	// reversed-relation rule). Keys are stems, or raw stop words.
	tnDirCues = func() map[string]bool {
		m := tnStemSet("reports", "depends", "replaces", "precedes", "follows", "supersedes",
			"manages", "before", "after", "blocks", "requires", "outperforms", "beats")
		m["than"] = true
		return m
	}()

	tnNumberWords = map[string]float64{
		"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
		"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
		"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
		"ninety": 90, "hundred": 100, "thousand": 1000, "dozen": 12, "single": 1, "twice": 2,
		"once": 1,
	}

	tnMonths = map[string]int{
		"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "april": 4, "apr": 4, "may": 5,
		"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9,
		"sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
	}

	tnWeekdays = func() map[string]string {
		m := map[string]string{"mon": "monday", "tue": "tuesday", "tues": "tuesday", "thu": "thursday",
			"thur": "thursday", "thurs": "thursday", "fri": "friday"}
		for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
			m[d], m[d+"s"] = d, d
		}
		return m
	}()

	tnDayparts = map[string]string{
		"morning": "morning", "mornings": "morning", "afternoon": "afternoon", "afternoons": "afternoon",
		"evening": "evening", "evenings": "evening", "night": "night", "nights": "night",
		"overnight": "night",
	}

	tnFreqWords = map[string]string{
		"second": "second", "seconds": "second", "minute": "minute", "minutes": "minute",
		"hour": "hour", "hours": "hour", "hourly": "hour", "day": "day", "days": "day",
		"daily": "day", "week": "week", "weeks": "week", "weekly": "week", "month": "month",
		"months": "month", "monthly": "month", "quarter": "quarter", "quarterly": "quarter",
		"year": "year", "years": "year", "yearly": "year", "annually": "year", "annual": "year",
		"nightly": "day", "biweekly": "fortnight", "fortnightly": "fortnight",
		"semiannual": "halfyear", "semiannually": "halfyear",
	}

	tnUnits = func() map[string]struct {
		class  tnClass
		factor float64
	} {
		type u = struct {
			class  tnClass
			factor float64
		}
		const (
			sec  = 1000.0
			min  = 60 * sec
			hour = 60 * min
			day  = 24 * hour
		)
		m := map[string]u{"%": {tnPct, 1}, "percent": {tnPct, 1}, "k": {tnNum, 1000}}
		add := func(c tnClass, f float64, names ...string) {
			for _, n := range names {
				m[n] = u{c, f}
			}
		}
		add(tnDur, 1, "ms", "msec", "msecs", "millisecond", "milliseconds")
		add(tnDur, sec, "s", "sec", "secs", "second", "seconds")
		add(tnDur, min, "min", "mins", "minute", "minutes")
		add(tnDur, hour, "h", "hr", "hrs", "hour", "hours")
		add(tnDur, day, "day", "days")
		add(tnDur, 7*day, "wk", "wks", "week", "weeks")
		add(tnDur, 30*day, "month", "months")
		add(tnDur, 365*day, "yr", "yrs", "year", "years")
		add(tnSize, 1, "byte", "bytes")
		add(tnSize, 1<<10, "kb", "kib", "kilobyte", "kilobytes")
		add(tnSize, 1<<20, "mb", "mib", "megabyte", "megabytes")
		add(tnSize, 1<<30, "gb", "gib", "gigabyte", "gigabytes")
		add(tnSize, 1<<40, "tb", "tib", "terabyte", "terabytes")
		return m
	}()

	// tnAntonyms maps a stemmed word to its stemmed opposites.
	tnAntonyms = func() map[string][]string {
		pairs := [][2]string{
			{"enabled", "disabled"}, {"enable", "disable"}, {"on", "off"}, {"true", "false"},
			{"allowed", "forbidden"}, {"allowed", "disallowed"}, {"allowed", "prohibited"},
			{"allowed", "denied"}, {"allowed", "blocked"}, {"permitted", "forbidden"},
			{"permitted", "prohibited"}, {"allow", "deny"}, {"accepted", "rejected"},
			{"accepted", "declined"}, {"approved", "rejected"}, {"approved", "denied"},
			{"increase", "decrease"}, {"increased", "reduced"}, {"improved", "worsened"},
			{"improved", "degraded"}, {"improved", "regressed"}, {"required", "optional"},
			{"mandatory", "optional"}, {"public", "private"}, {"open", "closed"}, {"open", "close"},
			{"up", "down"}, {"success", "failure"}, {"succeeds", "fails"}, {"passes", "fails"},
			{"passing", "failing"}, {"synchronous", "asynchronous"}, {"blocking", "nonblocking"},
			{"mutable", "immutable"}, {"before", "after"}, {"deprecated", "recommended"},
			{"deprecated", "preferred"}, {"deprecated", "supported"}, {"online", "offline"},
			{"active", "inactive"}, {"safe", "unsafe"}, {"encrypted", "plaintext"},
			{"encrypted", "unencrypted"}, {"included", "excluded"}, {"include", "exclude"},
			{"added", "removed"}, {"start", "stop"}, {"started", "stopped"}, {"running", "stopped"},
			{"connected", "disconnected"}, {"locked", "unlocked"}, {"visible", "hidden"},
			{"present", "absent"}, {"present", "missing"}, {"higher", "lower"}, {"high", "low"},
			{"more", "less"}, {"more", "fewer"}, {"larger", "smaller"}, {"large", "small"},
			{"bigger", "smaller"}, {"big", "small"}, {"faster", "slower"}, {"fast", "slow"},
			{"long", "short"}, {"longer", "shorter"}, {"first", "last"}, {"earliest", "latest"},
			{"minimum", "maximum"}, {"min", "max"}, {"above", "below"}, {"over", "under"},
			{"inside", "outside"}, {"readonly", "writable"}, {"dark", "light"}, {"tabs", "spaces"},
			{"client", "server"}, {"manual", "automatic"}, {"manually", "automatically"},
			{"static", "dynamic"}, {"strict", "lenient"}, {"strong", "weak"}, {"hot", "cold"},
			{"like", "dislike"}, {"love", "hate"}, {"agree", "disagree"}, {"correct", "incorrect"},
			{"healthy", "unhealthy"}, {"upgrade", "downgrade"}, {"grow", "shrink"}, {"rise", "fall"},
			{"cheap", "expensive"}, {"easy", "hard"}, {"easy", "difficult"}, {"simple", "complex"},
			{"sequential", "parallel"}, {"serial", "parallel"}, {"centralized", "decentralized"},
			{"optin", "optout"}, {"allowlist", "denylist"}, {"whitelist", "blacklist"},
			{"win", "lose"}, {"gain", "loss"}, {"profit", "loss"}, {"inclusive", "exclusive"},
			{"stateless", "stateful"}, {"lazy", "eager"}, {"ascending", "descending"},
			{"internal", "external"}, {"valid", "invalid"}, {"supported", "unsupported"},
			{"exponential", "linear"}, {"float", "integer"}, {"decimal", "integer"},
			{"shared", "dedicated"}, {"shared", "isolated"}, {"soft", "hard"},
			{"inbound", "outbound"}, {"ingress", "egress"}, {"horizontal", "vertical"},
			{"uppercase", "lowercase"}, {"explicit", "implicit"}, {"absolute", "relative"},
			{"push", "pull"}, {"oldest", "newest"}, {"free", "paid"}, {"monolith", "microservices"},
			{"physical", "virtual"}, {"remote", "onsite"}, {"remote", "inperson"},
			{"full", "partial"}, {"full", "empty"}, {"permanent", "temporary"},
			{"fulltime", "parttime"}, {"major", "minor"}, {"lossy", "lossless"},
			{"signed", "unsigned"}, {"strong", "eventual"}, {"optimistic", "pessimistic"},
		}
		m := make(map[string][]string, 2*len(pairs))
		for _, p := range pairs {
			a, b := tnStemKey(p[0]), tnStemKey(p[1])
			if a == b {
				continue
			}
			if !tnContains(m[a], b) {
				m[a] = append(m[a], b)
			}
			if !tnContains(m[b], a) {
				m[b] = append(m[b], a)
			}
		}
		return m
	}()
)

// tnStemKey canonicalises a vocabulary word exactly as content words are.
func tnStemKey(w string) string {
	if c, ok := tnSynonyms[w]; ok {
		w = c
	}
	if tnScopeWords[w] {
		return w
	}
	return tnStem(w)
}

func tnStemSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[tnStemKey(w)] = true
	}
	return m
}
