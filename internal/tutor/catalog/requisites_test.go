package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// codes is the "SUBJECT NUMBER" of each ref.
func codes(refs []Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Code())
	}
	return out
}

// goldenRequisites are real texts of the shared data (SFU outlines'
// prerequisites and corequisites; Langara catalogue descriptions'
// prerequisite and corequisite paragraphs) with the trees written by
// reading them, in Expr.String's compact form.
var goldenRequisites = []struct {
	inst, text string
	expr       string
	co         string
	rec        []string
	notes      int
}{
	// SFU ACMA 101, corequisites: the subject carries over, the
	// conjunction before the last item makes the list any.
	{"sfu", "MATH 150, 151, 154 or 157.", "any(MATH 150, MATH 151, MATH 154, MATH 157)", "", nil, 0},
	{"sfu", "CMPT 125 or CMPT 135, with a minimum grade of C-.", "any(CMPT 125[C-], CMPT 135[C-])", "", nil, 0},
	{"sfu", "(CMPT 125 or CMPT 135) and MACM 101, both with a minimum grade of C-.", "all(any(CMPT 125[C-], CMPT 135[C-]), MACM 101[C-])", "", nil, 0},
	{"sfu", "BPK 142, STAT 201 and two of BPK 201, 205 and 207.", "all(BPK 142, STAT 201, 2of(BPK 201, BPK 205, BPK 207))", "", nil, 0},
	{"sfu", "CA (or FPA) 360 and 366. Corequisite: CA 367.", "all(any(CA 360, FPA 360), any(CA 366, FPA 366))", "CA 367~", nil, 0},
	{"sfu", "EDUC 401/402 or corequisite EDUC 403.", "any(all(EDUC 401, EDUC 402), EDUC 403~)", "", nil, 0},
	{"sfu", "GEOG 251 or one of STAT 201, 203 (formerly 103), 205, or 270; one of GEOG 351, 352, 353, 355 or 356.",
		"all(any(GEOG 251, STAT 201, STAT 203, STAT 103, STAT 205, STAT 270), any(GEOG 351, GEOG 352, GEOG 353, GEOG 355, GEOG 356))", "", nil, 0},
	{"sfu", "MBB 331 (or BISC 331) or equivalent.", `any(MBB 331, BISC 331, "equivalent")`, "", nil, 0},
	{"sfu", "MBB/HSCI 426 or permission of the instructor.", `any(MBB 426, HSCI 426, "permission of the instructor")`, "", nil, 0},
	{"sfu", "90 units, including HSCI 204 and HSCI 230 (or 330), with a minimum grade of C-.",
		`all("90 units", HSCI 204[C-], any(HSCI 230[C-], HSCI 330[C-]))`, "", nil, 0},
	{"sfu", "BISC 202 or 204, both with a minimum grade of C-. Recommended: BISC 300.", "any(BISC 202[C-], BISC 204[C-])", "", []string{"BISC 300"}, 0},
	{"sfu", "ECON 302, 305 and 331, all with a minimum grade of C-. Students who have completed both MATH 232 and 251 may substitute them for ECON 331. Entry into this course requires a minimum CGPA of 3.0 or permission of the department.",
		`all(ECON 302[C-], ECON 305[C-], ECON 331[C-], "Entry into this course requires a minimum CGPA of 3.0 or permission of the department")`, "", nil, 1},
	{"sfu", "CMPT 275 or CMPT 276, at least 80 units, CGPA and UDGPA over 3.0, enrolled in any CS major program. Participation in the practicum is competitive and an application must be submitted to the Undergraduate Chair by a defined due date announced each term.",
		`all(any(CMPT 275, CMPT 276), "at least 80 units", "CGPA and UDGPA over 3.0", "enrolled in any CS major program")`, "", nil, 1},
	{"sfu", "INDG (or FNST) 101 or 201W.", "any(INDG 101, FNST 101, INDG 201W, FNST 201W)", "", nil, 0},
	{"sfu", "BISC 101 or 102; and completion of fewer than 60 units.", `all(any(BISC 101, BISC 102), "completion of fewer than 60 units")`, "", nil, 0},
	{"sfu", "or Prerequisite: EASC 301 with a grade of C- or better. EASC 207 recommended.", "EASC 301[C-]", "", []string{"EASC 207"}, 0},
	{"sfu", "45 units.", `"45 units"`, "", nil, 0},
	{"sfu", "PSYC 201, 260.", "all(PSYC 201, PSYC 260)", "", nil, 0},
	// Langara catalogue, CPSC 1150: test scores (MDT 85) and school
	// courses are not courses; "1173/1183" is a pair.
	{"langara", `One of the following: MDT 85; a minimum "B" grade in Precalculus 12; one of MATH 1171, 1173/1183, 1174; a minimum "C" grade in one of CPSC 1040 or 1045; or a minimum "B" grade in CPSC 1050.`,
		`any("MDT 85", "a minimum \"B\" grade in Precalculus 12", MATH 1171, all(MATH 1173, MATH 1183), MATH 1174, CPSC 1040[C], CPSC 1045[C], CPSC 1050[B])`, "", nil, 0},
	// CPSC 2150.
	{"langara", `A minimum "C" grade in CPSC 1160; or permission of department. CPSC 1181 is recommended. Prerequisites are valid for only three years.`,
		`any(CPSC 1160[C], "permission of department")`, "", []string{"CPSC 1181"}, 1},
	// MATH 2365.
	{"langara", `A minimum "C-" grade in one of the following: MATH 1271, 1273, 1274, or 1275; and MATH 1252 or 2362 (MATH 1252 or 2362 may be taken concurrently). Prerequisites are valid for only three years.`,
		"all(any(MATH 1271[C-], MATH 1273[C-], MATH 1274[C-], MATH 1275[C-]), any(MATH 1252~, MATH 2362~))", "", nil, 1},
	// BIOL 2415.
	{"langara", `A minimum "C+" grade in BIOL 1115 and 1215; or permission of the instructor.`,
		`any(all(BIOL 1115[C+], BIOL 1215[C+]), "permission of the instructor")`, "", nil, 0},
	// JOUR 2475.
	{"langara", `A minimum "C-" grade in JOUR 2279 and 2380. JOUR 2380 may be taken concurrently.`, "all(JOUR 2279[C-], JOUR 2380[C-]~)", "", nil, 0},
	// NURS 4109, prerequisites and corequisites.
	{"langara", `A minimum "C+" grade in NURS 3309, 3321, and 3362; and an "S" grade in NURS 3363.`,
		"all(NURS 3309[C+], NURS 3321[C+], NURS 3362[C+], NURS 3363[S])", "", nil, 0},
	{"langara", "NURS 4122, 4161, and 4163.", "all(NURS 4122, NURS 4161, NURS 4163)", "", nil, 0},
	// HSCI 2215: the grade covers both parts.
	{"langara", `A minimum "C" grade in HSCI 1130 and one of the following: BIOL 1111, 1115, 1116, 1175, 1190 or HKIN 1190.`,
		"all(HSCI 1130[C], any(BIOL 1111[C], BIOL 1115[C], BIOL 1116[C], BIOL 1175[C], BIOL 1190[C], HKIN 1190[C]))", "", nil, 0},
	// PHYS 1125: each alternative has its own grade; "MATH courses may
	// be taken concurrently" marks every MATH course.
	{"langara", `A minimum "B" grade in Physics 12, a minimum "C" grade in PHYS 1118, or a satisfactory score on the Physics Diagnostic Test; and a minimum "C-" grade in one of the following: MATH 1171, 1173 and 1183, 1175, or 1253 (MATH courses may be taken concurrently).`,
		`all(any("A minimum \"B\" grade in Physics 12", PHYS 1118[C], "a satisfactory score on the Physics Diagnostic Test"), any(MATH 1171[C-]~, all(MATH 1173[C-]~, MATH 1183[C-]~), MATH 1175[C-]~, MATH 1253[C-]~))`, "", nil, 0},
	// BUSM 3500.
	{"langara", `Completion of a minimum of 30 credits including a minimum "C" grade in six credits of university-transferable English or communications; a minimum "C-" grade in FMGT 1116, 1215, or 2293; and a minimum "C-" grade in MARK 1115.`,
		`all("Completion of a minimum of 30 credits including a minimum \"C\" grade in six credits of university-transferable English or communications", any(FMGT 1116[C-], FMGT 1215[C-], FMGT 2293[C-]), MARK 1115[C-])`, "", nil, 0},
	// CHEM 2416.
	{"langara", `A minimum "C-" grade in CHEM 2316 or equivalent. Prerequisites are valid for only three years.`, `any(CHEM 2316[C-], "equivalent")`, "", nil, 1},
	// NURS 5265: a described list after a colon.
	{"langara", `A minimum "C+" grade in all second term PDD courses: NURS 5100, 5120, 5125, 5145, and 5150.`,
		"all(NURS 5100[C+], NURS 5120[C+], NURS 5125[C+], NURS 5145[C+], NURS 5150[C+])", "", nil, 0},
	// A Langara English requirement: test levels and school courses
	// are other; the "S" grade holds for the run of numbers after it.
	{"langara", `One of the following: LET 3; a minimum 70% in English First Peoples 12, English Studies 12, Literary Studies 12, or equivalent; a minimum "C" grade in ENGL 1120; or an "S" grade in ENGL 1107, 1108, or 1110.`,
		`any("LET 3", "a minimum 70% in English First Peoples 12, English Studies 12, Literary Studies 12, or equivalent", ENGL 1120[C], ENGL 1107[S], ENGL 1108[S], ENGL 1110[S])`, "", nil, 0},
	{"langara", `A minimum "C-" grade in six of the following: FINA 1111, 1120, 1131, 1142, 1143, 1161, 1171, or 1220.`,
		"6of(FINA 1111[C-], FINA 1120[C-], FINA 1131[C-], FINA 1142[C-], FINA 1143[C-], FINA 1161[C-], FINA 1171[C-], FINA 1220[C-])", "", nil, 0},
	{"langara", `A minimum "C-" grade in LIBR 1111 taken within the last three years; or approval of the department.`,
		`any(all(LIBR 1111[C-], "taken within the last three years"), "approval of the department")`, "", nil, 0},
	{"sfu", "Students complete one of: (BISC 205 and MBB 231), or (BPK 205 and MBB 231), or BPK 306, or HSCI 321; each with a minimum grade of C-.",
		"any(all(BISC 205[C-], MBB 231[C-]), all(BPK 205[C-], MBB 231[C-]), BPK 306[C-], HSCI 321[C-])", "", nil, 0},
	// The closing "; and 45 units" holds for every alternative.
	{"sfu", "ARCH 101 or ARCH 201; or any two of ARCH 100, REM 100, GEOG 100, EVSC 100; and 45 units.",
		`all(any(ARCH 101, ARCH 201, 2of(ARCH 100, REM 100, GEOG 100, EVSC 100)), "45 units")`, "", nil, 0},
	// A closing condition without a course holds for the alternatives
	// before it.
	{"sfu", "MSE 393 or 394 and a minimum of 75 units.", `all(any(MSE 393, MSE 394), "a minimum of 75 units")`, "", nil, 0},
	{"sfu", "72 units, which must include SA 101 or 150 or 201W.", `all("72 units", any(SA 101, SA 150, SA 201W))`, "", nil, 0},
	// A second sentence that is an alternative to the first.
	{"sfu", "One of MATH 314, MATH 418, PHYS 384, with a minimum grade of C-. An alternative to the above prerequisite is both of MATH 251 and (MATH 260 or MATH 310), both with grades of at least B+.",
		"any(MATH 314[C-], MATH 418[C-], PHYS 384[C-], all(MATH 251[B+], any(MATH 260[B+], MATH 310[B+])))", "", nil, 0},
	// "Prerequisite or Corequisite:" courses may be concurrent.
	{"sfu", "GEOG 213 and one of GEOG 214 or 215. Prerequisite or Corequisite: One of GEOG 311, 313, 314, 315, 316, 317 or 319.",
		"all(GEOG 213, any(GEOG 214, GEOG 215), any(GEOG 311~, GEOG 313~, GEOG 314~, GEOG 315~, GEOG 316~, GEOG 317~, GEOG 319~))", "", nil, 0},
	{"sfu", "MBB 222, BISC 101, CHEM 281 with grades of C- or better. Corequisite or Prerequisite: CHEM 282 or CHEM 283.",
		"all(MBB 222[C-], BISC 101[C-], CHEM 281[C-], any(CHEM 282~, CHEM 283~))", "", nil, 0},
	{"sfu", "CHEM 122 and 126. Corequisite or prerequisite: EASC 304. All with a grade of C- or better.", "all(CHEM 122[C-], CHEM 126[C-], EASC 304[C-]~)", "", nil, 0},
	{"sfu", "BISC 101; CHEM 281 as prerequisite or corequisite.", "all(BISC 101, CHEM 281~)", "", nil, 0},
	{"sfu", "CMPT 120 (or equivalent first year programming course such as CMPT 102, 125, 126, 128, 130, 135, or 166) with a minimum grade of C-.",
		`any(CMPT 120[C-], "equivalent first year programming course", CMPT 102[C-], CMPT 125[C-], CMPT 126[C-], CMPT 128[C-], CMPT 130[C-], CMPT 135[C-], CMPT 166[C-])`, "", nil, 0},
	{"sfu", "BPK 304W, 310 and 343 (one of which may be taken as a corequisite).", "all(BPK 304W, BPK 310, BPK 343)", "", nil, 0},
	// A bare number binds to the course before it.
	{"sfu", "90 units including HSCI 312 with a minimum grade of C- and HSCI 319 or 327, with a minimum grade of C-. Students may be required to successfully complete a Criminal Record Check.",
		`all("90 units", HSCI 312[C-], any(HSCI 319[C-], HSCI 327[C-]))`, "", nil, 1},
	{"langara", `A minimum "C-" grade in CPSC 1401 and a minimum "C" grade in CPSC 1150 or 1155; or permission of department. Prerequisites are valid for only three years.`,
		`any(all(CPSC 1401[C-], any(CPSC 1150[C], CPSC 1155[C])), "permission of department")`, "", nil, 1},
	// A chain of bare numbers keeps "or" looser than "and" (here 1173
	// and 1183 are the two halves of 1171).
	{"langara", `A minimum "C+" grade in MATH 1153 and 1253; or a minimum "C" grade in MATH 1171 or 1173 and 1183.`,
		"any(all(MATH 1153[C+], MATH 1253[C+]), MATH 1171[C], all(MATH 1173[C], MATH 1183[C]))", "", nil, 0},
	{"langara", "Permission of the department.", `"Permission of the department"`, "", nil, 0},
	{"langara", "INST 1105.", "INST 1105", "", nil, 0},
}

