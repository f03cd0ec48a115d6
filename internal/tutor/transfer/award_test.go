package transfer

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// awardOf resolves have against rs to dest and makes the award.
func awardOf(rs []Rule, dest string, have ...catalog.Ref) (Result, Award) {
	res := NewIndex(rs).ResolveTo(dest, have, at2024)
	return res, AwardFor(res, dest, have)
}

// awardedRaws lists the credit text of the awarded rules.
func awardedRaws(res Result, aw Award) []string {
	var out []string
	for _, r := range aw.Rules {
		out = append(out, res.ExactMatches[r.Match].Raw)
	}
	return out
}

func credits(c float64) *float64 { return &c }

func TestAwardPairOverSinglesNeverDoubleCounts(t *testing.T) {
	rs := rules(t,
		row("CPSC", 1150, "UBCV", "UBCV CPSC 1st (3)", "Sep/03", "present"),
		row("CPSC", 1181, "UBCV", "UBCV CPSC 2nd (3)", "May/09", "present"),
		row("CPSC", 1150, "UBCV", "LANG CPSC 1150 (3) & LANG CPSC 1181 (3) = UBCV CPSC 1st (3) & UBCV CPSC 2nd (3), exempt UBCV CPSC 110", "Sep/03", "present"),
		row("CPSC", 1150, "UBCV", "LANG CPSC 1150 (3) & LANG CPSC 1160 (3) & LANG CPSC 1181 (3) = UBCV CPSC 1st (6) & UBCV CPSC 2nd (3), Exempt UBCV CPSC 110.", "Sep/03", "present"),
		row("CPSC", 1160, "UBCV", "UBCV CPSC 1st (3)", "May/99", "present"),
		row("ENGL", 1107, "UBCV", "No credit", "Jan/11", "present"),
	)
	have := []catalog.Ref{lang("CPSC", "1150"), lang("CPSC", "1181"), lang("ENGL", "1107")}
	res, aw := awardOf(rs, "ubcv", have...)
	sum := 0.0
	for _, m := range res.ExactMatches {
		for _, c := range m.TargetCredits {
			sum += c
		}
	}
	if sum != 12 {
		t.Fatalf("exact matches add up to %v, want 12 (the double count the award removes)", sum)
	}
	if aw.TotalCredits != 6 || len(aw.Rules) != 1 || !strings.HasPrefix(awardedRaws(res, aw)[0], "LANG CPSC 1150 (3) & LANG CPSC 1181") {
		t.Fatalf("award %v cr, rules %q; want 6 from the pair rule", aw.TotalCredits, awardedRaws(res, aw))
	}
	if r := aw.Rules[0].Reason; !strings.Contains(r, "same credit") || !strings.Contains(r, "exemptions") {
		t.Errorf("reason %q: want the tie and that the pair's exemption decided it", r)
	}
	alt := 0
	for mi, m := range res.ExactMatches {
		st := aw.Statuses[mi]
		switch {
		case m.Outcome == OutcomeNoCredit:
			if st.Status != "" {
				t.Errorf("no-credit match has status %v", st)
			}
		case len(m.Used) == 1:
			if st.Status != StatusAlternative || len(st.Against) != 1 {
				t.Errorf("single rule %q: %+v, want an alternative to the pair", m.Raw, st)
			}
			alt++
		}
	}
	if alt != 2 {
		t.Errorf("%d alternatives, want 2", alt)
	}
	if !reflect.DeepEqual(aw.CoursesUsed, have[:2]) || len(aw.CoursesLeft) != 1 || aw.CoursesLeft[0].Why != LeftNoCredit {
		t.Errorf("used %v left %+v", aw.CoursesUsed, aw.CoursesLeft)
	}

	// With CPSC 1160 too, the three-course rule (9 cr) beats the pair and
	// 1160's single (6 + 3 = 9 cr) on the rule count, and the singles.
	have = append(have, lang("CPSC", "1160"))
	res, aw = awardOf(rs, "ubcv", have...)
	if aw.TotalCredits != 9 || len(aw.Rules) != 1 || len(aw.Rules[0].Used) != 3 {
		t.Errorf("award %v cr, rules %q; want 9 from the three-course rule", aw.TotalCredits, awardedRaws(res, aw))
	}
}

