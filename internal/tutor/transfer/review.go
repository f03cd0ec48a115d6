package transfer

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// What each doubt takes off a rule's Confidence, and the thresholds that
// raise them, chosen on the whole shared data (see docs/benchmarks.md,
// "Transfer notes as data (issue 22)").
const (
	// DoubtOutOfProportion is taken off when a target set is worth more
	// than CreditsRatio times the source credits the rule needs.
	DoubtOutOfProportion = 0.2
	// DoubtOrWholeSemesters is taken off when an "or" source list grants
	// what two or more of its courses earn alone (a "&" typed as "or").
	DoubtOrWholeSemesters = 0.3
	// DoubtNotesAsText is taken off when a clause of the notes left text
	// only looks like a condition on the credit (an alternative or
	// conditional target, a preclusion).
	DoubtNotesAsText = 0.1
	// CreditsRatio is how many times the source credits a rule needs its
	// targets may be worth before they are out of proportion.
	CreditsRatio = 1.5
	// minScaleRules is how many rules with known credits a destination
	// needs for its own credit scale.
	minScaleRules = 20
	// minDoubtedConfidence is the least confidence of a parsed rule.
	minDoubtedConfidence = 0.1
)

// Review weighs every parsed rule of a set against the text and against
// the rest of the set, and says in Doubts why a rule is less to be
// trusted, each doubt lowering Confidence (from what its repairs give) by
// its amount, to no less than 0.1:
//
//   - out of proportion (DoubtOutOfProportion): a target set worth more
//     than CreditsRatio times the source credits the rule needs (for an
//     or_group or n_of group only the N cheapest courses count). Source
//     credits are those the text states, else credits(course) (the
//     catalogue's; credits may be nil);
//   - or-list of whole semesters (DoubtOrWholeSemesters): a rule whose only
//     group is an or_group (or n_of) grants a target set worth at least
//     what N+1 of its courses earn alone, in single-course rules of the set
//     to the same destination in force in an overlapping period
//     ("PHYS 1125 (4) or PHYS 1225 (4) = PHYS 120 + 121 + 131 (8)" where
//     each course alone earns 4);
//   - notes as text (DoubtNotesAsText): a clause of the notes that no Note
//     holds and that looks like an alternative or conditional target or a
//     preclusion.
//
// Review may be called again on the same rules: it recomputes Doubts and
// Confidence. Its cost is linear in the rules (a map of the single-course
// rules by destination and course).
func Review(rules []Rule, credits func(catalog.Ref) (float64, bool)) {
	type key struct {
		dest   string
		course catalog.Ref
	}
	alone := map[key][]int{}
	for i := range rules {
		r := &rules[i]
		if !r.Parsed || r.Outcome != OutcomeCredit || len(r.Source) != 1 || len(r.Source[0].Courses) != 1 {
			continue
		}
		k := key{r.Destination, r.Source[0].Courses[0].Course}
		alone[k] = append(alone[k], i)
	}
	scale := creditScales(rules, credits)
	for i := range rules {
		r := &rules[i]
		if !r.Parsed {
			continue
		}
		r.Doubts = nil
		conf := repairConfidence(len(r.Repairs))
		most, least := 0.0, math.Inf(1)
		for _, s := range r.Targets {
			most, least = max(most, s.Credits()), min(least, s.Credits())
		}
		if need, ok := neededCredits(r, credits); ok && need > 0 && len(r.Targets) > 0 && least > CreditsRatio*scale[r.Destination]*need+1e-9 {
			r.Doubts = append(r.Doubts, fmt.Sprintf("%g target credits for %g source credits needed (%s usually grants %g for 1): out of proportion",
				least, need, r.Destination, scale[r.Destination]))
			conf -= DoubtOutOfProportion
		}
		if g := r.Source[0]; len(r.Source) == 1 && g.Kind != GroupRequired && most > 0 {
			var earned []float64
			for _, c := range g.Courses {
				e := 0.0
				for _, j := range alone[key{r.Destination, c.Course}] {
					if o := &rules[j]; overlap(r, o) {
						for _, s := range o.Targets {
							e = max(e, s.Credits())
						}
					}
				}
				if e > 0 {
					earned = append(earned, e)
				}
			}
			if len(earned) > g.N {
				slices.Sort(earned)
				sum := 0.0
				for _, e := range earned[:g.N+1] {
					sum += e
				}
				if most >= sum-1e-9 {
					r.Doubts = append(r.Doubts, fmt.Sprintf("%s list of which %d course(s) are needed grants %g credits, what %d of its courses earn alone (%g) in single-course rules in force at the same time: \"&\" typed as \"or\"?",
						g.Kind, g.N, most, g.N+1, sum))
					conf -= DoubtOrWholeSemesters
				}
			}
		}
		for _, c := range r.textOnly() {
			switch textCategory(c, len(r.Waives) > 0) {
			case textAlternative, textConditional, textPreclusion:
				r.Doubts = append(r.Doubts, fmt.Sprintf("note left as text looks like a condition on credit: %q", c))
				conf -= DoubtNotesAsText
			default:
				continue
			}
			break // one such doubt per rule
		}
		r.Confidence = roundConfidence(min(1, max(minDoubtedConfidence, conf)))
	}
}

