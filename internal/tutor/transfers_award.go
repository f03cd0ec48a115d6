package tutor

// tn_transfer_resolve's award (issue 22): what the student's courses are
// worth at a destination, added up without double counting, with why each
// course not used is left, why a course matched nothing, and a summary in
// words that the tutor's model reads first.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// AwardView is the award of tn_transfer_resolve at one destination: the
// rules granted (each source course used at most once), their total, the
// courses used and those left with why. Add up totalCredits (or the rules'
// credits), never exactMatches: that list holds alternatives of the same
// courses.
type AwardView struct {
	Destination  string  `json:"destination"`
	TotalCredits float64 `json:"totalCredits"`
	// SourceCredits are the credits of CoursesUsed at the source, when
	// every one is known (from the credit text or the catalogue).
	SourceCredits *float64          `json:"sourceCredits,omitempty"`
	Rules         []AwardedRuleView `json:"rules"`
	CoursesUsed   []string          `json:"coursesUsed"`
	CoursesLeft   []LeftCourseView  `json:"coursesLeft"`
	// OptionsNotTaken are the other target sets of the awarded rules (an
	// "or" alternative, a conditional target) and the options of rules
	// awarded nothing because their condition cannot be confirmed.
	OptionsNotTaken []OptionView `json:"optionsNotTaken"`
	// WithinReach are the agreements to this destination that the courses
	// satisfy in part: what more courses would earn (fewest missing first).
	WithinReach []ReachView `json:"withinReach"`
	// Exact is false when part of the award was chosen greedily (Note says
	// why).
	Exact bool   `json:"exact"`
	Note  string `json:"note,omitempty"`
}

// AwardedRuleView is one rule of an award.
type AwardedRuleView struct {
	RuleID            string             `json:"ruleId"`
	Course            string             `json:"course"`
	Credit            string             `json:"credit"`
	Used              []string           `json:"used"`
	Targets           transfer.TargetSet `json:"targets"`
	Credits           float64            `json:"credits"`
	SourceCredits     *float64           `json:"sourceCredits,omitempty"`
	SourceCreditsFrom string             `json:"sourceCreditsFrom,omitempty"`
	Reason            string             `json:"reason"`
	Evidence          transfer.Evidence  `json:"evidence"`
	Confidence        float64            `json:"confidence"`
}

// ReachView is an agreement the courses satisfy in part: with Missing it
// would grant Credits (the most of its target sets).
type ReachView struct {
	RuleID  string   `json:"ruleId"`
	Credit  string   `json:"credit"`
	Have    []string `json:"have"`
	Missing []string `json:"missing"`
	Credits float64  `json:"credits"`
}

// OptionView is a target set a rule could grant instead.
type OptionView struct {
	RuleID  string             `json:"ruleId"`
	Targets transfer.TargetSet `json:"targets"`
	Credits float64            `json:"credits"`
	// When is the condition under which it holds, if any; Holds says
	// whether the courses given meet it.
	When  string `json:"when,omitempty"`
	Holds bool   `json:"holds"`
}

// LeftCourseView is a course of the request that the award does not use.
type LeftCourseView struct {
	Course string `json:"course"`
	// Why is replaced, conditional, doubtful, partial, no_credit,
	// individual_assessment or unmatched.
	Why    string `json:"why"`
	Detail string `json:"detail"`
	// RuleIDs are the rules that name it (exact matches, then partial).
	RuleIDs []string `json:"ruleIds,omitempty"`
	// Missing are the courses the partial matches it is in still need.
	Missing []string `json:"missing,omitempty"`
	// Unmatched says why no rule in force names it, for why unmatched.
	Unmatched *UnmatchedView `json:"unmatched,omitempty"`
}

