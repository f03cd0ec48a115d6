package transfer

// The award: what a student's courses are worth at one destination, added
// up without double counting (issue 22).
//
// Resolve lists every rule the courses satisfy, each on its own: a pair
// rule and the single-course rules of the same courses, both target sets
// of an "X or Y" rule, rules that preclude each other. Summing them counts
// the same course two or three times. Award picks from those exact
// matches the set an advisor would grant:
//
//   - Candidates are the exact matches to the destination whose outcome
//     grants credit or an exemption, one candidate per option of the rule
//     that holds for the courses given (see ruleOptions). No-credit and
//     individual-assessment rules grant nothing and are never candidates.
//   - Two candidates conflict, and at most one of them is chosen, when
//     they are options of the same rule; when they use the same source
//     course (each course counts once); when a preclusion note of either
//     ("Credit for only one of LANG PSYC 1195 or PSYC 2329") names a
//     course each uses; when one's rule precludes ("Precludes credit for
//     UBCV ARTH 251") a course the other grants; and when both grant the
//     same specific destination course (a destination grants its course
//     once: LANG MATH 1171 and LANG MATH 1175 both give UBCV MATH 100).
//     Generic and elective credit ("CPSC 1st") may be granted many times.
//   - The award is the set of pairwise non-conflicting candidates with the
//     best score, compared key by key: total target credits (the student's
//     question is what the courses are worth); then credits in specific
//     courses (they meet requirements, generic credit may not); then
//     credits in named subjects rather than elective buckets; then the
//     exemptions granted (a combined agreement often adds one: "LANG CPSC
//     1150 & 1181 = … exempt UBCV CPSC 110"); then fewer rules (a combined
//     agreement is how BCTG says the set is credited when taken together,
//     the single-course rules cover the course taken alone); then the
//     credits weighted by each rule's confidence; then the order of the
//     matches (deterministic).
//   - Candidates fall into components linked by conflicts; each component
//     is solved exactly by branch and bound (bounded by the credits still
//     to be had). A component whose search exceeds maxAwardNodes steps
//     (never seen on the real data, where components hold a few rules) is
//     solved greedily instead, best candidate first, and the award says so.
//
// Every choice carries a short reason, and every exact match to the
// destination gets a status: awarded, alternative (not chosen, but worth
// as much as the awarded rules it conflicts with: the tie was broken by a
// later key, which the reason names), replaced (the awarded rules it
// conflicts with give more credit) or conditional (its targets hold only
// under a condition that course codes cannot confirm).

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// AwardStatus is what became of an exact match in the award.
type AwardStatus string

// The statuses of an exact match in the award.
const (
	// StatusAwarded: the rule is part of the award.
	StatusAwarded AwardStatus = "awarded"
	// StatusAlternative: not chosen, but worth as much credit as the
	// awarded rules it conflicts with (AwardStatusOf.Against); the tie was
	// broken by a later key of the score.
	StatusAlternative AwardStatus = "alternative"
	// StatusReplaced: the awarded rules it conflicts with give more.
	StatusReplaced AwardStatus = "replaced"
	// StatusConditional: its targets hold only under a condition course
	// codes cannot confirm ("if Organic Chemistry taken as a co-requisite")
	// and it has no other option; see its Options.
	StatusConditional AwardStatus = "conditional"
	// StatusDoubtful: its Confidence is below AwardMinConfidence (its
	// Doubts or Repairs say why: "8 target credits for 4 source credits
	// needed"), so it is shown but not counted: an advisor would confirm
	// it with the destination before promising its credit.
	StatusDoubtful AwardStatus = "doubtful"
)

// AwardMinConfidence is the least Confidence of a rule the award counts.
// Review's doubts take 0.2 (credits out of proportion) or 0.3 (an "or"
// list of whole semesters) off a rule, and each parser repair 0.1: one
// doubt of proportion alone (0.8, often a real credit scale such as 5
// credits for a 3-credit lab course) is counted, an "or" list that grants
// what two of its courses earn alone (0.7 or less), or a rule the parser
// had to mend three times, is not.
const AwardMinConfidence = 0.75

