package transfer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// parseNotes parses credit text of LANG subject number to dest.
func parseNotes(t *testing.T, subject string, number int, dest, credit string) Rule {
	t.Helper()
	r := Parse(Row{Subject: subject, CourseCode: number, Source: "LANG", Destination: dest, Credit: credit, EffectiveStart: "Sep/20", EffectiveEnd: "present"}, nil)
	if !r.Parsed {
		t.Fatalf("%q not parsed: %s", credit, r.ParseProblem)
	}
	return r
}

// TestNoteWordings reads one credit text of each wording the notes parser
// supports (the texts are the real ones, some under another course).
func TestNoteWordings(t *testing.T) {
	u := func(subject, number string) catalog.Ref { return ref("langara", subject, number) }
	for _, c := range []struct {
		name, subject string
		number        int
		dest, credit  string
		want          []Note
	}{
		{"or ... if WHEN", "CHEM", 1120, "UBCV", "UBCV CHEM 1st (3); or UBCV CHEM 121 (4) if taken with LANG CHEM 1121",
			[]Note{{Kind: NoteConditional, Text: "or UBCV CHEM 121 (4) if taken with LANG CHEM 1121", Targets: ptr(set(crs("ubcv", "CHEM", "121", 4))),
				When: "taken with LANG CHEM 1121", With: []catalog.Ref{u("CHEM", "1121")}}}},
		{"if WHEN governs the rule's targets", "POLI", 1250, "SFU", "SFU POL 1XX (3), if SFU POL 231 already obtained.",
			[]Note{{Kind: NoteConditional, Text: "if SFU POL 231 already obtained.", AppliesToMain: true, When: "SFU POL 231 already obtained"}}},
		{"If WHEN, credit will be", "CPSC", 1150, "SFU", "SFU CMPT 120 (3), If credit already received for SFU CMPT 102 or SFU CMPT 103, credit will be SFU CMPT 104 (2).",
			[]Note{{Kind: NoteConditional, Text: "If credit already received for SFU CMPT 102 or SFU CMPT 103, credit will be SFU CMPT 104 (2).",
				Targets: ptr(set(crs("sfu", "CMPT", "104", 2))), When: "credit already received for SFU CMPT 102 or SFU CMPT 103"}}},
		{"students of a program may be granted", "STAT", 2281, "UVIC", "UVIC STAT 254 (1.5), Students in non-BEng program may be granted UVIC STAT 260 (1.5).",
			[]Note{{Kind: NoteConditional, Text: "Students in non-BEng program may be granted UVIC STAT 260 (1.5).",
				Targets: ptr(set(crs("uvic", "STAT", "260", 1.5))), When: "Students in non-BEng program"}}},
		{"student may request ... instead, two alternatives", "STAT", 1123, "SFU", "SFU BUEC 232 (3), Q. Student may request SFU STAT 101 (3) - Q or SFU STAT 201 (3) - Q instead.",
			[]Note{
				{Kind: NoteAlternative, Text: "Student may request SFU STAT 101 (3) - Q or SFU STAT 201 (3) - Q instead.", Targets: ptr(set(crs("sfu", "STAT", "101", 3, "Q")))},
				{Kind: NoteAlternative, Text: "Student may request SFU STAT 101 (3) - Q or SFU STAT 201 (3) - Q instead.", Targets: ptr(set(crs("sfu", "STAT", "201", 3, "Q")))},
			}},
		{"only one of, bare numbers taking the subject", "STAT", 1124, "KPU", "KPU MATH 1115 (3), Students may receive credit for only 1 of LANG STAT 1123, 1124, or 1181.",
			[]Note{{Kind: NotePreclusion, Text: "Students may receive credit for only 1 of LANG STAT 1123, 1124, or 1181.",
				OnlyOneOf: []catalog.Ref{u("STAT", "1123"), u("STAT", "1124"), u("STAT", "1181")}}}},
		{"only one of, without institution: the rule's course is at the source", "FINA", 2150, "SFU", "SFU CA 1XX (3), Students may receive credit for only one of FINA 2150 or FINA 2250., Art and Culture",
			[]Note{{Kind: NotePreclusion, Text: "Students may receive credit for only one of FINA 2150 or FINA 2250.",
				OnlyOneOf: []catalog.Ref{u("FINA", "2150"), u("FINA", "2250")}}}},
		{"cannot take: the rule's course added", "ENGL", 1128, "CAMO", "CAMO ENGL 151 (3), Cannot take LANG ENGL 1127 for further credit.",
			[]Note{{Kind: NotePreclusion, Text: "Cannot take LANG ENGL 1127 for further credit.", OnlyOneOf: []catalog.Ref{u("ENGL", "1128"), u("ENGL", "1127")}}}},
		{"precludes a list, the target left out", "ASTR", 1120, "KPU", "KPU ASTR 1120 (4), Precludes credit for KPU ASTR 1100 (4), KPU ASTR 1120 (4),KPU ASTR 3110 (3) & KPU ASTR3111 (3)",
			[]Note{{Kind: NotePreclusion, Text: "Precludes credit for KPU ASTR 1100 (4), KPU ASTR 1120 (4),KPU ASTR 3110 (3) & KPU ASTR3111 (3)",
				Precludes: []catalog.Ref{ref("kpu", "ASTR", "1100"), ref("kpu", "ASTR", "3110"), ref("kpu", "ASTR", "3111")}}}},
		{"excludes a slash of numbers, then a text clause", "HIST", 1120, "UBCO", "UBCO HIST 1st (3), Excludes UBCO HIST 214/224. Not for credit in Science.",
			[]Note{{Kind: NotePreclusion, Text: "Excludes UBCO HIST 214/224.", Precludes: []catalog.Ref{ref("ubco", "HIST", "214"), ref("ubco", "HIST", "224")}}}},
		{"exclude ... from further credit, course without institution", "ECON", 2280, "TRU", "TRU ECON 2XXX (3), Exclude ECON 3600 (3) from further credit",
			[]Note{{Kind: NotePreclusion, Text: "Exclude ECON 3600 (3) from further credit", Precludes: []catalog.Ref{ref("tru", "ECON", "3600")}}}},
		{"not both", "MATH", 1271, "SFU", "SFU MATH 152 (3), Students may not receive credit for both SFU MATH 152 & SFU MATH 158",
			[]Note{{Kind: NotePreclusion, Text: "Students may not receive credit for both SFU MATH 152 & SFU MATH 158", Precludes: []catalog.Ref{ref("sfu", "MATH", "158")}}}},
		{"may not take, a Note: prefix", "HIST", 1140, "UVIC", "UVIC HIST 1XX (1.5), Note: May not take UVIC HIST 240 for credit.",
			[]Note{{Kind: NotePreclusion, Text: "Note: May not take UVIC HIST 240 for credit.", Precludes: []catalog.Ref{ref("uvic", "HIST", "240")}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := parseNotes(t, c.subject, c.number, c.dest, c.credit)
			if !reflect.DeepEqual(r.Notes, c.want) {
				got, _ := json.MarshalIndent(r.Notes, "", "  ")
				want, _ := json.MarshalIndent(c.want, "", "  ")
				t.Errorf("notes of %q\ngot  %s\nwant %s", c.credit, got, want)
			}
			if len(r.Conditions) != 1 {
				t.Errorf("conditions %q: the notes must stay verbatim in Conditions", r.Conditions)
			}
			for _, n := range r.Notes {
				if !strings.Contains(r.Conditions[0], n.Text) {
					t.Errorf("note text %q is not in the conditions %q", n.Text, r.Conditions[0])
				}
			}
		})
	}
}

// TestNotNotes: text that looks close to a supported wording but must stay
// text only.
func TestNotNotes(t *testing.T) {
	for _, c := range []struct{ subject, dest, credit string }{
		// "If ..., waive": a capital If with a consequence is not a condition on the targets.
		{"PSYC", "UNBC", "UNBC PSYC 200 (6), If student completed only 2 of 3 waive prerequisite for UNBC PSYC 345 (3)."},
		// An "only one of" list at the destination that names none of the rule's targets.
		{"MATH", "SFU", "SFU MATH 152 (3), Credit is permitted for only one of SFU MATH 151, SFU MATH 154 or SFU MATH 157."},
		// After "X, or Y" (two target sets) a condition may govern Y alone.
		{"CHEM", "UBCV", "UBCV CHEM 1st (3), or UBCV CHEM 121 (4) if taken with LANG CHEM 1121"},
		// The condition names a course of one alternative only.
		{"ASIA", "SFU", "SFU ASC 202 (3) or SFU ASC 2XX (3), if student already has credit for SFU ASC 202."},
		// A range of courses and a condition after the targets: not read whole.
		{"FINA", "UBCV", "UBCV VISA 1st (3), Credit may be granted in UBCV VISA 210-270 after assessment of portfolio."},
		{"FINA", "UVIC", "UVIC ART 1XX (1.5), May be assigned UVIC ART 130 or UVIC ART 230 at dept. lev."},
		// Someone other than students may request: not a condition read.
		{"BUSM", "CAPU", "CAPU BADM 1XX (3), The department may request CAPU BADM 210 (3)."},
		// A cap, not an only-one-of.
		{"PSYC", "UBCV", "UBCV PSYC 2nd (3), Maximum credit for LANG PSYC 2317, LANG PSYC 2322 & LANG PSYC 2323 is 6 credits."},
		// Preclusion of courses at two institutions.
		{"PSYC", "UBCV", "UBCV PSYC 2nd (3), Precludes credit for UBCV PSYC 300 or SFU PSYC 300."},
		// Program restrictions, labels and grades.
		{"CHEM", "UBCV", "UBCV CHEM 1st (3), Not for credit in Science."},
		{"ART", "SFU", "SFU CA 1XX (3), Studio"},
		{"MATH", "TWU", "TWU MATH 1XX (3), Must have C or better to transfer."},
		// An alternative with a malformed course.
		{"GEOG", "UVIC", "UVIC GEOG 213 (1.5), or UVIC GEOG (1.5) 1XX"},
	} {
		r := parseNotes(t, c.subject, 1100, c.dest, c.credit)
		if len(r.Notes) != 0 {
			t.Errorf("%q read as notes %+v, want text only", c.credit, r.Notes)
		}
		if len(r.Conditions) != 1 {
			t.Errorf("%q: conditions %q", c.credit, r.Conditions)
		}
	}
}

// TestNotesLeaveRepairOnlyWhenText: an alternative of the notes read as a
// Note is no longer "left as text".
func TestNotesLeaveRepairOnlyWhenText(t *testing.T) {
	read := parseNotes(t, "BIOL", 2315, "UBCV", "UBCV BIOL 201 (3), or UBCV BIOL 2nd (3) if taken alone.")
	left := parseNotes(t, "GEOG", 1180, "UVIC", "UVIC GEOG 213 (1.5), or UVIC GEOG (1.5) 1XX")
	if slices.Contains(read.Repairs, "alternative in the notes left as text") || read.Confidence != 1 {
		t.Errorf("read alternative: repairs %q, confidence %v", read.Repairs, read.Confidence)
	}
	if !slices.Contains(left.Repairs, "alternative in the notes left as text") {
		t.Errorf("alternative left as text: repairs %q", left.Repairs)
	}
}

// findRule is the parsed rule of LANG subject code to dest effective from
// start whose credit text contains part.
func findRule(t *testing.T, rows []Row, rules []Rule, subject string, code int, dest, start, part string) *Rule {
	t.Helper()
	for i, r := range rows {
		if r.Subject == subject && r.CourseCode == code && r.Destination == dest && r.EffectiveStart == start && strings.Contains(r.Credit, part) {
			return &rules[i]
		}
	}
	t.Fatalf("no row LANG %s %d -> %s %s with %q", subject, code, dest, start, part)
	return nil
}

// catalogueCredits reads the credits of dir's langara/catalogue.json.
func catalogueCredits(t testing.TB, dir string) func(catalog.Ref) (float64, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "langara", "catalogue.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Courses []struct {
			Subject string   `json:"subject"`
			Code    int      `json:"course_code"`
			Credits *float64 `json:"credits"`
		} `json:"courses"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	m := map[catalog.Ref]float64{}
	for _, c := range f.Courses {
		if c.Credits != nil {
			m[catalog.Ref{Institution: "langara", Subject: c.Subject, Number: fmt.Sprint(c.Code)}] = *c.Credits
		}
	}
	return func(r catalog.Ref) (float64, bool) { v, ok := m[r]; return v, ok }
}

// reviewed is the real rules of d, parsed and reviewed with the
// catalogue's credits (a copy: the shared parsed rules are not changed).
func reviewed(t *testing.T, d testtools.Data) ([]Row, []Rule) {
	rows, parsed := loadReal(t, d.Dir)
	rules := slices.Clone(parsed)
	Review(rules, catalogueCredits(t, d.Dir))
	return rows, rules
}

// TestReviewOrListTypo: "PHYS 1125 (4) or PHYS 1225 (4) = SFU PHYS 120 +
// 121 + 131 (8)" (Sep/04-Dec/15), where each course alone earns 4 credits
// at SFU in the same period, is doubted; the "&" rule of Jan/16 is not.
func TestReviewOrListTypo(t *testing.T) {
	testtools.ForEachData(t, func(t *testing.T, d testtools.Data) {
		rows, rules := reviewed(t, d)
		or := findRule(t, rows, rules, "PHYS", 1125, "SFU", "Sep/04", "LANG PHYS 1125 (4) or LANG PHYS 1225 (4)")
		and := findRule(t, rows, rules, "PHYS", 1125, "SFU", "Jan/16", "LANG PHYS 1125 (4) & LANG PHYS 1225 (4)")
		if or.Confidence >= 1 || !slices.ContainsFunc(or.Doubts, func(s string) bool { return strings.Contains(s, `"&" typed as "or"`) }) {
			t.Errorf("or rule: confidence %v, doubts %q; want below 1 with the or-list doubt", or.Confidence, or.Doubts)
		}
		if !slices.ContainsFunc(or.Doubts, func(s string) bool { return strings.Contains(s, "out of proportion") }) {
			t.Errorf("or rule: doubts %q; want 8 credits for 4 out of proportion", or.Doubts)
		}
		if and.Confidence != 1 || len(and.Doubts) != 0 {
			t.Errorf("& rule: confidence %v, doubts %q; want 1 and none", and.Confidence, and.Doubts)
		}
		// Review again: the same, not doubts twice.
		c, n := or.Confidence, len(or.Doubts)
		Review(rules, catalogueCredits(t, d.Dir))
		if or.Confidence != c || len(or.Doubts) != n {
			t.Errorf("second review: confidence %v doubts %d, want %v %d", or.Confidence, len(or.Doubts), c, n)
		}
	})
}

// TestReviewUnitCases: the doubts on hand-written rules.
func TestReviewUnitCases(t *testing.T) {
	row := func(subject string, code int, dest, credit, start, end string) Rule {
		return Parse(Row{Subject: subject, CourseCode: code, Source: "LANG", Destination: dest, Credit: credit, EffectiveStart: start, EffectiveEnd: end}, nil)
	}
	rules := []Rule{
		row("PHYS", 1125, "SFU", "LANG PHYS 1125 (4) or LANG PHYS 1225 (4) = SFU PHYS 120 (3) & SFU PHYS 121 (3) & SFU PHYS 131 (2)", "Sep/04", "Dec/15"),
		row("PHYS", 1125, "SFU", "SFU PHYS 120 (3) & SFU PHYS 1XX (1)", "Sep/04", "Dec/15"),
		row("PHYS", 1225, "SFU", "SFU PHYS 121 (3) & SFU PHYS 1XX (1)", "Jan/10", "present"),
		// The same or-list where the parts alone are in force at another time: no or-list doubt.
		row("PHYS", 1125, "UBCV", "LANG PHYS 1125 (4) or LANG PHYS 1225 (4) = UBCV PHYS 1st (4)", "Sep/04", "Dec/15"),
		row("PHYS", 1225, "UBCV", "UBCV PHYS 1st (4)", "Jan/16", "present"),
		// 3 credits for a 1-credit course, stated: out of proportion.
		row("MATH", 1283, "TRU", "LANG MATH 1283 (1) = TRU MATH 124 (3)", "Jan/05", "present"),
		// 4 for 3 (1.33): not.
		row("CHEM", 1120, "TRU", "LANG CHEM 1120 (3) = TRU CHEM 1500 (4)", "Jan/05", "present"),
		// An unstructured note that looks like a condition.
		row("FINA", 1120, "UBCV", "UBCV VISA 1st (3), Credit may be granted in UBCV VISA 210-270 after assessment of portfolio.", "Jan/05", "present"),
	}
	Review(rules, nil)
	want := []struct {
		conf   float64
		doubts int
	}{{0.5, 2}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {0.8, 1}, {1, 0}, {0.9, 1}}
	for i, w := range want {
		if rules[i].Confidence != w.conf || len(rules[i].Doubts) != w.doubts {
			t.Errorf("%q: confidence %v doubts %q, want %v and %d doubts", rules[i].Raw, rules[i].Confidence, rules[i].Doubts, w.conf, w.doubts)
		}
	}
	// Without credits in the text nor a catalogue, no proportion is judged.
	one := []Rule{row("PHOT", 2490, "VIU", "VIU ARTS 2nd (3)", "Jan/18", "present")}
	Review(one, nil)
	if len(one[0].Doubts) != 0 {
		t.Errorf("no credits known: doubts %q", one[0].Doubts)
	}
	Review(one, func(catalog.Ref) (float64, bool) { return 1, true })
	if len(one[0].Doubts) != 1 || one[0].Confidence != 0.8 {
		t.Errorf("1 catalogue credit for 3: confidence %v doubts %q", one[0].Confidence, one[0].Doubts)
	}
}

// minNotesShare is the share of the clauses of the real notes that look
// like a condition on credit (an alternative or conditional target, a
// preclusion) that the parser reads into Notes; the test fails if it drops
// below.
const minNotesShare = 0.75

// TestNotesCoverage counts, on the real rows, the rules with notes, the
// clauses read into Notes by kind and those left text only by rough
// category, before (every clause text only, as on main) and after; with
// -v it prints the table and the doubts Review raises.
func TestNotesCoverage(t *testing.T) {
	testtools.ForEachData(t, testNotesCoverage)
}

func testNotesCoverage(t *testing.T, d testtools.Data) {
	rows, rules := reviewed(t, d)
	withConds, allRead := 0, 0
	clauseCount, readClauses := 0, 0
	before, after := map[string]int{}, map[string]int{}
	kinds := map[NoteKind]int{}
	for _, r := range rules {
		if len(r.Conditions) == 0 {
			continue
		}
		withConds++
		for _, n := range r.Notes {
			kinds[n.Kind]++
		}
		left := r.textOnly()
		if len(left) == 0 {
			allRead++
		}
		for _, c := range r.Conditions {
			for _, cl := range clauses(c) {
				clauseCount++
				before[textCategory(cl, len(r.Waives) > 0)]++
				if !slices.Contains(left, cl) {
					readClauses++
				}
			}
		}
		for _, cl := range left {
			after[textCategory(cl, len(r.Waives) > 0)]++
		}
	}
	t.Logf("%d rows, %d rules with notes, %d of them read whole into Notes; %d clauses, %d read into Notes", len(rows), withConds, allRead, clauseCount, readClauses)
	t.Logf("notes by kind: %d alternative_target, %d conditional_target, %d preclusion", kinds[NoteAlternative], kinds[NoteConditional], kinds[NotePreclusion])
	cats := []string{textAlternative, textConditional, textPreclusion, textWaiver, textRestriction, textLabel, textOther}
	t.Logf("%-28s %8s %8s", "clauses text only", "before", "after")
	for _, c := range cats {
		t.Logf("%-28s %8d %8d", c, before[c], after[c])
	}
	looking := func(m map[string]int) int { return m[textAlternative] + m[textConditional] + m[textPreclusion] }
	share := 1 - float64(looking(after))/float64(max(1, looking(before)))
	t.Logf("conditions on credit (alternative, conditional, preclusion) read into Notes: %d of %d (%.1f%%)", looking(before)-looking(after), looking(before), 100*share)

	doubts := map[string]int{}
	lowered := 0
	var examples []string
	for _, r := range rules {
		if len(r.Doubts) > 0 {
			lowered++
		}
		for _, dt := range r.Doubts {
			k := "notes as text"
			switch {
			case strings.Contains(dt, "out of proportion"):
				k = "out of proportion"
			case strings.Contains(dt, "typed as"):
				k = "or-list of whole semesters"
			}
			doubts[k]++
			examples = append(examples, fmt.Sprintf("%-26s %s: %s", k, r.Evidence.Reference, r.Raw))
		}
	}
	below := 0
	for _, r := range rules {
		if r.Parsed && r.Confidence < 1 {
			below++
		}
	}
	t.Logf("doubts: %v; %d rules doubted; %d parsed rules below confidence 1 (repairs or doubts)", doubts, lowered, below)
	sort.Strings(examples)
	for _, e := range examples {
		t.Logf("  %s", e)
	}
	if d.Whole {
		if share < minNotesShare {
			t.Errorf("share of conditions on credit read into Notes %.3f is below %.3f", share, minNotesShare)
		}
		if doubts["or-list of whole semesters"] == 0 || doubts["out of proportion"] == 0 {
			t.Errorf("doubts %v: want both kinds on the real rows", doubts)
		}
	}
}
