package tension

// The decision: a table of named rules tried in order.

import (
	"math"
	"strings"
	"sync"
)

// Effect is what a rule decides when its condition holds.
type Effect int

// Effects of a rule.
const (
	// Finds a tension, unless a check then vetoes it.
	Finds Effect = iota
	// Vetoes any tension.
	Vetoes
	// Excuses a conflict: the conflict rules are skipped and only a partial
	// overlap may still be found.
	Excuses
)

// A Rule is one named step of the decision. The rules are tried in order; the
// first whose condition holds takes effect: a veto ends the decision with no
// tension, an excuse skips to the partial-overlap rule, a finding rule
// reports a tension unless one of the checks (the last entries of [Rules])
// vetoes it. The finding's [Finding.Rule] names the rule.
type Rule struct {
	// Name identifies the rule in findings, tests and docs.
	Name string
	// Description says what the rule detects or excuses, with an example.
	Description string
	// Effect is what the rule decides when its condition holds.
	Effect Effect

	typ      string             // finding rules: the type before scope and window adjustments
	severity int                // finding rules: base severity, 1 (low) to 4 (critical)
	overlap  bool               // partial overlap: no checks, no scope, window or confidence adjustment
	early    bool               // reads only the inputs and their analyses, not the alignment
	anchored bool               // a paraphrase rule: its anchor replaces the similarity gate
	when     func(p *pair) bool // the condition
	reason   func(p *pair) string
}

// pair is what the rules read: both inputs, their analyses and their
// alignment.
type pair struct {
	a, b Input
	x, y *belief
	ev   *evidence

	anchor int8 // anchored's verdict once computed: 0 unknown, 1 yes, -1 no

	// evs, words and flags hold ev and its slices, reused through pairs
	// (a bulk load judges millions of pairs: allocating each pair's
	// evidence afresh was a third of its allocations and their garbage
	// collection a sixth of its CPU, issue 23).
	evs   evidence
	words []string
	flags []bool
}

// release returns p to pairs, keeping its buffers.
func (p *pair) release() {
	words, flags := p.words, p.flags
	*p = pair{words: words, flags: flags}
	pairs.Put(p)
}

// pairs recycles pairs; nothing keeps a pair or its evidence after
// decideAnalyzed returns (a Finding holds strings only).
var pairs = sync.Pool{New: func() any { return new(pair) }}

// Rule names, as reported in [Finding.Rule].
const (
	RuleDisjointWindows       = "disjoint-windows"
	RuleNoContent             = "no-content"
	RulePeriods               = "different-periods"
	RuleParaphrasedValue      = "paraphrased-value"
	RuleReversedPreference    = "reversed-preference"
	RuleNeverAtTime           = "never-at-a-time"
	RuleParaphrasedOpposition = "paraphrased-opposition"
	RuleOnlyOther             = "only-and-another"
	RuleDifferentStart        = "different-start"
	RuleSubstituted           = "substituted-words"
	RuleSlot                  = "single-valued-slot"
	RuleDifferentSubjects     = "different-subjects"
	RuleNarrowerSubject       = "narrower-subject"
	RulePolarityUnderValues   = "polarity-under-values"
	RuleOpposed               = "opposed-terms"
	RuleNegation              = "negation"
	RuleValue                 = "different-values"
	RuleDate                  = "different-dates"
	RuleReversed              = "reversed-relation"
	RulePartial               = "partial-overlap"
	CheckDateQualifiers       = "dates-as-qualifiers"
	CheckGate                 = "similarity-gate"
	CheckHeadingOnly          = "heading-only"
)

