package tutor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// studentSet is a realistic first-year Langara course set asked against
// one destination, with the award an advisor would grant, worked out by
// hand from the BC Transfer Guide rows in force on 2024-09-01 (each
// course's rows and why are in courses).
type studentSet struct {
	name    string
	dest    string
	courses []string
	// why says, course by course, what the rows in force give and what the
	// award takes (the hand check).
	why map[string]string
	// award are the awarded rules, each as its used courses joined by " +
	// " and its target set as describeTargets writes it.
	award []string
	total float64
}

var studentSets = []studentSet{
	{
		name: "life sciences to UBC Vancouver (nine courses)", dest: "UBCV",
		courses: []string{"BIOL 1115", "BIOL 1215", "CHEM 1120", "CHEM 1220", "MATH 1171", "MATH 1271", "PHYS 1125", "PHYS 1225", "ENGL 1123"},
		why: map[string]string{
			"BIOL 1115": "alone BIOL 1st (4); with BIOL 1215 the pair rule BIOL 1st (8) + exemptions: the pair (8) beats the single (4)",
			"BIOL 1215": "only in the BIOL 1115 & 1215 pair rule",
			"CHEM 1120": "alone CHEM 1st (4); with CHEM 1220 the pair rule CHEM 121 (4) & CHEM 123 (4): the pair (8) beats the single (4)",
			"CHEM 1220": "only in the CHEM 1120 & 1220 pair rule",
			"MATH 1171": "MATH 100 (3)",
			"MATH 1271": "MATH 101 (3)",
			"PHYS 1125": "PHYS 117 (3)",
			"PHYS 1225": "PHYS 118 (3) & PHYS 119 (1)",
			"ENGL 1123": "WRDS 150 (3)",
		},
		award: []string{
			"BIOL 1115 + BIOL 1215 = UBCV BIOL 1st (8)",
			"CHEM 1120 + CHEM 1220 = UBCV CHEM 121 (4) & UBCV CHEM 123 (4)",
			"MATH 1171 = UBCV MATH 100 (3)",
			"MATH 1271 = UBCV MATH 101 (3)",
			"PHYS 1125 = UBCV PHYS 117 (3)",
			"PHYS 1225 = UBCV PHYS 118 (3) & UBCV PHYS 119 (1)",
			"ENGL 1123 = UBCV WRDS 150 (3)",
		},
		total: 32,
	},
	{
		name: "computing to SFU", dest: "SFU",
		courses: []string{"CPSC 1150", "CPSC 1160", "CPSC 1181", "CPSC 1280", "MATH 1171", "MATH 1271", "ENGL 1127", "STAT 1181", "STAT 1182", "PHIL 1100"},
		why: map[string]string{
			"CPSC 1150": "CMPT 120 (3)",
			"CPSC 1160": "only in the CPSC 1160 & 1181 pair rule",
			"CPSC 1181": "alone CMPT 125 (3) + exemption CMPT 127; with CPSC 1160 the pair CMPT 125 (3) & CMPT 1XX (3), exemption CMPT 127 (a waiver): the pair (6) beats the single (3)",
			"CPSC 1280": "CMPT 1XX (2)",
			"MATH 1171": "MATH 151 (3)",
			"MATH 1271": "MATH 152 (3)",
			"ENGL 1127": "ENGL 1XX (3)",
			"STAT 1181": "alone BUS 1XX or STAT 201/203/205 (3); with STAT 1182 either BUS 232 or ECON 233 (4), or STAT 201/203/205 (3) & ACMA 1XX (1); or the singles 3 + STAT 1XX (1): all 4 credits, BUS 232 (4) is the most in a specific course (ECON 233 is the other choice)",
			"STAT 1182": "alone STAT 1XX (1); taken with STAT 1181 in the pair",
			"PHIL 1100": "PHIL 120 (3); its pair rule needs PHIL 2202",
		},
		award: []string{
			"CPSC 1150 = SFU CMPT 120 (3)",
			"CPSC 1160 + CPSC 1181 = SFU CMPT 125 (3) & SFU CMPT 1XX (3)",
			"CPSC 1280 = SFU CMPT 1XX (2)",
			"MATH 1171 = SFU MATH 151 (3)",
			"MATH 1271 = SFU MATH 152 (3)",
			"ENGL 1127 = SFU ENGL 1XX (3)",
			"STAT 1181 + STAT 1182 = SFU BUS 232 (4)",
			"PHIL 1100 = SFU PHIL 120 (3)",
		},
		total: 27,
	},
	{
		name: "arts to UVic", dest: "UVIC",
		courses: []string{"ENGL 1120", "ENGL 1127", "ENGL 1130", "HIST 1113", "PSYC 1115", "PSYC 1215", "SOCI 1120", "PHIL 1100", "ECON 1220", "FREN 1115"},
		why: map[string]string{
			"ENGL 1120": "No credit at UVic: left, no_credit",
			"ENGL 1127": "ATWP 1XX (1.5)",
			"ENGL 1130": "ATWP 1XX (1.5): generic credit, granted for each course",
			"HIST 1113": "HSTR 236A (1.5)",
			"PSYC 1115": "PSYC 100A (1.5)",
			"PSYC 1215": "PSYC 100B (1.5)",
			"SOCI 1120": "SOCI 100A (1.5)",
			"PHIL 1100": "PHIL 1XX (1.5)",
			"ECON 1220": "ECON 103 (1.5)",
			"FREN 1115": "FRAN 1XX (1.5); with FREN 1215 (missing) FRAN 100 (3)",
		},
		award: []string{
			"ENGL 1127 = UVIC ATWP 1XX (1.5)",
			"ENGL 1130 = UVIC ATWP 1XX (1.5)",
			"HIST 1113 = UVIC HSTR 236A (1.5)",
			"PSYC 1115 = UVIC PSYC 100A (1.5)",
			"PSYC 1215 = UVIC PSYC 100B (1.5)",
			"SOCI 1120 = UVIC SOCI 100A (1.5)",
			"PHIL 1100 = UVIC PHIL 1XX (1.5)",
			"ECON 1220 = UVIC ECON 103 (1.5)",
			"FREN 1115 = UVIC FRAN 1XX (1.5)",
		},
		total: 13.5,
	},
}

