package markdown

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hostilePatterns are inputs on which goldmark alone takes quadratic time
// (or worse) when repeated: 50 KB of "[a](" took it a second.
var hostilePatterns = []string{"[a](", "> ", "[[a", "[", "*a ", "`", "<a "}

// moreHostile are more of them, as a pattern repeated then another.
var moreHostile = [][2]string{
	{"1. ", ""}, {"> - ", ""}, {"[a](<", ""}, {"[a](b", ""}, {"[a](\n", ""}, {"[a]\n", ""},
	{"[", "]"}, {"[[", "]]"}, {"[", "a]"}, {"![", "]"}, {"[a](x", "\n\"y"}, {"[a]( ", "\n\""},
	{"[a](b (", ""}, {"[a]", "\n\n[a]: b\n"}, {"x<!--", ""}, {"a\n", ""}, {"\t>", ""},
}

// testNotes returns the notes of testdata, by path.
func testNotes(t testing.TB) map[string][]byte {
	t.Helper()
	notes := map[string][]byte{}
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		notes[p], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) < 5 {
		t.Fatalf("%d notes in testdata", len(notes))
	}
	return notes
}

// sameParse fails the test if parsing src with limit differs from parsing
// it whole with goldmark alone, as Parse did before chunking.
func sameParse(t *testing.T, name string, src []byte, limit int) (chunks int) {
	t.Helper()
	got, gotPaths := parseWith(src, limit, func(int, int, int) { chunks++ })
	want, wantPaths := parseWhole(src)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPaths, wantPaths) {
		t.Errorf("%s (limit %d, %d chunks):\n got %+v\nwant %+v\n got paths %v\nwant paths %v", name, limit, chunks, got, want, gotPaths, wantPaths)
	}
	return chunks
}

// TestChunkedMatchesWhole parses the notes of testdata, and the seeds of
// the fuzz tests, whole with goldmark alone and in chunks: as they are, cut
// at every safe place, and repeated into notes long enough to be cut.
func TestChunkedMatchesWhole(t *testing.T) {
	notes := testNotes(t)
	for i, s := range fuzzSeeds {
		notes["seed"+string(rune('0'+i))] = []byte(s)
	}
	var all []byte
	for name, src := range notes {
		sameParse(t, name, src, maxChunk)
		sameParse(t, name, src, -1)
		all = append(append(all, src...), "\n\n"...)
	}
	long := bytes.Repeat(all, 4*maxChunk/len(all)+1)
	if n := sameParse(t, "all notes repeated", long, maxChunk); n < 4 {
		t.Errorf("%d bytes in %d chunks", len(long), n)
	}
	if n := sameParse(t, "all notes repeated", long, -1); n < 100 {
		t.Errorf("%d bytes in %d chunks", len(long), n)
	}
	// The hardened goldmark gives the same AST as goldmark on hostile input
	// too, within a chunk.
	for _, p := range hostilePatterns {
		sameParse(t, p, []byte(strings.Repeat(p, maxChunk/len(p))), maxChunk)
	}
	for _, p := range moreHostile {
		k := maxChunk / (len(p[0]) + len(p[1]))
		sameParse(t, p[0]+p[1], []byte(strings.Repeat(p[0], k)+strings.Repeat(p[1], k)), maxChunk)
	}
}

