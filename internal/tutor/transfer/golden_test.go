package transfer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Helpers to write expected rules by hand.

func f(v float64) *float64 { return &v }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func ref(inst, subject, number string) catalog.Ref {
	return catalog.Ref{Institution: inst, Subject: subject, Number: number}
}

// lc is a Langara source course with the credits the text states.
func lc(subject, number string, credits float64) SourceCourse {
	return SourceCourse{Course: ref("langara", subject, number), Credits: f(credits)}
}

func req(cs ...SourceCourse) Group        { return Group{Kind: GroupRequired, N: len(cs), Courses: cs} }
func anyOne(cs ...SourceCourse) Group     { return Group{Kind: GroupOr, N: 1, Courses: cs} }
func nOf(n int, cs ...SourceCourse) Group { return Group{Kind: GroupNOf, N: n, Courses: cs} }

// own is the source of a row whose text names only targets: its course.
func own(subject, number string) []Group {
	return []Group{{Kind: GroupRequired, N: 1, Courses: []SourceCourse{{Course: ref("langara", subject, number)}}}}
}

func tgt(kind TargetKind, inst, subject, number string, credits *float64, desig ...string) Target {
	t := Target{Kind: kind, Course: ref(inst, subject, number), Credits: credits, Designations: desig}
	if len(desig) == 0 {
		t.Designations = nil
	}
	return t
}
func crs(inst, subject, number string, credits float64, desig ...string) Target {
	return tgt(TargetCourse, inst, subject, number, f(credits), desig...)
}
func generic(inst, subject, number string, credits float64, desig ...string) Target {
	return tgt(TargetGeneric, inst, subject, number, f(credits), desig...)
}
func exempt(t Target) Target     { t.Exemption = true; return t }
func ptr[T any](v T) *T          { return &v }
func set(ts ...Target) TargetSet { return TargetSet{Targets: ts} }

// golden is a real row of transfers.json (found by its key and credit
// text) and the rule expected from it, written by reading the row.
type golden struct {
	name                     string
	subject                  string
	code                     int
	dest, start, end, credit string
	want                     Rule
}

