package noteindex

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzDocs makes notes of spec: notes separated by "|", each of fields
// separated by ";": path, tags (","), a property "key=value", headings
// (","), body.
func fuzzDocs(spec string) []Doc {
	var docs []Doc
	for i, part := range strings.SplitN(spec, "|", 16) {
		f := strings.SplitN(part, ";", 5)
		for len(f) < 5 {
			f = append(f, "")
		}
		d := Doc{Path: f[0], BodyLine: i % 4, Modified: time.Unix(int64(i%5)*3600, 0), Body: f[4]}
		if f[1] != "" {
			d.Tags = strings.Split(f[1], ",")
		}
		if k, v, ok := strings.Cut(f[2], "="); ok {
			d.Properties = map[string]string{k: v}
		}
		if f[3] != "" {
			d.Headings = strings.Split(f[3], ",")
		}
		docs = append(docs, d)
	}
	return docs
}

// FuzzSearch: any notes and any query are searched without a panic; the
// hits are at most the limit, best first (ties by path; newest first for
// filters only), each scoring in 0..1, the best 1 when a keyword matched;
// snippets and lines are within bounds.
func FuzzSearch(f *testing.F) {
	f.Add("courses/MATH 100.md;math,course/bc;status=in progress;Limits;Limits and derivatives of functions.\nSecond line.|Home.md;;;;Derivatives everywhere, running.", "derivatives", "#math", "courses/", 5, true)
	f.Add("a.md;;;;linear algebra is fun|b.md;;;;algebra, linear|a.md;;;;replaced", "linear algebra", "", "**/*.md", 0, true)
	f.Add("x/linearAlgebra.md;t;k=v;H;body", "lnalg status:v", "t", "x/[a-z]*", 3, false)
	f.Add("\xff\xfe;#;=;,;\x00", "\xff #\xff :x k: [", "##", "{a,", -1, true)
	f.Add("日本/数学.md;数学;;見出し;数学 の ノート", "数学", "", "", 10, true)
	f.Fuzz(func(t *testing.T, spec, text, tag, path string, limit int, content bool) {
		docs := fuzzDocs(spec)
		ix := New()
		for i, d := range docs {
			ix.Put(d)
			if i%5 == 4 {
				ix.Delete(docs[i/2].Path)
			}
		}
		q := Query{Text: text, Limit: limit % 20, IncludeContent: content, SnippetLength: limit % 50}
		if tag != "" {
			q.Tags = []string{tag}
		}
		if path != "" {
			q.Paths = []string{path}
		}
		r := ix.Search(q)
		max := q.Limit
		if max <= 0 {
			max = defaultLimit
		}
		if len(r.Hits) > max || r.Total < len(r.Hits) || r.Total > ix.Len() {
			t.Fatalf("%d hits, total %d, limit %d, %d notes", len(r.Hits), r.Total, q.Limit, ix.Len())
		}
		keyword := false
		seen := map[string]bool{}
		for i, h := range r.Hits {
			if math.IsNaN(h.Score) || h.Score <= 0 || h.Score > 1 {
				t.Fatalf("hit %d scores %v", i, h.Score)
			}
			if seen[h.Path] {
				t.Fatalf("%q twice", h.Path)
			}
			seen[h.Path] = true
			keyword = keyword || h.Method == "keyword" || h.Method == "combined"
			if i > 0 {
				p := r.Hits[i-1]
				if h.Method == "filter" {
					a, _ := ix.Get(p.Path)
					b, _ := ix.Get(h.Path)
					if a.Modified.Before(b.Modified) || a.Modified.Equal(b.Modified) && p.Path > h.Path {
						t.Fatalf("filter hits out of order: %q, %q", p.Path, h.Path)
					}
				} else if p.Score < h.Score || p.Score == h.Score && p.Path > h.Path {
					t.Fatalf("hits out of order: %v, %v", p, h)
				}
			}
			length := q.SnippetLength
			if length <= 0 {
				length = defaultSnippet
			}
			if content && h.Snippet == "" && h.Method != "filter" {
				t.Fatalf("no snippet: %+v", h)
			}
			if !strings.HasPrefix(h.Snippet, "File: ") && utf8.RuneCountInString(h.Snippet) > length+6 {
				t.Fatalf("snippet of %d characters, length %d", utf8.RuneCountInString(h.Snippet), length)
			}
			if len(h.Lines) > maxLines {
				t.Fatalf("%d lines", len(h.Lines))
			}
			for _, l := range h.Lines {
				if l.N < 1 || utf8.RuneCountInString(l.Text) > length+6 {
					t.Fatalf("line %+v", l)
				}
			}
		}
		if keyword && r.Hits[0].Score != 1 {
			t.Fatalf("best scores %v", r.Hits[0].Score)
		}
		if s, ok := Fuzzy(text, path); s < 0 || s > 1 || !ok && s != 0 || math.IsNaN(s) {
			t.Fatalf("Fuzzy(%q, %q) = %v, %v", text, path, s, ok)
		}
	})
}
