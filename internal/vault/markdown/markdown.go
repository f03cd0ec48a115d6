// Package markdown reads Obsidian-style Markdown notes: their YAML
// frontmatter, headings, tags and links (wikilinks, embeds and Markdown
// links), resolves link targets against the files of a vault the way
// Obsidian does, and rewrites links when notes move.
//
// The Markdown structure comes from goldmark's CommonMark parser, extended
// with a wikilink inline parser, so that what is code (code spans, fenced
// and indented code blocks) and raw HTML is never read as a link or a tag.
package markdown

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Note is what a note says about itself.
type Note struct {
	// Frontmatter is the YAML frontmatter: nil when there is none or it is
	// invalid, an empty map when it is there but empty.
	Frontmatter map[string]any
	// FrontmatterError says why the frontmatter could not be read: "" when
	// it is fine or absent.
	FrontmatterError string
	// BodyStart is the byte offset where the body starts, after the closing
	// "---" line; 0 without frontmatter.
	BodyStart int
	// Headings are the note's headings, in order.
	Headings []Heading
	// Tags are unique (compared case-insensitively, the first spelling
	// kept), in order of appearance, without '#': the frontmatter's "tags"
	// and "tag" first, then the body's #tags.
	Tags []string
	// Links are the body's wikilinks, embeds and Markdown links to notes
	// and files in the vault, in order.
	Links []Link
}

// Heading is an ATX ("## Title") or setext heading.
type Heading struct {
	Level int    // 1 to 6
	Text  string // the heading's text as written, without markers, trimmed
	Line  int    // the 1-based line of the file where it starts
}

// Link is a wikilink ([[Note]]), an embed (![[image.png]]) or a Markdown
// link ([text](Note.md)) to a note or file of the vault. Reference-style
// Markdown links ([text][ref]) and links in the frontmatter are not
// reported.
type Link struct {
	// Start and End are the byte offsets of the whole link in the source:
	// src[Start:End] is "[[...]]", "![[...]]", "[text](url)" or "![alt](url)".
	Start, End int
	// Target is the note or file linked, as written, without heading, block
	// or alias ("folder/Note", "Note.md", "image.png"); for a Markdown link,
	// the URL's path, unescaped. It is "" for a link within the note, such as
	// [[#Heading]].
	Target string
	// Heading is what follows '#': a heading, or "^blockid" for a block; ""
	// if none.
	Heading string
	// Alias is what follows '|' in a wikilink, or the text of a Markdown
	// link, as written.
	Alias string
	// Embed is true for ![[...]] and ![alt](...).
	Embed bool
	// Markdown is true for a [text](url) link rather than a wikilink.
	Markdown bool
}

// linkPath is where a link's target is written in the source, for Rewrite:
// a wikilink's target, or a Markdown link's URL path.
type linkPath struct {
	start, end int
	angle      bool // the Markdown link's destination is written <like this>
}

// Parse reads a note. It never fails and never panics: whatever cannot be
// read is left out, and a bad frontmatter is reported in FrontmatterError.
// It takes time linear in len(src), whatever src holds: the body is given
// to goldmark in chunks (see chunk.go), which reads a note as goldmark would
// whole unless it has 8 KB with no blank line before an unindented line.
func Parse(src []byte) (n Note) {
	// A panic would be a bug, here, in goldmark or in the YAML decoder: the
	// caller gets an empty Note rather than a crash. The fuzz tests call
	// parse, so that such bugs are found.
	defer func() {
		if recover() != nil {
			n = Note{}
		}
	}()
	n, _ = parse(src)
	return n
}

// walker collects headings, tags and links from goldmark's ASTs of the
// body's chunks. AST offsets are relative to body, the chunk being walked,
// which starts at off in src.
type walker struct {
	src, body []byte
	off       int
	st        *parseState // the chunk's
	headings  []Heading
	tags      *tagSet
	links     []Link
	paths     []linkPath // where each link's target is

	lineOff, lineNo int // a line count cache: src[:lineOff] has lineNo-1 newlines
}