var goldens = []golden{
	{name: "single course", subject: "ABST", code: 1100, dest: "CAPU", start: "May/03", end: "present",
		credit: "CAPU HIST 209 (3)",
		want: Rule{Source: own("ABST", "1100"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("capu", "HIST", "209", 3))},
			EffectiveStart: day(2003, 5, 1)}},
	{name: "A & B = X, source named, credit conversion 3+1 -> 3", subject: "MATH", code: 2362, dest: "TRU", start: "Sep/10", end: "present",
		credit: "LANG MATH 2362 (3) & LANG MATH 2382 (1) = TRU MATH 2120 (3)",
		want: Rule{Source: []Group{req(lc("MATH", "2362", 3), lc("MATH", "2382", 1))}, Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("tru", "MATH", "2120", 3))},
			EffectiveStart: day(2010, 9, 1)}},
	{name: "generic target with a waiver", subject: "MATH", code: 2485, dest: "TWU", start: "Jan/19", end: "present",
		credit: "TWU MATH 2XX (3), Waive TWU MATH 330 (3)",
		want: Rule{Source: own("MATH", "2485"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("twu", "MATH", "2XX", 3))},
			Waives:         []Target{crs("twu", "MATH", "330", 3)},
			Conditions:     []string{"Waive TWU MATH 330 (3)"},
			EffectiveStart: day(2019, 1, 1)}},
	{name: "no credit with a designation, closed range", subject: "RECR", code: 3260, dest: "TRU", start: "Jan/09", end: "Dec/10",
		credit: "No credit, OL",
		want: Rule{Source: own("RECR", "3260"), Outcome: OutcomeNoCredit, Designations: []string{"OL"},
			EffectiveStart: day(2009, 1, 1), EffectiveEnd: day(2010, 12, 31)}},
	{name: "(0) credits only: exemption", subject: "CHEM", code: 1118, dest: "UVIC", start: "Sep/03", end: "present",
		credit: "UVIC CHEM 091 (0)",
		want: Rule{Source: own("CHEM", "1118"), Outcome: OutcomeExemption,
			Targets:        []TargetSet{set(exempt(crs("uvic", "CHEM", "091", 0)))},
			EffectiveStart: day(2003, 9, 1)}},
	{name: "Any 2 of", subject: "ENGL", code: 1100, dest: "EC", start: "Sep/12", end: "Aug/13",
		credit: "Any 2 of LANG ENGL 1100 (3) or LANG ENGL 1127 (3) or LANG ENGL 1128 (3) or LANG ENGL 1129 (3) or LANG ENGL 1130 (3) = EC ENGL 100 (3) & EC ENGL 101 (3)",
		want: Rule{Source: []Group{nOf(2, lc("ENGL", "1100", 3), lc("ENGL", "1127", 3), lc("ENGL", "1128", 3), lc("ENGL", "1129", 3), lc("ENGL", "1130", 3))},
			Outcome:        OutcomeCredit,
			Targets:        []TargetSet{set(crs("ec", "ENGL", "100", 3), crs("ec", "ENGL", "101", 3))},
			EffectiveStart: day(2012, 9, 1), EffectiveEnd: day(2013, 8, 31)}},
	{name: "A & one of B, C, D, E", subject: "FINA", code: 1120, dest: "UBCV", start: "May/99", end: "Aug/10",
		credit: "LANG FINA 1120 (3) & one of LANG FINA 1140 (3), LANG FINA 1130 (3), LANG FINA 1170 (3), LANG FINA 1160 (3) = UBCV VISA 180 (3) & UBCV VISA 183 (3)",
		want: Rule{Source: []Group{req(lc("FINA", "1120", 3)), anyOne(lc("FINA", "1140", 3), lc("FINA", "1130", 3), lc("FINA", "1170", 3), lc("FINA", "1160", 3))},
			Outcome:        OutcomeCredit,
			Targets:        []TargetSet{set(crs("ubcv", "VISA", "180", 3), crs("ubcv", "VISA", "183", 3))},
			EffectiveStart: day(1999, 5, 1), EffectiveEnd: day(2010, 8, 31)}},
	{name: "two subjects joined by a slash", subject: "GEOG", code: 1105, dest: "OC", start: "May/22", end: "present",
		credit: "OC GEOG/EESC 1XX (3)",
		want: Rule{Source: own("GEOG", "1105"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("oc", "GEOG", "1XX", 3)), set(generic("oc", "EESC", "1XX", 3))},
			Repairs:        []string{"subjects joined by a slash read as alternatives"},
			EffectiveStart: day(2022, 5, 1)}},
	{name: "level credit", subject: "AHIS", code: 1110, dest: "EC", start: "Sep/13", end: "present",
		credit: "EC AHIS 100 lev (6)",
		want: Rule{Source: own("AHIS", "1110"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("ec", "AHIS", "100LEV", 6))},
			EffectiveStart: day(2013, 9, 1)}},
	{name: "credits not given", subject: "RELS", code: 1220, dest: "DOUG", start: "Sep/04", end: "present",
		credit: "DOUG HUMS 1172 (-)",
		want: Rule{Source: own("RELS", "1220"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(tgt(TargetCourse, "doug", "HUMS", "1172", nil))},
			Repairs:        []string{"credits not given"},
			EffectiveStart: day(2004, 9, 1)}},
	{name: "(0) Exemption beside credit", subject: "INTB", code: 3400, dest: "SFU", start: "May/10", end: "present",
		credit: "SFU BUS 432 (0), Exemption & SFU BUS 2XX (3)",
		want: Rule{Source: own("INTB", "3400"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(exempt(crs("sfu", "BUS", "432", 0)), generic("sfu", "BUS", "2XX", 3))},
			EffectiveStart: day(2010, 5, 1)}},
	{name: "alternatives conjoined by ', &', typos repaired", subject: "STAT", code: 1181, dest: "SFU", start: "Sep/04", end: "Aug/20",
		credit: "LANG STAT 1181 (3) & LANG STAT 1182 (1) = SFU STAT 201(3) or SFU STAT 203 (3) or SFUSTAT 205 (3), & SFU ACMA 1XX(1) or BUS 232 (4) Student's choice",
		want: Rule{Source: []Group{req(lc("STAT", "1181", 3), lc("STAT", "1182", 1))}, Outcome: OutcomeCredit,
			Targets: []TargetSet{
				set(crs("sfu", "STAT", "201", 3), generic("sfu", "ACMA", "1XX", 1)),
				set(crs("sfu", "STAT", "201", 3), crs("sfu", "BUS", "232", 4)),
				set(crs("sfu", "STAT", "203", 3), generic("sfu", "ACMA", "1XX", 1)),
				set(crs("sfu", "STAT", "203", 3), crs("sfu", "BUS", "232", 4)),
				set(crs("sfu", "STAT", "205", 3), generic("sfu", "ACMA", "1XX", 1)),
				set(crs("sfu", "STAT", "205", 3), crs("sfu", "BUS", "232", 4)),
			},
			Conditions:     []string{"Student's choice"},
			Repairs:        []string{"course without institution read at the destination", "institution code glued to subject", "no space before credits"},
			EffectiveStart: day(2004, 9, 1), EffectiveEnd: day(2020, 8, 31)}},
	{name: "alternative target sets after ', or'", subject: "BIOL", code: 1190, dest: "UBCO", start: "Sep/99", end: "present",
		credit: "LANG BIOL 1190 (3) & LANG BIOL 1191 (3) = UBCO BIOL 131 (3) & UBCO BIOL 133 (3), or UBCO HMKN 190 (3) & UBCO HMKN 191 (3)",
		want: Rule{Source: []Group{req(lc("BIOL", "1190", 3), lc("BIOL", "1191", 3))}, Outcome: OutcomeCredit,
			Targets: []TargetSet{
				set(crs("ubco", "BIOL", "131", 3), crs("ubco", "BIOL", "133", 3)),
				set(crs("ubco", "HMKN", "190", 3), crs("ubco", "HMKN", "191", 3)),
			},
			EffectiveStart: day(1999, 9, 1)}},
	{name: "elective with a condition", subject: "AHIS", code: 1315, dest: "VCC", start: "Sep/22", end: "present",
		credit: "VCC UNSP 1XXX (3), Suitable for use towards Humanities requirement",
		want: Rule{Source: own("AHIS", "1315"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(tgt(TargetElective, "vcc", "UNSP", "1XXX", f(3)))},
			Conditions:     []string{"Suitable for use towards Humanities requirement"},
			EffectiveStart: day(2022, 9, 1)}},
	{name: "A or B = X", subject: "EDAS", code: 1111, dest: "YUKO", start: "Sep/16", end: "present",
		credit: "LANG EDAS 1111 (4) or LANG EDAS 1211 (4) = YUKO EA 106 (3)",
		want: Rule{Source: []Group{anyOne(lc("EDAS", "1111", 4), lc("EDAS", "1211", 4))}, Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("yuko", "EA", "106", 3))},
			EffectiveStart: day(2016, 9, 1)}},
	{name: "(1.5) credit conversion with a note", subject: "ABST", code: 1100, dest: "UVIC", start: "May/14", end: "present",
		credit: "UVIC HSTR 200 (1.5), May be taken more than once for credit in different topics with permission of the department.",
		want: Rule{Source: own("ABST", "1100"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("uvic", "HSTR", "200", 1.5))},
			Conditions:     []string{"May be taken more than once for credit in different topics with permission of the department."},
			EffectiveStart: day(2014, 5, 1)}},
	{name: "individual assessment", subject: "AHIS", code: 1119, dest: "SFU", start: "May/99", end: "Apr/03",
		credit: "Individual assessment",
		want: Rule{Source: own("AHIS", "1119"), Outcome: OutcomeAssessment,
			EffectiveStart: day(1999, 5, 1), EffectiveEnd: day(2003, 4, 30)}},
	{name: "designation per target, ', Q' and ' - Q'", subject: "CHEM", code: 1154, dest: "SFU", start: "Sep/14", end: "present",
		credit: "SFU CHEM 122 (2), Q & SFU CHEM 126 (2) - Q",
		want: Rule{Source: own("CHEM", "1154"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("sfu", "CHEM", "122", 2, "Q"), crs("sfu", "CHEM", "126", 2, "Q"))},
			EffectiveStart: day(2014, 9, 1)}},
	{name: "ordinal generic (ARTS 1st)", subject: "ABST", code: 1100, dest: "UBCO", start: "May/05", end: "present",
		credit: "UBCO ARTS 1st (3)",
		want: Rule{Source: own("ABST", "1100"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("ubco", "ARTS", "1st", 3))},
			EffectiveStart: day(2005, 5, 1)}},
	{name: "2nd-year generic, exempt from two (\"and\")", subject: "MATH", code: 2485, dest: "UBCV", start: "Jan/19", end: "present",
		credit: "UBCV CPSC 2nd (3), Exempt UBCV CPSC 302 and UBCV CPSC 303.",
		want: Rule{Source: own("MATH", "2485"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("ubcv", "CPSC", "2nd", 3))},
			Waives:         []Target{tgt(TargetCourse, "ubcv", "CPSC", "302", nil), tgt(TargetCourse, "ubcv", "CPSC", "303", nil)},
			Conditions:     []string{"Exempt UBCV CPSC 302 and UBCV CPSC 303."},
			EffectiveStart: day(2019, 1, 1)}},
	{name: "1XXX generic, exempt", subject: "CHEM", code: 1154, dest: "TRU", start: "Sep/14", end: "present",
		credit: "TRU CHEM 1XXX (3), Exempt TRU CHEM 1520",
		want: Rule{Source: own("CHEM", "1154"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("tru", "CHEM", "1XXX", 3))},
			Waives:         []Target{tgt(TargetCourse, "tru", "CHEM", "1520", nil)},
			Conditions:     []string{"Exempt TRU CHEM 1520"},
			EffectiveStart: day(2014, 9, 1)}},
	{name: "superseded: no credit from Sep/21", subject: "AHIS", code: 1111, dest: "KPU", start: "Sep/21", end: "present",
		credit: "No credit",
		want:   Rule{Source: own("AHIS", "1111"), Outcome: OutcomeNoCredit, EffectiveStart: day(2021, 9, 1)}},
	{name: "superseded: credit until Aug/21", subject: "AHIS", code: 1111, dest: "KPU", start: "Sep/12", end: "Aug/21",
		credit: "KPU ARTH 2124 (3)",
		want: Rule{Source: own("AHIS", "1111"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("kpu", "ARTH", "2124", 3))},
			EffectiveStart: day(2012, 9, 1), EffectiveEnd: day(2021, 8, 31)}},
	{name: "Q/B-Sci and - Q designations", subject: "PHYS", code: 1125, dest: "SFU", start: "Jan/16", end: "present",
		credit: "SFU PHYS 120 (3), Q/B-Sci & SFU PHYS 132 (1) - Q",
		want: Rule{Source: own("PHYS", "1125"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("sfu", "PHYS", "120", 3, "Q/B-Sci"), crs("sfu", "PHYS", "132", 1, "Q"))},
			EffectiveStart: day(2016, 1, 1)}},
	{name: "X or Y", subject: "ANTH", code: 1500, dest: "DOUG", start: "Sep/08", end: "present",
		credit: "DOUG ANTH 2220 (3) or DOUG SOCI 2880 (3)",
		want: Rule{Source: own("ANTH", "1500"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("doug", "ANTH", "2220", 3)), set(crs("doug", "SOCI", "2880", 3))},
			EffectiveStart: day(2008, 9, 1)}},
	{name: "designation for the whole rule", subject: "ASTR", code: 1101, dest: "SFU", start: "Sep/07", end: "present",
		credit: "LANG ASTR 1101 (4) & LANG ASTR 1102 (4) = SFU PHYS 190 (3) & SFU PHYS 1XX (5), Q/B-Sci",
		want: Rule{Source: []Group{req(lc("ASTR", "1101", 4), lc("ASTR", "1102", 4))}, Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("sfu", "PHYS", "190", 3), generic("sfu", "PHYS", "1XX", 5))},
			Designations:   []string{"Q/B-Sci"},
			EffectiveStart: day(2007, 9, 1)}},
	{name: "Exempt clause", subject: "ASTR", code: 3310, dest: "UBCV", start: "Sep/07", end: "present",
		credit: "UBCV ASTR 1st (3), Exempt UBCV ASTR 310.",
		want: Rule{Source: own("ASTR", "3310"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("ubcv", "ASTR", "1st", 3))},
			Waives:         []Target{tgt(TargetCourse, "ubcv", "ASTR", "310", nil)},
			Conditions:     []string{"Exempt UBCV ASTR 310."},
			EffectiveStart: day(2007, 9, 1)}},
	{name: "A & B = generic, exempt from three", subject: "BIOL", code: 1115, dest: "UBCV", start: "May/99", end: "Aug/03",
		credit: "LANG BIOL 1115 (3) & LANG BIOL 1215 (3) = UBCV BIOL 1st (7), Exempt UBCV BIOL 111, UBCV BIOL 121, UBCV BIOL 140.",
		want: Rule{Source: []Group{req(lc("BIOL", "1115", 3), lc("BIOL", "1215", 3))}, Outcome: OutcomeCredit,
			Targets: []TargetSet{set(generic("ubcv", "BIOL", "1st", 7))},
			Waives: []Target{tgt(TargetCourse, "ubcv", "BIOL", "111", nil), tgt(TargetCourse, "ubcv", "BIOL", "121", nil),
				tgt(TargetCourse, "ubcv", "BIOL", "140", nil)},
			Conditions:     []string{"Exempt UBCV BIOL 111, UBCV BIOL 121, UBCV BIOL 140."},
			EffectiveStart: day(1999, 5, 1), EffectiveEnd: day(2003, 8, 31)}},
	{name: "alternative without institution and a condition", subject: "CPSC", code: 1150, dest: "UBCV", start: "Sep/03", end: "present",
		credit: "UBCV CPSC 1st (3), or APSC 160 (3) for Engineering students",
		want: Rule{Source: own("CPSC", "1150"), Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(generic("ubcv", "CPSC", "1st", 3)), set(crs("ubcv", "APSC", "160", 3))},
			Conditions:     []string{"for Engineering students"},
			Repairs:        []string{"course without institution read at the destination"},
			EffectiveStart: day(2003, 9, 1)}},
	{name: "three alternatives, each designated", subject: "AHIS", code: 1216, dest: "SFU", start: "Sep/11", end: "present",
		credit: "SFU GSWS 1XX (3), B-Hum/Soc, or SFU CA 1ARTHIS (3) - B- Hum/Soc or SFU CA 1ARTCULT (3) - B-Hum/Soc",
		want: Rule{Source: own("AHIS", "1216"), Outcome: OutcomeCredit,
			Targets: []TargetSet{
				set(generic("sfu", "GSWS", "1XX", 3, "B-Hum/Soc")),
				set(generic("sfu", "CA", "1ARTHIS", 3, "B-Hum/Soc")),
				set(generic("sfu", "CA", "1ARTCULT", 3, "B-Hum/Soc")),
			},
			EffectiveStart: day(2011, 9, 1)}},
	{name: "trailing condition that waives a prerequisite, not a course", subject: "PSYC", code: 2324, dest: "UNBC", start: "Jan/17", end: "Aug/19",
		credit: "LANG PSYC 2324 (3) & LANG PSYC 2424 (3) & LANG PSYC 2425 (3) = UNBC PSYC 200 (6) & UNBC PSYC 345 (3), If student completed only 2 of 3, waive prerequisite for UNBC PSYC 345 (3)",
		want: Rule{Source: []Group{req(lc("PSYC", "2324", 3), lc("PSYC", "2424", 3), lc("PSYC", "2425", 3))}, Outcome: OutcomeCredit,
			Targets:        []TargetSet{set(crs("unbc", "PSYC", "200", 6), crs("unbc", "PSYC", "345", 3))},
			Conditions:     []string{"If student completed only 2 of 3, waive prerequisite for UNBC PSYC 345 (3)"},
			EffectiveStart: day(2017, 1, 1), EffectiveEnd: day(2019, 8, 31)}},
	{name: "conditional target governing the main one, and one taken alone (issue 22)", subject: "BIOL", code: 2315, dest: "UBCV", start: "May/99", end: "present",
		credit: "UBCV BIOL 201 (3), if Organic Chemistry taken as a co-requisite; or UBCV BIOL 2nd (3) if taken alone.",
		want: Rule{Source: own("BIOL", "2315"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(crs("ubcv", "BIOL", "201", 3))},
			Conditions: []string{"if Organic Chemistry taken as a co-requisite; or UBCV BIOL 2nd (3) if taken alone."},
			Notes: []Note{
				{Kind: NoteConditional, Text: "if Organic Chemistry taken as a co-requisite", AppliesToMain: true, When: "Organic Chemistry taken as a co-requisite"},
				{Kind: NoteConditional, Text: "or UBCV BIOL 2nd (3) if taken alone.", Targets: ptr(set(generic("ubcv", "BIOL", "2nd", 3))), When: "taken alone", Alone: true},
			},
			EffectiveStart: day(1999, 5, 1)}},
	{name: "only one of two source courses (issue 22)", subject: "ENGL", code: 1128, dest: "SFU", start: "Sep/16", end: "present",
		credit: "SFU ENGL 1XX (3), W/B-Hum. Credit granted for only one of LANG ENGL 1127 or LANG ENGL 1128.",
		want: Rule{Source: own("ENGL", "1128"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(generic("sfu", "ENGL", "1XX", 3, "W/B-Hum"))},
			Conditions: []string{"Credit granted for only one of LANG ENGL 1127 or LANG ENGL 1128."},
			Notes: []Note{{Kind: NotePreclusion, Text: "Credit granted for only one of LANG ENGL 1127 or LANG ENGL 1128.",
				OnlyOneOf: []catalog.Ref{ref("langara", "ENGL", "1127"), ref("langara", "ENGL", "1128")}}},
			EffectiveStart: day(2016, 9, 1)}},
	{name: "only one of, a bare course taking the institution before it (issue 22)", subject: "PSYC", code: 1195, dest: "UBCV", start: "Sep/19", end: "Dec/19",
		credit: "UBCV PSYC 2nd (3), Credit for only one of LANG PSYC 1195 (Fall 2019) or PSYC 2329.",
		want: Rule{Source: own("PSYC", "1195"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(generic("ubcv", "PSYC", "2nd", 3))},
			Conditions: []string{"Credit for only one of LANG PSYC 1195 (Fall 2019) or PSYC 2329."},
			Notes: []Note{{Kind: NotePreclusion, Text: "Credit for only one of LANG PSYC 1195 (Fall 2019) or PSYC 2329.",
				OnlyOneOf: []catalog.Ref{ref("langara", "PSYC", "1195"), ref("langara", "PSYC", "2329")}}},
			EffectiveStart: day(2019, 9, 1), EffectiveEnd: day(2019, 12, 31)}},
	{name: "destination course precluded (issue 22)", subject: "BIOL", code: 2315, dest: "UBCO", start: "May/99", end: "Aug/13",
		credit: "UBCO BIOL 2nd (3), Precludes credit for UBCO BIOL 311.",
		want: Rule{Source: own("BIOL", "2315"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(generic("ubco", "BIOL", "2nd", 3))},
			Conditions: []string{"Precludes credit for UBCO BIOL 311."},
			Notes: []Note{{Kind: NotePreclusion, Text: "Precludes credit for UBCO BIOL 311.",
				Precludes: []catalog.Ref{ref("ubco", "BIOL", "311")}}},
			EffectiveStart: day(1999, 5, 1), EffectiveEnd: day(2013, 8, 31)}},
	{name: "alternative target in the notes, course without institution (issue 22)", subject: "BIOL", code: 1111, dest: "SFU", start: "Sep/18", end: "present",
		credit: "SFU HSCI 100 (3), B-Sci & SFU HSCI 1XX (1) B-Sci or student may request BISC 1XX (4) - B-Sci",
		want: Rule{Source: own("BIOL", "1111"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(crs("sfu", "HSCI", "100", 3, "B-Sci"), generic("sfu", "HSCI", "1XX", 1, "B-Sci"))},
			Conditions: []string{"or student may request BISC 1XX (4) - B-Sci"},
			Notes: []Note{{Kind: NoteAlternative, Text: "or student may request BISC 1XX (4) - B-Sci",
				Targets: ptr(set(generic("sfu", "BISC", "1XX", 4, "B-Sci")))}},
			Repairs:        []string{"course without institution read at the destination"},
			EffectiveStart: day(2018, 9, 1)}},
	{name: "an only-one-of list at the destination naming the target: the others precluded (issue 22)", subject: "MATH", code: 1174, dest: "UNBC", start: "May/99", end: "Dec/16",
		credit: "UNBC MATH 152 (3), Credit awarded for only one of UNBC MATH 100 or UNBC MATH 152",
		want: Rule{Source: own("MATH", "1174"), Outcome: OutcomeCredit,
			Targets:    []TargetSet{set(crs("unbc", "MATH", "152", 3))},
			Conditions: []string{"Credit awarded for only one of UNBC MATH 100 or UNBC MATH 152"},
			Notes: []Note{{Kind: NotePreclusion, Text: "Credit awarded for only one of UNBC MATH 100 or UNBC MATH 152",
				Precludes: []catalog.Ref{ref("unbc", "MATH", "100")}}},
			EffectiveStart: day(1999, 5, 1), EffectiveEnd: day(2016, 12, 31)}},
}

