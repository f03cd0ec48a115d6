package noteindex

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// index puts docs into a new index.
func index(docs ...Doc) *Index {
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	return ix
}

func paths(r Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

// filler is body text that matches none of the tests' queries.
const filler = "Some words about nothing in particular, written to give the note a body of ordinary length for ranking."

func TestRanking(t *testing.T) {
	ix := index(
		Doc{Path: "biology/Photosynthesis.md", Body: filler},
		Doc{Path: "biology/Plants.md", Body: filler + " Photosynthesis happens in leaves."},
		Doc{Path: "notes/Leaf Structure and Photosynthesis.md", Body: filler},
		Doc{Path: "notes/Chlorophyll.md", Body: filler + " Chlorophyll absorbs light for photosynthesis."},
		Doc{Path: "sport/Training.md", Body: "She runs every morning and ran a marathon last year."},
		Doc{Path: "sport/Diet.md", Headings: []string{"Running fuel"}, Body: filler},
		Doc{Path: "sport/Rest.md", Tags: []string{"running"}, Body: filler},
		Doc{Path: "misc/Unrelated.md", Body: filler},
	)
	for _, tc := range []struct {
		name, query string
		first       []string // the first hits, in order
		want        []string // the hits, in any order (nil: not checked)
	}{
		{"title outranks body", "photosynthesis", []string{"biology/Photosynthesis.md", "notes/Leaf Structure and Photosynthesis.md"},
			[]string{"biology/Photosynthesis.md", "notes/Leaf Structure and Photosynthesis.md", "biology/Plants.md", "notes/Chlorophyll.md"}},
		{"a longer title outranks body", "leaf structure", []string{"notes/Leaf Structure and Photosynthesis.md"}, nil},
		{"stems", "running", nil, []string{"sport/Training.md", "sport/Diet.md", "sport/Rest.md"}},
		{"stems, plural", "plant", []string{"biology/Plants.md"}, []string{"biology/Plants.md"}},
		{"stop words only", "the of and", nil, []string{}},
		{"nothing", "zebra", nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ix.Search(Query{Text: tc.query, Limit: 20})
			got := paths(r)
			if len(got) < len(tc.first) || !slices.Equal(got[:len(tc.first)], tc.first) {
				t.Errorf("hits %q, want first %q", got, tc.first)
			}
			if tc.want != nil {
				slices.Sort(got)
				want := slices.Sorted(slices.Values(tc.want))
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Errorf("hits %q, want %q", got, want)
				}
			}
			if r.Total != len(r.Hits) {
				t.Errorf("total %d, %d hits", r.Total, len(r.Hits))
			}
			if len(r.Hits) > 0 && r.Hits[0].Score != 1 {
				t.Errorf("best score %v, want 1", r.Hits[0].Score)
			}
		})
	}
}

func TestMethods(t *testing.T) {
	ix := index(
		Doc{Path: "a/Kalman Filter.md", Body: "The kalman filter estimates state."},
		Doc{Path: "a/Estimation.md", Body: "A kalman filter, again."},
		Doc{Path: "a/Kalmanfilterish.md", Body: filler},
	)
	r := ix.Search(Query{Text: "kalman filter"})
	methods := map[string]string{}
	for _, h := range r.Hits {
		methods[h.Path] = h.Method
		if h.Score <= 0 || h.Score > 1 {
			t.Errorf("%s scores %v", h.Path, h.Score)
		}
	}
	want := map[string]string{"a/Kalman Filter.md": "combined", "a/Estimation.md": "keyword", "a/Kalmanfilterish.md": "fuzzy"}
	for p, m := range want {
		if methods[p] != m {
			t.Errorf("%s: method %q, want %q (hits %v)", p, methods[p], m, r.Hits)
		}
	}
	if r.Hits[0].Path != "a/Kalman Filter.md" || r.Hits[0].Score != 1 {
		t.Errorf("first %v", r.Hits[0])
	}
	// Only fuzzy: the best scores its fuzzy score, below 1.
	r = ix.Search(Query{Text: "kflt"})
	if len(r.Hits) != 2 || r.Hits[0].Method != "fuzzy" || r.Hits[0].Score >= 1 || r.Hits[0].Score <= 0 {
		t.Errorf("fuzzy only: %+v", r.Hits)
	}
	// Exact title: fuzzy 1.
	r = ix.Search(Query{Text: "kalmanfilterish"})
	if len(r.Hits) == 0 || r.Hits[0].Path != "a/Kalmanfilterish.md" || r.Hits[0].Score != 1 {
		t.Errorf("exact title: %+v", r.Hits)
	}
}

