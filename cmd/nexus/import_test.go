package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// importRecords reads the records of the file rel of the data directory
// dir: the rows an import reads.
func importRecords(t *testing.T, dir, rel string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	for _, list := range []string{"courses", "attributes", "data"} {
		if raw, ok := top[list]; ok {
			var recs []map[string]any
			if err := json.Unmarshal(raw, &recs); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			return recs
		}
	}
	t.Fatalf("%s: no list of records", rel)
	return nil
}

// TestImportCommand imports each real file with its kind through the
// binary, then all of them with auto: the second time nothing changes. No
// progress bar is drawn when standard error is not a terminal. On the
// excerpt, and on the whole shared data when it is there (20,831 rows).
func TestImportCommand(t *testing.T) {
	testtools.ForEachData(t, testImportCommand)
}

func testImportCommand(t *testing.T, d testtools.Data) {
	data := d.Dir
	dir := t.TempDir()
	files := []struct{ kind, rel string }{
		{"langara-catalogue", "langara/catalogue.json"},
		{"langara-attributes", "langara/attributes.json"},
		{"langara-sections", "langara/202310.json"},
		{"langara-sections", "langara/202320.json"},
		{"langara-sections", "langara/202330.json"},
		{"sfu-outlines", "sfu/outlines.json"},
		{"bctg-transfers", "langara/transfers.json"},
	}
	var all []string
	total, repeated := 0, 0
	for _, f := range files {
		p := filepath.Join(data, f.rel)
		all = append(all, p)
		recs := importRecords(t, data, f.rel)
		total += len(recs)
		out, errOut, code := runNexus(t, "", "import", f.kind, p, "--data-dir", dir)
		if code != 0 || !strings.Contains(out, thousands(len(recs))+" rows read") {
			t.Fatalf("import %s %s (%d rows): exit %d\n%s\n%s", f.kind, f.rel, len(recs), code, out, errOut)
		}
		if strings.Contains(errOut, "importing rows") || strings.Contains(errOut, "\r") {
			t.Fatalf("a progress bar on a standard error that is not a terminal: %q", errOut)
		}
		if f.kind == "bctg-transfers" {
			distinct := map[string]bool{}
			for _, r := range recs {
				distinct[fmt.Sprint(r["source"], "|", r["destination"], "|", r["subject"], "|", r["course_code"], "|", r["effective_start"], "|", r["credit"])] = true
			}
			repeated = len(recs) - len(distinct)
			n := thousands(len(distinct))
			if d.Whole && (len(recs) != 11882 || repeated != 6) {
				t.Fatalf("the shared data's transfers.json: %d rows, %d repeated; want 11,882 and 6", len(recs), repeated)
			}
			if repeated == 0 || !strings.Contains(out, "transfer rows parsed into structured rules: "+n+" of "+n) ||
				!strings.Contains(out, fmt.Sprintf("%d row(s) repeated in their file, stored once", repeated)) || !strings.Contains(out, "the same row again") {
				t.Fatalf("transfers summary (%d distinct rows, %d repeated):\n%s", len(distinct), repeated, out)
			}
		}
	}
	if d.Whole && total != 20831 {
		t.Fatalf("the shared data holds %d rows, want 20,831", total)
	}
	out, errOut, code := runNexus(t, "", append([]string{"import", "auto", "--data-dir", dir}, all...)...)
	if code != 0 || !strings.Contains(out, thousands(total)+" rows read") || !strings.Contains(out, "records: 0 created, 0 updated, "+thousands(total-repeated)+" unchanged") {
		t.Fatalf("import auto again (%d rows, %d repeated): exit %d\n%s\n%s", total, repeated, code, out, errOut)
	}
	for _, kind := range []string{"langara-catalogue", "langara-attributes", "langara-sections", "sfu-outlines", "bctg-transfers"} {
		if !strings.Contains(out, kind) {
			t.Fatalf("auto did not name kind %s:\n%s", kind, out)
		}
	}
}

// TestImportCommandErrors: a bad file fails with a non-zero exit naming the
// file and the problem; usage mistakes exit 2. The real files are the
// excerpt's.
func TestImportCommandErrors(t *testing.T) {
	data := testtools.Excerpt(t)
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