// Option is one target set a rule can grant: one of its Targets, or the
// target set of an alternative or conditional note.
type Option struct {
	// Targets are granted together.
	Targets TargetSet `json:"targets"`
	// Credits is Targets' total credits.
	Credits float64 `json:"credits"`
	// From says where the option comes from: "targets" (the rule's own
	// target sets, TargetSet its index) or the text of the note.
	From string `json:"from"`
	// TargetSet is the index in the rule's Targets; -1 for a note's.
	TargetSet int `json:"targetSet"`
	// When is the condition under which the option holds; empty when none.
	When string `json:"when,omitempty"`
	// Holds is false for an option whose condition the courses given do
	// not meet or cannot confirm: it is offered, not awarded.
	Holds bool `json:"holds"`
}

// AwardedRule is one rule of an award.
type AwardedRule struct {
	// Match is the index of the rule's match in the Result's ExactMatches.
	Match int `json:"match"`
	// Option is the index in Options of the option granted.
	Option int `json:"option"`
	// Targets are what the rule grants (Options[Option].Targets).
	Targets TargetSet `json:"targets"`
	// Credits are the target credits granted.
	Credits float64 `json:"credits"`
	// Used are the source courses the rule uses.
	Used []catalog.Ref `json:"used"`
	// Options are all the options of the rule, the granted one included.
	Options []Option `json:"options"`
	// Reason says why the rule and its option were chosen.
	Reason string `json:"reason"`
}

// MatchAward is the status of one exact match in an award.
type MatchAward struct {
	// Status is awarded, alternative, replaced, conditional or doubtful.
	Status AwardStatus `json:"status"`
	// Against are the indexes (in ExactMatches) of the awarded matches
	// this one is an alternative to or was replaced by.
	Against []int `json:"against,omitempty"`
	// Reason says it in words.
	Reason string `json:"reason"`
}

// LeftKind says why a course is left out of an award.
type LeftKind string

// Why a course is left out of an award.
const (
	// LeftReplaced: it has credit rules, but the award grants its credit
	// through none of them (a preclusion, or another rule took the course
	// and gives more).
	LeftReplaced LeftKind = "replaced"
	// LeftConditional: its rule's credit depends on a condition that
	// course codes cannot confirm.
	LeftConditional LeftKind = "conditional"
	// LeftDoubtful: its only credit rules are doubtful (StatusDoubtful):
	// shown, not counted.
	LeftDoubtful LeftKind = "doubtful"
	// LeftPartial: it belongs to combined agreements that need more
	// courses (Missing names them).
	LeftPartial LeftKind = "partial"
	// LeftNoCredit: the destination grants it no credit.
	LeftNoCredit LeftKind = "no_credit"
	// LeftAssessment: the destination assesses it individually.
	LeftAssessment LeftKind = "individual_assessment"
	// LeftUnmatched: no rule in force to the destination names it.
	LeftUnmatched LeftKind = "unmatched"
)

// LeftCourse is a course of the request the award does not use.
type LeftCourse struct {
	// Course is the course.
	Course catalog.Ref `json:"course"`
	// Why is the main reason, the first that applies in the order of the
	// LeftKind constants.
	Why LeftKind `json:"why"`
	// Detail says it in words.
	Detail string `json:"detail"`
	// Matches are the exact matches (indexes) that name it: replaced,
	// conditional, no credit or assessment.
	Matches []int `json:"matches,omitempty"`
	// Partials are the partial matches (indexes in PartialMatches) that
	// use it.
	Partials []int `json:"partials,omitempty"`
	// Missing are the courses those partial matches still need.
	Missing []catalog.Ref `json:"missing,omitempty"`
}

// Award is what a set of source courses earns at one destination: the
// rules granted, each source course used at most once, and what is left.
type Award struct {
	// Destination is the destination institution's key.
	Destination string `json:"destination"`
	// TotalCredits are the target credits of Rules, added up.
	TotalCredits float64 `json:"totalCredits"`
	// Rules are the rules granted, in the order of the matches.
	Rules []AwardedRule `json:"rules"`
	// CoursesUsed are the courses the rules use, in the order given.
	CoursesUsed []catalog.Ref `json:"coursesUsed"`
	// CoursesLeft are the other courses of the request, in the order
	// given, each with why it is left.
	CoursesLeft []LeftCourse `json:"coursesLeft"`
	// Statuses are the statuses of the exact matches (by index in the
	// Result's ExactMatches) that are candidates: to the destination,
	// granting credit or an exemption. Others have none.
	Statuses map[int]MatchAward `json:"-"`
	// Partials are the indexes (in the Result's PartialMatches) of the
	// partial matches to the destination.
	Partials []int `json:"-"`
	// Exact is false when a component was too large to search and was
	// solved greedily; Note then says so.
	Exact bool `json:"exact"`
	// Note explains a greedy solution; empty otherwise.
	Note string `json:"note,omitempty"`
}