// complete fills what every golden shares: the row's identity, the
// evidence, the raw text, Parsed and the confidence its repairs give.
func (g golden) complete() Rule {
	w := g.want
	w.Course = ref("langara", g.subject, fmt.Sprint(g.code))
	dir := catalog.NewDirectory()
	in, _ := dir.Lookup(g.dest)
	w.Destination = in.Key
	w.Raw, w.Parsed = g.credit, true
	w.Evidence = Evidence{Source: "BC Transfer Guide", URL: "https://www.bctransferguide.ca/",
		Reference: fmt.Sprintf("LANG %s %d to %s, effective %s", g.subject, g.code, g.dest, g.start), Accessed: accessed}
	w.Confidence = 1.0 - 0.1*float64(len(w.Repairs))
	w.Confidence = float64(int(w.Confidence*100+0.5)) / 100
	return w
}

func TestGoldenRealRows(t *testing.T) {
	testtools.ForEachData(t, testGoldenRealRows)
}

func testGoldenRealRows(t *testing.T, d testtools.Data) {
	rows, _ := loadReal(t, d.Dir)
	p := Parser{Dir: catalog.NewDirectory(), Accessed: accessed}
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			var row *Row
			for i, r := range rows {
				if r.Subject == g.subject && r.CourseCode == g.code && r.Destination == g.dest &&
					r.EffectiveStart == g.start && r.EffectiveEnd == g.end && r.Credit == g.credit {
					row = &rows[i]
					break
				}
			}
			if row == nil {
				t.Fatalf("no row LANG %s %d -> %s %s-%s with credit %q in transfers.json", g.subject, g.code, g.dest, g.start, g.end, g.credit)
			}
			got, want := p.Parse(*row), g.complete()
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.MarshalIndent(got, "", "  ")
				wj, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("Parse(%q)\ngot  %s\nwant %s", g.credit, gj, wj)
			}
		})
	}
}