// TestParseRequisitesGolden checks real texts of the shared data (SFU
// outlines' prerequisites and corequisites; Langara catalogue
// descriptions' prerequisite and corequisite paragraphs) against trees
// written by reading the texts, in Expr.String's compact form.
func TestParseRequisitesGolden(t *testing.T) {
	for _, c := range goldenRequisites {
		r := ParseRequisites(c.inst, c.text)
		if r.Text != c.text {
			t.Errorf("%q: Text = %q", c.text, r.Text)
		}
		co := ""
		if r.Corequisites != nil {
			co = r.Corequisites.String()
		}
		if got := r.Expr.String(); got != c.expr || co != c.co {
			t.Errorf("%s %q:\n got  %s co=%q\n want %s co=%q", c.inst, c.text, got, co, c.expr, c.co)
		}
		if got := codes(r.Recommended); !slices.Equal(got, c.rec) {
			t.Errorf("%q: Recommended = %v, want %v", c.text, got, c.rec)
		}
		if len(r.Notes) != c.notes {
			t.Errorf("%q: Notes = %q, want %d", c.text, r.Notes, c.notes)
		}
		r.Expr.Walk(func(e *Expr) {
			if e.Op == OpCourse && (e.Course == nil || e.Course.Institution != c.inst) {
				t.Errorf("%q: course node %+v is not of %s", c.text, e, c.inst)
			}
		})
	}
}