func TestAwardMoreCreditWins(t *testing.T) {
	rs := rules(t,
		row("MATH", 2362, "UBCV", "UBCV MATH 221 (3)", "May/99", "present"),
		row("MATH", 2382, "UBCV", "UBCV MATH 1st (1)", "Sep/01", "present"),
		row("MATH", 2362, "UBCV", "LANG MATH 2362 (3) & LANG MATH 2382 (1) = UBCV MATH 152 (3)", "Sep/01", "present"),
	)
	res, aw := awardOf(rs, "ubcv", lang("MATH", "2362"), lang("MATH", "2382"))
	if aw.TotalCredits != 4 || len(aw.Rules) != 2 {
		t.Fatalf("award %v from %q, want the two singles (4 cr)", aw.TotalCredits, awardedRaws(res, aw))
	}
	for mi, m := range res.ExactMatches {
		if len(m.Used) == 2 && (aw.Statuses[mi].Status != StatusReplaced || len(aw.Statuses[mi].Against) != 2) {
			t.Errorf("pair: %+v, want replaced by the two singles", aw.Statuses[mi])
		}
	}
}

func TestAwardOrAlternativesChooseOnce(t *testing.T) {
	rs := rules(t,
		row("MATH", 2475, "UBCV", "UBCV MATH 215 (3) or UBCV MATH 255 (3)", "May/99", "present"),
	)
	res, aw := awardOf(rs, "ubcv", lang("MATH", "2475"))
	if len(res.ExactMatches) != 1 || len(res.ExactMatches[0].TargetCredits) != 2 {
		t.Fatalf("want one match with two target sets, got %+v", res.ExactMatches)
	}
	if aw.TotalCredits != 3 || len(aw.Rules) != 1 || aw.Rules[0].Option != 0 || len(aw.Rules[0].Options) != 2 {
		t.Fatalf("award %+v, want 3 cr from the first option, both listed", aw)
	}
	if r := aw.Rules[0].Reason; !strings.Contains(r, "MATH 255") {
		t.Errorf("reason %q does not name the other option", r)
	}
}

func TestAwardNotes(t *testing.T) {
	biol := func() []Rule {
		return rules(t,
			row("BIOL", 2315, "UBCV", "UBCV BIOL 201 (3)", "May/99", "present"),
			row("CHEM", 2316, "UBCV", "UBCV CHEM 2nd (4)", "Sep/95", "present"),
		)
	}
	generic := TargetSet{Targets: []Target{{Kind: TargetGeneric, Course: ref("ubcv", "BIOL", "2ND"), Credits: credits(3)}}}

	// A condition naming no course: the Alone set is the default, the
	// other an option with its condition.
	rs := biol()
	rs[0].Notes = []Note{
		{Kind: NoteConditional, Text: "if Organic Chemistry taken as a co-requisite", AppliesToMain: true, When: "Organic Chemistry taken as a co-requisite"},
		{Kind: NoteConditional, Text: "or UBCV BIOL 2nd (3) if taken alone", Targets: &generic, When: "taken alone", Alone: true},
	}
	_, aw := awardOf(rs, "ubcv", lang("BIOL", "2315"))
	if len(aw.Rules) != 1 || aw.Rules[0].Targets.Targets[0].Course.Number != "2ND" {
		t.Fatalf("award %+v, want BIOL 2nd (the Alone default)", aw.Rules)
	}
	if o := aw.Rules[0].Options[0]; o.Holds || o.When == "" {
		t.Errorf("BIOL 201 option %+v: want offered with its condition, not holding", o)
	}
	// The same condition naming a course the request holds: BIOL 201.
	rs = biol()
	rs[0].Notes = []Note{
		{Kind: NoteConditional, Text: "if taken with LANG CHEM 2316", AppliesToMain: true, When: "taken with LANG CHEM 2316", With: []catalog.Ref{lang("CHEM", "2316")}},
		{Kind: NoteConditional, Text: "or UBCV BIOL 2nd (3) if taken alone", Targets: &generic, When: "taken alone", Alone: true},
	}
	_, aw = awardOf(rs, "ubcv", lang("BIOL", "2315"), lang("CHEM", "2316"))
	if aw.TotalCredits != 7 || len(aw.Rules) != 2 || aw.Rules[0].Targets.Targets[0].Course.Number != "201" {
		t.Fatalf("award %v %+v, want BIOL 201 (with CHEM 2316) and CHEM 2nd", aw.TotalCredits, aw.Rules)
	}

	// Only a condition that cannot be confirmed: not awarded, conditional.
	rs = biol()
	rs[0].Notes = []Note{{Kind: NoteConditional, Text: "if Organic Chemistry taken as a co-requisite", AppliesToMain: true, When: "Organic Chemistry taken as a co-requisite"}}
	_, aw = awardOf(rs, "ubcv", lang("BIOL", "2315"))
	if len(aw.Rules) != 0 || aw.Statuses[0].Status != StatusConditional || len(aw.CoursesLeft) != 1 || aw.CoursesLeft[0].Why != LeftConditional {
		t.Fatalf("award %+v statuses %+v left %+v, want nothing awarded, the rule conditional", aw.Rules, aw.Statuses, aw.CoursesLeft)
	}

	// An alternative note: a second option, chosen once.
	rs = biol()
	alt := TargetSet{Targets: []Target{{Kind: TargetGeneric, Course: ref("ubcv", "BIOL", "2ND"), Credits: credits(4)}}}
	rs[0].Notes = []Note{{Kind: NoteAlternative, Text: "or UBCV BIOL 2nd (4)", Targets: &alt}}
	_, aw = awardOf(rs, "ubcv", lang("BIOL", "2315"))
	if aw.TotalCredits != 4 || len(aw.Rules) != 1 || aw.Rules[0].Option != 1 {
		t.Fatalf("award %v %+v, want the alternative's 4 cr, once", aw.TotalCredits, aw.Rules)
	}
}

