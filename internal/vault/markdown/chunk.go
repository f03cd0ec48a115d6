package markdown

import (
	"bytes"
	"regexp"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmark takes quadratic time on some inputs: its link parser scans the
// rest of the line for each "](" ("[a](" repeated), its block parser
// recounts a line's columns for each container opened on it ("> > > ..."),
// copies the rest of the line for each one opened after a tab ("\t>\t>"),
// and its link parser walks what follows a label's '[' for each ']'
// ("[[[...]]]"). So that a note of any size is read in linear time,
// whatever it holds:
//
//   - The body is cut into chunks of at most maxChunk bytes, each given to
//     goldmark on its own. A chunk ends, if it can, where the body has a
//     blank line followed by a line that starts at its first column: no
//     container goes on past such a line, and no block but a fenced code
//     block or an HTML block; goldmark tells which of these is still open
//     at the chunk's end, and what remains of it is skipped (it holds
//     neither links nor tags). Link reference definitions apply across
//     chunks: when a chunk defines some, the chunks are parsed again with
//     all of them. So cut, an ordinary note reads exactly as it would
//     whole.
//   - When a chunk has no such place, it is cut at the last line that
//     starts at its first column, then at the last line, then, within a line
//     longer than maxChunk, before a word or anywhere. That is the accepted
//     loss: a Markdown link written across such a cut is lost, a paragraph
//     or list item cut in two may read differently (its next line read as
//     code or as a heading), and a cut within a list item or a block quote
//     may read the rest of a code block in it as text. Only notes with
//     8 KB without a blank line before an unindented one, or lines of more
//     than 8 KB, are cut so.
//   - Within a chunk, the block parser's column count is made incremental
//     (lineReader) and the link parser is spared the inline links that
//     cannot be completed (linkScan), neither of which changes the AST:
//     nested block quotes and "[a](" repeated are linear however long the
//     chunk. What remains quadratic is bounded by the chunk's size (or, for
//     the brackets, by goldmark's limit of 999 bytes on a label).

// maxChunk is the most bytes of a note given to goldmark at once. Measured
// on 1 MB notes cut in chunks of 4, 8, 16 and 32 KB: on most inputs, hostile
// or not, the time does not depend on the chunks' size (100 to 450 ms per
// MB for the hostile ones, 30 ms for an ordinary note); it grows with it
// where goldmark copies the rest of a line for each block quote opened after
// a tab ("\t>" repeated: 1.0, 1.2, 2.0, 3.6 s per MB) or walks a link
// label's contents at each ']' ('[' then ']' repeated: 2.5, 2.8, 3.2, 4.6 s
// per MB). With 8 KB, a chunk of the worst of these takes about 20 ms, one
// of "[a](" repeated 2 ms, and an ordinary note is seldom cut other than
// at a blank line.
const maxChunk = 8 << 10

// parse reads a note; it also returns where the target of each of its
// links is written, for Rewrite.
func parse(src []byte) (Note, []linkPath) {
	return parseWith(src, maxChunk, nil)
}

// parseWhole is parse as it was before chunking: the whole body given to
// goldmark at once, without the hardening. The tests compare parse with it.
func parseWhole(src []byte) (Note, []linkPath) {
	return parseWith(src, 0, nil)
}

// parseWith parses src in chunks of at most limit bytes, whole if limit is
// 0, or for the tests, if limit is negative, in chunks cut at every place
// where it is safe and nowhere else. hook, if not nil, is told of each
// goldmark call: the part of src it was given and how many bytes linkScan
// read.
func parseWith(src []byte, limit int, hook func(start, end, scanned int)) (Note, []linkPath) {
	var n Note
	n.BodyStart, n.Frontmatter, n.FrontmatterError = readFrontmatter(src)
	w := walker{src: src, tags: newTagSet(n.Frontmatter)}
	// At most this many links: each needs a "[[" or a "](".
	body := src[n.BodyStart:]
	if most := bytes.Count(body, []byte("[[")) + bytes.Count(body, []byte("](")); most > 0 {
		w.links = make([]Link, 0, most)
		w.paths = make([]linkPath, 0, most)
	}
	if limit == 0 {
		w.parseChunk(plainParser, n.BodyStart, len(src), nil, hook)
	} else {
		w.parseChunks(n, limit, hook)
	}
	n.Headings = w.headings
	n.Tags = w.tags.list
	if len(w.links) > 0 {
		n.Links = w.links
	}
	return n, w.paths
}

// parseChunks parses the body of note n in chunks.
func (w *walker) parseChunks(n Note, limit int, hook func(start, end, scanned int)) {
	type span struct{ start, end int }
	var chunks []span
	var refs map[string]parser.Reference
	for pos := n.BodyStart; pos < len(w.src); {
		end := cut(w.src, pos, limit)
		doc, pc := w.parseChunk(mdParser, pos, end, nil, hook)
		for _, r := range pc.References() {
			if refs == nil {
				refs = map[string]parser.Reference{}
			}
			if key := util.ToLinkReference(r.Label()); refs[key] == nil {
				refs[key] = r
			}
		}
		chunks = append(chunks, span{pos, end})
		pos = skipLeaf(w.src, end, w.openLeaf(doc))
	}
	if len(refs) == 0 || len(chunks) == 1 {
		return
	}
	// A reference may be defined in a chunk and used in another: parse
	// again, with all of them, the first definition of each label first.
	w.headings, w.links, w.paths = nil, w.links[:0], w.paths[:0]
	w.tags = newTagSet(n.Frontmatter)
	w.lineOff, w.lineNo = 0, 0
	for _, c := range chunks {
		w.parseChunk(mdParser, c.start, c.end, refs, hook)
	}
}

// parseChunk parses src[start:end] with p, with the given link reference
// definitions besides its own, and walks its AST.
func (w *walker) parseChunk(p parser.Parser, start, end int, refs map[string]parser.Reference, hook func(start, end, scanned int)) (ast.Node, parser.Context) {
	// The chunk's capacity ends with it: goldmark appends a newline to a
	// code block's last line, in place if the slice has room.
	w.body, w.off = w.src[start:end:end], start
	w.st = &parseState{inline: map[ast.Node]inlineLink{}}
	pc := parser.NewContext()
	if refs != nil {
		pc = refContext{Context: pc, refs: refs}
	}
	pc.Set(stateKey, w.st)
	var r text.Reader = text.NewReader(w.body)
	if p == mdParser {
		r = &lineReader{Reader: r, src: w.body}
	}
	doc := p.Parse(r, parser.WithContext(pc))
	_ = ast.Walk(doc, w.visit)
	if hook != nil {
		hook(start, end, w.st.scan.work)
	}
	return doc, pc
}

// cut returns where the chunk that starts at pos ends: at most limit bytes
// further (limit > 4), at the best place there; or with a negative limit, at
// the first safe place.
func cut(src []byte, pos, limit int) int {
	if limit < 0 {
		return nextSafe(src, pos)
	}
	if len(src)-pos <= limit {
		return len(src)
	}
	end := pos + limit
	// Where a line starts, from best to worst: after a blank line and at its
	// first column; at its first column (not "> ...", nor "===" or "---"
	// that would make the line before it a heading); anywhere.
	const (
		afterBlank = 3
		firstCol   = 2
		anyLine    = 1
	)
	best, rank := -1, 0
	for i := pos; ; {
		nl := bytes.IndexByte(src[i:end], '\n')
		if nl < 0 {
			break
		}
		blank := util.IsBlank(src[i : i+nl])
		i += nl + 1
		r := anyLine
		if c := src[i]; !util.IsSpace(c) {
			if blank {
				r = afterBlank
			} else if c != '>' && !isUnderline(src[i:]) {
				r = firstCol
			}
		}
		if r >= rank {
			best, rank = i, r
		}
		if i >= end {
			break
		}
	}
	if best > 0 {
		return best
	}
	// A line longer than limit: cut it before a word, else anywhere but
	// within a UTF-8 sequence.
	for i := end; i > pos+1; i-- {
		if c := src[i]; (src[i-1] == ' ' || src[i-1] == '\t') && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= utf8.RuneSelf) {
			return i
		}
	}
	for i := end; i > pos+1; i-- {
		if utf8.RuneStart(src[i]) {
			return i
		}
	}
	return end
}