func TestAntirequisites(t *testing.T) {
	for _, c := range []struct {
		inst, text string
		want       []string
	}{
		{"sfu", "Students with credit for CMPT 102, 120, 128 or 166 may not take this course for further credit.", []string{"CMPT 102", "CMPT 120", "CMPT 128", "CMPT 166"}},
		{"sfu", "Students with credit for either MATH 150, 151 or 154 may not take MATH 157 for further credit.", []string{"MATH 150", "MATH 151", "MATH 154"}},
		{"sfu", "Students with credit for CA (or FPA) 319 may not take this course for further credit.", []string{"CA 319", "FPA 319"}},
		{"sfu", "Students with credit for COGS 315 cannot take this course for further credit.", []string{"COGS 315"}},
		{"sfu", "Students who have taken STAT 341 or STAT 360 first may not then take this course for further credit.", []string{"STAT 341", "STAT 360"}},
		{"sfu", `Students with credit for ARCH 321 under the title "Select Regions in World Archaeology I: Greece" may not take this course for further credit.`, []string{"ARCH 321"}},
		{"sfu", "Students who have taken CMPT 409 in Summer 2020 and 2021 under the title \"Intro to Quantum Computing\" may not take this course for further credit.", []string{"CMPT 409"}},
		{"sfu", "Students may repeat this course for further credit under a different topic.", nil},
		{"sfu", "Quantitative course. Students with credit for URB 499 may not take this course for further credit.", []string{"URB 499"}},
		{"langara", "Students will receive credit for only one of MATH 1153/1253, 1171, 1173, 1174, or 1175.", []string{"MATH 1153", "MATH 1253", "MATH 1171", "MATH 1173", "MATH 1174", "MATH 1175"}},
		{"langara", "Students will only receive credit for one of BIOL 2430 and 3430.", []string{"BIOL 2430", "BIOL 3430"}},
		{"langara", "", nil},
	} {
		got := Antirequisites(c.inst, c.text)
		if !slices.Equal(codes(got), c.want) {
			t.Errorf("Antirequisites(%q) = %v, want %v", c.text, codes(got), c.want)
		}
		for _, r := range got {
			if r.Institution != c.inst {
				t.Errorf("Antirequisites(%q): %v is not of %s", c.text, r, c.inst)
			}
		}
	}
	// In a prerequisite text too.
	r := ParseRequisites("sfu", "CMPT 120. Students with credit for CMPT 102 may not take this course for further credit.")
	if r.Expr.String() != "CMPT 120" || !slices.Equal(codes(r.Antirequisites), []string{"CMPT 102"}) {
		t.Errorf("ParseRequisites with an exclusion = %s, %v", r.Expr, r.Antirequisites)
	}
}

