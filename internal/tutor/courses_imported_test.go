package tutor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestCourseToolsOnImportedData runs the course tools over all the real
// data (the excerpt, and the whole shared data when it is there) as nexus
// import stores it (SQLite), each expected answer read from the files:
// the importers and the tools agree on what is stored.
func TestCourseToolsOnImportedData(t *testing.T) {
	testtools.ForEachData(t, testCourseToolsOnImportedData)
}

func testCourseToolsOnImportedData(t *testing.T, d testtools.Data) {
	st := storetest.OpenTestSQLite(t)
	h := newCourseHarness(t, st)
	data := d.Dir
	for _, imp := range []struct {
		kind  string
		files []string
	}{
		{"langara-catalogue", []string{"langara/catalogue.json"}}, {"langara-attributes", []string{"langara/attributes.json"}},
		{"sfu-outlines", []string{"sfu/outlines.json"}}, {"langara-sections", []string{"langara/202310.json", "langara/202320.json", "langara/202330.json"}},
		{"bctg-transfers", []string{"langara/transfers.json"}},
	} {
		var files []string
		for _, f := range imp.files {
			files = append(files, filepath.Join(data, f))
		}
		if _, err := h.tut.Import(context.Background(), imp.kind, files, nil); err != nil {
			t.Fatalf("import %s: %v", imp.kind, err)
		}
	}
	// The Langara catalogue's courses (1,242 in the whole data) and the SFU
	// outlines (3,581).
	var cat struct{ Courses []fxLangaraCourse }
	courseReadJSON(t, data, "langara/catalogue.json", &cat)
	var sfu struct{ Data []fxSFUOutline }
	courseReadJSON(t, data, "sfu/outlines.json", &sfu)
	if d.Whole && (len(cat.Courses) != 1242 || len(sfu.Data) != 3581) {
		t.Errorf("the shared data holds %d catalogue courses and %d outlines, want 1,242 and 3,581", len(cat.Courses), len(sfu.Data))
	}
	if p := h.Call("tn_course_search", map[string]any{"limit": 1}); p["totalCount"].(float64) < float64(len(cat.Courses)+len(sfu.Data)) {
		t.Errorf("catalog: %v courses, the files hold %d and %d", p["totalCount"], len(cat.Courses), len(sfu.Data))
	}
	if first := cobj(carr(h.Call("tn_course_search", map[string]any{"query": "CPSC 1150"})["items"])[0]); first["course"] != "langara:CPSC 1150" {
		t.Errorf("search CPSC 1150: first %v", first)
	}
	g := h.Call("tn_course_get", map[string]any{"course": "langara:CPSC 1150"})
	if strings.Contains(g["description"].(string), "Prerequisite") || !strings.HasPrefix(g["prerequisites"].(string), "One of the following: MDT 85") ||
		len(carr(g["sectionTerms"])) != 3 {
		t.Errorf("get CPSC 1150: %v", g)
	}
	if got := strs(h.Call("tn_course_prereqs", map[string]any{"course": "langara:CPSC 1181"})["courses"]); !slices.Contains(got, "langara:CPSC 1150") || !slices.Contains(got, "langara:CPSC 1155") {
		t.Errorf("CPSC 1181 prerequisites: %v", got)
	}
	if got := strs(h.Call("tn_course_requisites", map[string]any{"course": "langara:CPSC 1150"})["antirequisites"]); !slices.Equal(got, []string{"langara:CPSC 1155"}) {
		t.Errorf("CPSC 1150 antirequisites: %v", got)
	}
	// CPSC 1150 sections: 6 in 202310 and 202320, 7 in 202330; 001 of 202330 is CRN 30471.
	ins := h.Call("tn_course_instructor", map[string]any{"course": "langara:CPSC 1150"})
	var secs []int
	for _, bt := range carr(ins["byTerm"]) {
		secs = append(secs, len(carr(cobj(bt)["sections"])))
	}
	if !slices.Equal(secs, []int{7, 6, 6}) {
		t.Errorf("CPSC 1150 sections by term, latest first: %v", secs)
	}
	if sec := h.Call("tn_course_section_get", map[string]any{"term": "Fall 2023", "crn": "30471"}); sec["course"] != "langara:CPSC 1150" ||
		!slices.Equal(strs(sec["instructors"]), []string{"Hossein Darbandi"}) {
		t.Errorf("section 30471: %v", sec)
	}
	if p := h.Call("tn_course_schedule", map[string]any{"course": "langara:CPSC 1150"}); p["totalCount"] != 19.0 {
		t.Errorf("CPSC 1150 schedule: %v sections", p["totalCount"])
	}
	// transfers.json: CPSC 1150 to SFU, three rows (CMPT 120 from Sep/04; CMPT 101 twice before).
	eq := h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "langara:CPSC 1150", "institution": "sfu"})
	if eq["totalCount"] != 3.0 || cobj(carr(eq["items"])[0])["credit"] != "SFU CMPT 120 (3), Q/B-Sci" {
		t.Errorf("CPSC 1150 at SFU: %v", eq)
	}
	// Only CPSC 1150's rule grants SFU CMPT 120 (CPSC 1155's names it in a condition).
	eq = h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "sfu:CMPT 120"})
	if items := carr(eq["items"]); len(items) != 1 || !slices.Equal(strs(cobj(carr(cobj(items[0])["sourceGroups"])[0])["courses"]), []string{"langara:CPSC 1150"}) {
		t.Errorf("SFU CMPT 120 incoming: %v", eq)
	}
	var rules float64
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM tn_transfer_rules`).Scan(&rules); err != nil {
		t.Fatal(err)
	}
	inst := h.walk("tn_course_institutions", map[string]any{}, 100, func(o map[string]any) string { return o["key"].(string) })
	for _, o := range inst {
		if o["key"] == "langara" && (o["rulesFrom"] != rules || o["courses"].(float64) < float64(len(cat.Courses)) || o["sections"].(float64) == 0) {
			t.Errorf("langara: %v (%v rules stored)", o, rules)
		}
	}
}

// grades maps the courses of a requirement tree to the minimum grades
// its nodes ask of them.
func grades(tree any) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		o, ok := v.(map[string]any)
		if !ok {
			return
		}
		if c, ok := o["course"].(string); ok {
			if out[c] == nil {
				out[c] = map[string]bool{}
			}
			if g, ok := o["minGrade"].(string); ok {
				out[c][g] = true
			}
		}
		if kids, ok := o["children"].([]any); ok {
			for _, k := range kids {
				walk(k)
			}
		}
	}
	walk(tree)
	return out
}

func anySlice(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// TestCourseIndexFollowsTheCatalog: an import that changes the catalog is
// seen by the next search at once through catalogChanged (the importer in
// this process calls it), and through the catalog version (an import by
// another process) once catalogCheckEvery has passed.
func TestCourseIndexFollowsTheCatalog(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	h := newCourseHarness(t, st)
	if p := h.Call("tn_course_search", map[string]any{"query": "program design"}); p["totalCount"] != 0.0 {
		t.Fatalf("empty catalog: %v", p)
	}
	var c1150 *Course
	for _, c := range fxCatalog(t, testtools.Excerpt(t)) {
		if c.Institution == "langara" && c.Subject == "CPSC" && c.Number == "1150" {
			c1150 = c
		}
	}
	// Another process's import: not seen until the version is read again.
	fxPutCourses(t, h.tut, []*Course{c1150}, nil)
	if p := h.Call("tn_course_search", map[string]any{"query": "program design"}); p["totalCount"] != 0.0 {
		t.Fatalf("within catalogCheckEvery of the last check: %v", p)
	}
	h.tut.mu.Lock()
	h.tut.courses.checked = time.Now().Add(-catalogCheckEvery)
	h.tut.mu.Unlock()
	if p := h.Call("tn_course_search", map[string]any{"query": "program design"}); p["totalCount"] != 1.0 {
		t.Fatalf("after an import by another process: %v", p)
	}
	// This process's import calls catalogChanged.
	c1150.Title = "Program Design and Craft"
	fxPutCourses(t, h.tut, []*Course{c1150}, nil)
	h.tut.catalogChanged()
	if p := h.Call("tn_course_search", map[string]any{"query": "craft"}); p["totalCount"] != 1.0 {
		t.Fatalf("after an update: %v", p)
	}
	// The importer calls it too.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"courses": [{"subject": "ZZZZ", "course_code": 1100, "credits": 3.0, "title": "Quibbling", "description": "Quibbles."}]}`), 0o600)
	if _, err := h.tut.Import(context.Background(), "langara-catalogue", []string{filepath.Join(dir, "c.json")}, nil); err != nil {
		t.Fatal(err)
	}
	if p := h.Call("tn_course_search", map[string]any{"query": "quibbling"}); p["totalCount"] != 1.0 {
		t.Fatalf("after nexus import: %v", p)
	}
}