// maxAwardNodes bounds the branch and bound search of one component.
const maxAwardNodes = 200_000

// eps compares credit sums.
const eps = 1e-9

// Destinations lists the destinations of the matches of res (exact and
// partial), in the order they first appear.
func (res Result) Destinations() []string {
	var out []string
	for _, ms := range [][]Match{res.ExactMatches, res.PartialMatches} {
		for _, m := range ms {
			if !slices.Contains(out, m.Destination) {
				out = append(out, m.Destination)
			}
		}
	}
	return out
}

// grantsCredit says whether an outcome grants anything (credit or an
// exemption): what an award is made of.
func grantsCredit(o Outcome) bool { return o == OutcomeCredit || o == OutcomeExemption }

// GrantsCredit says whether the match grants credit or an exemption (its
// outcome is credit or exemption): the matches an award chooses from.
func (m Match) GrantsCredit() bool { return grantsCredit(m.Outcome) }

// candidate is one option of one exact match.
type candidate struct {
	match, option int
	credits       float64
	targets       TargetSet
	score         score
	used          []catalog.Ref
	grants        []catalog.Ref // specific destination courses granted
	conflicts     []int         // candidates (indexes) it conflicts with
}

// score is the value of a set of candidates, compared key by key (see the
// file's comment).
type score struct {
	credits, course, subject, exemptions float64
	rules                                int
	weighted                             float64
}

func (a score) add(b score) score {
	return score{a.credits + b.credits, a.course + b.course, a.subject + b.subject, a.exemptions + b.exemptions, a.rules + b.rules, a.weighted + b.weighted}
}

// compare returns >0 when a is better than b, and the key that decided.
func (a score) compare(b score) (int, string) {
	fl := func(x, y float64) int {
		if x > y+eps {
			return 1
		}
		if x < y-eps {
			return -1
		}
		return 0
	}
	if c := fl(a.credits, b.credits); c != 0 {
		return c, "more credit"
	}
	if c := fl(a.course, b.course); c != 0 {
		return c, "more credit in specific courses"
	}
	if c := fl(a.subject, b.subject); c != 0 {
		return c, "more credit in named subjects than in electives"
	}
	if c := fl(a.exemptions, b.exemptions); c != 0 {
		return c, "more exemptions"
	}
	if a.rules != b.rules {
		if a.rules < b.rules {
			return 1, "one combined agreement rather than several"
		}
		return -1, "one combined agreement rather than several"
	}
	if c := fl(a.weighted, b.weighted); c != 0 {
		return c, "higher confidence"
	}
	return 0, "listed first"
}

// optionScore scores one option of rule r.
func optionScore(r *Rule, ts TargetSet) score {
	s := score{rules: 1}
	for _, t := range ts.Targets {
		c := 0.0
		if t.Credits != nil {
			c = *t.Credits
		}
		s.credits += c
		switch t.Kind {
		case TargetCourse:
			s.course += c
			s.subject += c
		case TargetGeneric:
			s.subject += c
		}
		if t.Exemption {
			s.exemptions++
		}
	}
	s.exemptions += float64(len(r.Waives))
	s.weighted = s.credits * r.Confidence
	return s
}