func TestExtractLangara(t *testing.T) {
	for _, c := range []struct {
		name, in, desc, pre, co string
	}{
		{"none", "A course about things.\n\nGraded S/U.", "A course about things.\n\nGraded S/U.", "", ""},
		{"both", "About nursing.\n\nPrerequisite(s): A minimum \"C+\" grade in NURS 3309.\n\nCorequisite(s): NURS 4122, 4161, and 4163.",
			"About nursing.", `A minimum "C+" grade in NURS 3309.`, "NURS 4122, 4161, and 4163."},
		{"note after", "About space.\n\nPrerequisite(s): A minimum \"C\" grade in ASTR 1100.\n\nNote: This course is not intended for students transferring to UBC.",
			"About space.\n\nNote: This course is not intended for students transferring to UBC.", `A minimum "C" grade in ASTR 1100.`, ""},
		// BIOL 1115: the prerequisite goes on over "or".
		{"continued", "Biology.\n\nPrerequisite(s): A minimum \"C\" grade in one of the following: BIOL 1111, 1118, 1175, or 1218; \n\nor \n\nA minimum \"C+\" grade in Life Sciences 11.",
			"Biology.", `A minimum "C" grade in one of the following: BIOL 1111, 1118, 1175, or 1218; or A minimum "C+" grade in Life Sciences 11.`, ""},
		{"labels", "X.\n\nPrerequisites: A.\n\nCorequisites: HCAS 1100, 1110.", "X.", "A.", "HCAS 1100, 1110."},
		{"typo label", "X.\n\nPrerequisite(s: A minimum \"C-\" grade in MATH 2371.", "X.", `A minimum "C-" grade in MATH 2371.`, ""},
	} {
		desc, pre, co := ExtractLangara(c.in)
		if desc != c.desc || pre != c.pre || co != c.co {
			t.Errorf("%s: ExtractLangara = %q, %q, %q; want %q, %q, %q", c.name, desc, pre, co, c.desc, c.pre, c.co)
		}
	}
}