// TestStudentAwardsOnRealRows resolves the three student sets against the
// whole real data (the Langara catalogue and every BCTG row, imported into
// SQLite as nexus import does) and checks each award against the one
// worked out by hand, and what any award must be: no course used twice,
// the total the sum of its rules, every exact match either awarded or
// linked to the awarded rules, every match with its source credits.
func TestStudentAwardsOnRealRows(t *testing.T) {
	data := testtools.SharedData(t)
	st := storetest.OpenTestSQLite(t)
	h := newCourseHarness(t, st)
	for _, imp := range []struct{ kind, file string }{{"langara-catalogue", "langara/catalogue.json"}, {"bctg-transfers", "langara/transfers.json"}} {
		if _, err := h.tut.Import(context.Background(), imp.kind, []string{filepath.Join(data, imp.file)}, nil); err != nil {
			t.Fatalf("import %s: %v", imp.kind, err)
		}
	}
	for _, set := range studentSets {
		t.Run(set.name, func(t *testing.T) {
			for _, c := range set.courses {
				if set.why[c] == "" {
					t.Errorf("%s has no hand-check justification", c)
				}
			}
			out := resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": set.dest, "sourceCourses": set.courses, "asOfDate": "2024-09-01"})
			aw := out.Award
			if aw == nil {
				t.Fatal("no award")
			}
			var got []string
			var sum float64
			used := map[string]bool{}
			for _, r := range aw.Rules {
				got = append(got, strings.Join(shortCodes(r.Used), " + ")+" = "+describeTargets(r.Targets))
				sum += r.Credits
				for _, u := range r.Used {
					if used[u] {
						t.Errorf("%s used twice", u)
					}
					used[u] = true
				}
				if r.SourceCredits == nil || r.Reason == "" || r.RuleID == "" || r.Evidence.Lookup == "" {
					t.Errorf("awarded rule %+v: want source credits, a reason, a rule id and a followable evidence", r)
				}
			}
			if !slices.Equal(got, set.award) || aw.TotalCredits != set.total || sum != aw.TotalCredits {
				t.Errorf("award %v cr (rules add to %v):\n  %s\nwant %v cr:\n  %s", aw.TotalCredits, sum, strings.Join(got, "\n  "), set.total, strings.Join(set.award, "\n  "))
			}
			if len(aw.CoursesUsed)+len(aw.CoursesLeft) != len(set.courses) {
				t.Errorf("%d used + %d left, want %d courses", len(aw.CoursesUsed), len(aw.CoursesLeft), len(set.courses))
			}
			var exactSum float64
			for _, m := range out.ExactMatches {
				for _, c := range m.TargetCredits {
					exactSum += c
				}
				if m.Outcome != string(transfer.OutcomeCredit) && m.Outcome != string(transfer.OutcomeExemption) {
					t.Errorf("exact match %s has outcome %s", m.RuleID, m.Outcome)
				}
				if m.SourceCredits == nil || m.SourceCreditsFrom == "" {
					t.Errorf("exact match %s (%s) without source credits", m.RuleID, m.Credit)
				}
				switch m.Award {
				case "awarded":
				case "alternative", "replaced":
					if len(m.AlternativeTo)+len(m.ReplacedBy) == 0 || m.AwardReason == "" {
						t.Errorf("%s match %s names no awarded rule or reason", m.Award, m.RuleID)
					}
				default:
					t.Errorf("exact match %s has award status %q", m.RuleID, m.Award)
				}
			}
			t.Logf("%s: exactMatches' targetCredits add up to %v, the award is %v", set.name, exactSum, aw.TotalCredits)
			t.Logf("summary: %s", out.Summary)
			for _, r := range aw.Rules {
				t.Logf("awarded %s: %s", r.RuleID, r.Reason)
			}
			for _, m := range out.ExactMatches {
				if m.Award != "awarded" {
					t.Logf("%s %s: %s", m.Award, m.RuleID, m.AwardReason)
				}
			}
			if !strings.Contains(out.Summary, "Award at "+set.dest) {
				t.Errorf("summary %q does not lead with the award", out.Summary)
			}
		})
	}
}