func TestFilters(t *testing.T) {
	day0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	ix := index(
		Doc{Path: "courses/MATH 100.md", Tags: []string{"course/bc", "math"}, Properties: map[string]string{"status": "In Progress", "term": "Fall 2024"}, Body: "Limits and derivatives.", Modified: day0.Add(3 * time.Hour)},
		Doc{Path: "courses/MATH 101.md", Tags: []string{"#Course"}, Properties: map[string]string{"Status": "done"}, Body: "Integrals and series.", Modified: day0.Add(2 * time.Hour)},
		Doc{Path: "courses/sub/CPSC 110.md", Tags: []string{"courses", "cs"}, Properties: map[string]string{"status": "in progress"}, Body: "Functions and data.", Modified: day0.Add(1 * time.Hour)},
		Doc{Path: "Home.md", Tags: []string{"MATH/Algebra"}, Body: "Derivatives everywhere.", Modified: day0},
		Doc{Path: "journal/2025-03-01.md", Body: "Studied derivatives.", Modified: day0.Add(4 * time.Hour)},
	)
	for _, tc := range []struct {
		name string
		q    Query
		want []string // in order
	}{
		{"tag, nested", Query{Text: "#course"}, []string{"courses/MATH 100.md", "courses/MATH 101.md"}},
		{"tag, case", Query{Tags: []string{"#Math"}}, []string{"courses/MATH 100.md", "Home.md"}},
		{"nested tag exact", Query{Text: "#course/BC"}, []string{"courses/MATH 100.md"}},
		{"tag is no prefix of a name", Query{Text: "#cours"}, nil},
		{"tags, all", Query{Text: "#math #course"}, []string{"courses/MATH 100.md"}},
		{"tag and words", Query{Text: "derivatives #math"}, []string{"Home.md", "courses/MATH 100.md"}},
		{"property in text", Query{Text: "status:progress"}, []string{"courses/MATH 100.md", "courses/sub/CPSC 110.md"}},
		{"property quoted", Query{Text: `term:"fall"`}, []string{"courses/MATH 100.md"}},
		{"property map, key case", Query{Properties: map[string]string{"STATUS": "Done"}}, []string{"courses/MATH 101.md"}},
		{"property any value", Query{Properties: map[string]string{"term": ""}}, []string{"courses/MATH 100.md"}},
		{"property and words", Query{Text: "status:in derivatives"}, []string{"courses/MATH 100.md"}},
		{"property absent", Query{Text: "colour:red"}, nil},
		{"path prefix", Query{Paths: []string{"courses/"}}, []string{"courses/MATH 100.md", "courses/MATH 101.md", "courses/sub/CPSC 110.md"}},
		{"path prefix, leading slash", Query{Paths: []string{"/journal"}}, []string{"journal/2025-03-01.md"}},
		{"paths, any", Query{Paths: []string{"journal/", "Home.md"}}, []string{"journal/2025-03-01.md", "Home.md"}},
		{"glob, one level", Query{Paths: []string{"courses/*.md"}}, []string{"courses/MATH 100.md", "courses/MATH 101.md"}},
		{"glob, any depth", Query{Paths: []string{"courses/**"}}, []string{"courses/MATH 100.md", "courses/MATH 101.md", "courses/sub/CPSC 110.md"}},
		{"glob, **/ also top level", Query{Paths: []string{"**/*.md"}, Limit: 10}, []string{"journal/2025-03-01.md", "courses/MATH 100.md", "courses/MATH 101.md", "courses/sub/CPSC 110.md", "Home.md"}},
		{"glob, anchored", Query{Paths: []string{"*.md"}}, []string{"Home.md"}},
		{"glob, class and ?", Query{Paths: []string{"courses/MATH 10[!0].md", "journal/????-*"}}, []string{"journal/2025-03-01.md", "courses/MATH 101.md"}},
		{"glob, braces", Query{Paths: []string{"{journal,courses/sub}/**"}}, []string{"journal/2025-03-01.md", "courses/sub/CPSC 110.md"}},
		{"glob, invalid", Query{Paths: []string{"[z-a]*"}}, nil},
		{"glob and words", Query{Text: "derivatives", Paths: []string{"**/MATH*"}}, []string{"courses/MATH 100.md"}},
		{"limit", Query{Paths: []string{""}, Limit: 2}, []string{"journal/2025-03-01.md", "courses/MATH 100.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ix.Search(tc.q)
			if got := paths(r); !slices.Equal(got, tc.want) {
				t.Errorf("hits %q, want %q", got, tc.want)
			}
			for _, h := range r.Hits {
				if tc.q.Text == "" && (h.Score != 1 || h.Method != "filter") {
					t.Errorf("filter hit %+v", h)
				}
			}
		})
	}
	if r := ix.Search(Query{Paths: []string{""}, Limit: 2}); r.Total != 5 {
		t.Errorf("total %d, want 5", r.Total)
	}
	if r := ix.Search(Query{}); len(r.Hits) != 0 || r.Total != 0 {
		t.Errorf("empty query: %+v", r)
	}
}