func (w *walker) visit(node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	switch n := node.(type) {
	case *ast.Heading:
		w.heading(n)
	case *ast.CodeSpan, *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock, *ast.RawHTML, *ast.AutoLink:
		return ast.WalkSkipChildren, nil
	case *wikiLinkNode:
		w.links = append(w.links, Link{
			Start: w.off + n.start, End: w.off + n.end,
			Target: n.target, Heading: n.heading, Alias: n.alias, Embed: n.embed,
		})
		w.paths = append(w.paths, linkPath{start: w.off + n.targetStart, end: w.off + n.targetEnd})
	case *ast.Link:
		w.markdownLink(n, false)
		return ast.WalkSkipChildren, nil
	case *ast.Image:
		w.markdownLink(n, true)
		return ast.WalkSkipChildren, nil
	case *ast.Text:
		w.textTags(n.Segment)
	}
	return ast.WalkContinue, nil
}

func (w *walker) heading(h *ast.Heading) {
	lines := h.Lines()
	if lines.Len() == 0 {
		return
	}
	var b strings.Builder
	for i := range lines.Len() {
		seg := lines.At(i)
		v := bytes.TrimSpace(seg.Value(w.body))
		if len(v) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.Write(v)
	}
	if b.Len() == 0 {
		return
	}
	w.headings = append(w.headings, Heading{
		Level: h.Level,
		Text:  b.String(),
		Line:  w.line(w.off + lines.At(0).Start),
	})
}

// line returns the 1-based line of offset off of src. Offsets usually come
// in increasing order, so it counts on from the previous one.
func (w *walker) line(off int) int {
	off = min(max(off, 0), len(w.src))
	if off < w.lineOff || w.lineNo == 0 {
		w.lineOff, w.lineNo = 0, 1
	}
	w.lineNo += bytes.Count(w.src[w.lineOff:off], []byte{'\n'})
	w.lineOff = off
	return w.lineNo
}

// markdownLink records an inline Markdown link or image that points into
// the vault: not to a URL with a scheme, nor to an anchor of this note.
func (w *walker) markdownLink(n ast.Node, embed bool) {
	rec, ok := w.st.inline[n]
	start := n.Pos()
	if !ok || start < 0 || start >= rec.label || rec.end > len(w.body) {
		return
	}
	dest := w.body[rec.destStart:rec.destEnd]
	if isExternal(dest) {
		return
	}
	pathEnd := len(dest)
	if i := bytes.IndexAny(dest, "?#"); i >= 0 {
		pathEnd = i
	}
	target := unescapeURL(dest[:pathEnd])
	if target == "" {
		return
	}
	var heading string
	if i := bytes.IndexByte(dest, '#'); i >= 0 {
		heading = unescapeURL(dest[i+1:])
	}
	labelStart := start + 1
	if embed {
		labelStart++
	}
	if labelStart > rec.label {
		return
	}
	w.links = append(w.links, Link{
		Start: w.off + start, End: w.off + rec.end,
		Target: target, Heading: heading,
		Alias: string(w.body[labelStart:rec.label]),
		Embed: embed, Markdown: true,
	})
	w.paths = append(w.paths, linkPath{start: w.off + rec.destStart, end: w.off + rec.destStart + pathEnd, angle: rec.angle})
}

// isExternal reports whether a link destination is a URL with a scheme
// ("https:", "mailto:", "obsidian:") or a network path ("//host/x").
func isExternal(dest []byte) bool {
	if bytes.HasPrefix(dest, []byte("//")) {
		return true
	}
	for i, c := range dest {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// unescapeURL undoes a destination's backslash escapes and percent-encoding.
// A malformed percent-encoding is kept as written.
func unescapeURL(b []byte) string {
	s := string(util.UnescapePunctuations(b))
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