// RuleOptions lists the options of rule r for the courses have: its target
// sets, and the target sets of its alternative and conditional notes, each
// saying whether it holds. A conditional note holds when every course of
// With is in have; an Alone note holds when have holds none of the courses
// the rule's other conditions name (and so by default when they name
// none); a condition that names no course ("Organic Chemistry taken as a
// co-requisite") cannot be confirmed from course codes and does not hold:
// it is offered with its condition. A note with AppliesToMain puts its
// condition on the rule's own target sets.
func RuleOptions(r *Rule, have []catalog.Ref) []Option {
	holds := func(n *Note) bool {
		switch {
		case len(n.With) > 0:
			for _, c := range n.With {
				if !slices.Contains(have, c) {
					return false
				}
			}
			return true
		case n.Alone:
			for i := range r.Notes {
				o := &r.Notes[i]
				if o == n || o.Kind != NoteConditional {
					continue
				}
				for _, c := range o.With {
					if slices.Contains(have, c) {
						return false
					}
				}
			}
			return true
		}
		return false
	}
	mainWhen, mainHolds := "", true
	for i := range r.Notes {
		if n := &r.Notes[i]; n.Kind == NoteConditional && n.AppliesToMain {
			mainWhen, mainHolds = n.When, holds(n)
			if mainWhen == "" {
				mainWhen = n.Text
			}
		}
	}
	var out []Option
	for i, ts := range r.Targets {
		out = append(out, Option{Targets: ts, Credits: ts.Credits(), From: "targets", TargetSet: i, When: mainWhen, Holds: mainHolds})
	}
	for i := range r.Notes {
		n := &r.Notes[i]
		if n.Targets == nil || (n.Kind != NoteAlternative && n.Kind != NoteConditional) {
			continue
		}
		o := Option{Targets: *n.Targets, Credits: n.Targets.Credits(), From: n.Text, TargetSet: -1, Holds: true}
		if n.Kind == NoteConditional && !n.AppliesToMain {
			o.When, o.Holds = n.When, holds(n)
			if o.When == "" {
				o.When = n.Text
			}
		}
		out = append(out, o)
	}
	return out
}

// label names a candidate in reasons as BCTG writes a rule, its used
// courses and the option: "CPSC 1150 + CPSC 1181 = UBCV CPSC 1st (3) &
// UBCV CPSC 2nd (3)".
func (c *candidate) label() string {
	var b strings.Builder
	for i, u := range c.used {
		if i > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(u.Subject + " " + u.Number)
	}
	b.WriteString(" = ")
	b.WriteString(describe(c.targets))
	return b.String()
}

func cr(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) + " cr" }

// AwardFor makes the award of res at destination (a directory key) for
// the courses have (the request's courses; res is its resolution). It
// reads only res's exact matches to that destination that grant credit,
// and its partial matches to say what is missing.
func AwardFor(res Result, destination string, have []catalog.Ref) Award {
	var exact, partial []int
	for mi := range res.ExactMatches {
		if res.ExactMatches[mi].Destination == destination {
			exact = append(exact, mi)
		}
	}
	for pi := range res.PartialMatches {
		if res.PartialMatches[pi].Destination == destination {
			partial = append(partial, pi)
		}
	}
	return awardFor(&res, destination, have, exact, partial)
}