// TestRequisitesOnRealData parses every non-empty requisite text of the
// shared data and reports, per source, the share that parses into at
// least one course node with no course code left unplaced; the shares are
// pinned as floors.
func TestRequisitesOnRealData(t *testing.T) {
	floors := map[string]float64{
		"langara/catalogue.json prerequisites": 0.84,
		"langara/catalogue.json corequisites":  0.99,
		"sfu/outlines.json prerequisites":      0.63,
		"sfu/outlines.json corequisites":       0.99,
	}
	for _, src := range allRealTexts(t, testtools.SharedData(t)) {
		if len(src.texts) == 0 {
			t.Fatalf("%s: no texts", src.name)
		}
		ok, named, namedOK := 0, 0, 0
		for _, s := range src.texts {
			r := ParseRequisites(src.inst, s)
			if r.Text != s {
				t.Fatalf("%s: text not kept: %q", src.name, s)
			}
			full := fullyParsed(r)
			if full {
				ok++
			}
			if len(CourseCodes(s)) > 0 || subjAltInRe().MatchString(s) {
				named++
				if full {
					namedOK++
				}
			}
		}
		share := float64(ok) / float64(len(src.texts))
		t.Logf("%s: %d of %d non-empty texts parse fully (%.1f%%); of the %d that name a course code, %d (%.1f%%)",
			src.name, ok, len(src.texts), 100*share, named, namedOK, 100*float64(namedOK)/float64(named))
		if floor, found := floors[src.name]; !found {
			t.Errorf("%s: no floor", src.name)
		} else if share < floor {
			t.Errorf("%s: share %.3f under its floor %.2f", src.name, share, floor)
		}
	}
}

