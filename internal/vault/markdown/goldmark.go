package markdown

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file holds the goldmark side of the package: an inline parser for
// wikilinks, a thin wrapper around goldmark's link parser that records
// where inline Markdown links end and where their destinations are, and
// the wrappers that keep goldmark linear (see chunk.go).

// mdParser is the goldmark parser used by Parse. It is the CommonMark block
// and inline parsers, plus wikilinks, with no renderer: only the AST is used.
// goldmark parsers are safe for concurrent use once built.
//
// It is hardened against goldmark's quadratic cases (see chunk.go and
// linkscan.go), without changing the AST: its fenced code block parser
// records whether each block was closed, for the chunks; its link parser
// skips the inline links that cannot be completed without reading their
// destination, and finds a label's text without going through the block's
// lines. parseChunk also gives it a reader that counts columns faster.
var mdParser = newParser(true)

// plainParser is goldmark as Parse used it before the body was cut into
// chunks: the reference the tests compare mdParser's results with.
var plainParser = newParser(false)

func newParser(hardened bool) parser.Parser {
	blocks := parser.DefaultBlockParsers()
	if hardened {
		fenced := parser.NewFencedCodeBlockParser()
		for i, v := range blocks {
			if v.Value == fenced {
				blocks[i] = util.Prioritized(fenceRecorder{inner: fenced}, v.Priority)
			}
		}
	}
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlineParsers(hardened)...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

// Priorities of the inline parsers: goldmark tries lower values first. The
// wikilink parser runs before the link parser so that "[[" is never the
// start of a Markdown link label.
const (
	wikiLinkPriority = 199
	linkPriority     = 200 // goldmark's own priority for its link parser
)

func inlineParsers(predict bool) []util.PrioritizedValue {
	var out []util.PrioritizedValue
	for _, v := range parser.DefaultInlineParsers() {
		if v.Priority == linkPriority {
			v = util.Prioritized(&linkRecorder{inner: v.Value.(parser.InlineParser), predict: predict}, linkPriority)
		}
		out = append(out, v)
	}
	return append(out, util.Prioritized(wikiLinkParser{}, wikiLinkPriority))
}

// kindWikiLink is the AST node kind of a wikilink.
var kindWikiLink = ast.NewNodeKind("WikiLink")

// wikiLinkNode is a wikilink or a wikilink embed. Offsets are relative to
// the source given to goldmark. It has no children: its text is not
// Markdown.
type wikiLinkNode struct {
	ast.BaseInline
	start, end             int // the whole "[[...]]" or "![[...]]"
	targetStart, targetEnd int // the target, trimmed, inside the link
	target, heading, alias string
	embed                  bool
}

// Kind implements ast.Node.
func (n *wikiLinkNode) Kind() ast.NodeKind { return kindWikiLink }

// Dump implements ast.Node.
func (n *wikiLinkNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{
		"Target":  n.target,
		"Heading": n.heading,
		"Alias":   n.alias,
		"Embed":   fmt.Sprint(n.embed),
	}, nil)
}

// wikiLinkParser parses "[[...]]" and "![[...]]" on a single line.
type wikiLinkParser struct{}

// Trigger implements parser.InlineParser.
func (wikiLinkParser) Trigger() []byte { return []byte{'[', '!'} }

// Parse implements parser.InlineParser.
func (wikiLinkParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if seg.Padding != 0 {
		return nil
	}
	open := 2
	embed := false
	if len(line) > 0 && line[0] == '!' {
		embed = true
		open = 3
	}
	if len(line) < open+3 || !bytes.HasPrefix(line[open-2:], []byte("[[")) {
		return nil
	}
	end := -1
	for i := open; i < len(line); i++ {
		c := line[i]
		if c == '\n' || c == '\r' || c == '[' {
			return nil
		}
		if c == ']' {
			if i+1 < len(line) && line[i+1] == ']' {
				end = i
			}
			break
		}
	}
	if end < 0 {
		return nil
	}
	n := newWikiLink(line[open:end], seg.Start+open)
	if n == nil {
		return nil
	}
	n.embed = embed
	n.start = seg.Start
	n.end = seg.Start + end + 2
	block.Advance(end + 2)
	return n
}