// awardFor is AwardFor given the indexes of the exact and partial matches
// to destination.
func awardFor(res *Result, destination string, have []catalog.Ref, exact, partial []int) Award {
	aw := Award{Destination: destination, Rules: []AwardedRule{}, CoursesUsed: []catalog.Ref{}, CoursesLeft: []LeftCourse{},
		Statuses: map[int]MatchAward{}, Partials: partial, Exact: true}
	var cands []candidate
	options := map[int][]Option{}
	conditional := map[int]bool{}
	doubtful := map[int]bool{}
	for _, mi := range exact {
		m := &res.ExactMatches[mi]
		if !m.GrantsCredit() {
			continue
		}
		if m.Confidence < AwardMinConfidence {
			doubtful[mi] = true
			aw.Statuses[mi] = MatchAward{Status: StatusDoubtful, Reason: doubtfulReason(m.Rule)}
			continue
		}
		options[mi] = RuleOptions(m.Rule, have)
		n := 0
		for oi, o := range options[mi] {
			if !o.Holds || firstOfSameCredit(options[mi], oi) != oi {
				continue
			}
			n++
			c := candidate{match: mi, option: oi, credits: o.Credits, targets: o.Targets, score: optionScore(m.Rule, o.Targets), used: m.Used}
			for _, t := range o.Targets.Targets {
				if t.Kind == TargetCourse && !t.Exemption {
					c.grants = append(c.grants, t.Course)
				}
			}
			cands = append(cands, c)
		}
		if n == 0 {
			conditional[mi] = true
			aw.Statuses[mi] = MatchAward{Status: StatusConditional, Reason: conditionalReason(options[mi])}
		}
	}
	for i := range cands {
		for j := i + 1; j < len(cands); j++ {
			if conflict(res, &cands[i], &cands[j]) {
				cands[i].conflicts = append(cands[i].conflicts, j)
				cands[j].conflicts = append(cands[j].conflicts, i)
			}
		}
	}
	chosen := make([]bool, len(cands))
	comps := components(cands)
	for _, comp := range comps {
		if !solve(cands, comp, chosen) {
			aw.Exact = false
			aw.Note = fmt.Sprintf("a group of %d linked rules was too large to search exhaustively (over %d steps); it was solved greedily, the best rule first, so a better combination may exist", len(comp), maxAwardNodes)
		}
	}

	// The award, its statuses and reasons.
	compOf := make([]int, len(cands))
	for k, comp := range comps {
		for _, i := range comp {
			compOf[i] = k
		}
	}
	for i := range cands {
		c := &cands[i]
		if !chosen[i] {
			continue
		}
		m := &res.ExactMatches[c.match]
		aw.TotalCredits += c.credits
		aw.Statuses[c.match] = MatchAward{Status: StatusAwarded}
		aw.Rules = append(aw.Rules, AwardedRule{Match: c.match, Option: c.option, Targets: options[c.match][c.option].Targets, Credits: c.credits,
			Used: m.Used, Options: options[c.match], Reason: chosenReason(cands, chosen, i, options[c.match], comps[compOf[i]])})
		for _, u := range m.Used {
			if !slices.Contains(aw.CoursesUsed, u) {
				aw.CoursesUsed = append(aw.CoursesUsed, u)
			}
		}
	}
	slices.SortStableFunc(aw.Rules, func(a, b AwardedRule) int { return cmp.Compare(a.Match, b.Match) })
	aw.TotalCredits = math.Round(aw.TotalCredits*1000) / 1000
	for i := range aw.Rules {
		aw.Statuses[aw.Rules[i].Match] = MatchAward{Status: StatusAwarded, Reason: aw.Rules[i].Reason}
	}
	// Matches not awarded: the best option of each against what beat it.
	best := map[int]int{}
	for i := range cands {
		mi := cands[i].match
		if aw.Statuses[mi].Status == StatusAwarded {
			continue
		}
		if b, ok := best[mi]; !ok || cands[i].score.credits > cands[b].score.credits+eps {
			best[mi] = i
		}
	}
	for mi, i := range best {
		aw.Statuses[mi] = notChosen(res, cands, chosen, i, comps[compOf[i]])
	}
	aw.CoursesUsed = ordered(have, aw.CoursesUsed)
	aw.CoursesLeft = left(res, &aw, have, exact, partial, conditional, doubtful)
	return aw
}

// Awards makes one award per destination of res's matches (see
// Destinations), best total first (then by destination key).
func Awards(res Result, have []catalog.Ref) []Award {
	dests := res.Destinations()
	exact, partial := make([][]int, len(dests)), make([][]int, len(dests))
	for mi := range res.ExactMatches {
		d := slices.Index(dests, res.ExactMatches[mi].Destination)
		exact[d] = append(exact[d], mi)
	}
	for pi := range res.PartialMatches {
		d := slices.Index(dests, res.PartialMatches[pi].Destination)
		partial[d] = append(partial[d], pi)
	}
	out := make([]Award, 0, len(dests))
	for k, d := range dests {
		out = append(out, awardFor(&res, d, have, exact[k], partial[k]))
	}
	slices.SortStableFunc(out, func(a, b Award) int {
		if c := cmp.Compare(b.TotalCredits, a.TotalCredits); c != 0 {
			return c
		}
		return cmp.Compare(a.Destination, b.Destination)
	})
	return out
}