func TestAwardPreclusions(t *testing.T) {
	rs := rules(t,
		row("PSYC", 1195, "UBCV", "UBCV PSYC 1st (3)", "May/99", "present"),
		row("PSYC", 2329, "UBCV", "UBCV PSYC 2nd (4)", "May/99", "present"),
		row("ARTH", 1200, "UBCV", "UBCV ARTH 250 (3)", "May/99", "present"),
		row("ARTH", 2200, "UBCV", "UBCV ARTH 251 (3)", "May/99", "present"),
	)
	rs[0].Notes = []Note{{Kind: NotePreclusion, Text: "Credit for only one of LANG PSYC 1195 or PSYC 2329", OnlyOneOf: []catalog.Ref{lang("PSYC", "1195"), lang("PSYC", "2329")}}}
	rs[2].Notes = []Note{{Kind: NotePreclusion, Text: "Precludes credit for UBCV ARTH 251.", Precludes: []catalog.Ref{ref("ubcv", "ARTH", "251")}}}
	have := []catalog.Ref{lang("PSYC", "1195"), lang("PSYC", "2329"), lang("ARTH", "1200"), lang("ARTH", "2200")}
	res, aw := awardOf(rs, "ubcv", have...)
	if aw.TotalCredits != 7 || len(aw.Rules) != 2 {
		t.Fatalf("award %v from %q, want 7 (PSYC 2329's 4 and one ARTH's 3)", aw.TotalCredits, awardedRaws(res, aw))
	}
	if aw.Rules[0].Used[0] != lang("PSYC", "2329") {
		t.Errorf("PSYC: %v awarded, want PSYC 2329 (more credit)", aw.Rules[0].Used)
	}
	left := map[catalog.Ref]LeftKind{}
	for _, l := range aw.CoursesLeft {
		left[l.Course] = l.Why
		if l.Detail == "" {
			t.Errorf("%v left without a reason", l.Course)
		}
	}
	if left[lang("PSYC", "1195")] != LeftReplaced || len(left) != 2 {
		t.Errorf("left %v, want PSYC 1195 and one ARTH course, replaced", left)
	}
}

func TestAwardSameDestinationCourseOnce(t *testing.T) {
	rs := rules(t,
		row("MATH", 1171, "UBCV", "UBCV MATH 100 (3)", "May/99", "present"),
		row("MATH", 1175, "UBCV", "UBCV MATH 100 (3)", "Sep/20", "present"),
	)
	_, aw := awardOf(rs, "ubcv", lang("MATH", "1171"), lang("MATH", "1175"))
	if aw.TotalCredits != 3 || len(aw.Rules) != 1 || len(aw.CoursesLeft) != 1 || !strings.Contains(aw.CoursesLeft[0].Detail, "granted once") {
		t.Errorf("award %v, left %+v; want UBCV MATH 100 once", aw.TotalCredits, aw.CoursesLeft)
	}
}