// TestChunkBoundaries checks that cutting the body at a blank line keeps
// what a block that goes on past it means.
func TestChunkBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		links []string // targets
		tags  []string
	}{
		{"indented code after a blank line", "para\n\n    [[a]] #x\n\n    [[b]]\n\nmore [[c]]\n", []string{"c"}, nil},
		{"list with blank lines", "1. item\n\n    [[a]] #x\n\n   - sub\n\n     [[b]]\n\n2. next [[c]]\n", []string{"a", "b", "c"}, []string{"x"}},
		{"fence with blank lines", "```\n[[a]]\n\n[[b]] #x\n```\n\n[[c]]\n", []string{"c"}, nil},
		{"fences of kinds and lengths", "~~~~\n[[a]]\n\n```\n[[b]]\n\n~~~\n[[c]]\n\n~~~~~\n\n[[d]]\n", []string{"d"}, nil},
		{"fence in a list", "- x\n\n  ```\n  [[a]]\n\n  [[b]]\n  ```\n\n[[c]]\n", []string{"c"}, nil},
		{"unclosed fence", "[[a]]\n\n```\n[[b]]\n\n[[c]]\n", []string{"a"}, nil},
		{"html comment", "<!--\n[[a]]\n\n[[b]] #x -->\n\n[[c]]\n", []string{"c"}, nil},
		{"html script", "<script>\n\n[[a]]\n</script> [[b]]\n\n[[c]]\n", []string{"c"}, nil},
		{"html comment closed on its line", "<!-- x -->\n\n[[a]]\n", []string{"a"}, nil},
		{"html div", "<div>\n[[a]]\n\n[[b]]\n</div>\n\n[[c]]\n", []string{"b", "c"}, nil},
		{"reference defined later", "[x #x [[a]]][r]\n\n[r]: b.md\n\n[[c]] #y\n", []string{"c"}, []string{"y"}},
		{"reference defined twice", "[r]: a.md\n\n[r]\n\n[r]: b.md\n\n[[c]]\n", []string{"c"}, nil},
		{"block quotes", "> [[a]]\n\n> ```\n> [[b]]\n\n[[c]]\n", []string{"a", "c"}, nil},
		{"setext", "Title\n\n===\n\nT2\n---\n", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			if n := sameParse(t, tt.name, src, -1); n < 2 {
				t.Errorf("%d chunks", n)
			}
			n, _ := parseWith(src, -1, nil)
			var links []string
			for _, l := range n.Links {
				links = append(links, l.Target)
			}
			if !reflect.DeepEqual(links, tt.links) || !reflect.DeepEqual(n.Tags, tt.tags) {
				t.Errorf("links %q, tags %q; want %q, %q", links, n.Tags, tt.links, tt.tags)
			}
		})
	}
}

// TestChunkCutInBlock checks that a block longer than a chunk that the
// chunk's end leaves open is skipped: code stays code.
func TestChunkCutInBlock(t *testing.T) {
	lines := strings.Repeat("[[x]] #no [y](y.md)\n", 2*maxChunk/20)
	for _, src := range []string{
		"```\n" + lines + "```\n[[a]] #yes\n",
		"~~~\n" + lines + "\n\n~~~\n\n[[a]] #yes\n",
		"<!--\n" + lines + "-->\n[[a]] #yes\n",
		"<div>\n" + lines + "\n[[a]] #yes\n",
		"    x\n" + strings.ReplaceAll(lines, "[[", "    [[") + "[[a]] #yes\n",
		"```\n" + strings.Repeat("[[x]] ", 2*maxChunk/6) + "\n```\n\n[[a]] #yes\n",
	} {
		n := Parse([]byte(src))
		if len(n.Links) != 1 || n.Links[0].Target != "a" || !reflect.DeepEqual(n.Tags, []string{"yes"}) {
			t.Errorf("%.20q...: links %+v, tags %q", src, n.Links, n.Tags)
		}
	}
}

// TestChunkSizes checks that the work is linear in the note's size, whatever
// the note: no goldmark call is given more than maxChunk bytes, none of the
// note more than once (twice with link reference definitions), and
// linkScan reads a bounded number of bytes per byte of the note.
func TestChunkSizes(t *testing.T) {
	const size = 1 << 18
	srcs := map[string][]byte{}
	for _, p := range hostilePatterns {
		srcs[p] = []byte(strings.Repeat(p, size/len(p)))
	}
	for _, p := range moreHostile {
		unit := strings.Repeat(p[0], 2048/len(p[0])) + strings.Repeat(p[1], 2048/max(len(p[1]), 1))
		srcs[p[0]+p[1]] = []byte(strings.Repeat(unit, size/len(unit)))
	}
	for name, src := range testNotes(t) {
		srcs[name] = bytes.Repeat(src, size/len(src))
	}
	for name, src := range srcs {
		given, scanned, calls := 0, 0, 0
		parseWith(src, maxChunk, func(start, end, n int) {
			calls++
			given += end - start
			scanned += n
			if end-start > maxChunk || start < 0 || end > len(src) {
				t.Errorf("%q: a goldmark call given src[%d:%d]", name, start, end)
			}
		})
		most := len(src)
		if bytes.Contains(src, []byte("]:")) {
			most *= 2
		}
		if given > most {
			t.Errorf("%q: %d bytes given to goldmark for %d", name, given, len(src))
		}
		if scanned > 8*len(src) {
			t.Errorf("%q: %d bytes scanned for %d in %d calls", name, scanned, len(src), calls)
		}
	}
}