// rules is the decision table, in order.
var rules = []Rule{
	{Name: RuleDisjointWindows, Effect: Vetoes, early: true,
		Description: "both beliefs have validity windows that do not overlap: any difference is explained by time",
		when:        func(p *pair) bool { return hasWindow(p.a) && hasWindow(p.b) && disjoint(p.a, p.b) }},
	{Name: RuleNoContent, Effect: Vetoes, early: true,
		Description: "a belief has no content term",
		when:        func(p *pair) bool { return len(p.x.core) == 0 || len(p.y.core) == 0 }},
	{Name: RulePeriods, Effect: Vetoes,
		Description: `both beliefs are scoped to stated periods that differ ("from 2024-07-01 to ..." vs "from 2024-12-20 to ...")`,
		when:        func(p *pair) bool { return p.ev.tqDiffer }},
	{Name: RuleParaphrasedValue, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `the words differ but the beliefs are anchored to one thing and hold one measured value each that cannot both be true ("closes at 9 pm" vs "stays open until 11 pm"; "takes 90 minutes" vs "finishes in under an hour"; "five engineers" vs "7 engineers")`,
		when: func(p *pair) bool {
			// Literal alignments are the other rules' unless an "until"
			// turns a negation or an opposed term.
			turned := p.x.negs+p.y.negs+len(p.ev.antA) > 0
			if !p.reworded() && !turned || !anchored(p) || frontedQualifier(p.x, p.y) || frontedQualifier(p.y, p.x) {
				return false
			}
			i, j, ok := paraphrasedValue(p)
			return ok && polarityAgrees(p, i, j)
		},
		reason: func(p *pair) string {
			i, j, _ := paraphrasedValue(p)
			return "paraphrased value: " + quote(p.x.seq[i].disp) + " vs " + quote(p.y.seq[j].disp)
		}},
	{Name: RuleDifferentStart, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `the words differ but both beliefs date one beginning, differently ("joined Acme in 2019" vs "has been employed by Acme since 2021")`,
		when: func(p *pair) bool {
			return p.reworded() && !p.ev.flip && p.x.negs+p.y.negs == 0 && len(p.ev.antA) == 0 && differentStart(p) && anchored(p)
		},
		reason: func(p *pair) string {
			return "different start: " + quote(p.x.seq[startDate(p.x)].disp) + " vs " + quote(p.y.seq[startDate(p.y)].disp)
		}},
	{Name: RuleReversedPreference, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `the words differ but one belief prefers A to B and the other B to A ("prefers tea to coffee" vs "likes coffee more than tea")`,
		when: func(p *pair) bool {
			if !p.reworded() || p.x.negs+p.y.negs > 0 || len(p.ev.conflicts) > 0 || !anchored(p) {
				return false
			}
			a1, a2, ok1 := preference(p.x, p.y)
			b1, b2, ok2 := preference(p.y, p.x)
			return ok1 && ok2 && a1 == b2 && a2 == b1
		},
		reason: func(p *pair) string {
			a1, a2, _ := preference(p.x, p.y)
			return "reversed preference: " + quote(dispOf(p.x, a1)) + " over " + quote(dispOf(p.x, a2)) + " vs the reverse"
		}},
	{Name: RuleNeverAtTime, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `the words differ but one belief rules out a day or time that the other states ("never works weekends" vs "is on shift every Saturday")`,
		when: func(p *pair) bool {
			return p.reworded() && len(p.ev.conflicts) == 0 && neverAtTime(p) && anchored(p)
		},
		reason: func(p *pair) string { return "ruled-out time stated: " + neverAtTimeText(p) }},
	{Name: RuleOnlyOther, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `one belief restricts something to one value and the other states another value of the same class ("runs on weekdays only" vs "a Saturday shuttle")`,
		when: func(p *pair) bool {
			return p.reworded() && !p.ev.flip && onlyOther(p) && anchored(p)
		},
		reason: func(p *pair) string { return "only one value, another stated: " + onlyOtherText(p) }},
	{Name: RuleParaphrasedOpposition, typ: TypeContradiction, severity: 2, anchored: true,
		Description: `the words differ but the beliefs are anchored to one thing and hold one pair of opposed terms ("dogs are allowed in the park" vs "pets are banned from the park")`,
		when: func(p *pair) bool {
			return p.reworded() && len(p.ev.antA) == 1 && p.x.negs+p.y.negs == 0 && len(p.ev.conflicts) == 0 &&
				!hasUntil(p.x) && !hasUntil(p.y) && anchored(p)
		},
		reason: func(p *pair) string {
			return "opposed terms: " + quote(dispOf(p.x, p.ev.antA[0])) + " vs " + quote(dispOf(p.y, p.ev.antB[0]))
		}},
	{Name: RuleSubstituted, Effect: Excuses,
		Description: "each belief has words the other lacks and they are not one single-valued slot: different subjects or objects, so polarity and values say nothing",
		when:        func(p *pair) bool { return p.substituted() && !p.ev.functional }},
	{Name: RuleSlot, typ: TypeContradiction, severity: 2,
		Description: `one single-valued slot holds different values ("the default branch is main" vs "... is master"; "written in Go" vs "written in Rust")`,
		when:        func(p *pair) bool { return p.ev.functional && !spacingVariant(p) },
		reason: func(p *pair) string {
			return "single-valued slot: " + quote(slotText(p.x, p.ev.slotA)) + " vs " + quote(slotText(p.y, p.ev.slotB))
		}},
	{Name: RuleDifferentSubjects, Effect: Excuses,
		Description: `the same words said of different leading subjects ("Langara CPSC 1160 has ..." vs "Langara CPSC 1150 has ...")`,
		when:        func(p *pair) bool { return p.ev.subjectDiff && (p.ev.flip || len(p.ev.conflicts) > 0) }},
	{Name: RuleNarrowerSubject, Effect: Excuses,
		Description: `a narrower subject with another value may be an exception ("Nexus logs ... 14 days" vs "Nexus audit logs ... 1 year")`,
		when:        func(p *pair) bool { return p.ev.subjectNarrow && !p.ev.flip && len(p.ev.conflicts) > 0 }},
	{Name: RulePolarityUnderValues, Effect: Excuses,
		Description: `opposite polarity under different values of one class describes two situations ("closed on Mondays" vs "open on Tuesdays")`,
		when:        func(p *pair) bool { return p.ev.flip && p.ev.otherConflict }},
	{Name: RuleOpposed, typ: TypeContradiction, severity: 3,
		Description: `aligned opposed terms and no negation ("enabled" vs "disabled", "public" vs "private")`,
		when:        func(p *pair) bool { return p.ev.flip && len(p.ev.antA) > 0 && !p.ev.negA && !p.ev.negB },
		reason: func(p *pair) string {
			return "opposed terms: " + quote(dispOf(p.x, p.ev.antA[0])) + " vs " + quote(dispOf(p.y, p.ev.antB[0]))
		}},
	{Name: RuleNegation, typ: TypeContradiction, severity: 3,
		Description: `one belief negates what the other asserts ("supports Windows" vs "does not support Windows")`,
		when:        func(p *pair) bool { return p.ev.flip },
		reason: func(p *pair) string {
			side, other := "b", "a"
			if p.ev.negA {
				side, other = "a", "b"
			}
			extra := ""
			if len(p.ev.antA) > 0 {
				extra = " (with opposed terms " + quote(dispOf(p.x, p.ev.antA[0])) + " vs " + quote(dispOf(p.y, p.ev.antB[0])) + ")"
			}
			return "negation: " + side + " negates what " + other + " asserts" + extra
		}},
	{Name: RuleValue, typ: TypeContradiction, severity: 3,
		Description: `different values of one class in the same place ("100 requests per minute" vs "500 ..."; "512 MB" vs "2 GB")`,
		when:        func(p *pair) bool { return p.ev.otherConflict && p.x.negs == p.y.negs && balancedValues(p) },
		reason:      func(p *pair) string { return conflictReason(p, false) }},
	{Name: RuleDate, typ: TypeTemporalConflict, severity: 2,
		Description: `different calendar dates for one event ("released in 2019" vs "released in 2021")`,
		when:        func(p *pair) bool { return p.ev.dateConflict },
		reason:      func(p *pair) string { return conflictReason(p, true) }},
	{Name: RuleReversed, typ: TypeContradiction, severity: 3,
		Description: `two shared terms swap sides of a directional relation ("Maria reports to Daniel" vs "Daniel reports to Maria")`,
		when:        func(p *pair) bool { return p.ev.directional != "" },
		reason:      func(p *pair) string { return "reversed relation around " + quote(p.ev.directional) }},
	{Name: RulePartial, typ: TypePartialOverlap, severity: 1, overlap: true,
		Description: `one clean substituted slot that is not the subject, the final object or named entities on both sides ("stores embeddings in pgvector" vs "... in Qdrant")`,
		when:        partialOverlap,
		reason: func(p *pair) string {
			return "partial overlap: differing detail " + quote(slotText(p.x, p.ev.slotA)) + " vs " + quote(slotText(p.y, p.ev.slotB))
		}},
}

