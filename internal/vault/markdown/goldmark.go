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
// wikilinks and a thin wrapper around goldmark's link parser that records
// where inline Markdown links end and where their destinations are.

// mdParser is the goldmark parser used by Parse. It is the CommonMark block
// and inline parsers, plus wikilinks, with no renderer: only the AST is used.
// goldmark parsers are safe for concurrent use once built.
var mdParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(inlineParsers()...),
	parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
)

// Priorities of the inline parsers: goldmark tries lower values first. The
// wikilink parser runs before the link parser so that "[[" is never the
// start of a Markdown link label.
const (
	wikiLinkPriority = 199
	linkPriority     = 200 // goldmark's own priority for its link parser
)

func inlineParsers() []util.PrioritizedValue {
	var out []util.PrioritizedValue
	for _, v := range parser.DefaultInlineParsers() {
		if v.Priority == linkPriority {
			v = util.Prioritized(&linkRecorder{inner: v.Value.(parser.InlineParser)}, linkPriority)
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

// parseState is what the parsers of one Parse call record.
type parseState struct {
	inline map[ast.Node]inlineLink // inline Markdown links and images
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
type linkRecorder struct {
	inner parser.InlineParser
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
	st, _ := pc.Get(stateKey).(*parseState)
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
