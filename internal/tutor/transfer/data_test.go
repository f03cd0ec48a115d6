package transfer

import (
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// realData is the transfer rows of langara/transfers.json of one data
// directory (the excerpt or the whole shared data: testtools.Data),
// parsed once per test binary.
type realData struct {
	rows  []Row
	rules []Rule
	err   error
}

var (
	realMu    sync.Mutex
	realByDir = map[string]*realData{}
)

// accessed is the date the tests give as the data's access date.
var accessed = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// loadReal reads and parses dir's langara/transfers.json, once per test
// binary.
func loadReal(t testing.TB, dir string) ([]Row, []Rule) {
	t.Helper()
	realMu.Lock()
	defer realMu.Unlock()
	d := realByDir[dir]
	if d == nil {
		d = &realData{}
		d.rows, d.err = LoadRows(filepath.Join(dir, "langara", "transfers.json"))
		if d.err == nil {
			d.rules = Parser{Dir: catalog.NewDirectory(), Accessed: accessed}.ParseAll(d.rows)
		}
		realByDir[dir] = d
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	return d.rows, d.rules
}

// shapeRe abstracts a credit text's codes and numbers, to name its shape.
var (
	shapeCourseRe = regexp.MustCompile(`\b[A-Z]{2,5} [A-Z]{2,5} [0-9][0-9A-Za-z]*\b`)
	shapeNumRe    = regexp.MustCompile(`\([0-9.]+\)`)
)

func shape(s string) string {
	return shapeNumRe.ReplaceAllString(shapeCourseRe.ReplaceAllString(s, "INST SUBJ NUM"), "(N)")
}

// minParsedShare is the share of real rows parsed into structured rules
// that the parser reached; the test fails if it drops below.
const minParsedShare = 1.0

func TestRealFileParseShare(t *testing.T) {
	testtools.ForEachData(t, testRealFileParseShare)
}

func testRealFileParseShare(t *testing.T, d testtools.Data) {
	rows, rules := loadReal(t, d.Dir)
	if d.Whole && len(rows) != 11882 {
		t.Errorf("rows = %d, want the 11,882 of the shared data", len(rows))
	}
	unparsed := map[string]int{}
	repairs := map[string]int{}
	outcomes := map[Outcome]int{}
	parsed, full := 0, 0
	for i, r := range rules {
		if r.Raw != rows[i].Credit {
			t.Fatalf("row %d: Raw %q is not the credit text %q", i, r.Raw, rows[i].Credit)
		}
		if !r.Parsed {
			unparsed[shape(r.Raw)+" -- "+r.ParseProblem]++
			continue
		}
		parsed++
		outcomes[r.Outcome]++
		for _, k := range r.Repairs {
			repairs[k]++
		}
		if r.Confidence == 1 {
			full++
		}
	}
	share := float64(parsed) / float64(len(rules))
	t.Logf("parsed into structured rules: %d of %d rows (%.2f%%); %d with no repair (confidence 1.0)", parsed, len(rules), 100*share, full)
	t.Logf("outcomes: %v", outcomes)
	for k, n := range repairs {
		t.Logf("repair %4d rows: %s", n, k)
	}
	var shapes []string
	for s := range unparsed {
		shapes = append(shapes, s)
	}
	sort.Slice(shapes, func(i, j int) bool { return unparsed[shapes[i]] > unparsed[shapes[j]] })
	for _, s := range shapes {
		t.Logf("unparsed %4d  %s", unparsed[s], s)
	}
	if share < minParsedShare {
		t.Errorf("parsed share %.4f is below %.4f", share, minParsedShare)
	}
}

// TestRealRulesInvariants checks every parsed real rule: its own course is
// among its source courses, its targets are at its destination, every
// group can be satisfied, and rules whose text names no source have the
// row's course alone.
func TestRealRulesInvariants(t *testing.T) {
	testtools.ForEachData(t, testRealRulesInvariants)
}

func testRealRulesInvariants(t *testing.T, d testtools.Data) {
	_, rules := loadReal(t, d.Dir)
	for _, r := range rules {
		if !r.Parsed {
			continue
		}
		found := false
		for _, c := range r.SourceCourses() {
			found = found || c == r.Course
		}
		if !found {
			t.Errorf("%s: %q: the row's course is not a source course", r.Evidence.Reference, r.Raw)
		}
		for _, g := range r.Source {
			if g.N < 1 || g.N > len(g.Courses) {
				t.Errorf("%s: %q: group %+v cannot be satisfied", r.Evidence.Reference, r.Raw, g)
			}
		}
		for _, s := range r.Targets {
			for _, tg := range s.Targets {
				if tg.Course.Institution != r.Destination {
					t.Errorf("%s: %q: target %v is not at %s", r.Evidence.Reference, r.Raw, tg.Course, r.Destination)
				}
			}
		}
		if (r.Outcome == OutcomeCredit || r.Outcome == OutcomeExemption) != (len(r.Targets) > 0) {
			t.Errorf("%s: %q: outcome %s with %d target sets", r.Evidence.Reference, r.Raw, r.Outcome, len(r.Targets))
		}
	}
}