// resolveTyped calls tn_transfer_resolve and decodes its answer.
func resolveTyped(t *testing.T, h courseHarness, args map[string]any) resolveOut {
	t.Helper()
	raw, err := json.Marshal(h.Call("tn_transfer_resolve", args))
	if err != nil {
		t.Fatal(err)
	}
	var out resolveOut
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResolveAwardOnExcerpt runs tn_transfer_resolve on the excerpt of the
// real data the repository keeps (the Langara catalogue's and the BCTG
// rows of the courses asked): the award, the exact matches' statuses, the
// credit conversion from the catalogue, why courses are unmatched, and the
// followable evidence.
func TestResolveAwardOnExcerpt(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	h := newCourseHarness(t, st)
	dir := testtools.Excerpt(t)
	for _, imp := range []struct{ kind, file string }{{"langara-catalogue", "langara/catalogue.json"}, {"bctg-transfers", "langara/transfers.json"}} {
		if _, err := h.tut.Import(context.Background(), imp.kind, []string{filepath.Join(dir, imp.file)}, nil); err != nil {
			t.Fatalf("import %s: %v", imp.kind, err)
		}
	}
	out := resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": "ubcv", "asOfDate": "2024-09-01",
		"sourceCourses": []string{"CPSC 1150", "CPSC 1181", "BIOL 2370", "CPSC 9999"}})
	if out.Award == nil || out.Award.TotalCredits != 6 || len(out.Award.Rules) != 1 || len(out.Award.Rules[0].Used) != 2 {
		t.Fatalf("award %+v, want 6 cr from the CPSC 1150 & 1181 pair rule", out.Award)
	}
	pair := out.Award.Rules[0].RuleID
	for _, m := range out.ExactMatches {
		switch {
		case m.RuleID == pair:
			if m.Award != "awarded" {
				t.Errorf("pair rule: award %q", m.Award)
			}
		case m.Award != "alternative" || !slices.Equal(m.AlternativeTo, []string{pair}):
			t.Errorf("single rule %s (%s): award %q, alternativeTo %v; want an alternative to the pair %s", m.RuleID, m.Credit, m.Award, m.AlternativeTo, pair)
		}
		if m.SourceCredits == nil || *m.SourceCredits != float64(3*len(m.Used)) {
			t.Errorf("%s: source credits %v, want 3 per course", m.Credit, m.SourceCredits)
		}
	}
	why := map[string]UnmatchedView{}
	for _, u := range out.UnmatchedReasons {
		why[u.Course] = u
	}
	if u := why["langara:BIOL 2370"]; u.Reason != "agreement_ended" || u.LastEffectiveEnd != "2005-08-31" || u.LastRuleID == "" || u.LastCredit != "UBCV MICB 201 (3)" {
		t.Errorf("BIOL 2370: %+v, want agreement_ended on 2005-08-31 with the last rule", u)
	}
	if u := why["langara:CPSC 9999"]; u.Reason != "unknown_course" {
		t.Errorf("CPSC 9999: %+v, want unknown_course (the Langara catalogue is imported)", u)
	}
	if len(out.Award.CoursesLeft) != 2 || out.Award.CoursesLeft[0].Unmatched == nil || out.Award.CoursesLeft[0].Unmatched.Reason != "agreement_ended" {
		t.Errorf("courses left %+v", out.Award.CoursesLeft)
	}
	if e := out.Award.Rules[0].Evidence; e.URL != transfer.EvidenceSearchURL || !strings.Contains(e.Lookup, "sending institution LANG, subject CPSC, course 1150") || !strings.Contains(e.Lookup, "UBCV") {
		t.Errorf("evidence %+v, want the Guide's course search and what to enter", e)
	}

	// Credit conversion from the catalogue: 3 Langara credits for 1.5 UVic units.
	out = resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": "uvic", "asOfDate": "2024-09-01", "sourceCourses": []string{"CPSC 1150"}})
	if len(out.ExactMatches) != 1 || out.ExactMatches[0].SourceCredits == nil || *out.ExactMatches[0].SourceCredits != 3 ||
		out.ExactMatches[0].SourceCreditsFrom != "catalogue" || out.Award.TotalCredits != 1.5 {
		t.Errorf("CPSC 1150 to UVic: %+v", out.ExactMatches)
	}

	// Without a destination: one award per destination, no-credit rows in
	// their own list and never in exactMatches.
	out = resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "asOfDate": "2024-09-01", "sourceCourses": []string{"CPSC 1150", "CPSC 1181", "MATH 2382"}})
	if out.Award != nil || len(out.Awards) < 5 || !strings.HasPrefix(out.Summary, "Award by destination") {
		t.Errorf("%d awards, summary %q", len(out.Awards), out.Summary)
	}
	for i := 1; i < len(out.Awards); i++ {
		if out.Awards[i].TotalCredits > out.Awards[i-1].TotalCredits {
			t.Errorf("awards not best first: %v after %v", out.Awards[i].TotalCredits, out.Awards[i-1].TotalCredits)
		}
	}
	if len(out.NoCreditMatches) == 0 {
		t.Error("no noCreditMatches for MATH 2382 (no credit at SFU, UVic, ...)")
	}
	for _, m := range out.ExactMatches {
		if m.Outcome == "no_credit" || m.Outcome == "individual_assessment" {
			t.Errorf("exact match %s has outcome %s", m.RuleID, m.Outcome)
		}
	}
}