// checks veto a finding rule's verdict (not a partial overlap's).
var checks = []Rule{
	{Name: CheckDateQualifiers, Effect: Vetoes,
		Description: `differing calendar dates next to another conflict are time qualifiers ("in 2019 ... MySQL" vs "in 2023 ... PostgreSQL")`,
		when:        func(p *pair) bool { return p.ev.dateConflict },
	},
	{Name: CheckHeadingOnly, Effect: Vetoes,
		Description: `both beliefs open with one heading ("SFU POL 854 (Conflict and Controversy): ...") and their bodies fail the similarity gate: two statements about one subject`,
		when:        headingOnly},
	{Name: CheckGate, Effect: Vetoes,
		Description: "the topical similarity gate fails (see gate)",
		when:        func(p *pair) bool { return !gate(p.x, p.y, p.ev, p.aligned()) }},
}

// Rules returns the decision table, then the checks, in order.
func Rules() []Rule {
	return append(append([]Rule(nil), rules...), checks...)
}

func (p *pair) substituted() bool { return len(p.ev.resA) > 0 && len(p.ev.resB) > 0 }

// reworded reports whether the rules for literal alignments would excuse
// the pair because the words differ: substituted words that are not one
// single-valued slot, or leading subjects worded differently.
func (p *pair) reworded() bool {
	return p.substituted() && !p.ev.functional || p.ev.subjectDiff
}

