package tutor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// The materials and grades imports (tutor-materials, tutor-grades) and the
// two tools that read them, on both stores, over the files of testdata/
// (made-up records for real course codes of the demo catalogue, which each
// test loads first). Every expected value below was worked out by hand
// from those files.

var (
	matFile      = filepath.Join("testdata", "materials.json")
	matRowsFile  = filepath.Join("testdata", "materials_rows.json")
	matBadFile   = filepath.Join("testdata", "materials_bad.json")
	gradFile     = filepath.Join("testdata", "grades.json")
	gradRowsFile = filepath.Join("testdata", "grades_rows.json")
	gradBadFile  = filepath.Join("testdata", "grades_bad.json")
)

// matHarness is a tutor server with the demo catalogue, called through
// the real pipeline.
type matHarness struct {
	pipelinetest.Valence
	tut *Server
}

func newMatHarness(t *testing.T, st *store.Store) matHarness {
	t.Helper()
	reg := registry.New()
	conv := conversation.New(st)
	tut := New(st, conv, Options{CursorKey: []byte("test-key")})
	if err := tut.Register(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := tut.LoadDemo(context.Background()); err != nil {
		t.Fatal(err)
	}
	return matHarness{pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg, Sessions: conv}), Transport: "test"}, tut}
}

// matChecksum digests every row and column of tn_materials and tn_grades.
func matChecksum(t *testing.T, st *store.Store) string {
	t.Helper()
	h := sha256.New()
	for _, q := range []string{
		`SELECT id, institution, subject, number, term, kind, title, url, details, source, updated_at FROM tn_materials ORDER BY institution, subject, number, url`,
		`SELECT id, institution, subject, number, term, section, counts, average, average_scale, details, source, updated_at FROM tn_grades ORDER BY institution, subject, number, term, section`,
	} {
		rows, err := st.DB().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(h, "%v\x1f", v)
			}
			h.Write([]byte{'\n'})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestImportMaterialsAndGrades: both files import, every row stored (the
// material of a course not in the catalog with a problem saying so);
// importing them again changes nothing; a changed row is updated.
func TestImportMaterialsAndGrades(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		h := newMatHarness(t, st)
		sum, err := h.tut.Import(ctx, KindMaterials, []string{matFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.RowsRead != 6 || sum.Created != 6 || sum.NotParsed != 0 || sum.Duplicates != 0 || sum.ProblemCount != 1 ||
			sum.Problems[0].Key != "sfu:CMPT 120" || sum.Problems[0].Row != 6 || !strings.Contains(sum.Problems[0].Reason, "not in the catalog") {
			t.Fatalf("materials: %+v", sum)
		}
		sum, err = h.tut.Import(ctx, KindGrades, []string{gradFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.RowsRead != 4 || sum.Created != 4 || sum.ProblemCount != 0 {
			t.Fatalf("grades: %+v", sum)
		}
		if n := h.Count("tn_materials"); n != 6 {
			t.Fatalf("%d materials stored", n)
		}
		// The references are normalized: three spellings of Langara's CPSC 1050.
		if n := impCountMat(t, st, `SELECT COUNT(*) FROM tn_materials WHERE institution = 'langara' AND subject = 'CPSC' AND number = '1050'`); n != 4 {
			t.Fatalf("%d materials of langara:CPSC 1050, want 4", n)
		}
		if n := impCountMat(t, st, `SELECT COUNT(*) FROM tn_materials WHERE term IS NULL`); n != 1 {
			t.Fatalf("%d materials without a term, want 1 (the outline)", n)
		}

		before := matChecksum(t, st)
		sum, err = h.tut.Import(ctx, KindAuto, []string{gradFile, matFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.RowsRead != 10 || sum.Unchanged != 10 || sum.Created+sum.Updated != 0 {
			t.Fatalf("second import: %+v", sum)
		}
		if after := matChecksum(t, st); after != before {
			t.Fatal("the second import changed stored rows")
		}

		// A changed title and a changed count are updates of the same records.
		dir := t.TempDir()
		b, _ := os.ReadFile(matFile)
		changed := filepath.Join(dir, "m.json")
		os.WriteFile(changed, []byte(strings.Replace(string(b), "Course outline", "Course outline (revised)", 1)), 0o600)
		g, _ := os.ReadFile(gradFile)
		changedG := filepath.Join(dir, "g.json")
		os.WriteFile(changedG, []byte(strings.Replace(string(g), `"A": 10,`, `"A": 11,`, 1)), 0o600)
		sum, err = h.tut.Import(ctx, KindAuto, []string{changed, changedG}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Updated != 2 || sum.Unchanged != 8 || sum.Created != 0 || h.Count("tn_materials") != 6 || h.Count("tn_grades") != 4 {
			t.Fatalf("changed rows: %+v", sum)
		}
	})
}

func impCountMat(t *testing.T, st *store.Store, q string) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImportMaterialsBadRows: a row that does not read is not stored and
// is reported with its reason; a repeated key is a duplicate; the good
// rows are stored.
func TestImportMaterialsBadRows(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		h := newMatHarness(t, st)
		sum, err := h.tut.Import(ctx, KindMaterials, []string{matRowsFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[int]string{}
		for _, p := range sum.Problems {
			reasons[p.Row] = p.Reason
		}
		want := map[int]string{2: "unknown material kind", 3: "URL is not an http or https address", 4: "no valid course reference",
			5: "term does not read", 6: "the same course and URL again", 7: "material without a title"}
		for row, w := range want {
			if !strings.Contains(reasons[row], w) {
				t.Errorf("row %d: reason %q, want %q", row, reasons[row], w)
			}
		}
		if sum.RowsRead != 7 || sum.Created != 1 || sum.NotParsed != 5 || sum.Duplicates != 1 || sum.ProblemCount != 6 || len(reasons) != 6 {
			t.Fatalf("materials rows: %+v", sum)
		}

		sum, err = h.tut.Import(ctx, KindGrades, []string{gradRowsFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reasons = map[int]string{}
		for _, p := range sum.Problems {
			reasons[p.Row] = p.Reason + ": " + p.Detail
		}
		want = map[int]string{2: "non-negative integer", 3: "is 2.5, not a non-negative integer", 4: "average without a scale",
			5: "distribution without a term", 6: "the same course, term and section again", 7: "average out of its scale",
			8: "course not in the catalog; stored"}
		for row, w := range want {
			if !strings.Contains(reasons[row], w) {
				t.Errorf("row %d: reason %q, want %q", row, reasons[row], w)
			}
		}
		if sum.RowsRead != 8 || sum.Created != 2 || sum.NotParsed != 5 || sum.Duplicates != 1 || sum.ProblemCount != 7 {
			t.Fatalf("grades rows: %+v", sum)
		}
		// The first of the repeated rows is the one stored.
		var counts string
		if err := st.DB().QueryRow(`SELECT counts FROM tn_grades WHERE subject = 'MATH'`).Scan(&counts); err != nil || counts != `{"A":5,"B":5}` {
			t.Fatalf("MATH 1170 counts %s (%v)", counts, err)
		}
	})
}

// TestImportMaterialsBadFiles: a file of a version Nexus does not read, a
// list that is not one, a truncated file, a file of the other kind: each
// is an error naming the file and the problem, and nothing is written, not
// even the good file of the same import.
func TestImportMaterialsBadFiles(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		h := newMatHarness(t, st)
		dir := t.TempDir()
		b, err := os.ReadFile(matFile)
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(dir, "cut.json")
		os.WriteFile(cut, b[:len(b)/2], 0o600)
		otherFormat := filepath.Join(dir, "other.json")
		os.WriteFile(otherFormat, []byte(`{"format": "nexus-course-materials", "distributions": []}`), 0o600)
		for _, tt := range []struct {
			kind  string
			files []string
			want  []string
		}{
			{KindAuto, []string{matFile, matBadFile}, []string{"materials_bad.json", "version 2", "reads version 1"}},
			{KindMaterials, []string{matBadFile}, []string{"materials_bad.json", "version 2"}},
			{KindGrades, []string{gradFile, gradBadFile}, []string{"grades_bad.json", `"distributions" is a JSON object, not a list of records`}},
			{KindAuto, []string{gradFile, cut}, []string{"cut.json", "truncated"}},
			{KindGrades, []string{matFile}, []string{"materials.json", "holds tutor-materials data, not tutor-grades"}},
			{KindMaterials, []string{gradFile}, []string{"grades.json", "holds tutor-grades data, not tutor-materials"}},
			{KindAuto, []string{otherFormat}, []string{"other.json", `no "materials" list`}},
		} {
			sum, err := h.tut.Import(ctx, tt.kind, tt.files, nil)
			if err == nil {
				t.Fatalf("%s %v: no error (%+v)", tt.kind, tt.files, sum)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("%s %v: error %q does not say %q", tt.kind, tt.files, err, w)
				}
			}
		}
		if n, m := h.Count("tn_materials"), h.Count("tn_grades"); n != 0 || m != 0 {
			t.Fatalf("failed imports wrote %d materials and %d distributions", n, m)
		}
	})
}

// TestImportMaterialsAutoDetects: auto reads both kinds from their content,
// with or without the format header, under names that say nothing.
func TestImportMaterialsAutoDetects(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	h := newMatHarness(t, st)
	dir := t.TempDir()
	want := map[string]string{}
	var files []string
	for i, f := range []struct{ path, kind string }{{matFile, KindMaterials}, {gradFile, KindGrades}, {matRowsFile, KindMaterials}, {gradRowsFile, KindGrades}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("file%d.json", i))
		os.WriteFile(p, b, 0o600)
		files = append(files, p)
		want[p] = f.kind
	}
	sum, err := h.tut.Import(context.Background(), KindAuto, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.PerFile) != 4 {
		t.Fatalf("per file: %+v", sum.PerFile)
	}
	for _, f := range sum.PerFile {
		if f.Kind != want[f.File] {
			t.Fatalf("%s read as %s, want %s", f.File, f.Kind, want[f.File])
		}
	}
}

// TestMaterialsAndGradesTools: the two tools answer from the imported
// files (filters, order, pagination, averages), still say none is loaded
// for a course without data, and NOT_FOUND for a course in neither the
// catalog nor the files.
func TestMaterialsAndGradesTools(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newMatHarness(t, st)
		// Before any import: none loaded, as before.
		m := h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050"})
		if m["loaded"] != false || m["importFormat"] != materialsFormat || !strings.Contains(m["reason"].(string), "nexus import tutor-materials") {
			t.Fatalf("materials before import: %v", m)
		}
		g := h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1050"})
		if g["loaded"] != false || g["importFormat"] != gradesFormat || !strings.Contains(g["reason"].(string), "nexus import tutor-grades") {
			t.Fatalf("grades before import: %v", g)
		}
		if _, err := h.tut.Import(context.Background(), KindAuto, []string{matFile, gradFile}, nil); err != nil {
			t.Fatal(err)
		}

		titles := func(p map[string]any) []string {
			var out []string
			for _, it := range pipelinetest.Arr(p["items"]) {
				out = append(out, pipelinetest.Obj(it)["title"].(string))
			}
			return out
		}
		t.Run("materials", func(t *testing.T) {
			h := h.With(t)
			// Latest term first, no term last; by title within a term.
			p := h.Call("tn_course_materials", map[string]any{"course": "LANG:cpsc 1050"})
			want := []string{"Assignment 1: variables and loops", "Midterm exam, Fall 2025", "Final exam, Spring 2025", "Course outline"}
			if fmt.Sprint(titles(p)) != fmt.Sprint(want) || p["loaded"] != true || p["totalCount"] != 4.0 || p["hasMore"] != false ||
				p["course"] != "langara:CPSC 1050" || p["reason"] != nil || p["importFormat"] != nil {
				t.Fatalf("materials: %v", p)
			}
			first := pipelinetest.Obj(pipelinetest.Arr(p["items"])[1])
			if first["kind"] != "exam" || first["term"] != "Fall 2025" || first["termCode"] != "202530" || first["url"] != "https://example.edu/cpsc1050/midterm-2025-fall.pdf" ||
				first["description"] != "Questions only; no solutions." || first["source"] != "Nexus test data (made up)" || first["id"] == nil {
				t.Fatalf("a material: %v", first)
			}
			if last := pipelinetest.Obj(pipelinetest.Arr(p["items"])[3]); last["term"] != nil || last["kind"] != "syllabus" {
				t.Fatalf("a material of no term: %v", last)
			}
			// Filters: kind ("Exam" in the file is exam), term by name or code.
			if got := titles(h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "kind": "exam"})); fmt.Sprint(got) != "[Midterm exam, Fall 2025 Final exam, Spring 2025]" {
				t.Fatalf("kind exam: %v", got)
			}
			if got := titles(h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "term": "202530"})); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
				t.Fatalf("term 202530: %v", got)
			}
			p = h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "term": "Summer 2025", "kind": "notes"})
			if p["loaded"] != true || p["totalCount"] != 0.0 || len(pipelinetest.Arr(p["items"])) != 0 || !strings.Contains(p["note"].(string), "of kind notes of Summer 2025") {
				t.Fatalf("filters that keep none: %v", p)
			}
			// Pages of 3: the cursor carries on, bound to its query.
			p1 := h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "limit": 3})
			if p1["hasMore"] != true || len(titles(p1)) != 3 {
				t.Fatalf("page 1: %v", p1)
			}
			p2 := h.Call("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "limit": 3, "cursor": p1["nextCursor"]})
			if fmt.Sprint(titles(p2)) != "[Course outline]" || p2["hasMore"] != false || p2["totalCount"] != 4.0 {
				t.Fatalf("page 2: %v", p2)
			}
			if _, e := h.Try("tn_course_materials", map[string]any{"course": "langara:CPSC 1050", "kind": "exam", "limit": 3, "cursor": p1["nextCursor"]}); e == nil || e.Code != errs.BadRequest {
				t.Fatalf("a cursor of another query: %v", e)
			}
			// A course not in the catalog, with materials: answered.
			if p := h.Call("tn_course_materials", map[string]any{"course": "sfu:CMPT 120"}); p["loaded"] != true || fmt.Sprint(titles(p)) != "[Midterm practice questions]" {
				t.Fatalf("sfu:CMPT 120: %v", p)
			}
			// A catalogued course without materials: none loaded, says so.
			p = h.Call("tn_course_materials", map[string]any{"course": "langara:ENGL 1105"})
			if p["loaded"] != false || p["totalCount"] != 0.0 || p["importFormat"] != materialsFormat ||
				!strings.Contains(p["reason"].(string), "no course materials (past exams, homework, notes) are loaded for langara:ENGL 1105 (6 are loaded for other courses)") {
				t.Fatalf("a course without materials: %v", p)
			}
			// In neither: NOT_FOUND.
			if _, e := h.Try("tn_course_materials", map[string]any{"course": "sfu:CMPT 999"}); e == nil || e.Code != errs.NotFound {
				t.Fatalf("unknown course: %v", e)
			}
		})
		t.Run("grades", func(t *testing.T) {
			h := h.With(t)
			g := h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1050"})
			ds := pipelinetest.Arr(g["distributions"])
			if g["loaded"] != true || len(ds) != 3 || g["reason"] != nil || g["importFormat"] != nil {
				t.Fatalf("grades: %v", g)
			}
			// Latest term first, sections in order; the percent and gpa
			// averages do not combine.
			var order []string
			for _, d := range ds {
				d := pipelinetest.Obj(d)
				order = append(order, fmt.Sprint(d["termCode"], "/", d["section"]))
			}
			if fmt.Sprint(order) != "[202530/001 202530/002 202510/<nil>]" || g["average"] != nil {
				t.Fatalf("order %v, average %v", order, g["average"])
			}
			s1 := pipelinetest.Obj(ds[0])
			if s1["term"] != "Fall 2025" || s1["students"] != 27.0 || s1["average"] != 74.2 || s1["averageScale"] != "percent" || s1["averageComputed"] != nil ||
				pipelinetest.Obj(s1["counts"])["A+"] != 2.0 || pipelinetest.Obj(s1["counts"])["W"] != 2.0 || s1["source"] != "Nexus test data (made up)" {
				t.Fatalf("section 001: %v", s1)
			}
			// No average in the file: the letter grades' points, W left
			// out: (3×4 + 4×3 + 2×2 + 1×0) / 10 = 2.8.
			spring := pipelinetest.Obj(ds[2])
			if spring["average"] != 2.8 || spring["averageScale"] != "gpa" || spring["averageComputed"] != true || spring["students"] != 12.0 || spring["section"] != nil {
				t.Fatalf("Spring 2025: %v", spring)
			}
			// One term: its two sections, weighted by students:
			// (74.2×27 + 70.0×24) / 51 = 72.22.
			g = h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1050", "term": "Fall 2025"})
			if len(pipelinetest.Arr(g["distributions"])) != 2 || g["average"] != 72.22 || g["averageScale"] != "percent" || g["averageOver"] != 2.0 ||
				fmt.Sprint(g["sources"]) != "[Nexus test data (made up)]" {
				t.Fatalf("Fall 2025: %v", g)
			}
			g = h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1050", "term": "202430"})
			if g["loaded"] != true || len(pipelinetest.Arr(g["distributions"])) != 0 || !strings.Contains(g["note"].(string), "Fall 2024") {
				t.Fatalf("a term without grades: %v", g)
			}
			// The scale as given ("GPA"), normalized.
			g = h.Call("tn_course_grades", map[string]any{"course": "sfu:CMPT 118"})
			if d := pipelinetest.Obj(pipelinetest.Arr(g["distributions"])[0]); d["average"] != 3.05 || d["averageScale"] != "gpa" || g["average"] != 3.05 {
				t.Fatalf("sfu:CMPT 118: %v", g)
			}
			g = h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1160"})
			if g["loaded"] != false || g["importFormat"] != gradesFormat || !strings.Contains(g["reason"].(string), "loaded for langara:CPSC 1160 (4 are loaded for other courses)") {
				t.Fatalf("a course without grades: %v", g)
			}
			if _, e := h.Try("tn_course_grades", map[string]any{"course": "sfu:CMPT 999"}); e == nil || e.Code != errs.NotFound {
				t.Fatalf("unknown course: %v", e)
			}
		})
	})
}

// TestLetterAverage: the computed average's points (4.33 scale) and what
// it leaves out.
func TestLetterAverage(t *testing.T) {
	for _, tt := range []struct {
		counts map[string]int
		want   float64
		ok     bool
	}{
		{map[string]int{"A+": 1, "F": 1}, 2.17, true}, // (4.33 + 0) / 2 = 2.165
		{map[string]int{"B-": 3, "W": 5, "I": 1, "P": 2}, 2.67, true},
		{map[string]int{"a-": 1, "c+": 1}, 3, true}, // (3.67 + 2.33) / 2
		{map[string]int{"W": 4, "S": 2}, 0, false},
		{map[string]int{"A": 0}, 0, false},
	} {
		got, ok := letterAverage(tt.counts)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v: %v %v, want %v %v", tt.counts, got, ok, tt.want, tt.ok)
		}
	}
}
