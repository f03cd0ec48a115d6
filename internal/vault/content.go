package vault

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// contentManager: the text of notes (contract section 1).

func (s *Server) contentModes() []registry.Def {
	return []registry.Def{
		def("readContent", "Read a note (or any text file) of the vault: its content, its hash (give it back as expectedHash when you edit, so that a note changed since is a CONFLICT rather than overwritten), and a range of lines with offset and limit.", true, registry.Handle(s.readContent)),
		def("createContent", "Create a note with the given content (parent folders too); an existing file is never overwritten.", false, registry.Handle(s.createContent)),
		def("appendContent", "Append text to the end of a note, as given (no newline is added).", false, registry.Handle(s.appendContent)),
		def("prependContent", "Insert text at the start of a note's body, after its frontmatter, as given.", false, registry.Handle(s.prependContent)),
		def("replaceContent", "Replace every occurrence of a text in a note; when it is not there exactly, its closest match whose similarity reaches similarityThreshold (1.0: exact only; default 0.95).", false, registry.Handle(s.replaceContent)),
		def("replaceByLine", "Replace a note's lines startLine to endLine (1-based, inclusive) with new content.", false, registry.Handle(s.replaceByLine)),
		def("deleteContent", "Delete every occurrence of a text from a note; when it is not there exactly, its closest match whose similarity reaches similarityThreshold.", false, registry.Handle(s.deleteContent)),
		def("findReplaceContent", "Find a literal text in a note and replace the first match (or every one, replaceAll), optionally case-insensitive or as a whole word; the replacement is taken literally.", false, registry.Handle(s.findReplaceContent)),
		def("batchContent", "Run several content operations (read, create, append, prepend, replace, replaceByLine, delete, findReplace) in order; all are checked before any runs, and each reports its own outcome.", false, registry.Handle(s.batchContent)),
	}
}

// file names a note: the vault (optional) and the file's path.
type file struct {
	Vault    string `json:"vault"`
	FilePath string `json:"filePath"`
}

// note names a note to edit, and the hash the client read of it
// (readContent's hash): an edit of a note that changed since is a
// CONFLICT.
type note struct {
	file
	ExpectedHash string `json:"expectedHash"`
}

// open resolves n to its vault and clean path.
func (s *Server) open(ctx context.Context, c *registry.Call, n file) (*Vault, string, error) {
	v, err := s.vaultFor(ctx, c, n.Vault)
	if err != nil {
		return nil, "", err
	}
	p, err := Clean(n.FilePath, false)
	if err != nil {
		return nil, "", errs.E(errs.BadRequest, "%v", err)
	}
	return v, p, nil
}

// prefixed puts the original's prefix before an error's message, keeping
// its code ("Error reading content: File not found: a.md").
func prefixed(prefix string, err error) error {
	e := errs.From(err)
	return errs.E(e.Code, "%s: %s", prefix, e.Message)
}

type readIn struct {
	file
	Limit              *int `json:"limit"`
	Offset             *int `json:"offset"`
	IncludeLineNumbers bool `json:"includeLineNumbers"`
}

type readOut struct {
	Content             string `json:"content"`
	FilePath            string `json:"filePath"`
	Hash                string `json:"hash"`
	LineNumbersIncluded bool   `json:"lineNumbersIncluded,omitempty"`
	StartLine           *int   `json:"startLine,omitempty"`
	EndLine             *int   `json:"endLine,omitempty"`
	// Links are the files the note links to and the notes that link to
	// it (a note's read includes its place in the link graph).
	Links *noteLinks `json:"links,omitempty"`
}

type noteLinks struct {
	Outgoing  []string `json:"outgoing"`
	Backlinks []string `json:"backlinks"`
}

// saveAbove is the length of content from which readContent recommends
// saving what matters of it to memory (the original's "save").
const saveAbove = 7000

func (s *Server) readContent(ctx context.Context, c *registry.Call, in readIn) (result, error) {
	v, p, err := s.open(ctx, c, in.file)
	if err != nil {
		return result{}, prefixed("Error reading content", err)
	}
	f, err := v.Read(p)
	if err != nil {
		return result{}, prefixed("Error reading content: Error reading file", err)
	}
	text := string(f.Content)
	out := readOut{FilePath: p, Hash: f.Hash}
	lines := strings.Split(text, "\n")
	first := 1
	if in.Limit != nil && in.Offset != nil {
		start, end := max(*in.Offset, 1), min(*in.Offset+*in.Limit-1, len(lines))
		if start > end {
			return result{}, errs.E(errs.BadRequest, "Error reading content: Start line cannot be greater than end line")
		}
		lines, first = lines[start-1:end], start
		out.StartLine, out.EndLine = in.Offset, new(*in.Offset+*in.Limit-1)
	}
	if in.IncludeLineNumbers {
		for i := range lines {
			lines[i] = fmt.Sprintf("%d: %s", first+i, lines[i])
		}
		out.LineNumbersIncluded = true
	}
	out.Content = strings.Join(lines, "\n")
	// The links come from the index; a read during the first index (a
	// large vault's first seconds) does not wait for it and has none.
	if l := s.libs[v]; l != nil && isNote(p) {
		select {
		case <-l.ready:
			o, b := l.graph(p)
			out.Links = &noteLinks{Outgoing: nonNil(o), Backlinks: nonNil(b)}
		default:
		}
	}
	var recs []recommendation
	if len(out.Content) > saveAbove {
		recs = append(recs, recommendation{Type: "save", Message: "This content is long: save what matters of it to memory (memoryManager createState) rather than reading it again."})
	}
	return ok(out, recs...), nil
}

