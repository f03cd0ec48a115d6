package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// sharedData is the directory of the shared real data: NEXUS_SHARED_DATA,
// or ../shared/data next to the repository root (the directory holding
// go.mod). A missing directory fails the test: the data is part of the
// test, not optional.
func sharedData(t testing.TB) string {
	t.Helper()
	return testtools.SharedData(t)
}

// readJSON decodes a file of the shared data.
func readJSON(t testing.TB, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedData(t), rel))
	if err != nil {
		t.Fatalf("reading the shared data: %v", err)
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

func langaraCatalogue(t testing.TB) []langaraCourse {
	var v struct {
		Courses []langaraCourse `json:"courses"`
	}
	readJSON(t, "langara/catalogue.json", &v)
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

func sfuOutlines(t testing.TB) []sfuOutline {
	var v struct {
		Data []sfuOutline `json:"data"`
	}
	readJSON(t, "sfu/outlines.json", &v)
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

func allRealTexts(t testing.TB) []realTexts {
	var lp, lc []string
	for _, c := range langaraCatalogue(t) {
		_, pre, co := ExtractLangara(c.Description)
		if pre != "" {
			lp = append(lp, pre)
		}
		if co != "" {
			lc = append(lc, co)
		}
	}
	var sp, sc []string
	for _, o := range sfuOutlines(t) {
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