// newWikiLink splits the inside of a wikilink, which starts at offset base
// of the source, into target, heading and alias. It returns nil when the
// text is not a link, as for "[[]]" or "[[|x]]".
func newWikiLink(inner []byte, base int) *wikiLinkNode {
	n := &wikiLinkNode{}
	left := inner
	if p := bytes.IndexByte(inner, '|'); p >= 0 {
		n.alias = string(inner[p+1:])
		left = inner[:p]
		if p > 0 && inner[p-1] == '\\' { // "\|" in a table cell
			left = inner[:p-1]
		}
	}
	tgt := left
	if h := bytes.IndexByte(left, '#'); h >= 0 {
		tgt = left[:h]
		n.heading = strings.TrimSpace(string(left[h+1:]))
	}
	lead := len(tgt) - len(bytes.TrimLeft(tgt, " \t"))
	tgt = bytes.TrimSpace(tgt)
	n.target = string(tgt)
	if n.target == "" && n.heading == "" {
		return nil
	}
	n.targetStart = base + lead
	n.targetEnd = n.targetStart + len(tgt)
	return n
}

// stateKey is the parser.Context key of a parse's *parseState.
var stateKey = parser.NewContextKey()

// parseState is what the parsers of one goldmark call record.
type parseState struct {
	inline map[ast.Node]inlineLink // inline Markdown links and images

	// The last fenced code block opened, its fence, and whether a closing
	// fence ended it (rather than the end of the chunk).
	fence       ast.Node
	fenceChar   byte
	fenceLen    int
	fenceClosed bool

	scan linkScan // for the link parser's predictions
}

// inlineLink is where an inline Markdown link "[text](dest)" is in the
// source: its label's closing ']' (the '(' follows), its end, and its
// destination as written (inside the angle brackets, if any).
type inlineLink struct {
	label, end         int
	destStart, destEnd int
	angle              bool
}

// linkRecorder wraps goldmark's link parser. goldmark's *ast.Link knows its
// start (Pos) but neither its end nor where its destination is, which
// Rewrite needs; the wrapper records them when a ']' closes an inline link.
//
// With predict, it first checks whether a ']' followed by '(' can start an
// inline link at all (see linkScan): when it cannot, goldmark's parser is
// shown a ']' not followed by '(', which takes it down the same path as a
// failed inline link, without its scan of the destination to the end of the
// line, which made "[a](" repeated quadratic.
type linkRecorder struct {
	inner   parser.InlineParser
	predict bool
}

// Trigger implements parser.InlineParser.
func (l *linkRecorder) Trigger() []byte { return l.inner.Trigger() }

// CloseBlock implements parser.CloseBlocker, as the wrapped parser does.
func (l *linkRecorder) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := l.inner.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// Parse implements parser.InlineParser.
func (l *linkRecorder) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	st, _ := pc.Get(stateKey).(*parseState)
	if l.predict && st != nil {
		if line, seg := block.PeekLine(); len(line) > 0 && line[0] == ']' {
			v := linkView{Reader: block, lines: parent.Lines()}
			if len(line) > 1 && line[1] == '(' && seg.Padding == 0 && st.scan.fails(parent, block.Source(), seg.Start) {
				v.hide = seg.Start + 1
				return l.inner.Parse(parent, v, pc)
			}
			block = v
		}
	}
	startLine, startPos := block.Position()
	node := l.inner.Parse(parent, block, pc)
	src := block.Source()
	at := startPos.Start
	if node == nil || at < 0 || at+1 >= len(src) || src[at] != ']' || src[at+1] != '(' {
		return node
	}
	var dest []byte
	switch n := node.(type) {
	case *ast.Link:
		if n.Reference != nil {
			return node
		}
		dest = n.Destination
	case *ast.Image:
		if n.Reference != nil {
			return node
		}
		dest = n.Destination
	default:
		return node
	}
	if st == nil {
		return node
	}
	endLine, endPos := block.Position()
	// Find the destination: goldmark skips spaces after '(' then reads it.
	block.SetPosition(startLine, startPos)
	block.Advance(2)
	block.SkipSpaces()
	_, destPos := block.Position()
	block.SetPosition(endLine, endPos)

	rec := inlineLink{label: at, end: endPos.Start, destStart: destPos.Start}
	if rec.destStart < len(src) && src[rec.destStart] == '<' {
		rec.angle = true
		rec.destStart++
	}
	rec.destEnd = rec.destStart + len(dest)
	if destPos.Padding != 0 || rec.destEnd > len(src) || rec.end > len(src) || rec.end <= at ||
		!bytes.Equal(src[rec.destStart:rec.destEnd], dest) {
		return node // not where expected: do not report the link
	}
	st.inline[node] = rec
	return node
}