// TestAntirequisitesOnRealData checks that the SFU notes about further
// credit that name a course yield antirequisites.
func TestAntirequisitesOnRealData(t *testing.T) {
	n, found := 0, 0
	for _, o := range sfuOutlines(t, testtools.SharedData(t)) {
		for _, s := range splitSentences(normalizeSpace(o.Notes)) {
			if !isAntirequisiteSentence(strings.ToLower(s)) || len(CourseCodes(s)) == 0 {
				continue
			}
			n++
			if len(Antirequisites("sfu", s)) > 0 {
				found++
			} else {
				t.Logf("no antirequisite in %q", s)
			}
		}
	}
	share := float64(found) / float64(n)
	t.Logf("SFU notes: %d sentences about further credit naming a course, %d (%.1f%%) with antirequisites", n, found, 100*share)
	// The rest say a course itself cannot be repeated ("SEE students
	// cannot take MSE 410 ... for further credit").
	if n < 700 || share < 0.99 {
		t.Errorf("%d sentences, share %.3f: want at least 700 and 0.99", n, share)
	}
}

// TestSFUOfferingTerms parses every term of the SFU outlines' offerings.
func TestSFUOfferingTerms(t *testing.T) {
	testtools.ForEachData(t, testSFUOfferingTerms)
}

func testSFUOfferingTerms(t *testing.T, d testtools.Data) {
	seen := map[string]bool{}
	for _, o := range sfuOutlines(t, d.Dir) {
		for _, off := range o.Offerings {
			tm, err := ParseTerm(off.Term)
			if err != nil {
				t.Fatalf("offering term %q: %v", off.Term, err)
			}
			if tm.String() != off.Term {
				t.Errorf("term %q reads back as %q", off.Term, tm)
			}
			seen[tm.Code()] = true
		}
	}
	if len(seen) < 3 {
		t.Errorf("only %d distinct terms", len(seen))
	}
	t.Logf("%d distinct offering terms", len(seen))
}