// ordered returns the courses of set in the order of have.
func ordered(have, set []catalog.Ref) []catalog.Ref {
	out := make([]catalog.Ref, 0, len(set))
	for _, h := range have {
		if slices.Contains(set, h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// firstOfSameCredit is the first option of opts that holds with the
// credits of opts[oi]. Among a rule's options of equal credit the first
// listed is taken: BCTG lists the general case first and a later one is
// often for some students only ("UBCV CPSC 1st (3), or APSC 160 (3) for
// Engineering students"), so a later option is offered, never preferred
// for being more specific. An option worth more credit is a candidate of
// its own (the student's choice gives more).
func firstOfSameCredit(opts []Option, oi int) int {
	for k := range oi {
		if opts[k].Holds && math.Abs(opts[k].Credits-opts[oi].Credits) < eps {
			return k
		}
	}
	return oi
}

// conflict says whether two candidates cannot both be chosen.
func conflict(res *Result, a, b *candidate) bool {
	if a.match == b.match {
		return true
	}
	for _, u := range a.used {
		if slices.Contains(b.used, u) {
			return true
		}
	}
	for _, g := range a.grants {
		if slices.Contains(b.grants, g) {
			return true
		}
	}
	ra, rb := res.ExactMatches[a.match].Rule, res.ExactMatches[b.match].Rule
	return precludes(ra, a, b) || precludes(rb, b, a)
}

// precludes says whether a preclusion note of r (the rule of x) rules out
// choosing y with x.
func precludes(r *Rule, x, y *candidate) bool {
	for i := range r.Notes {
		n := &r.Notes[i]
		if n.Kind != NotePreclusion {
			continue
		}
		if len(n.OnlyOneOf) > 0 && usesAny(x.used, n.OnlyOneOf) && usesAny(y.used, n.OnlyOneOf) {
			return true
		}
		for _, p := range n.Precludes {
			if slices.Contains(y.grants, p) {
				return true
			}
		}
	}
	return false
}

func usesAny(used, set []catalog.Ref) bool {
	for _, u := range used {
		if slices.Contains(set, u) {
			return true
		}
	}
	return false
}

// components groups the candidates linked by conflicts.
func components(cands []candidate) [][]int {
	seen := make([]bool, len(cands))
	var out [][]int
	for i := range cands {
		if seen[i] {
			continue
		}
		seen[i] = true
		comp := []int{i}
		for k := 0; k < len(comp); k++ {
			for _, j := range cands[comp[k]].conflicts {
				if !seen[j] {
					seen[j] = true
					comp = append(comp, j)
				}
			}
		}
		slices.Sort(comp)
		out = append(out, comp)
	}
	return out
}

// solve chooses the best set of non-conflicting candidates of comp (marks
// them in chosen); false when the search exceeded maxAwardNodes and the
// component was solved greedily.
func solve(cands []candidate, comp []int, chosen []bool) bool {
	best, _, ok := search(cands, comp, -1)
	if ok {
		for _, i := range best {
			chosen[i] = true
		}
		return true
	}
	// Greedy: the best candidate first.
	order := slices.Clone(comp)
	slices.SortStableFunc(order, func(a, b int) int { c, _ := cands[b].score.compare(cands[a].score); return c })
	for _, i := range order {
		free := true
		for _, j := range cands[i].conflicts {
			free = free && !chosen[j]
		}
		if free {
			chosen[i] = true
		}
	}
	return false
}

// search finds by branch and bound the best set of non-conflicting
// candidates of comp that includes forced (-1: none); ok is false when it
// took more than maxAwardNodes steps.
func search(cands []candidate, comp []int, forced int) (best []int, bestScore score, ok bool) {
	// Most credit first, so that the bound prunes early; ties keep the
	// order of the matches.
	order := make([]int, 0, len(comp))
	for _, i := range comp {
		if i != forced {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cands[b].credits, cands[a].credits) })
	rest := make([]float64, len(order)+1) // credits still to be had from order[k:]
	for k := len(order) - 1; k >= 0; k-- {
		rest[k] = rest[k+1] + cands[order[k]].credits
	}
	in := make([]bool, len(cands))
	var cur []int
	var start score
	if forced >= 0 {
		in[forced] = true
		cur = append(cur, forced)
		start = cands[forced].score
	}
	found := false
	nodes := 0
	var dfs func(k int, s score) bool
	dfs = func(k int, s score) bool {
		if nodes++; nodes > maxAwardNodes {
			return false
		}
		if found && s.credits+rest[k] < bestScore.credits-eps {
			return true
		}
		if k == len(order) {
			if c, _ := s.compare(bestScore); !found || c > 0 {
				found, bestScore, best = true, s, slices.Clone(cur)
			}
			return true
		}
		i := order[k]
		free := true
		for _, j := range cands[i].conflicts {
			if in[j] {
				free = false
				break
			}
		}
		if free {
			in[i] = true
			cur = append(cur, i)
			ok := dfs(k+1, s.add(cands[i].score))
			cur = cur[:len(cur)-1]
			in[i] = false
			if !ok {
				return false
			}
		}
		return dfs(k+1, s)
	}
	if !dfs(0, start) {
		return nil, score{}, false
	}
	return best, bestScore, true
}
