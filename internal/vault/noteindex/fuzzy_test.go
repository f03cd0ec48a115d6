package noteindex

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestFuzzyOrdering(t *testing.T) {
	// Each group scores above the next.
	for _, tc := range []struct {
		query  string
		groups [][]string
	}{
		{"alg", [][]string{
			{"ALG"},                            // exact
			{"Algebra", "Algorithms and Data"}, // prefix
			{"Linear Algebra", "Abstract Linear Geometry", "a-linear-game"}, // word starts
			{"Tabloid gear", "Bagel Logic"},                                 // scattered
		}},
		{"ml", [][]string{
			{"ML"},
			{"Machine Learning", "my-long-note"},
			{"Small Multilingual"},
			{"Formula"},
		}},
		{"linear algebra", [][]string{
			{"Linear Algebra"},
			{"Linear Algebra Notes"},
			{"Notes on Linear Algebra"},
			{"Beeline near the algebra lab"},
		}},
	} {
		prev := 2.0
		for _, g := range tc.groups {
			low := 2.0
			for _, s := range g {
				score, ok := Fuzzy(tc.query, s)
				if !ok || score <= 0 || score > 1 {
					t.Errorf("Fuzzy(%q, %q) = %v, %v", tc.query, s, score, ok)
				}
				if score >= prev {
					t.Errorf("Fuzzy(%q, %q) = %.3f, not below the group before (%.3f)", tc.query, s, score, prev)
				}
				low = min(low, score)
				t.Logf("Fuzzy(%q, %q) = %.3f", tc.query, s, score)
			}
			prev = low
		}
	}
	for _, tc := range []struct{ q, s string }{
		{"alg", "Lag"}, {"xyz", "Linear Algebra"}, {"algebraa", "Algebra"}, {"", "x"}, {"  ", "x"}, {"a", ""},
	} {
		if score, ok := Fuzzy(tc.q, tc.s); ok || score != 0 {
			t.Errorf("Fuzzy(%q, %q) = %v, %v, want no match", tc.q, tc.s, score, ok)
		}
	}
	if s, ok := Fuzzy("  linear ALGEBRA ", "Linear Algebra"); s != 1 || !ok {
		t.Errorf("exact but for case: %v %v", s, ok)
	}
	if s, _ := Fuzzy("linearalgebra", "Linear Algebra"); s >= 1 || s < 0.8 {
		t.Errorf("spaces left out: %v", s)
	}
	// A long text falls back to the leftmost alignment, still in 0..1.
	long := strings.Repeat("ab", 40000) + "xyz"
	if s, ok := Fuzzy("abxyz", long); !ok || s <= 0 || s > 1 {
		t.Errorf("long text: %v %v", s, ok)
	}
	if s, ok := Fuzzy(strings.Repeat("a", 300), strings.Repeat("a", 400)); !ok || s <= 0 || s > 1 {
		t.Errorf("long query: %v %v", s, ok)
	}
}

func TestFuzzyPaths(t *testing.T) {
	entries := []Entry{
		{Path: "projects/alpha/readme.md"},
		{Path: "notes/alpha.md"},
		{Path: "alpha", Folder: true},
		{Path: "projects/alpha/", Folder: true},
		{Path: "archive/alphabet soup.md"},
		{Path: "misc/beta.md"},
		{Path: "a/l/p/h/a.md"},
	}
	hits, total := FuzzyPaths("alpha", entries, 10)
	got := map[string]PathHit{}
	var order []string
	for _, h := range hits {
		got[h.Path] = h
		order = append(order, h.Path)
	}
	if total != 6 || len(hits) != 6 {
		t.Fatalf("total %d, hits %v", total, hits)
	}
	// Exact names first (ties by path), then the prefix name, then paths.
	if want := []string{"alpha", "notes/alpha.md", "projects/alpha/", "archive/alphabet soup.md"}; !slices.Equal(order[:4], want) {
		t.Errorf("order %q, want first %q", order, want)
	}
	for p, m := range map[string]string{
		"notes/alpha.md": "fuzzy_name", "alpha": "fuzzy_name", "archive/alphabet soup.md": "fuzzy_name",
		"projects/alpha/readme.md": "fuzzy_path", "a/l/p/h/a.md": "fuzzy_path",
	} {
		if got[p].Method != m {
			t.Errorf("%s: %q, want %q", p, got[p].Method, m)
		}
	}
	if got["notes/alpha.md"].Score != 1 {
		t.Errorf("exact name without extension: %v", got["notes/alpha.md"].Score)
	}
	if s := got["projects/alpha/readme.md"].Score; s > 0.8 || s <= 0 {
		t.Errorf("path score %v, want at most 0.8", s)
	}
	if hits, total := FuzzyPaths("alpha", entries, 2); len(hits) != 2 || total != 6 || hits[0].Path != "alpha" {
		t.Errorf("limit 2: %v, %d", hits, total)
	}
	if hits, total := FuzzyPaths("", entries, 2); len(hits) != 0 || total != 0 {
		t.Errorf("empty query: %v, %d", hits, total)
	}
}

// TestConcurrency searches while notes are put, replaced and deleted (run
// with -race).
func TestConcurrency(t *testing.T) {
	g := newGenVault(7)
	docs := g.docs(600, 60)
	queries := g.queries(50)
	ix := New()
	for _, d := range docs[:300] {
		ix.Put(d)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				q := Query{Text: queries[(w*200+i)%len(queries)], IncludeContent: i%2 == 0, Limit: 5}
				if i%7 == 0 {
					q.Text += " #math"
				}
				r := ix.Search(q)
				if len(r.Hits) > 5 || r.Total < len(r.Hits) {
					t.Errorf("%d hits, total %d", len(r.Hits), r.Total)
				}
				ix.Paths()
				ix.Len()
			}
		})
	}
	for w := range 2 {
		wg.Go(func() {
			for i := range 300 {
				d := docs[300+(w*300+i)%300]
				switch i % 3 {
				case 0, 1:
					d.Body += fmt.Sprint(" edit", i)
					ix.Put(d)
				default:
					ix.Delete(docs[i%300].Path)
				}
				ix.Get(d.Path)
			}
		})
	}
	wg.Wait()
	// The index is as a fresh one of the same notes.
	fresh := New()
	for _, p := range ix.Paths() {
		d, _ := ix.Get(p)
		fresh.Put(d)
	}
	for _, q := range queries {
		a, b := ix.Search(Query{Text: q}), fresh.Search(Query{Text: q})
		if !slices.Equal(paths(a), paths(b)) || a.Total != b.Total {
			t.Errorf("%q: %q (%d) after updates, %q (%d) fresh", q, paths(a), a.Total, paths(b), b.Total)
		}
	}
}

// TestFuzzyFoldsAccents: a name is found without its accents, in any case.
func TestFuzzyFoldsAccents(t *testing.T) {
	for q, s := range map[string]string{"creme brulee": "Crème brûlée", "ECOLE": "école", "zurich": "Zürich"} {
		if _, ok := Fuzzy(q, s); !ok {
			t.Errorf("Fuzzy(%q, %q) found nothing", q, s)
		}
	}
	if _, ok := Fuzzy("crème", "Creme"); !ok {
		t.Error("an accented query does not find the name without accents")
	}
}