// TestIssueCasesOnExcerpt resolves, on the real rows the repository's
// excerpt keeps, the cases issue 22 found wrong or misleading: a
// conditional target follows the courses given, a preclusion ("credit
// granted for only one of") is honoured, and an "or" list that grants
// what two of its courses earn alone is doubted and not counted.
func TestIssueCasesOnExcerpt(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	h := newCourseHarness(t, st)
	dir := testtools.Excerpt(t)
	for _, imp := range []struct{ kind, file string }{{"langara-catalogue", "langara/catalogue.json"}, {"bctg-transfers", "langara/transfers.json"}} {
		if _, err := h.tut.Import(context.Background(), imp.kind, []string{filepath.Join(dir, imp.file)}, nil); err != nil {
			t.Fatalf("import %s: %v", imp.kind, err)
		}
	}
	awarded := func(out resolveOut) []string {
		var got []string
		for _, r := range out.Award.Rules {
			got = append(got, strings.Join(shortCodes(r.Used), " + ")+" = "+describeTargets(r.Targets))
		}
		return got
	}

	// BIOL 2315 alone to UBC: "UBCV BIOL 201 (3), if Organic Chemistry
	// taken as a co-requisite; or UBCV BIOL 2nd (3) if taken alone".
	out := resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": "ubcv", "asOfDate": "2024-09-01", "sourceCourses": []string{"BIOL 2315"}})
	if got := awarded(out); !slices.Equal(got, []string{"BIOL 2315 = UBCV BIOL 2nd (3)"}) || out.Award.TotalCredits != 3 {
		t.Errorf("BIOL 2315 to UBCV: award %v (%v cr), want BIOL 2nd (3) as taken alone", got, out.Award.TotalCredits)
	}
	if opts := out.Award.OptionsNotTaken; len(opts) != 1 || !strings.Contains(optionWords(opts), "BIOL 201") || !strings.Contains(optionWords(opts), "Organic Chemistry") {
		t.Errorf("BIOL 2315 to UBCV: options %+v, want BIOL 201 offered under its condition", opts)
	}

	// ENGL 1127 and 1128 to SFU: "Credit granted for only one of LANG
	// ENGL 1127 or LANG ENGL 1128": 3 credits, not 6.
	out = resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": "sfu", "asOfDate": "2024-09-01", "sourceCourses": []string{"ENGL 1127", "ENGL 1128"}})
	if out.Award.TotalCredits != 3 || len(out.Award.Rules) != 1 || len(out.Award.CoursesLeft) != 1 {
		t.Errorf("ENGL 1127 + 1128 to SFU: award %v (%v cr), left %+v; want one of them, 3 cr", awarded(out), out.Award.TotalCredits, out.Award.CoursesLeft)
	}
	var exactSum float64
	for _, m := range out.ExactMatches {
		exactSum += m.TargetCredits[0]
	}
	if exactSum != 6 {
		t.Errorf("ENGL 1127 + 1128 to SFU: exact matches add to %v, want the two 3-credit rules listed", exactSum)
	}

	// PHYS 1125 alone to SFU in 2010: "LANG PHYS 1125 (4) or LANG PHYS 1225
	// (4) = SFU PHYS 120 (3) & PHYS 121 (3) & PHYS 131 (2)" grants 8 credits
	// for one 4-credit course, what each course earns alone: doubted, shown,
	// not counted; the single-course rule (4) is the award.
	out = resolveTyped(t, h, map[string]any{"sourceInstitution": "langara", "targetInstitution": "sfu", "asOfDate": "2010-09-01", "sourceCourses": []string{"PHYS 1125"}})
	if got := awarded(out); out.Award.TotalCredits != 4 || len(got) != 1 || strings.Contains(got[0], "PHYS 131") {
		t.Errorf("PHYS 1125 to SFU in 2010: award %v (%v cr), want the single-course rule, 4 cr", got, out.Award.TotalCredits)
	}
	doubted := false
	for _, m := range out.ExactMatches {
		if strings.Contains(m.Credit, " or LANG PHYS 1225") {
			doubted = m.Award == "doubtful" && m.Confidence < transfer.AwardMinConfidence && len(m.Doubts) > 0 && strings.Contains(m.AwardReason, "not counted")
			if !doubted {
				t.Errorf("the or-list rule: award %q, confidence %v, doubts %v, reason %q", m.Award, m.Confidence, m.Doubts, m.AwardReason)
			}
		}
	}
	if !doubted {
		t.Error("the or-list rule of PHYS 1125 to SFU is not among the exact matches")
	}
}

// optionWords writes a rule's options with their conditions.
func optionWords(opts []OptionView) string {
	var b strings.Builder
	for _, o := range opts {
		b.WriteString(describeTargets(o.Targets) + " if " + o.When + "; ")
	}
	return b.String()
}
