package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real data is read from a directory in the shared data's layout: the
// whole shared data (testtools.SharedData, which skips the test when it
// is missing, and fails it under CI) or the excerpt the repository keeps
// (testtools.Excerpt); testtools.ForEachData runs a test on both.

// readJSON decodes a file of the data directory dir.
func readJSON(t testing.TB, dir, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatalf("reading the real data: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", rel, err)
	}
}

// langaraCourse is a course of langara/catalogue.json.
type langaraCourse struct {
	Subject     string `json:"subject"`
	Code        int    `json:"course_code"`
	Description string `json:"description"`
}

func langaraCatalogue(t testing.TB, dir string) []langaraCourse {
	var v struct {
		Courses []langaraCourse `json:"courses"`
	}
	readJSON(t, dir, "langara/catalogue.json", &v)
	if len(v.Courses) == 0 {
		t.Fatal("langara/catalogue.json holds no courses")
	}
	return v.Courses
}

// sfuOutline is an outline of sfu/outlines.json.
type sfuOutline struct {
	Dept          string `json:"dept"`
	Number        string `json:"number"`
	Description   string `json:"description"`
	Notes         string `json:"notes"`
	Prerequisites string `json:"prerequisites"`
	Corequisites  string `json:"corequisites"`
	Offerings     []struct {
		Term string `json:"term"`
	} `json:"offerings"`
}

func sfuOutlines(t testing.TB, dir string) []sfuOutline {
	var v struct {
		Data []sfuOutline `json:"data"`
	}
	readJSON(t, dir, "sfu/outlines.json", &v)
	if len(v.Data) == 0 {
		t.Fatal("sfu/outlines.json holds no outlines")
	}
	return v.Data
}

// realTexts are the non-empty requisite texts of one source.
type realTexts struct {
	name, inst string
	texts      []string
}

func allRealTexts(t testing.TB, dir string) []realTexts {
	var lp, lc []string
	for _, c := range langaraCatalogue(t, dir) {
		_, pre, co := ExtractLangara(c.Description)
		if pre != "" {
			lp = append(lp, pre)
		}
		if co != "" {
			lc = append(lc, co)
		}
	}
	var sp, sc []string
	for _, o := range sfuOutlines(t, dir) {
		if strings.TrimSpace(o.Prerequisites) != "" {
			sp = append(sp, o.Prerequisites)
		}
		if strings.TrimSpace(o.Corequisites) != "" {
			sc = append(sc, o.Corequisites)
		}
	}
	return []realTexts{
		{"langara/catalogue.json prerequisites", "langara", lp},
		{"langara/catalogue.json corequisites", "langara", lc},
		{"sfu/outlines.json prerequisites", "sfu", sp},
		{"sfu/outlines.json corequisites", "sfu", sc},
	}
}

// fullyParsed says whether a requisite has at least one course node and
// no course code left in an other node.
func fullyParsed(r Requisite) bool {
	return len(r.Expr.Courses())+len(r.Corequisites.Courses()) > 0 && len(r.Unparsed()) == 0
}