// repairConfidence is the confidence a parsed rule's repairs leave: 1.0
// less 0.1 per kind of repair, down to 0.5.
func repairConfidence(repairs int) float64 {
	return roundConfidence(max(0.5, 1.0-0.1*float64(repairs)))
}

// roundConfidence rounds to 2 decimals, away from binary noise (0.9, not
// 0.8999999999999999).
func roundConfidence(c float64) float64 { return math.Round(c*100) / 100 }

// neededCredits is the source credits a rule needs: every course of a
// required group, the N cheapest of an or_group or n_of group. It is not
// known when a course needed has no credits in the text nor from credits.
func neededCredits(r *Rule, credits func(catalog.Ref) (float64, bool)) (float64, bool) {
	total := 0.0
	for _, g := range r.Source {
		cs := make([]float64, 0, len(g.Courses))
		for _, c := range g.Courses {
			switch {
			case c.Credits != nil:
				cs = append(cs, *c.Credits)
			case credits != nil:
				v, ok := credits(c.Course)
				if !ok {
					return 0, false
				}
				cs = append(cs, v)
			default:
				return 0, false
			}
		}
		n := g.N
		if g.Kind != GroupRequired {
			slices.Sort(cs)
		} else {
			n = len(cs)
		}
		for _, v := range cs[:min(n, len(cs))] {
			total += v
		}
	}
	return total, true
}

// overlap says whether two rules are in force at some common day.
func overlap(a, b *Rule) bool {
	before := func(end, start time.Time) bool { return !end.IsZero() && !start.IsZero() && end.Before(start) }
	return !before(a.EffectiveEnd, b.EffectiveStart) && !before(b.EffectiveEnd, a.EffectiveStart)
}

// creditScales is, per destination, the median of target credits per
// source credit over the set's credit rules whose source credits are known
// (UVic grants 1.5 units for a 3-credit course: 0.5; most grant 1.0); 1.0
// for a destination with fewer than minScaleRules such rules.
func creditScales(rules []Rule, credits func(catalog.Ref) (float64, bool)) map[string]float64 {
	ratios := map[string][]float64{}
	for i := range rules {
		r := &rules[i]
		if !r.Parsed || r.Outcome != OutcomeCredit || len(r.Targets) == 0 {
			continue
		}
		need, ok := neededCredits(r, credits)
		if !ok || need <= 0 {
			continue
		}
		least := math.Inf(1)
		for _, s := range r.Targets {
			least = min(least, s.Credits())
		}
		ratios[r.Destination] = append(ratios[r.Destination], least/need)
	}
	out := make(map[string]float64, len(ratios))
	for d, v := range ratios {
		out[d] = 1
		if len(v) >= minScaleRules {
			slices.Sort(v)
			out[d] = v[len(v)/2]
		}
	}
	return out
}