// nextSafe returns the start of the first line after pos that follows a
// blank line and starts at its first column, or len(src).
func nextSafe(src []byte, pos int) int {
	for i := pos; i < len(src); {
		line, next := lineAt(src, i)
		if next < len(src) && util.IsBlank(line) && !util.IsSpace(src[next]) {
			return next
		}
		i = next
	}
	return len(src)
}

// isUnderline reports whether the line at the start of b is only '=' or
// only '-', then spaces: a setext heading's underline.
func isUnderline(b []byte) bool {
	if len(b) == 0 || b[0] != '=' && b[0] != '-' {
		return false
	}
	i := 0
	for i < len(b) && b[i] == b[0] {
		i++
	}
	for i < len(b) && b[i] != '\n' {
		if b[i] != ' ' && b[i] != '\t' && b[i] != '\r' {
			return false
		}
		i++
	}
	return true
}

// leaf is a block left open at a chunk's end that the rest of the note
// would continue: a fenced code block, or an HTML block.
type leaf struct {
	fenceChar byte // '`' or '~' for a fenced code block
	fenceLen  int
	html      ast.HTMLBlockType // for an HTML block
}

// openLeaf returns the block left open at the end of the chunk just walked,
// if any: only a top-level one, as the next chunk starts at a line that any
// container would have ended.
func (w *walker) openLeaf(doc ast.Node) leaf {
	switch b := doc.LastChild().(type) {
	case *ast.FencedCodeBlock:
		if b == w.st.fence && !w.st.fenceClosed {
			return leaf{fenceChar: w.st.fenceChar, fenceLen: w.st.fenceLen}
		}
	case *ast.HTMLBlock:
		switch t := b.HTMLBlockType; t {
		case ast.HTMLBlockType6, ast.HTMLBlockType7:
			// It ends at a blank line. (A last line of the chunk that is
			// not the block's is a link reference definition.)
			last := bytes.LastIndexByte(w.body[:max(len(w.body)-1, 0)], '\n') + 1
			if lines := b.Lines(); lines.Len() > 0 && lines.At(lines.Len()-1).Stop > last && !util.IsBlank(w.body[last:]) {
				return leaf{html: t}
			}
		default:
			// goldmark ends it at the line after its first if the first
			// holds the end marker, else at the line that holds it.
			lines := b.Lines()
			if b.HasClosure() || lines.Len() == 0 {
				break
			}
			if first := lines.At(0); lines.Len() != 1 || !htmlEnds(t, first.Value(w.body)) {
				return leaf{html: t}
			}
		}
	}
	return leaf{}
}