func TestAwardPartialsSayWhatIsMissing(t *testing.T) {
	rs := rules(t,
		row("CHEM", 1120, "UBCV", "LANG CHEM 1120 (4) & LANG CHEM 1220 (4) = UBCV CHEM 121 (4) & UBCV CHEM 123 (4)", "Sep/03", "present"),
	)
	_, aw := awardOf(rs, "ubcv", lang("CHEM", "1220"), lang("CPSC", "9999"))
	if len(aw.CoursesLeft) != 2 || aw.CoursesLeft[0].Why != LeftPartial || !reflect.DeepEqual(aw.CoursesLeft[0].Missing, []catalog.Ref{lang("CHEM", "1120")}) ||
		!strings.Contains(aw.CoursesLeft[0].Detail, "CHEM 1120") || aw.CoursesLeft[1].Why != LeftUnmatched {
		t.Errorf("left %+v", aw.CoursesLeft)
	}
}

func TestAwardsPerDestination(t *testing.T) {
	rs := rules(t,
		row("CPSC", 1150, "SFU", "SFU CMPT 120 (3)", "May/03", "present"),
		row("CPSC", 1150, "UVIC", "UVIC CSC 1XX (1.5)", "Jan/20", "present"),
	)
	have := []catalog.Ref{lang("CPSC", "1150")}
	res := NewIndex(rs).Resolve(have, at2024)
	aws := Awards(res, have)
	if len(aws) != 2 || aws[0].Destination != "sfu" || aws[0].TotalCredits != 3 || aws[1].TotalCredits != 1.5 {
		t.Errorf("awards %+v", aws)
	}
}

func TestAwardGreedyBeyondTheCap(t *testing.T) {
	// 30 courses, each in a single rule and in pair rules with its two
	// neighbours: one component of 90 candidates, solved exactly or, past
	// the cap, greedily; either way nothing is counted twice.
	var rows []Row
	for i := range 30 {
		rows = append(rows, row("MATH", 1000+i, "UBCV", "UBCV MATH 1st (3)", "May/99", "present"))
		j := (i + 1) % 30
		rows = append(rows, row("MATH", 1000+i, "UBCV", "LANG MATH "+itoa(1000+i)+" (3) & LANG MATH "+itoa(1000+j)+" (3) = UBCV MATH 1st (6)", "May/99", "present"))
	}
	rs := rules(t, rows...)
	var have []catalog.Ref
	for i := range 30 {
		have = append(have, lang("MATH", itoa(1000+i)))
	}
	_, aw := awardOf(rs, "ubcv", have...)
	seen := map[catalog.Ref]bool{}
	for _, r := range aw.Rules {
		for _, u := range r.Used {
			if seen[u] {
				t.Fatalf("%v used twice", u)
			}
			seen[u] = true
		}
	}
	if aw.TotalCredits != 90 {
		t.Errorf("award %v cr (exact %v, %s), want 90", aw.TotalCredits, aw.Exact, aw.Note)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestWhyUnmatched(t *testing.T) {
	rs := rules(t,
		row("ENGL", 1128, "UBCV", "UBCV WRCM 1st (3)", "Sep/20", "Aug/23"),
		row("ENGL", 1128, "UBCV", "UBCV ENGL 112 (3)", "May/99", "Aug/20"),
		row("ENGL", 1128, "UVIC", "UVIC ATWP 1XX (1.5)", "Sep/09", "present"),
		row("ENGL", 1130, "UBCV", "UBCV ENGL 1st (3)", "Sep/25", "present"),
	)
	ix := NewIndex(rs)
	for _, c := range []struct {
		dest   string
		course catalog.Ref
		want   UnmatchedReason
		last   string
	}{
		{"ubcv", lang("ENGL", "1128"), ReasonEnded, "UBCV WRCM 1st (3)"},
		{"ubcv", lang("CPSC", "9999"), ReasonNoRule, ""},
		{"sfu", lang("ENGL", "1128"), ReasonNoAgreement, ""},
		{"uvic", lang("ENGL", "1130"), ReasonNoAgreement, ""},
		{"ubcv", lang("ENGL", "1130"), ReasonNotYet, "UBCV ENGL 1st (3)"},
		{"uvic", lang("ENGL", "1128"), "", ""},
	} {
		w := ix.WhyUnmatched(c.dest, c.course, at2024)
		last := ""
		if w.Last != nil {
			last = w.Last.Raw
		}
		if w.Reason != c.want || last != c.last {
			t.Errorf("WhyUnmatched(%s, %v) = %s, last %q; want %s, %q", c.dest, c.course, w.Reason, last, c.want, c.last)
		}
	}
}