// aligned counts the aligned non-shared terms a finding rule's gate credits:
// opposed terms, a value conflict, a functional slot, differing scopes.
func (p *pair) aligned() int {
	ev := p.ev
	n := len(ev.antA)
	if ev.otherConflict || ev.dateConflict {
		n++
	}
	if ev.functional {
		n++
	}
	if len(p.x.scopes) > 0 && len(p.y.scopes) > 0 && !equalStrings(p.x.scopes, p.y.scopes) {
		n++
	}
	return n
}

// partialOverlap is the partial-overlap condition, gate included. A belief
// addressed to someone (a second-person pronoun: advice, promises,
// recollections of what the listener said) is about the conversation: two
// such utterances that differ in one detail ("I'll let you know when I'm
// in town" vs "... when I'm free") are two moments of talk, not one claim
// with two details.
func partialOverlap(p *pair) bool {
	x, y, ev := p.x, p.y, p.ev
	tail := ev.slotA[1] == len(x.core)-1 && ev.slotB[1] == len(y.core)-1
	named := slotNamed(x, ev.slotA) && slotNamed(y, ev.slotB)
	return sameDomain(p.a, p.b) && !x.addressed && !y.addressed && ev.slotOK && !spacingVariant(p) && !ev.flip && x.negs == y.negs && len(ev.conflicts) == 0 && !ev.scopeDiff &&
		!inSubject(x, ev.slotA) && !inSubject(y, ev.slotB) && slotClauseShared(x, ev.slotA, ev.shared) && slotClauseShared(y, ev.slotB, ev.shared) &&
		ev.slotA[0] > 0 && ev.slotB[0] > 0 && (tail || named) &&
		len(ev.shared) >= partialMinShared && gate(x, y, ev, 1)
}

// decide runs the table on a and b. It returns the finding, the name of the
// rule or check that decided (for no tension: the veto, check or excuse, or
// "" when no rule applied) and whether there is a tension.
func decide(a, b Input) (Finding, string, bool) {
	return decideAnalyzed(Analyze(a), Analyze(b))
}