func FuzzParseRequisites(f *testing.F) {
	for _, s := range []string{
		"MATH 150, 151, 154 or 157.",
		"CMPT 125 or CMPT 135, with a minimum grade of C-",
		"Students with credit for CMPT 102 may not take this course for further credit.",
		`One of the following: MDT 85; a minimum "B" grade in Precalculus 12; one of MATH 1171, 1173/1183, 1174.`,
		"((PHYS 121 and ENSC 120) or PHYS 141) and (MATH 251 and MATH 232), all with a minimum grade of C-.",
		"CA (or FPA) 360 and 366. Corequisite: CA 367.",
		"INDG (or FNST) 101 or 201W.", "(", ")", "((", "a/b/c", ". . .", "; ; or and", "",
	} {
		f.Add("sfu", s)
	}
	f.Fuzz(func(t *testing.T, inst, text string) {
		r := ParseRequisites(inst, text)
		if r.Text != text {
			t.Fatalf("Text = %q, want %q", r.Text, text)
		}
		_ = r.Expr.String()
		_ = r.Unparsed()
		_ = Antirequisites(inst, text)
		_, _, _ = ExtractLangara(text)
		check := func(e *Expr) {
			e.Walk(func(n *Expr) {
				switch n.Op {
				case OpCourse:
					if n.Course == nil {
						t.Fatalf("course node without a course: %+v", n)
					}
				case OpAll, OpAny, OpNOf:
					if len(n.Children) == 0 {
						t.Fatalf("%s node without children", n.Op)
					}
				case OpOther:
				default:
					t.Fatalf("unknown op %q", n.Op)
				}
			})
		}
		if r.Expr != nil {
			check(r.Expr)
		}
		if r.Corequisites != nil {
			check(r.Corequisites)
		}
	})
}

// Example of the compact form.
func ExampleParseRequisites() {
	r := ParseRequisites("sfu", "CMPT 125 or CMPT 135, with a minimum grade of C-. Recommended: MACM 101.")
	fmt.Println(r.Expr)
	fmt.Println(r.Expr.Courses()[0], r.Recommended)
	// Output:
	// any(CMPT 125[C-], CMPT 135[C-])
	// sfu:CMPT 125 [sfu:MACM 101]
}

// TestGoldenTextsAreReal checks that every golden text is a requisite
// text of the shared data, word for word.
func TestGoldenTextsAreReal(t *testing.T) {
	real := map[string]bool{}
	for _, src := range allRealTexts(t, testtools.SharedData(t)) {
		for _, s := range src.texts {
			real[src.inst+"|"+s] = true
		}
	}
	for _, c := range goldenRequisites {
		if !real[c.inst+"|"+c.text] {
			t.Errorf("golden text is not in the %s data: %q", c.inst, c.text)
		}
	}
}

// TestExtractLangaraOnRealData splits every Langara description: no
// requisite paragraph stays in the description, and the description,
// prerequisite and corequisite texts together keep every word.
func TestExtractLangaraOnRealData(t *testing.T) {
	testtools.ForEachData(t, testExtractLangaraOnRealData)
}

func testExtractLangaraOnRealData(t *testing.T, d testtools.Data) {
	pre, co := 0, 0
	for _, c := range langaraCatalogue(t, d.Dir) {
		desc, p, q := ExtractLangara(c.Description)
		for _, para := range splitParagraphs(desc) {
			if langaraLabelRe().MatchString(para) {
				t.Errorf("%s %d: a requisite paragraph stayed in the description: %q", c.Subject, c.Code, para)
			}
		}
		if p != "" {
			pre++
		}
		if q != "" {
			co++
		}
		all := strings.Fields(desc + " " + p + " " + q)
		for _, w := range strings.Fields(c.Description) {
			if !slices.Contains(all, w) && !langaraLabelRe().MatchString(w+" ") {
				t.Errorf("%s %d: word %q lost", c.Subject, c.Code, w)
				break
			}
		}
	}
	t.Logf("Langara catalogue: %d prerequisite texts, %d corequisite texts", pre, co)
	if d.Whole && (pre < 700 || co < 70) {
		t.Errorf("only %d prerequisite and %d corequisite texts", pre, co)
	}
}
