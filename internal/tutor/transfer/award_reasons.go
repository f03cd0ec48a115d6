package transfer

// The award's words: why each rule was chosen or not, and why each course
// is left (see award.go).

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// chosenReason says why candidate i was chosen.
func chosenReason(cands []candidate, chosen []bool, i int, opts []Option, comp []int) string {
	c := &cands[i]
	var parts []string
	// Against the rule's other options.
	var others []string
	for oi, o := range opts {
		if oi == c.option {
			continue
		}
		s := describe(o.Targets)
		if !o.Holds {
			s += " if " + o.When
		}
		others = append(others, s)
	}
	if len(others) > 0 {
		why := "the most credit"
		for oi, o := range opts {
			if oi != c.option && o.Holds && math.Abs(o.Credits-c.credits) < eps {
				why = "same credit; the first listed (BCTG lists the general case first; the other is offered)"
				break
			}
		}
		parts = append(parts, fmt.Sprintf("%s taken among the rule's options (the other: %s): %s",
			describe(opts[c.option].Targets), strings.Join(others, "; "), why))
	}
	// Against other rules.
	// Against the other rules it conflicts with: the best award with any
	// of them (searched with it forced in) against the award.
	var beaten []string
	var seen []int
	var alt score
	altFound := false
	for _, j := range c.conflicts {
		mj := cands[j].match
		if mj == c.match || chosen[j] || slices.Contains(seen, mj) {
			continue
		}
		seen = append(seen, mj)
		beaten = append(beaten, cands[j].label())
		if _, with, ok := search(cands, comp, j); ok && (!altFound || with.credits > alt.credits) {
			alt, altFound = with, true
		}
	}
	if len(beaten) > 0 {
		var awarded score
		for _, j := range comp {
			if chosen[j] {
				awarded = awarded.add(cands[j].score)
			}
		}
		s := fmt.Sprintf("chosen over %s", strings.Join(beaten, "; "))
		switch d, why := awarded.compare(alt); {
		case !altFound:
		case d > 0 && why == "more credit":
			s += fmt.Sprintf(": %s in all against at most %s with %s", cr(awarded.credits), cr(alt.credits), plural(beaten))
		default:
			s += fmt.Sprintf(": the same credit in all (%s); %s", cr(awarded.credits), why)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "the only rule in force for these courses"
	}
	return strings.Join(parts, "; ")
}

// notChosen is the status of match cands[i].match, not awarded: an
// alternative when the best award that includes it (searched again with it
// forced in) is worth as much credit as the award, replaced otherwise.
func notChosen(res *Result, cands []candidate, chosen []bool, i int, comp []int) MatchAward {
	c := &cands[i]
	var against []int
	var labels []string
	for _, j := range c.conflicts {
		if !chosen[j] || slices.Contains(against, cands[j].match) {
			continue
		}
		against = append(against, cands[j].match)
		labels = append(labels, cands[j].label())
	}
	slices.Sort(against)
	this := c.label()
	if len(against) == 0 {
		// Only when a component was solved greedily.
		return MatchAward{Status: StatusReplaced, Reason: this + ": left out by the greedy choice"}
	}
	var awarded score
	for _, j := range comp {
		if chosen[j] {
			awarded = awarded.add(cands[j].score)
		}
	}
	_, with, ok := search(cands, comp, i)
	link := conflictWhy(res, cands, c, chosen)
	if ok && math.Abs(with.credits-awarded.credits) < eps {
		_, why := awarded.compare(with)
		return MatchAward{Status: StatusAlternative, Against: against,
			Reason: fmt.Sprintf("%s is an alternative to %s%s: the same credit in all (%s); the award takes %s: %s", this, strings.Join(labels, "; "), link, cr(with.credits), plural(labels), why)}
	}
	return MatchAward{Status: StatusReplaced, Against: against,
		Reason: fmt.Sprintf("%s is replaced by %s%s: %s in all against %s with it", this, strings.Join(labels, "; "), link, cr(awarded.credits), cr(with.credits))}
}

func plural(l []string) string {
	if len(l) == 1 {
		return "it"
	}
	return "them"
}

// conflictWhy adds what links c to the awarded rules when it is not a
// shared course: a preclusion or a destination course granted twice.
func conflictWhy(res *Result, cands []candidate, c *candidate, chosen []bool) string {
	for _, j := range c.conflicts {
		if !chosen[j] {
			continue
		}
		o := &cands[j]
		if usesAny(c.used, o.used) {
			continue
		}
		for _, g := range c.grants {
			if slices.Contains(o.grants, g) {
				return " (" + g.Code() + " is granted once)"
			}
		}
		return " (only one of them can be credited: " + strings.Join(noteTexts(res, c, o), "; ") + ")"
	}
	return ""
}

func noteTexts(res *Result, a, b *candidate) []string {
	var out []string
	for _, mi := range []int{a.match, b.match} {
		for _, n := range res.ExactMatches[mi].Notes {
			if n.Kind == NotePreclusion && !slices.Contains(out, n.Text) {
				out = append(out, n.Text)
			}
		}
	}
	return out
}

// conditionalReason says why a rule with no option that holds is not
// awarded.
func conditionalReason(opts []Option) string {
	var s []string
	for _, o := range opts {
		s = append(s, describe(o.Targets)+" ("+cr(o.Credits)+") if "+o.When)
	}
	return "credit only under a condition the course codes cannot confirm: " + strings.Join(s, "; or ")
}

// doubtfulReason says why a rule below AwardMinConfidence is not counted.
func doubtfulReason(r *Rule) string {
	why := append(slices.Clone(r.Doubts), r.Repairs...)
	if len(why) == 0 {
		why = []string{"low confidence"}
	}
	return fmt.Sprintf("not counted: confidence %g is below %g (%s); confirm it with the destination", r.Confidence, AwardMinConfidence, strings.Join(why, "; "))
}

// describe writes a target set: "UBCV CPSC 1st (3) & UBCV CPSC 2nd (3)".
func describe(ts TargetSet) string {
	var b strings.Builder
	for i, t := range ts.Targets {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteString(strings.ToUpper(t.Course.Institution) + " " + t.Course.Subject + " " + t.Course.Number)
		if t.Credits != nil {
			b.WriteString(" (" + strconv.FormatFloat(*t.Credits, 'f', -1, 64) + ")")
		}
	}
	return b.String()
}

// left lists the courses of have the award does not use, with why.
func left(res *Result, aw *Award, have []catalog.Ref, exact, partial []int, conditional, doubtful map[int]bool) []LeftCourse {
	type facts struct {
		l                                       LeftCourse
		replaced, cond, doubt, noCredit, assess bool
	}
	byCourse := map[catalog.Ref]*facts{}
	var order []catalog.Ref
	for _, h := range have {
		if _, dup := byCourse[h]; dup || slices.Contains(aw.CoursesUsed, h) {
			continue
		}
		byCourse[h] = &facts{l: LeftCourse{Course: h}}
		order = append(order, h)
	}
	if len(order) == 0 {
		return []LeftCourse{}
	}
	for _, mi := range exact {
		m := &res.ExactMatches[mi]
		for _, u := range m.Used {
			f := byCourse[u]
			if f == nil {
				continue
			}
			f.l.Matches = append(f.l.Matches, mi)
			switch {
			case conditional[mi]:
				f.cond = true
			case doubtful[mi]:
				f.doubt = true
			case m.GrantsCredit():
				f.replaced = true
			case m.Outcome == OutcomeNoCredit:
				f.noCredit = true
			case m.Outcome == OutcomeAssessment:
				f.assess = true
			}
		}
	}
	for _, pi := range partial {
		m := &res.PartialMatches[pi]
		for _, u := range m.Used {
			f := byCourse[u]
			if f == nil {
				continue
			}
			f.l.Partials = append(f.l.Partials, pi)
			for _, p := range m.Progress {
				if p.Satisfied {
					continue
				}
				for _, c := range p.Missing {
					if !slices.Contains(f.l.Missing, c) {
						f.l.Missing = append(f.l.Missing, c)
					}
				}
			}
		}
	}
	out := make([]LeftCourse, 0, len(order))
	for _, h := range order {
		f := byCourse[h]
		l := f.l
		switch {
		case f.replaced:
			l.Why, l.Detail = LeftReplaced, "its credit rules were not chosen: "+reasonsOf(aw, l.Matches)
		case f.cond:
			l.Why, l.Detail = LeftConditional, reasonsOf(aw, l.Matches)
		case f.doubt:
			l.Why, l.Detail = LeftDoubtful, reasonsOf(aw, l.Matches)
		case len(l.Partials) > 0:
			l.Why, l.Detail = LeftPartial, "earns credit only in combination: needs "+missingWords(res, l.Partials)
		case f.noCredit:
			l.Why, l.Detail = LeftNoCredit, "the agreement in force grants no credit"
		case f.assess:
			l.Why, l.Detail = LeftAssessment, "the destination assesses it individually"
		default:
			l.Why, l.Detail = LeftUnmatched, "no agreement in force names it"
		}
		out = append(out, l)
	}
	return out
}

func reasonsOf(aw *Award, matches []int) string {
	var s []string
	for _, mi := range matches {
		if r := aw.Statuses[mi].Reason; r != "" && !slices.Contains(s, r) {
			s = append(s, r)
		}
	}
	return strings.Join(s, "; ")
}

// missingWords says what partial matches still need: "LANG CHEM 1220 (for
// the CHEM 1120 rule); or ...".
func missingWords(res *Result, partials []int) string {
	var s []string
	for _, pi := range partials {
		m := &res.PartialMatches[pi]
		var need []string
		for _, p := range m.Progress {
			if p.Satisfied {
				continue
			}
			var names []string
			for _, c := range p.Missing {
				names = append(names, c.Subject+" "+c.Number)
			}
			switch p.Kind {
			case GroupRequired:
				need = append(need, strings.Join(names, " and "))
			default:
				need = append(need, fmt.Sprintf("%d more of %s", p.Need-p.Have, strings.Join(names, ", ")))
			}
		}
		tc := 0.0
		if len(m.TargetCredits) > 0 {
			tc = slices.Max(m.TargetCredits)
		}
		s = append(s, fmt.Sprintf("%s for %s (%s)", strings.Join(need, " and "), describeRule(m.Rule), cr(tc)))
	}
	return strings.Join(s, "; or ")
}

// describeRule names a rule by its source side: "LANG CHEM 1120 & LANG CHEM 1220".
func describeRule(r *Rule) string {
	var parts []string
	for _, g := range r.Source {
		var names []string
		for _, c := range g.Courses {
			names = append(names, c.Course.Subject+" "+c.Course.Number)
		}
		switch g.Kind {
		case GroupRequired:
			parts = append(parts, strings.Join(names, " & "))
		case GroupOr:
			parts = append(parts, "("+strings.Join(names, " or ")+")")
		default:
			parts = append(parts, fmt.Sprintf("any %d of (%s)", g.N, strings.Join(names, ", ")))
		}
	}
	return strings.Join(parts, " & ")
}