// decideAnalyzed is decide on inputs analysed beforehand. The rules only
// read the analyses, so one analysis serves any number of pairs.
func decideAnalyzed(pa, pb *Analyzed) (Finding, string, bool) {
	p := pairs.Get().(*pair)
	defer p.release()
	p.a, p.b, p.x, p.y = pa.in, pb.in, &pa.x, &pb.x
	excused := ""
	for i := range rules {
		r := &rules[i]
		if excused != "" && !r.overlap {
			continue
		}
		if p.ev == nil && !r.early {
			p.align()
		}
		if !r.when(p) {
			continue
		}
		switch r.Effect {
		case Vetoes:
			return Finding{}, r.Name, false
		case Excuses:
			excused = r.Name
			continue
		}
		if !r.overlap {
			for j := range checks {
				c := &checks[j]
				if c.Name == CheckDateQualifiers && r.Name == RuleDate || c.Name == CheckGate && r.anchored {
					continue
				}
				if c.when(p) {
					return Finding{}, c.Name, false
				}
			}
		}
		return finding(p, r), r.Name, true
	}
	return Finding{}, excused, false
}

// finding builds the finding of rule r: type and severity adjusted for scope,
// validity windows and confidence, and the reason.
func finding(p *pair, r *Rule) Finding {
	a, b := p.a, p.b
	typ, sev, window := r.typ, r.severity, ""
	if !r.overlap {
		switch {
		case p.ev.scopeDiff:
			typ = TypeScopeConflict
			sev--
		case hasWindow(a) && hasWindow(b) && (a.ValidUntil != nil || b.ValidUntil != nil):
			typ = TypeTemporalConflict
			window = "validity windows overlap (" + windowText(a) + " vs " + windowText(b) + "); "
		}
		ca, cb := clampConf(a.Confidence), clampConf(b.Confidence)
		if math.Min(ca, cb) >= confident {
			sev++
		} else if math.Max(ca, cb) < weak {
			sev--
		}
	}
	sev = min(max(sev, 1), 4)
	return Finding{
		Type:     typ,
		Severity: [...]string{SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical}[sev-1],
		Reason:   window + scopeNote(p.x, p.y, p.ev, typ) + r.reason(p) + " on shared terms {" + sharedList(p.x, p.ev.shared) + "}",
		Rule:     r.Name,
	}
}

// gate is the topical similarity gate: at least one shared term, two
// aligned terms in all, overlap coefficient >= minOverlap and Jaccard >=
// minJaccard, both over content terms where aligned opposed terms, value
// conflicts and slots count as shared.
func gate(x, y *belief, ev *evidence, aligned int) bool {
	shared := len(ev.shared) + ev.matched
	if shared < 1 || shared+aligned < 2 {
		return false
	}
	na := len(x.words) + countValues(x)
	nb := len(y.words) + countValues(y)
	s := float64(shared + aligned)
	if s/float64(min(na, nb)) < minOverlap {
		return false
	}
	den := float64(na+nb) - s
	return den <= 0 || s/den >= minJaccard
}

func countValues(x *belief) int {
	n := 0
	for _, i := range x.core {
		if x.seq[i].kind == valueTerm {
			n++
		}
	}
	return n
}

// clampConf clamps a confidence into [0, 1]; NaN counts as 0.
func clampConf(c float64) float64 {
	if math.IsNaN(c) || c < 0 {
		return 0
	}
	return math.Min(c, 1)
}

// sameDomain reports whether a and b are filed under the same domain path
// (or one has none): beliefs filed under different topics ("transfer/kpu"
// and "transfer/twu") that differ in one detail are about different things.
func sameDomain(a, b Input) bool {
	if len(a.DomainPath) == 0 || len(b.DomainPath) == 0 {
		return true
	}
	if len(a.DomainPath) != len(b.DomainPath) {
		return false
	}
	for i := range a.DomainPath {
		if !strings.EqualFold(strings.TrimSpace(a.DomainPath[i]), strings.TrimSpace(b.DomainPath[i])) {
			return false
		}
	}
	return true
}