func TestPhraseBonus(t *testing.T) {
	// Without the bonus the two notes score the same (same words, same
	// lengths), and the path decides: "a" first.
	docs := []Doc{
		{Path: "a.md", Body: "algebra is hard and linear thinking is easy here"},
		{Path: "b.md", Body: "thinking is hard and linear algebra is easy here"},
	}
	ix := index(docs...)
	r := ix.Search(Query{Text: "linear algebra"})
	if got := paths(r); !slices.Equal(got, []string{"b.md", "a.md"}) {
		t.Fatalf("hits %q, want the phrase first", got)
	}
	if r.Hits[1].Score >= r.Hits[0].Score {
		t.Errorf("scores %v, %v", r.Hits[0].Score, r.Hits[1].Score)
	}
	ix.p.phrase = 0
	if got := paths(ix.Search(Query{Text: "linear algebra"})); !slices.Equal(got, []string{"a.md", "b.md"}) {
		t.Errorf("without the bonus: %q", got)
	}
	// Stop words and stems are part of the phrase.
	ix = index(
		Doc{Path: "a.md", Body: "we were running of the tests and then some"},
		Doc{Path: "b.md", Body: "we were running the tests and then some"},
	)
	if got := paths(ix.Search(Query{Text: "runs the test"})); !slices.Equal(got, []string{"b.md", "a.md"}) {
		t.Errorf("stemmed phrase: %q", got)
	}
}

func TestPutDelete(t *testing.T) {
	ix := index(
		Doc{Path: "x.md", Body: "alpha beta"},
		Doc{Path: "y.md", Body: "beta gamma", Tags: []string{"t/u"}, Properties: map[string]string{"k": "v"}},
	)
	if ix.Len() != 2 || !slices.Equal(ix.Paths(), []string{"x.md", "y.md"}) {
		t.Fatalf("len %d, paths %q", ix.Len(), ix.Paths())
	}
	ix.Put(Doc{Path: "x.md", Body: "delta"})
	if ix.Len() != 2 {
		t.Errorf("len %d after replacing", ix.Len())
	}
	if got := paths(ix.Search(Query{Text: "alpha"})); len(got) != 0 {
		t.Errorf("alpha still found: %q", got)
	}
	if got := paths(ix.Search(Query{Text: "delta"})); !slices.Equal(got, []string{"x.md"}) {
		t.Errorf("delta: %q", got)
	}
	if d, ok := ix.Get("x.md"); !ok || d.Body != "delta" {
		t.Errorf("get: %+v %v", d, ok)
	}
	ix.Delete("y.md")
	ix.Delete("nope.md")
	if _, ok := ix.Get("y.md"); ok || ix.Len() != 1 || !slices.Equal(ix.Paths(), []string{"x.md"}) {
		t.Errorf("after delete: len %d, paths %q", ix.Len(), ix.Paths())
	}
	for _, q := range []Query{{Text: "gamma"}, {Text: "#t"}, {Text: "k:v"}} {
		if r := ix.Search(q); len(r.Hits) != 0 {
			t.Errorf("%+v finds %q", q, paths(r))
		}
	}
	ix.Put(Doc{Path: "z.md", Body: "gamma"}) // reuses y's slot
	if got := paths(ix.Search(Query{Text: "gamma"})); !slices.Equal(got, []string{"z.md"}) {
		t.Errorf("gamma: %q", got)
	}
	ix.Delete("x.md")
	ix.Delete("z.md")
	if len(ix.dict) != 0 || len(ix.tagDocs) != 0 || len(ix.propDocs) != 0 || ix.total != [nFields]int64{} || ix.live != 0 {
		t.Errorf("empty index keeps %d terms, %d tags, %d keys, lengths %v", len(ix.dict), len(ix.tagDocs), len(ix.propDocs), ix.total)
	}
	// The caller's doc is copied.
	tags := []string{"a"}
	ix.Put(Doc{Path: "w.md", Tags: tags})
	tags[0] = "b"
	if d, _ := ix.Get("w.md"); d.Tags[0] != "a" {
		t.Errorf("tags changed with the caller's: %q", d.Tags)
	}
}