// UnmatchedView says why no rule in force names a course: unknown_course
// (not in the imported catalogue of its institution), no_rule (no rule at
// all names it, and no catalogue of its institution is imported to tell
// whether it exists), no_agreement (rules name it, never to this
// destination), agreement_ended (with the last rule), not_yet_in_force.
type UnmatchedView struct {
	Course string `json:"course"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	// The last agreement, for agreement_ended (the first to come, for
	// not_yet_in_force).
	LastRuleID         string `json:"lastRuleId,omitempty"`
	LastCredit         string `json:"lastCredit,omitempty"`
	LastEffectiveStart string `json:"lastEffectiveStart,omitempty"`
	LastEffectiveEnd   string `json:"lastEffectiveEnd,omitempty"`
}

// catalogueCredits looks up source courses' credits in the catalogue.
type catalogueCredits struct {
	credits map[string]float64 // course reference -> credits
	known   map[string]bool    // course reference -> in the catalogue
	insts   map[string]bool    // institutions with catalogued courses
}

// catalogueFor reads the catalogue's credits of courses (and whether the
// catalogue has them, for unknown_course). It reads the in-memory course
// index (built for tn_course_search and shared with it).
func (s *Server) catalogueFor(ctx context.Context, courses []catalog.Ref) (*catalogueCredits, error) {
	ix, err := s.catIndex(ctx)
	if err != nil {
		return nil, err
	}
	cc := &catalogueCredits{credits: map[string]float64{}, known: map[string]bool{}, insts: map[string]bool{}}
	for _, c := range courses {
		if i, ok := ix.byRef[c.String()]; ok {
			cc.known[c.String()] = true
			if cr := ix.courses[i].Credits; cr != nil {
				cc.credits[c.String()] = *cr
			}
		}
	}
	// Institutions whose catalogue is imported: only needed to say
	// unknown_course, and only those of the request.
	for _, c := range courses {
		if _, done := cc.insts[c.Institution]; done {
			continue
		}
		cc.insts[c.Institution] = false
		for _, co := range ix.courses {
			if co.Institution == c.Institution {
				cc.insts[c.Institution] = true
				break
			}
		}
	}
	return cc, nil
}

// sourceCredits are the source credits of used: those the credit text
// states (stated), else the catalogue's when it has every course; from
// says which.
func (cc *catalogueCredits) sourceCredits(stated *float64, used []catalog.Ref) (*float64, string) {
	if stated != nil {
		return stated, "credit text"
	}
	if cc == nil || len(used) == 0 {
		return nil, ""
	}
	var sum float64
	for _, u := range used {
		c, ok := cc.credits[u.String()]
		if !ok {
			return nil, ""
		}
		sum += c
	}
	return &sum, "catalogue"
}

// unmatchedView says why course c is unmatched at destination ("" any).
func (s *Server) unmatchedView(rs *ruleSet, cc *catalogueCredits, destination string, c catalog.Ref, w transfer.Why) UnmatchedView {
	v := UnmatchedView{Course: c.String(), Reason: string(w.Reason)}
	to := "any institution"
	if destination != "" {
		to = s.instCode(destination)
	}
	switch w.Reason {
	case transfer.ReasonNoRule:
		switch {
		case cc != nil && cc.insts[c.Institution] && !cc.known[c.String()]:
			v.Reason, v.Detail = string(transfer.ReasonUnknownCourse), fmt.Sprintf("%s is not in the imported catalogue of %s", c.Code(), s.instCode(c.Institution))
		case cc != nil && cc.known[c.String()]:
			v.Detail = fmt.Sprintf("%s is in the catalogue, but no BC Transfer Guide agreement names it", c.Code())
		default:
			v.Detail = fmt.Sprintf("no agreement names %s, to any institution (no catalogue of %s is imported to tell whether the course exists)", c.Code(), s.instCode(c.Institution))
		}
	case transfer.ReasonNoAgreement:
		v.Detail = fmt.Sprintf("%s has agreements, but never one with %s", c.Code(), to)
	case transfer.ReasonEnded:
		v.Detail = fmt.Sprintf("the agreement with %s ended on %s: %q", to, date(w.Last.EffectiveEnd), w.Last.Raw)
	case transfer.ReasonNotYet:
		v.Detail = fmt.Sprintf("the agreement with %s starts on %s: %q", to, date(w.Last.EffectiveStart), w.Last.Raw)
	}
	if w.Last != nil {
		v.LastRuleID, v.LastCredit = rs.ids[ruleKey(w.Last)], w.Last.Raw
		v.LastEffectiveStart, v.LastEffectiveEnd = date(w.Last.EffectiveStart), date(w.Last.EffectiveEnd)
	}
	return v
}

// instCode is an institution's BC Transfer Guide code, or its key.
func (s *Server) instCode(key string) string {
	if in, ok := s.dir.Lookup(key); ok && in.Code != "" {
		return in.Code
	}
	return key
}

// awardView renders an award.
func (s *Server) awardView(rs *ruleSet, cc *catalogueCredits, res *transfer.Result, aw *transfer.Award, have []catalog.Ref, unmatched map[string]UnmatchedView, at func(string, catalog.Ref) UnmatchedView) AwardView {
	v := AwardView{Destination: aw.Destination, TotalCredits: aw.TotalCredits, Rules: []AwardedRuleView{}, CoursesUsed: refs(aw.CoursesUsed),
		CoursesLeft: []LeftCourseView{}, OptionsNotTaken: []OptionView{}, Exact: aw.Exact, Note: aw.Note}
	id := func(mi int) string { return rs.ids[ruleKey(res.ExactMatches[mi].Rule)] }
	for _, r := range aw.Rules {
		m := &res.ExactMatches[r.Match]
		sc, from := cc.sourceCredits(m.SourceCredits, m.Used)
		v.Rules = append(v.Rules, AwardedRuleView{RuleID: id(r.Match), Course: m.Course.String(), Credit: m.Raw, Used: refs(r.Used), Targets: r.Targets,
			Credits: r.Credits, SourceCredits: sc, SourceCreditsFrom: from, Reason: r.Reason, Evidence: m.Evidence, Confidence: m.Confidence})
		for oi, o := range r.Options {
			if oi != r.Option {
				v.OptionsNotTaken = append(v.OptionsNotTaken, OptionView{RuleID: id(r.Match), Targets: o.Targets, Credits: o.Credits, When: o.When, Holds: o.Holds})
			}
		}
	}
	for mi, st := range aw.Statuses {
		if st.Status == transfer.StatusConditional {
			for _, o := range transfer.RuleOptions(res.ExactMatches[mi].Rule, have) {
				v.OptionsNotTaken = append(v.OptionsNotTaken, OptionView{RuleID: id(mi), Targets: o.Targets, Credits: o.Credits, When: o.When, Holds: o.Holds})
			}
		}
	}
	v.WithinReach = []ReachView{}
	for _, pi := range aw.Partials {
		m := &res.PartialMatches[pi]
		r := ReachView{RuleID: rs.ids[ruleKey(m.Rule)], Credit: m.Raw, Have: refs(m.Used), Missing: []string{}}
		for _, p := range m.Progress {
			if !p.Satisfied {
				r.Missing = append(r.Missing, refs(p.Missing)...)
			}
		}
		if len(m.TargetCredits) > 0 {
			r.Credits = slices.Max(m.TargetCredits)
		}
		v.WithinReach = append(v.WithinReach, r)
	}
	slices.SortStableFunc(v.WithinReach, func(a, b ReachView) int { return cmp.Compare(len(a.Missing), len(b.Missing)) })
	// The source credits of the courses used, when every one is known.
	var total float64
	known := true
	for _, r := range v.Rules {
		if r.SourceCredits == nil {
			known = false
			break
		}
		total += *r.SourceCredits
	}
	if known && len(v.Rules) > 0 {
		v.SourceCredits = &total
	}
	for _, l := range aw.CoursesLeft {
		lv := LeftCourseView{Course: l.Course.String(), Why: string(l.Why), Detail: l.Detail, Missing: refs(l.Missing)}
		if len(lv.Missing) == 0 {
			lv.Missing = nil
		}
		for _, mi := range l.Matches {
			lv.RuleIDs = append(lv.RuleIDs, id(mi))
		}
		for _, pi := range l.Partials {
			lv.RuleIDs = append(lv.RuleIDs, rs.ids[ruleKey(res.PartialMatches[pi].Rule)])
		}
		if l.Why == transfer.LeftUnmatched {
			u, ok := unmatched[l.Course.String()]
			if !ok || aw.Destination != "" {
				u = at(aw.Destination, l.Course)
			}
			if u.Reason != "" {
				lv.Unmatched = &u
				lv.Detail = u.Detail
			}
		}
		v.CoursesLeft = append(v.CoursesLeft, lv)
	}
	return v
}

// awardSummary says the award in words for a student (and for the tutor's
// model, which reads it first): the total, what each course earns with the
// rule ids, and what is missing or earns nothing.
func awardSummary(v AwardView, in string) string {
	var b strings.Builder
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	fmt.Fprintf(&b, "Award at %s: %s credits", in, num(v.TotalCredits))
	if v.SourceCredits != nil {
		fmt.Fprintf(&b, " for %s source credits", num(*v.SourceCredits))
	}
	fmt.Fprintf(&b, ", from %d rule(s), each course counted once (add up this award, not exactMatches, which lists alternatives).", len(v.Rules))
	for _, r := range v.Rules {
		fmt.Fprintf(&b, " %s = %s [rule %s].", strings.Join(shortCodes(r.Used), " + "), describeTargets(r.Targets), r.RuleID)
	}
	if len(v.CoursesLeft) > 0 {
		b.WriteString(" Not counted:")
		for i, l := range v.CoursesLeft {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s (%s): %s", shortCode(l.Course), strings.ReplaceAll(l.Why, "_", " "), l.Detail)
			if len(l.RuleIDs) > 0 {
				fmt.Fprintf(&b, " [rule %s]", strings.Join(l.RuleIDs, ", "))
			}
		}
		b.WriteString(".")
	}
	for i, r := range v.WithinReach {
		if i == maxReachSaid {
			fmt.Fprintf(&b, " And %d more agreements within reach (withinReach).", len(v.WithinReach)-i)
			break
		}
		fmt.Fprintf(&b, " Within reach: adding %s to %s meets an agreement of %s credits [rule %s].", strings.Join(shortCodes(r.Missing), " and "), strings.Join(shortCodes(r.Have), " + "),
			strconv.FormatFloat(r.Credits, 'f', -1, 64), r.RuleID)
	}
	for _, o := range v.OptionsNotTaken {
		fmt.Fprintf(&b, " Option not taken: %s", describeTargets(o.Targets))
		if o.When != "" {
			fmt.Fprintf(&b, " if %s", o.When)
		}
		fmt.Fprintf(&b, " [rule %s].", o.RuleID)
	}
	return b.String()
}

// maxReachSaid is how many agreements within reach the summary names.
const maxReachSaid = 5

func shortCode(ref string) string {
	if _, code, ok := strings.Cut(ref, ":"); ok {
		return code
	}
	return ref
}

func shortCodes(refs []string) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = shortCode(r)
	}
	return out
}

// describeTargets writes a target set as BCTG does: "UBCV CPSC 1st (3) &
// UBCV CPSC 2nd (3)".
func describeTargets(ts transfer.TargetSet) string {
	var parts []string
	for _, t := range ts.Targets {
		s := strings.ToUpper(t.Course.Institution) + " " + t.Course.Code()
		if t.Credits != nil {
			s += " (" + strconv.FormatFloat(*t.Credits, 'f', -1, 64) + ")"
		}
		if t.Exemption {
			s += " exemption"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " & ")
}

// followable makes the evidence of r followable by a person (see
// transfer.Followable): the Guide's course search and what to enter there.
func (s *Server) followable(r *transfer.Rule) {
	r.Evidence = transfer.Followable(r, s.instCode(r.Course.Institution), s.instCode(r.Destination))
}