// slotClauseShared reports whether the clause holding core range s of x
// has a shared word besides the slot: a detail differing inside one claim,
// not two different sentences about one thing ("STAT 330 ...: Limiting
// distributions." vs "...: Likelihood ratio tests.").
func slotClauseShared(x *belief, s [2]int, shared []string) bool {
	lo, hi := x.core[s[0]], x.core[s[1]]
	for i := lo - 1; i >= 0 && x.seq[i].kind != breakTerm; i-- {
		if x.seq[i].kind == wordTerm && hasSorted(shared, x.seq[i].key) {
			return true
		}
	}
	for i := hi + 1; i < len(x.seq) && x.seq[i].kind != breakTerm; i++ {
		if x.seq[i].kind == wordTerm && hasSorted(shared, x.seq[i].key) {
			return true
		}
	}
	return false
}

// balancedValues reports whether, in every class of a conflicting pair of
// values, both beliefs leave as many values unmatched: one value against
// three ("PAAS 131 (1.5)" vs "JAPN 1117 (3) & JAPN 1217 (3) = PAAS 131
// (3)") compares two different arrangements, not one value.
func balancedValues(p *pair) bool {
	count := func(x *belief, matched []bool, c valueClass) int {
		n := 0
		for _, i := range x.core {
			if t := &x.seq[i]; t.kind == valueTerm && t.class == c && !matched[i] && !t.negged && !t.tq && !t.hypo {
				n++
			}
		}
		return n
	}
	for _, c := range p.ev.conflicts {
		cl := p.x.seq[c.a].class
		if isDateClass(cl) {
			continue
		}
		if count(p.x, p.ev.matchedA, cl) != count(p.y, p.ev.matchedB, cl) {
			return false
		}
	}
	return true
}

// spacingVariant reports whether the substituted slots of p spell the same
// letters ("Arts Studio" vs "ArtsStudio"): one value, typed two ways.
func spacingVariant(p *pair) bool {
	if !p.ev.slotOK {
		return false
	}
	return slotLetters(p.x, p.ev.slotA) == slotLetters(p.y, p.ev.slotB)
}

func slotLetters(x *belief, s [2]int) string {
	var b strings.Builder
	for k := s[0]; k <= s[1]; k++ {
		b.WriteString(strings.ReplaceAll(x.seq[x.core[k]].disp, " ", ""))
	}
	return b.String()
}

// heading returns the end (exclusive seq index) of x's heading: a leading
// run of content terms closed by a parenthesis, and the parenthesised part
// ("SFU POL 854 (Conflict and Controversy in Public Policy)"); 0 if none.
func heading(x *belief) int {
	i := 0
	for i < len(x.seq) && (x.seq[i].kind == wordTerm || x.seq[i].kind == valueTerm) {
		i++
	}
	if i == 0 || i >= len(x.seq) || x.seq[i].kind != breakTerm || !x.seq[i].paren {
		return 0
	}
	for j := i + 1; j < len(x.seq); j++ {
		if x.seq[j].kind == breakTerm {
			if !contentAfter(x, j) {
				return 0
			}
			return j + 1
		}
	}
	return 0
}

// headingOnly reports whether both beliefs have a heading and the content
// after it fails the similarity gate: what they share is their subject,
// not a claim.
func headingOnly(p *pair) bool {
	hx, hy := heading(p.x), heading(p.y)
	if hx == 0 || hy == 0 {
		return false
	}
	body := func(x *belief, from int, other *belief, otherFrom int) (n, shared int) {
		var seen []string
		for i := from; i < len(x.seq); i++ {
			t := &x.seq[i]
			if t.kind != wordTerm && t.kind != valueTerm || contains(seen, t.key) {
				continue
			}
			seen = append(seen, t.key)
			n++
			for j := otherFrom; j < len(other.seq); j++ {
				if other.seq[j].kind == t.kind && other.seq[j].key == t.key {
					shared++
					break
				}
			}
		}
		return n, shared
	}
	nx, sx := body(p.x, hx, p.y, hy)
	ny, _ := body(p.y, hy, p.x, hx)
	if nx == 0 || ny == 0 {
		return false
	}
	s := float64(sx + len(p.ev.antA) + len(p.ev.conflicts))
	return s/float64(min(nx, ny)) < minOverlap
}