type createIn struct {
	file
	Content string `json:"content"`
}

// addIn is appendContent's and prependContent's input.
type addIn struct {
	note
	Content string `json:"content"`
}

func (s *Server) createContent(ctx context.Context, c *registry.Call, in createIn) (result, error) {
	v, p, err := s.open(ctx, c, in.file)
	if err != nil {
		return result{}, prefixed("Error creating file", err)
	}
	f, err := v.Create(p, []byte(in.Content))
	if err != nil {
		return result{}, prefixed("Error creating file: Error creating file", err)
	}
	s.touched(v, p)
	return ok(map[string]any{"filePath": p, "created": f.Modified.UnixMilli(), "hash": f.Hash},
		recommendation{Type: "obsidian_features", Message: "Link related notes with [[wikilinks]], tag it with #tags and describe it in YAML frontmatter: the vault's search weighs all three."}), nil
}

// edit runs an edit of the note n names, under the original's error
// prefix.
func (s *Server) edit(ctx context.Context, c *registry.Call, n note, prefix string, e Edit) (before, after File, err error) {
	v, p, err := s.open(ctx, c, n.file)
	if err != nil {
		return File{}, File{}, prefixed(prefix, err)
	}
	before, after, err = v.Update(p, n.ExpectedHash, e)
	if err != nil {
		return File{}, File{}, prefixed(prefix, err)
	}
	s.touched(v, p)
	return before, after, nil
}

func (s *Server) appendContent(ctx context.Context, c *registry.Call, in addIn) (result, error) {
	_, after, err := s.edit(ctx, c, in.note, "Error appending content", func(old []byte) ([]byte, error) {
		return append(old, in.Content...), nil
	})
	if err != nil {
		return result{}, err
	}
	return ok(map[string]any{"filePath": after.Path, "appendedLength": utf16Len(in.Content), "totalLength": utf16Len(string(after.Content)), "hash": after.Hash}), nil
}

func (s *Server) prependContent(ctx context.Context, c *registry.Call, in addIn) (result, error) {
	_, after, err := s.edit(ctx, c, in.note, "Error prepending content", func(old []byte) ([]byte, error) {
		at := frontmatterEnd(old)
		out := make([]byte, 0, len(old)+len(in.Content))
		out = append(append(append(out, old[:at]...), in.Content...), old[at:]...)
		return out, nil
	})
	if err != nil {
		return result{}, err
	}
	return ok(map[string]any{"filePath": after.Path, "prependedLength": utf16Len(in.Content), "totalLength": utf16Len(string(after.Content)), "hash": after.Hash}), nil
}

// frontmatterEnd is where a note's body starts: after a YAML frontmatter
// block ("---" on the first line to the next "---" or "..." line), or 0.
// The original prepended before the frontmatter, which stops it being
// frontmatter (contract section 1); Nexus keeps it first.
func frontmatterEnd(b []byte) int {
	s := string(b)
	first, rest, found := strings.Cut(s, "\n")
	if !found || strings.TrimRight(first, "\r") != "---" {
		return 0
	}
	at := len(first) + 1
	for line := range strings.SplitAfterSeq(rest, "\n") {
		at += len(line)
		if t := strings.TrimRight(line, "\r\n"); t == "---" || t == "..." {
			return at
		}
	}
	return 0
}

type replaceIn struct {
	note
	OldContent          string   `json:"oldContent"`
	NewContent          string   `json:"newContent"`
	SimilarityThreshold *float64 `json:"similarityThreshold"`
}

type deleteIn struct {
	note
	Content             string   `json:"content"`
	SimilarityThreshold *float64 `json:"similarityThreshold"`
}

// replaceText replaces every occurrence of old in text with repl, or the
// closest match if its similarity reaches threshold; n is how many.
func replaceText(text, old, repl string, threshold float64) (string, int, error) {
	if n := strings.Count(text, old); n > 0 && old != "" {
		return strings.ReplaceAll(text, old, repl), n, nil
	}
	if old == "" {
		return text, 0, nil
	}
	tr, or := []rune(text), []rune(old)
	start, end, sim, err := fuzzyFind(tr, or)
	if err != nil {
		return text, 0, err
	}
	if sim < threshold || end <= start {
		return text, 0, nil
	}
	return string(tr[:start]) + repl + string(tr[end:]), 1, nil
}