// linkView is the reader goldmark's link parser is given at a ']'. It shows
// a space instead of the '(' at offset hide, if not 0, so that the parser does not try
// an inline link there, and its Value finds the segment's first line by
// binary search rather than from the block's last line, which took time
// proportional to the block's lines at each ']'.
type linkView struct {
	text.Reader
	lines *text.Segments // the lines the reader reads
	hide  int
}

// Peek implements text.Reader.
func (v linkView) Peek() byte {
	if _, pos := v.Position(); v.hide > 0 && pos.Start == v.hide && pos.Padding == 0 {
		return ' '
	}
	return v.Reader.Peek()
}

// Value implements text.Reader, as goldmark's block reader does.
func (v linkView) Value(seg text.Segment) []byte {
	n := v.lines.Len()
	// The last line that starts at or before seg.Start.
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		if v.lines.At(m).Start <= seg.Start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	line := lo - 1
	if line < 0 || n == 0 {
		return v.Reader.Value(seg)
	}
	src := v.Source()
	ret := make([]byte, 0, seg.Stop-seg.Start+1)
	i := seg.Start
	for ; line < n; line++ {
		s := v.lines.At(line)
		if i < 0 {
			i = s.Start
		}
		ret = s.ConcatPadding(ret)
		if j := min(seg.Stop, s.Stop); i < j {
			ret = append(ret, src[i:j]...)
		}
		i = -1
		if s.Stop > seg.Stop {
			break
		}
	}
	return ret
}

// fenceRecorder wraps goldmark's fenced code block parser to record, in the
// parseState, the last fenced code block opened, its fence, and whether its
// closing fence was found, which goldmark's AST does not tell.
type fenceRecorder struct {
	inner parser.BlockParser
}

// Trigger implements parser.BlockParser.
func (f fenceRecorder) Trigger() []byte { return f.inner.Trigger() }

// Open implements parser.BlockParser.
func (f fenceRecorder) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	pos := pc.BlockOffset()
	node, state := f.inner.Open(parent, reader, pc)
	if st, _ := pc.Get(stateKey).(*parseState); node != nil && st != nil && pos >= 0 && pos < len(line) {
		n := pos
		for n < len(line) && line[n] == line[pos] {
			n++
		}
		st.fence, st.fenceChar, st.fenceLen, st.fenceClosed = node, line[pos], n-pos, false
	}
	return node, state
}

// Continue implements parser.BlockParser.
func (f fenceRecorder) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	state := f.inner.Continue(node, reader, pc)
	if st, _ := pc.Get(stateKey).(*parseState); state&parser.Close != 0 && st != nil && st.fence == node {
		st.fenceClosed = true
	}
	return state
}

// Close implements parser.BlockParser.
func (f fenceRecorder) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	f.inner.Close(node, reader, pc)
}

// CanInterruptParagraph implements parser.BlockParser.
func (f fenceRecorder) CanInterruptParagraph() bool { return f.inner.CanInterruptParagraph() }

// CanAcceptIndentedLine implements parser.BlockParser.
func (f fenceRecorder) CanAcceptIndentedLine() bool { return f.inner.CanAcceptIndentedLine() }
