package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse parses a realistic 5 KB note: frontmatter, headings, a
// table, lists, code, some thirty links and a dozen tags.
func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "bench", "note.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src)
	}
}

func TestBenchNote(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "bench", "note.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := Parse(src)
	if n.FrontmatterError != "" || len(n.Headings) < 10 || len(n.Links) < 30 || len(n.Tags) < 10 {
		t.Errorf("frontmatter error %q, %d headings, %d links, %d tags", n.FrontmatterError, len(n.Headings), len(n.Links), len(n.Tags))
	}
	for _, l := range n.Links {
		if l.Target == "not a link" || l.Target == "Note" {
			t.Errorf("link in code: %+v", l)
		}
	}
	for _, tag := range n.Tags {
		if tag == "not-a-tag" || tag == "hashtags" || tag == "123" {
			t.Errorf("tag in code or number: %q", tag)
		}
	}
}

// BenchmarkParseHostile parses 1 MB of each pattern on which goldmark alone
// is quadratic or slow.
func BenchmarkParseHostile(b *testing.B) {
	for _, p := range hostilePatterns {
		src := []byte(strings.Repeat(p, (1<<20)/len(p)))
		b.Run(p, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(src)
			}
		})
	}
}
