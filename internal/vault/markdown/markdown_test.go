package markdown

import (
	"reflect"
	"strings"
	"sync"
	"testing"
)

// linkText is a Link without offsets, with the source text it covers.
type linkText struct {
	Text     string
	Target   string
	Heading  string
	Alias    string
	Embed    bool
	Markdown bool
}

func linkTexts(t *testing.T, src string, links []Link) []linkText {
	t.Helper()
	var out []linkText
	for _, l := range links {
		if l.Start < 0 || l.End > len(src) || l.Start >= l.End {
			t.Fatalf("link %+v out of the source (%d bytes)", l, len(src))
		}
		out = append(out, linkText{src[l.Start:l.End], l.Target, l.Heading, l.Alias, l.Embed, l.Markdown})
	}
	return out
}

func TestParseLinks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []linkText
	}{
		{"plain", "see [[Note]] here", []linkText{{Text: "[[Note]]", Target: "Note"}}},
		{"alias", "[[Note|the note]]", []linkText{{Text: "[[Note|the note]]", Target: "Note", Alias: "the note"}}},
		{"heading", "[[Note#Some Heading]]", []linkText{{Text: "[[Note#Some Heading]]", Target: "Note", Heading: "Some Heading"}}},
		{"heading and alias", "[[Note#Heading|alias]]", []linkText{{Text: "[[Note#Heading|alias]]", Target: "Note", Heading: "Heading", Alias: "alias"}}},
		{"block", "[[Note#^abc123]]", []linkText{{Text: "[[Note#^abc123]]", Target: "Note", Heading: "^abc123"}}},
		{"folder", "[[folder/Note]]", []linkText{{Text: "[[folder/Note]]", Target: "folder/Note"}}},
		{"with extension", "[[Note.md]]", []linkText{{Text: "[[Note.md]]", Target: "Note.md"}}},
		{"same note", "[[#Heading]]", []linkText{{Text: "[[#Heading]]", Heading: "Heading"}}},
		{"embed image", "![[image.png]]", []linkText{{Text: "![[image.png]]", Target: "image.png", Embed: true}}},
		{"embed section", "![[Note#Heading]]", []linkText{{Text: "![[Note#Heading]]", Target: "Note", Heading: "Heading", Embed: true}}},
		{"escaped pipe in table", "| a | [[Note\\|alias]] |\n|---|---|", []linkText{{Text: "[[Note\\|alias]]", Target: "Note", Alias: "alias"}}},
		{"spaces trimmed", "[[ Note # H | a ]]", []linkText{{Text: "[[ Note # H | a ]]", Target: "Note", Heading: "H", Alias: " a "}}},
		{"several", "[[a]] and [[b]]![[c.png]]", []linkText{
			{Text: "[[a]]", Target: "a"}, {Text: "[[b]]", Target: "b"}, {Text: "![[c.png]]", Target: "c.png", Embed: true}}},
		{"in a list and a quote", "- [[a]]\n> [[b]]", []linkText{{Text: "[[a]]", Target: "a"}, {Text: "[[b]]", Target: "b"}}},
		{"in a heading", "# About [[a]]", []linkText{{Text: "[[a]]", Target: "a"}}},
		{"nested opener", "[[a [[b]]", []linkText{{Text: "[[b]]", Target: "b"}}},
		{"not across lines", "[[a\nb]]", nil},
		{"empty", "[[]] [[|x]] ![[]]", nil},
		{"unclosed", "[[a] [[b", nil},
		{"escaped", `\[[a]]`, nil},
		{"code span", "`[[a]]` and ``x [[b]] y``", nil},
		{"fenced code", "```\n[[a]]\n```\n~~~md\n![[b]]\n~~~", nil},
		{"indented code", "para\n\n    [[a]]\n", nil},
		{"html block", "<div>\n[[a]]\n</div>", nil},
		{"markdown link", "[the note](Note.md)", []linkText{{Text: "[the note](Note.md)", Target: "Note.md", Alias: "the note", Markdown: true}}},
		{"markdown link encoded", "[x](my%20notes/a%20b.md#Some%20Heading)", []linkText{
			{Text: "[x](my%20notes/a%20b.md#Some%20Heading)", Target: "my notes/a b.md", Heading: "Some Heading", Alias: "x", Markdown: true}}},
		{"markdown angle", "[x](<a b.md> \"title\")", []linkText{{Text: "[x](<a b.md> \"title\")", Target: "a b.md", Alias: "x", Markdown: true}}},
		{"markdown relative", "[x](../up/a.md)", []linkText{{Text: "[x](../up/a.md)", Target: "../up/a.md", Alias: "x", Markdown: true}}},
		{"markdown image", "![alt text](img/p.png)", []linkText{{Text: "![alt text](img/p.png)", Target: "img/p.png", Alias: "alt text", Embed: true, Markdown: true}}},
		{"markdown with query", "[x](a.md?v=1#h)", []linkText{{Text: "[x](a.md?v=1#h)", Target: "a.md", Heading: "h", Alias: "x", Markdown: true}}},
		{"markdown external", "[x](https://example.com/a.md) [m](mailto:a@b.c) [o](obsidian://open?x) [n](//host/a)", nil},
		{"markdown anchor", "[x](#heading) [e]()", nil},
		{"markdown reference", "[x][r]\n\n[r]: a.md", nil},
		{"autolink", "<https://example.com/a.md>", nil},
		{"wikilink then parens", "[[a]](b.md)", []linkText{{Text: "[[a]]", Target: "a"}}},
		{"wikilink in link text", "[see [[a]]](b.md)", []linkText{{Text: "[see [[a]]](b.md)", Target: "b.md", Alias: "see [[a]]", Markdown: true}}},
		{"mixed", "A [[w]] and [m](m.md) and ![[e.png]]", []linkText{
			{Text: "[[w]]", Target: "w"}, {Text: "[m](m.md)", Target: "m.md", Alias: "m", Markdown: true}, {Text: "![[e.png]]", Target: "e.png", Embed: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := linkTexts(t, tt.src, Parse([]byte(tt.src)).Links)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q).Links\n got %+v\nwant %+v", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseLinkOffsetsAfterFrontmatter(t *testing.T) {
	src := "---\r\ntitle: x\r\n---\r\nsee [[a]]\r\n"
	n := Parse([]byte(src))
	if len(n.Links) != 1 || src[n.Links[0].Start:n.Links[0].End] != "[[a]]" {
		t.Fatalf("links = %+v", n.Links)
	}
}

func TestParseTags(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"simple", "a #tag here", []string{"tag"}},
		{"start of line", "#tag\n#other", []string{"tag", "other"}},
		{"nested", "#parent/child and #a/b/c", []string{"parent/child", "a/b/c"}},
		{"characters", "#snake_case #kebab-case #y2024 #café #日本語", []string{"snake_case", "kebab-case", "y2024", "café", "日本語"}},
		{"number only", "issue #123 and #1984", nil},
		{"digits then letters", "#1a", []string{"1a"}},
		{"punctuation ends", "#tag, #end.", []string{"tag", "end"}},
		{"not after a word", "a#b c##d", nil},
		{"unique", "#tag #Tag #tag", []string{"tag"}},
		{"heading marker", "# Title\n## Sub #intitle", []string{"intitle"}},
		{"code span", "`#code` #real", []string{"real"}},
		{"fenced code", "```\n#nope\n```\n", nil},
		{"indented code", "x\n\n    #nope\n", nil},
		{"url", "[x](https://x.com/#frag) [y](note.md#head) https://x.com/#bare", nil},
		{"wikilink heading", "[[Note#Heading]]", nil},
		{"link text", "[#inside](a.md)", nil},
		{"quote and list", "> #quoted\n>#q2\n- #item", []string{"quoted", "q2", "item"}},
		{"after emphasis split", "#snake_case_tag", []string{"snake_case_tag"}},
		{"escaped", `\#nope`, nil},
		{"html", "<span>#nope</span> <!-- #nope -->", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.src)).Tags
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q).Tags = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseHeadings(t *testing.T) {
	src := "---\ntitle: t\n---\n# One\ntext\n\n## Two *em* [[x]] ##\n\nSetext\n===\n\n```\n# not a heading\n```\n> ### Quoted\n\n#nospace\n\n#\n"
	want := []Heading{
		{Level: 1, Text: "One", Line: 4},
		{Level: 2, Text: "Two *em* [[x]]", Line: 7},
		{Level: 1, Text: "Setext", Line: 9},
		{Level: 3, Text: "Quoted", Line: 15},
	}
	got := Parse([]byte(src)).Headings
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headings\n got %+v\nwant %+v", got, want)
	}
}

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		want      map[string]any
		wantErr   bool
		bodyStart int
		tags      []string
	}{
		{name: "none", src: "# Title\n", bodyStart: 0},
		{name: "valid", src: "---\ntitle: Hello\nn: 3\n---\nbody", want: map[string]any{"title": "Hello", "n": 3}, bodyStart: 26},
		{name: "dots close", src: "---\na: b\n...\nbody", want: map[string]any{"a": "b"}, bodyStart: 13},
		{name: "crlf", src: "---\r\na: b\r\n---\r\nbody", want: map[string]any{"a": "b"}, bodyStart: 16},
		{name: "bom", src: "\xef\xbb\xbf---\na: b\n---\n", want: map[string]any{"a": "b"}, bodyStart: 16},
		{name: "empty", src: "---\n---\nbody", want: map[string]any{}, bodyStart: 8},
		{name: "only comments", src: "---\n# c\n---\n", want: map[string]any{}, bodyStart: 12},
		{name: "invalid yaml", src: "---\na: [b\n---\nbody #t", wantErr: true, bodyStart: 14, tags: []string{"t"}},
		{name: "not a mapping", src: "---\n- a\n---\n", wantErr: true, bodyStart: 12},
		{name: "unclosed", src: "---\na: b\nbody", bodyStart: 0},
		{name: "not first line", src: "\n---\na: b\n---\n", bodyStart: 0},
		{name: "fence at eof", src: "---\na: b\n---", want: map[string]any{"a": "b"}, bodyStart: 12},
		{name: "tags list", src: "---\ntags: [one, '#two', a/b, 42]\n---\n#three #one", want: map[string]any{"tags": []any{"one", "#two", "a/b", 42}},
			bodyStart: 37, tags: []string{"one", "two", "a/b", "three"}},
		{name: "tags block list", src: "---\ntags:\n  - x\n  - y\n---\n", want: map[string]any{"tags": []any{"x", "y"}}, bodyStart: 26, tags: []string{"x", "y"}},
		{name: "tags string", src: "---\ntags: one, two three\ntag: '#four'\n---\n", want: map[string]any{"tags": "one, two three", "tag": "#four"},
			bodyStart: 42, tags: []string{"one", "two", "three", "four"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse([]byte(tt.src))
			if !reflect.DeepEqual(n.Frontmatter, tt.want) {
				t.Errorf("Frontmatter = %#v, want %#v", n.Frontmatter, tt.want)
			}
			if (n.FrontmatterError != "") != tt.wantErr {
				t.Errorf("FrontmatterError = %q, want an error: %v", n.FrontmatterError, tt.wantErr)
			}
			if n.BodyStart != tt.bodyStart {
				t.Errorf("BodyStart = %d, want %d", n.BodyStart, tt.bodyStart)
			}
			if !reflect.DeepEqual(n.Tags, tt.tags) {
				t.Errorf("Tags = %q, want %q", n.Tags, tt.tags)
			}
		})
	}
}

func TestParseNeverPanics(t *testing.T) {
	for _, src := range []string{"", "[", "[[", "![[", "]]", "---", "---\n", "#", "`", strings.Repeat("[", 10000), strings.Repeat("> ", 500) + "[[a]]"} {
		Parse([]byte(src))
	}
}

func TestParseConcurrent(t *testing.T) {
	src := []byte("---\ntags: [a]\n---\n# T\n[[a]] [b](b.md) #c `[[d]]`\n")
	want := Parse(src)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := Parse(src); !reflect.DeepEqual(got, want) {
					t.Errorf("concurrent Parse = %+v, want %+v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