// BenchmarkCourseSearch measures tn_course_search through the pipeline
// over every course of the shared data (the Langara catalogue and the SFU
// outlines, about 4,800 courses) on SQLite, with queries of one to four
// words, a course code, and a filtered query. The index is built before
// timing. Reported: p50-ms, p99-ms.
//
//	go test ./internal/tutor -run '^$' -bench BenchmarkCourseSearch -benchtime 2000x
func BenchmarkCourseSearch(b *testing.B) {
	st := storetest.OpenTestSQLite(b)
	h := newCourseHarness(b, st)
	data := testtools.SharedData(b)
	for _, imp := range []struct{ kind, file string }{
		{"langara-catalogue", "langara/catalogue.json"}, {"langara-attributes", "langara/attributes.json"}, {"sfu-outlines", "sfu/outlines.json"},
	} {
		if _, err := h.tut.Import(context.Background(), imp.kind, []string{filepath.Join(data, imp.file)}, nil); err != nil {
			b.Fatalf("import %s: %v", imp.file, err)
		}
	}
	all := fxCatalog(b, data)
	queries := []map[string]any{
		{"query": "data structures"},
		{"query": "introduction to programming"},
		{"query": "CPSC 1150"},
		{"query": "calculus", "institution": "sfu", "level": 1},
		{"query": "organic chemistry laboratory techniques"},
		{"query": "canadian history"},
		{"query": "statistics", "minCredits": 3, "maxCredits": 4},
		{"query": "marketing management strategy"},
	}
	h.Call("tn_course_search", map[string]any{"query": "warm up"})
	if n, _ := h.tut.catVersion(context.Background()); !strings.HasPrefix(n, strconv.Itoa(len(all))+"/") || len(all) < 4000 {
		b.Fatalf("catalog of %d courses, imported: %s", len(all), n)
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		args := map[string]any{}
		for k, v := range q {
			args[k] = v
		}
		start := time.Now()
		h.Call("tn_course_search", args)
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	storetest.ReportLatencies(b, ds)
}

// with returns h reporting to tb (for subtests).
func (h courseHarness) with(tb testing.TB) courseHarness {
	h.Valence = h.Valence.With(tb)
	return h
}
