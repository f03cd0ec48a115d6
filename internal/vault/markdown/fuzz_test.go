package markdown

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"",
	"[[Note]] [[Note|alias]] [[Note#H]] [[Note#H|a]] [[Note#^b]] [[f/Note]] [[Note.md]] [[#H]]",
	"![[image.png]] ![[Note#Heading]] | [[Note\\|alias]] |",
	"[t](a%20b.md#h) ![a](<x y.png>) [e](https://x) [r][ref]\n\n[ref]: a.md",
	"# H #tag\n\n`[[code]]` #t/n #123\n\n```\n[[x]]\n```\n\n    [[y]]\n",
	"---\ntags: [a, b]\n---\n# T\n[[a]]",
	"---\r\na: [\r\n---\r\n[[b]]\r\n",
	"> - [[a]]\n>\t[[b]]\n- \t[x](y.md)\n",
	"[a](\n b.md)\n[[a\n]]",
}

// FuzzParse checks that Parse never panics, that what it reports stays
// within the source, in order, and that cutting the note into chunks only
// where it is safe changes nothing.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "bench", "note.md")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		// Nothing is written into src, nor past its end.
		orig := string(src) + "tail"
		buf := []byte(orig)
		src = buf[: len(src) : len(src)+4]
		defer func() {
			if string(buf) != orig {
				t.Fatalf("%q became %q", orig, buf)
			}
		}()
		n, paths := parse(src) // parse, unlike Parse, lets a panic through
		checkParse(t, src, n, paths)
		// Cut in tiny chunks anywhere, what it reports is still within src.
		n, paths = parseWith(src, 16, nil)
		checkParse(t, src, n, paths)
		// Cut only where it is safe, or not at all, the note reads as it
		// does whole with goldmark alone.
		whole, wholePaths := parseWhole(src)
		n, paths = parseWith(src, -1, nil)
		if !reflect.DeepEqual(n, whole) || !reflect.DeepEqual(paths, wholePaths) {
			t.Fatalf("cut where safe: %+v %v\nwhole: %+v %v", n, paths, whole, wholePaths)
		}
		if len(src) <= maxChunk {
			n, paths = parse(src)
			if !reflect.DeepEqual(n, whole) || !reflect.DeepEqual(paths, wholePaths) {
				t.Fatalf("parse: %+v %v\nwhole: %+v %v", n, paths, whole, wholePaths)
			}
		}
	})
}

// checkParse checks that what parse reports of src stays within it.
func checkParse(t *testing.T, src []byte, n Note, paths []linkPath) {
	t.Helper()
	if len(paths) != len(n.Links) {
		t.Fatalf("%d links, %d paths", len(n.Links), len(paths))
	}
	if n.BodyStart < 0 || n.BodyStart > len(src) {
		t.Fatalf("BodyStart %d of %d bytes", n.BodyStart, len(src))
	}
	for i, l := range n.Links {
		if l.Start < n.BodyStart || l.Start >= l.End || l.End > len(src) {
			t.Fatalf("link %+v out of %d bytes", l, len(src))
		}
		s := src[l.Start:l.End]
		if !bytes.HasPrefix(s, []byte("[")) && !bytes.HasPrefix(s, []byte("![")) {
			t.Fatalf("link %+v covers %q", l, s)
		}
		if !l.Markdown && !bytes.HasPrefix(s, []byte("[[")) && !bytes.HasPrefix(s, []byte("![[")) {
			t.Fatalf("wikilink %+v covers %q", l, s)
		}
		if p := paths[i]; p.start < l.Start || p.start > p.end || p.end > l.End {
			t.Fatalf("link %+v has its path at %d:%d", l, p.start, p.end)
		}
		if i > 0 && l.Start < n.Links[i-1].End {
			t.Fatalf("links %+v and %+v overlap", n.Links[i-1], l)
		}
	}
	lines := bytes.Count(src, []byte{'\n'}) + 1
	for _, h := range n.Headings {
		if h.Line < 1 || h.Line > lines || h.Level < 1 || h.Level > 6 {
			t.Fatalf("heading %+v in %d lines", h, lines)
		}
	}
	for _, tag := range n.Tags {
		if tag == "" || strings.HasPrefix(tag, "#") {
			t.Fatalf("tag %q", tag)
		}
	}
}

// FuzzRewrite checks that Rewrite without moves returns its input, and that
// with a move it does not panic and keeps the links.
func FuzzRewrite(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "Note.md", "f/New Name.md", "x/y.md")
	}
	f.Add([]byte("[[a]] [b](../a.md) ![[a#h|x]]"), "a.md", "b/a.md", "c/n.md")
	f.Add([]byte("[[0]]"), "0", " ", "x.md")             // a name a wikilink cannot hold
	f.Add([]byte("[x](a.md)"), "a.md", "b:c.md", "n.md") // a name that reads as a URL scheme
	f.Fuzz(func(t *testing.T, src []byte, from, to, note string) {
		vault := []string{"Note.md", "f/Note.md", "image.png", "a.md", "x/y.md", "c/n.md", from}
		before := NewResolver(vault)
		if out, changed := Rewrite(src, note, before, before, nil); !bytes.Equal(out, src) || changed != 0 {
			t.Fatalf("Rewrite without moves changed %q into %q", src, out)
		}
		if out, changed := rewrite(src, note, before, before, map[string]string{}); !bytes.Equal(out, src) || changed != 0 {
			t.Fatalf("rewrite without moves changed %q into %q", src, out)
		}
		moved := map[string]string{from: to}
		after := NewResolver(movedVault(vault, moved))
		out, changed := rewrite(src, note, before, after, moved) // no recover
		if changed == 0 && !bytes.Equal(out, src) {
			t.Fatalf("nothing changed but %q became %q", src, out)
		}
		if !validPath(to) {
			return
		}
		if got, want := len(Parse(out).Links), len(Parse(src).Links); got != want {
			t.Fatalf("%d links became %d: %q -> %q", want, got, src, out)
		}
	})
}

// validPath reports whether p looks like a vault path: a clean relative
// path of non-empty segments.
func validPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