// TestCut checks where chunks end.
func TestCut(t *testing.T) {
	tests := []struct {
		src   string
		limit int
		want  int
	}{
		{"short", 10, 5},
		{"a\n\nb\nc\nd", 6, 3},             // after a blank line
		{"a\n\n  b\nc\nd", 8, 7},           // at the first column
		{"a\nb\n===\n    c\n", 10, 2},      // not before an underline
		{"a\n> b\n> c\n", 8, 6},            // any line, rather than mid-line
		{"aaa bbb ccc ddd", 10, 8},         // before a word
		{"aaaaaaaaaaaaaaa", 10, 10},        // anywhere
		{"aaaaaaaaa\u00e9aaaa", 10, 9},     // not within a UTF-8 sequence
		{"a\n\n  b\n\nc\n\n  d", -1, 8},    // safe only
		{"a\n\n  b\n\n  c\n\n  d", -1, 16}, // never
	}
	for _, tt := range tests {
		if got := cut([]byte(tt.src), 0, tt.limit); got != tt.want {
			t.Errorf("cut(%q, %d) = %d, want %d", tt.src, tt.limit, got, tt.want)
		}
	}
}

// TestChunkIndentedCode checks that an indented code block is code in a
// chunk of its own, wherever the body is cut.
func TestChunkIndentedCode(t *testing.T) {
	src := []byte("para [[a]]\n\n    [[b]] #x\n    [[c]]\n\nmore [[d]]\n")
	for limit := len("para [[a]]\n"); limit <= len(src); limit++ {
		n, _ := parseWith(src, limit, nil)
		var links []string
		for _, l := range n.Links {
			links = append(links, l.Target)
		}
		if !reflect.DeepEqual(links, []string{"a", "d"}) || n.Tags != nil {
			t.Errorf("limit %d: links %q, tags %q", limit, links, n.Tags)
		}
	}
}

// TestRewriteLongNote rewrites links spread over many chunks.
func TestRewriteLongNote(t *testing.T) {
	vault := []string{"a.md", "b.md"}
	moved := map[string]string{"a.md": "x/a2.md"}
	para := "Some text [[a]] and [b](b.md), then [l](a.md#h) #tag\n\n```\n[[a]]\n```\n\n"
	src := []byte(strings.Repeat(para, 3*maxChunk/len(para)))
	out, changed := Rewrite(src, "b.md", NewResolver(vault), NewResolver(movedVault(vault, moved)), moved)
	wantPara := "Some text [[a2]] and [b](b.md), then [l](x/a2.md#h) #tag\n\n```\n[[a]]\n```\n\n"
	if want := strings.Repeat(wantPara, 3*maxChunk/len(para)); string(out) != want || changed != 2*(3*maxChunk/len(para)) {
		t.Errorf("changed %d; got %.200q...", changed, out)
	}
}

// TestParseKeepsSource checks that parsing writes nothing into the note,
// nor past its end: goldmark appends a newline to a code block's last line
// in place, when its slice has room.
func TestParseKeepsSource(t *testing.T) {
	const note = "para\n\n    code\n\n    [[b]]"
	for _, parse := range []func([]byte) (Note, []linkPath){parse, parseWhole, func(b []byte) (Note, []linkPath) { return parseWith(b, 8, nil) }} {
		buf := []byte(note + "tail")
		parse(buf[:len(note)])
		if string(buf) != note+"tail" {
			t.Errorf("%q became %q", note+"tail", buf)
		}
	}
}
