package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// sharedDataDir is the shared real data: NEXUS_SHARED_DATA, or
// ../shared/data beside the repository root. Missing data fails the test.
func sharedDataDir(t testing.TB) string {
	t.Helper()
	return testtools.SharedData(t)
}

// TestImportCommand imports each real file with its kind through the
// binary, then all of them with auto: the second time nothing changes. No
// progress bar is drawn when standard error is not a terminal.
func TestImportCommand(t *testing.T) {
	data := sharedDataDir(t)
	dir := t.TempDir()
	files := []struct{ kind, rel, rows string }{
		{"langara-catalogue", "langara/catalogue.json", "1,242 rows read"},
		{"langara-attributes", "langara/attributes.json", "691 rows read"},
		{"langara-sections", "langara/202310.json", "1,309 rows read"},
		{"langara-sections", "langara/202320.json", "818 rows read"},
		{"langara-sections", "langara/202330.json", "1,308 rows read"},
		{"sfu-outlines", "sfu/outlines.json", "3,581 rows read"},
		{"bctg-transfers", "langara/transfers.json", "11,882 rows read"},
	}
	var all []string
	for _, f := range files {
		p := filepath.Join(data, f.rel)
		all = append(all, p)
		out, errOut, code := runNexus(t, "", "import", f.kind, p, "--data-dir", dir)
		if code != 0 || !strings.Contains(out, f.rows) {
			t.Fatalf("import %s %s: exit %d\n%s\n%s", f.kind, f.rel, code, out, errOut)
		}
		if strings.Contains(errOut, "importing rows") || strings.Contains(errOut, "\r") {
			t.Fatalf("a progress bar on a standard error that is not a terminal: %q", errOut)
		}
		if f.kind == "bctg-transfers" && (!strings.Contains(out, "transfer rows parsed into structured rules: 11,876 of 11,876") ||
			!strings.Contains(out, "6 row(s) repeated in their file, stored once") || !strings.Contains(out, "the same row again")) {
			t.Fatalf("transfers summary:\n%s", out)
		}
	}
	out, errOut, code := runNexus(t, "", append([]string{"import", "auto", "--data-dir", dir}, all...)...)
	if code != 0 || !strings.Contains(out, "20,831 rows read") || !strings.Contains(out, "records: 0 created, 0 updated, 20,825 unchanged") {
		t.Fatalf("import auto again: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, kind := range []string{"langara-catalogue", "langara-attributes", "langara-sections", "sfu-outlines", "bctg-transfers"} {
		if !strings.Contains(out, kind) {
			t.Fatalf("auto did not name kind %s:\n%s", kind, out)
		}
	}
}

// TestImportCommandErrors: a bad file fails with a non-zero exit naming the
// file and the problem; usage mistakes exit 2.
func TestImportCommandErrors(t *testing.T) {
	data := sharedDataDir(t)
	dir := t.TempDir()
	cut := filepath.Join(t.TempDir(), "cut.json")
	b, err := os.ReadFile(filepath.Join(data, "sfu", "outlines.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, b[:len(b)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"import", "auto", cut}, 1, []string{"cut.json", "truncated"}},
		{[]string{"import", "sfu-outlines", filepath.Join(data, "langara", "catalogue.json")}, 1, []string{"catalogue.json", "holds langara-catalogue data, not sfu-outlines"}},
		{[]string{"import", "grades", cut}, 2, []string{`unknown kind "grades"`, "bctg-transfers"}},
		{[]string{"import", "auto"}, 2, []string{"give a kind and at least one file"}},
	} {
		out, errOut, code := runNexus(t, "", append(tt.args, "--data-dir", dir)...)
		if code != tt.code {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", tt.args, code, tt.code, out, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Fatalf("%v: stderr does not say %q:\n%s", tt.args, w, errOut)
			}
		}
	}
	out, errOut, code := runNexus(t, "", "import", "--help")
	if code != 0 || !strings.Contains(out, "sfu-outlines") || !strings.Contains(out, "--workspace") || errOut != "" {
		t.Fatalf("import --help: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestFreshAppHasTutorDemo: a new database with the demo data answers
// tutor questions: the demo catalogue and transfer rules are stored, and a
// transfer search through "nexus call" finds the demo rule.
func TestFreshAppHasTutorDemo(t *testing.T) {
	dir := t.TempDir()
	a, err := app.Open(context.Background(), app.Config{DataDir: dir, Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	var courses, rules int
	a.Store.DB().QueryRow(`SELECT COUNT(*) FROM tn_courses WHERE source = 'demo'`).Scan(&courses)
	a.Store.DB().QueryRow(`SELECT COUNT(*) FROM tn_transfer_rules WHERE source = 'demo'`).Scan(&rules)
	a.Close()
	if courses == 0 || rules == 0 {
		t.Fatalf("a fresh app has %d demo courses and %d demo transfer rules", courses, rules)
	}
	out, errOut, code := runNexus(t, "", "call", "tn_course_search", `{"query": "calculus"}`, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "Single-Variable Calculus I") || !strings.Contains(out, "langara:MATH 1170") {
		t.Fatalf("tn_course_search on a fresh database: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, "", "call", "tn_transfer_search", `{"course": "langara:PSYC 1130", "targetInstitution": "sfu"}`, "--data-dir", t.TempDir())
	if code != 0 || !strings.Contains(out, "SFU PSYC 101 (3) B-Soc") || !strings.Contains(out, "Nexus demo data") {
		t.Fatalf("tn_transfer_search on a fresh database: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the demo, nothing.
	noDemo := t.TempDir()
	out, _, _ = runNexus(t, "", "call", "tn_transfer_search", `{"course": "langara:PSYC 1130"}`, "--data-dir", noDemo, "--no-demo")
	if strings.Contains(out, "PSYC 101") {
		t.Fatalf("--no-demo still loaded the tutor demo: %s", out)
	}
}