// skipLeaf returns where the open block l, if any, ends in src: at or after
// end, where the chunk that left it open ended.
func skipLeaf(src []byte, end int, l leaf) int {
	if l == (leaf{}) || end >= len(src) {
		return end
	}
	i := end
	if src[i-1] != '\n' { // a cut within a line: the rest of it is the block's
		_, next := lineAt(src, i)
		start := bytes.LastIndexByte(src[:i], '\n') + 1
		if l.html != 0 && l.fenceChar == 0 && htmlEnds(l.html, src[start:next]) {
			return next
		}
		i = next
	}
	for i < len(src) {
		_, next := lineAt(src, i)
		line := src[i:next]
		switch {
		case l.fenceChar != 0:
			if closesFence(line, l.fenceChar, l.fenceLen) {
				return next
			}
		case l.html == ast.HTMLBlockType6 || l.html == ast.HTMLBlockType7:
			if util.IsBlank(line) {
				return i
			}
		default:
			if htmlEnds(l.html, line) {
				return next
			}
		}
		i = next
	}
	return len(src)
}

// closesFence reports whether line closes a top-level fenced code block
// opened by n of c, as goldmark's fenced code block parser has it.
func closesFence(line []byte, c byte, n int) bool {
	w, pos := util.IndentWidth(line, 0)
	if w >= 4 {
		return false
	}
	i := pos
	for i < len(line) && line[i] == c {
		i++
	}
	return i-pos >= n && util.IsBlank(line[i:])
}

// htmlType1End is goldmark's end condition of an HTML block of type 1.
var htmlType1End = regexp.MustCompile(`(?i)^.*</(?:script|pre|style|textarea)>.*`)

// htmlEnds reports whether line holds the end marker of an HTML block of
// type t, 1 to 5, as goldmark's HTML block parser has them.
func htmlEnds(t ast.HTMLBlockType, line []byte) bool {
	switch t {
	case ast.HTMLBlockType1:
		return htmlType1End.Match(line)
	case ast.HTMLBlockType2:
		return bytes.Contains(line, []byte("-->"))
	case ast.HTMLBlockType3:
		return bytes.Contains(line, []byte("?>"))
	case ast.HTMLBlockType4:
		return bytes.Contains(line, []byte(">"))
	case ast.HTMLBlockType5:
		return bytes.Contains(line, []byte("]]>"))
	}
	return false
}

// lineReader is goldmark's reader with an incremental LineOffset: goldmark
// counts the columns from the line's start at each call, once per container
// opened on a line, which is quadratic for "> > > ..." or "1. 1. 1. ...".
// Its value is the same: the columns (a tab to the next multiple of 4) from
// the start of the line, less the reader's padding.
type lineReader struct {
	text.Reader
	src      []byte
	head, at int // src[head:at] is part of one line, from its start,
	col      int // and is col columns wide
}

// LineOffset implements text.Reader.
func (r *lineReader) LineOffset() int {
	_, seg := r.Position()
	p := min(max(seg.Start, 0), len(r.src))
	if p < r.at {
		if p < r.head {
			r.head = bytes.LastIndexByte(r.src[:p], '\n') + 1
		}
		r.at, r.col = r.head, 0
	}
	if i := bytes.LastIndexByte(r.src[r.at:p], '\n'); i >= 0 {
		r.head = r.at + i + 1
		r.at, r.col = r.head, 0
	}
	for _, c := range r.src[r.at:p] {
		if c == '\t' {
			r.col += util.TabWidth(r.col)
		} else {
			r.col++
		}
	}
	r.at = p
	return r.col - seg.Padding
}

// refContext is a parser context that knows, besides the link reference
// definitions of its chunk, those of the whole note, which come first.
type refContext struct {
	parser.Context
	refs map[string]parser.Reference
}

// Reference implements parser.Context.
func (c refContext) Reference(label string) (parser.Reference, bool) {
	if r, ok := c.refs[label]; ok {
		return r, true
	}
	return c.Context.Reference(label)
}
