package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestImportMaterialsCommand runs the binary on the tutor package's test
// files of course materials and grade distributions (made-up records for
// real course codes): each kind by name, then both with auto, which
// changes nothing; the two tools then answer from them; a bad file exits 1
// naming it.
func TestImportMaterialsCommand(t *testing.T) {
	testdata := filepath.Join("..", "..", "internal", "tutor", "testdata")
	materials, grades := filepath.Join(testdata, "materials.json"), filepath.Join(testdata, "grades.json")
	dir := t.TempDir()
	for _, f := range []struct{ kind, file, want string }{
		{"tutor-materials", materials, "records: 6 created, 0 updated, 0 unchanged"},
		{"tutor-grades", grades, "records: 4 created, 0 updated, 0 unchanged"},
	} {
		out, errOut, code := runNexus(t, "", "import", f.kind, f.file, "--data-dir", dir)
		if code != 0 || !strings.Contains(out, f.want) || !strings.Contains(out, f.kind) {
			t.Fatalf("import %s: exit %d\n%s\n%s", f.kind, code, out, errOut)
		}
	}
	out, errOut, code := runNexus(t, "", "import", "auto", materials, grades, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "10 rows read") || !strings.Contains(out, "records: 0 created, 0 updated, 10 unchanged") ||
		!strings.Contains(out, "tutor-materials") || !strings.Contains(out, "tutor-grades") {
		t.Fatalf("import auto again: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, "", "call", "tn_course_materials", `{"course": "langara:CPSC 1050", "kind": "exam"}`, "--data-dir", dir, "--no-demo")
	if code != 0 || !strings.Contains(out, `"loaded": true`) || !strings.Contains(out, "Midterm exam, Fall 2025") || strings.Contains(out, "Course outline") {
		t.Fatalf("tn_course_materials: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, "", "call", "tn_course_grades", `{"course": "langara:CPSC 1050", "term": "Fall 2025"}`, "--data-dir", dir, "--no-demo")
	if code != 0 || !strings.Contains(out, `"loaded": true`) || !strings.Contains(out, `"average": 72.22`) {
		t.Fatalf("tn_course_grades: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = runNexus(t, "", "import", "auto", filepath.Join(testdata, "materials_bad.json"), "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "materials_bad.json") || !strings.Contains(errOut, "version 2") {
		t.Fatalf("a bad file: exit %d\n%s", code, errOut)
	}
}