func threshold(t *float64) float64 {
	if t == nil {
		return 0.95
	}
	return *t
}

func (s *Server) replaceContent(ctx context.Context, c *registry.Call, in replaceIn) (result, error) {
	var n int
	_, after, err := s.edit(ctx, c, in.note, "Error replacing content", func(old []byte) ([]byte, error) {
		out, k, err := replaceText(string(old), in.OldContent, in.NewContent, threshold(in.SimilarityThreshold))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			return nil, errs.E(errs.NotFound, "Content to replace not found in file, even with fuzzy matching at %g%% threshold", threshold(in.SimilarityThreshold)*100)
		}
		n = k
		return []byte(out), nil
	})
	if err != nil {
		return result{}, err
	}
	return ok(map[string]any{"filePath": after.Path, "replacements": n, "hash": after.Hash}), nil
}

func (s *Server) deleteContent(ctx context.Context, c *registry.Call, in deleteIn) (result, error) {
	var n int
	_, after, err := s.edit(ctx, c, in.note, "Error deleting content", func(old []byte) ([]byte, error) {
		out, k, err := replaceText(string(old), in.Content, "", threshold(in.SimilarityThreshold))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			return nil, errs.E(errs.NotFound, "Content to delete not found in file, even with fuzzy matching at %g%% threshold", threshold(in.SimilarityThreshold)*100)
		}
		n = k
		return []byte(out), nil
	})
	if err != nil {
		return result{}, err
	}
	return ok(map[string]any{"filePath": after.Path, "deletions": n, "hash": after.Hash}), nil
}

type byLineIn struct {
	note
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	NewContent string `json:"newContent"`
}

func (s *Server) replaceByLine(ctx context.Context, c *registry.Call, in byLineIn) (result, error) {
	var n int
	_, after, err := s.edit(ctx, c, in.note, "Error replacing lines", func(old []byte) ([]byte, error) {
		lines := strings.Split(string(old), "\n")
		if in.StartLine > len(lines) {
			return nil, errs.E(errs.BadRequest, "Start line %d is beyond the end of the file (%d lines)", in.StartLine, len(lines))
		}
		if in.EndLine < in.StartLine {
			return nil, errs.E(errs.BadRequest, "Start line cannot be greater than end line")
		}
		end := min(in.EndLine, len(lines))
		n = end - in.StartLine + 1
		out := append(append(append([]string{}, lines[:in.StartLine-1]...), strings.Split(in.NewContent, "\n")...), lines[end:]...)
		return []byte(strings.Join(out, "\n")), nil
	})
	if err != nil {
		return result{}, err
	}
	return ok(map[string]any{"filePath": after.Path, "linesReplaced": n, "hash": after.Hash}), nil
}

type findReplaceIn struct {
	note
	FindText      string `json:"findText"`
	ReplaceText   string `json:"replaceText"`
	ReplaceAll    bool   `json:"replaceAll"`
	CaseSensitive *bool  `json:"caseSensitive"`
	WholeWord     bool   `json:"wholeWord"`
}

// findReplace replaces the first (or every) literal match of find in text;
// the replacement is literal too (the original expanded JavaScript's $&
// and $1 in it: contract section 5, item 4).
func findReplace(text string, in findReplaceIn) (string, int) {
	pat := regexp.QuoteMeta(in.FindText)
	if in.WholeWord {
		pat = `\b` + pat + `\b`
	}
	if in.CaseSensitive != nil && !*in.CaseSensitive {
		pat = "(?i)" + pat
	}
	re := regexp.MustCompile(pat) // a quoted literal always compiles
	n := 0
	out := re.ReplaceAllStringFunc(text, func(m string) string {
		if n > 0 && !in.ReplaceAll {
			return m
		}
		n++
		return in.ReplaceText
	})
	return out, n
}

func (s *Server) findReplaceContent(ctx context.Context, c *registry.Call, in findReplaceIn) (result, error) {
	var n int
	v, p, err := s.open(ctx, c, in.file)
	if err != nil {
		return result{}, prefixed("Error in find and replace", err)
	}
	f, err := v.Read(p)
	if err != nil {
		return result{}, prefixed("Error in find and replace", err)
	}
	if in.ExpectedHash != "" && in.ExpectedHash != f.Hash {
		return result{}, prefixed("Error in find and replace", conflict(p, in.ExpectedHash, f.Hash))
	}
	hash := f.Hash
	if _, n = findReplace(string(f.Content), in); n > 0 {
		// Written only when something matched: no match leaves the file
		// untouched (and its time).
		in.ExpectedHash = f.Hash
		_, after, err := s.edit(ctx, c, in.note, "Error in find and replace", func(old []byte) ([]byte, error) {
			out, _ := findReplace(string(old), in)
			return []byte(out), nil
		})
		if err != nil {
			return result{}, err
		}
		hash = after.Hash
	}
	return ok(map[string]any{"filePath": p, "replacements": n, "findText": in.FindText, "replaceText": in.ReplaceText, "hash": hash}), nil
}