func TestSnippet(t *testing.T) {
	body := strings.Join([]string{
		"Intro line without the word.",         // file line 5
		"",                                     // 6
		"The Fourier transform of a function.", // 7
		"Nothing here.",                        // 8
		"Transforms again, and a fourier series." + strings.Repeat(" padding", 60), // 9
		"x\r",                                      // 10
		"fourier", "fourier", "fourier", "fourier", // 11..14
	}, "\n")
	ix := index(
		Doc{Path: "m/Signals.md", BodyLine: 5, Body: body},
		Doc{Path: "m/Fourier.md", BodyLine: 3, Body: "Unrelated body."},
	)
	r := ix.Search(Query{Text: "fourier transform", IncludeContent: true, SnippetLength: 60})
	var sig, title Hit
	for _, h := range r.Hits {
		switch h.Path {
		case "m/Signals.md":
			sig = h
		case "m/Fourier.md":
			title = h
		}
	}
	if title.Snippet != "File: m/Fourier.md" || title.Lines != nil {
		t.Errorf("title-only hit: %q %v", title.Snippet, title.Lines)
	}
	if !strings.Contains(sig.Snippet, "Fourier transform of a function.") || !strings.HasPrefix(sig.Snippet, "...") || !strings.HasSuffix(sig.Snippet, "...") {
		t.Errorf("snippet %q", sig.Snippet)
	}
	if n := len([]rune(strings.Trim(sig.Snippet, "."))); n > 60 {
		t.Errorf("snippet of %d characters", n)
	}
	var ns []int
	for _, l := range sig.Lines {
		ns = append(ns, l.N)
	}
	if !slices.Equal(ns, []int{7, 9, 11, 12, 13}) {
		t.Errorf("lines %v", ns)
	}
	if sig.Lines[0].Text != "The Fourier transform of a function." || !strings.HasPrefix(sig.Lines[1].Text, "Transforms again") || !strings.HasSuffix(sig.Lines[1].Text, "...") {
		t.Errorf("line texts %+v", sig.Lines)
	}
	// No content unless asked.
	if r := ix.Search(Query{Text: "fourier"}); r.Hits[0].Snippet != "" || r.Hits[0].Lines != nil {
		t.Errorf("content not asked for: %+v", r.Hits[0])
	}
	// A short body is whole, without "...".
	ix.Put(Doc{Path: "s.md", Body: "  short   fourier\n\nnote  "})
	r = ix.Search(Query{Text: "fourier", Paths: []string{"s.md"}, IncludeContent: true})
	if r.Hits[0].Snippet != "short fourier note" || r.Hits[0].Lines[0] != (Line{N: 1, Text: "  short   fourier"}) {
		t.Errorf("short: %q %+v", r.Hits[0].Snippet, r.Hits[0].Lines)
	}
}

func TestTitleWords(t *testing.T) {
	for in, want := range map[string][]string{
		"linear-algebra_notes": {"linear", "algebra", "notes"},
		"linearAlgebra":        {"linear", "algebra", "linearalgebra"},
		"HTMLParser v2":        {"html", "parser", "htmlparser", "v", "2", "v2"},
		"MATH 100":             {"math", "100"},
		"Émile Zola":           {"émile", "zola"},
	} {
		if got := titleWords(in); !slices.Equal(got, want) {
			t.Errorf("titleWords(%q) = %q, want %q", in, got, want)
		}
	}
	ix := index(Doc{Path: "x/linearAlgebra-notes.md", Body: filler}, Doc{Path: "y.md", Body: filler + " algebra"})
	if got := paths(ix.Search(Query{Text: "algebra"})); !slices.Equal(got, []string{"x/linearAlgebra-notes.md", "y.md"}) {
		t.Errorf("camelCase title: %q", got)
	}
}
