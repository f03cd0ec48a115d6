package markdown

import (
	"net/url"
	"path"
	"strings"
)

// Rewrite returns src with every link that resolves (under before) to a key
// of moved pointed at moved[key] instead. note is the path of the note src
// is the content of (already its new path if the note itself moved), before
// and after are resolvers of the vault before and after the move. Moving a
// folder is a moved map with one entry per file in it.
//
// It keeps each link's form: its heading, alias, embed mark and kind. A
// wikilink written as a bare name stays a bare name if the new name
// resolves uniquely to the new path under after, else it becomes the vault
// path, without ".md" for notes (unless the link had it). A Markdown link
// gets a percent-encoded URL relative to the folder of note if the original
// was relative, otherwise from the root.
//
// A link is only rewritten when, left as it is, it would no longer point at
// its file: a bare [[Name]] whose file moved to another folder is kept. When
// the note itself moved, its links to files that did not move are checked
// the same way, so that its relative Markdown links keep working. Links in
// code are never touched. changed counts the links rewritten. When nothing
// changes, in particular when moved is empty, out is src itself.
func Rewrite(src []byte, note string, before, after *Resolver, moved map[string]string) (out []byte, changed int) {
	if len(moved) == 0 {
		return src, 0
	}
	defer func() {
		if recover() != nil {
			out, changed = src, 0
		}
	}()
	return rewrite(src, note, before, after, moved)
}

// rewrite is Rewrite without its guard against panics.
func rewrite(src []byte, note string, before, after *Resolver, moved map[string]string) ([]byte, int) {
	n, paths := parse(src)
	rw := rewriter{src: src, note: note, oldNote: note, before: before, after: after, moved: moved}
	found := false
	for from, to := range moved {
		if to == note && from != note && (!found || from < rw.oldNote) {
			rw.oldNote, found = from, true
		}
	}
	var out []byte
	last, changed := 0, 0
	for i, l := range n.Links {
		repl, ok := rw.rewriteLink(l, paths[i])
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(src)+64)
		}
		out = append(out, src[last:paths[i].start]...)
		out = append(out, repl...)
		last = paths[i].end
		changed++
	}
	if changed == 0 {
		return src, 0
	}
	return append(out, src[last:]...), changed
}

// rewriter holds what Rewrite knows about one note.
type rewriter struct {
	src           []byte
	note, oldNote string // the note's path after and before the move
	before, after *Resolver
	moved         map[string]string
}

// rewriteLink returns the new text of a link's target (or URL path), and
// false if the link is to be left as it is.
func (rw *rewriter) rewriteLink(l Link, at linkPath) (string, bool) {
	if l.Target == "" {
		return "", false
	}
	old, ok := rw.before.Resolve(rw.oldNote, l)
	if !ok {
		return "", false
	}
	want := old
	if to, ok := rw.moved[old]; ok {
		want = to
	}
	if want == old && rw.note == rw.oldNote {
		return "", false
	}
	if rw.stillResolves(l, old, want) {
		return "", false
	}
	var repl string
	if l.Markdown {
		repl, ok = rw.markdownPath(l, at.angle, old, want)
	} else {
		repl, ok = rw.wikiTarget(l, want)
	}
	if !ok || repl == string(rw.src[at.start:at.end]) {
		return "", false
	}
	return repl, true
}

// stillResolves reports whether the link, unchanged, points at want after
// the move. A Markdown link that was a literal path must still be one.
func (rw *rewriter) stillResolves(l Link, old, want string) bool {
	if l.Markdown {
		if p, ok, done := rw.before.literal(rw.oldNote, l); done && ok && p == old {
			p, ok, done = rw.after.literal(rw.note, l)
			return done && ok && p == want
		}
	}
	p, ok := rw.after.Resolve(rw.note, l)
	return ok && p == want
}

// resolvesTo reports whether a link like l with the given target points at
// want after the move.
func (rw *rewriter) resolvesTo(l Link, target, want string) bool {
	l.Target = target
	p, ok := rw.after.Resolve(rw.note, l)
	return ok && p == want
}

// wikiTarget returns the target to write in a wikilink to want.
func (rw *rewriter) wikiTarget(l Link, want string) (string, bool) {
	p := withoutNoteExt(want, l.Target)
	var candidates []string
	switch {
	case isDotRelative(l.Target):
		candidates = append(candidates, dotRelative(relPath(path.Dir(rw.note), p)))
	case strings.HasPrefix(l.Target, "/"):
		candidates = append(candidates, "/"+p)
	case !strings.Contains(l.Target, "/") && rw.after.nameCount(want) == 1:
		candidates = append(candidates, path.Base(p))
	}
	candidates = append(candidates, p, want)
	for _, c := range candidates {
		if strings.ContainsAny(c, wikiUnsafe) || strings.TrimSpace(c) != c {
			return "", false // cannot be written as a wikilink target
		}
		if rw.resolvesTo(l, c, want) {
			return c, true
		}
	}
	return "", false
}

// wikiUnsafe are the characters a wikilink target cannot hold: they would
// end it, split it, or pair with Markdown around it (a code span's
// backticks, raw HTML's angle brackets).
const wikiUnsafe = "|#[]`<>\\\r\n"

// markdownPath returns the URL path to write in a Markdown link to want,
// encoded for the link's destination.
func (rw *rewriter) markdownPath(l Link, angle bool, old, want string) (string, bool) {
	p := withoutNoteExt(want, l.Target)
	var candidates []string
	switch {
	case strings.HasPrefix(l.Target, "/"):
		candidates = append(candidates, "/"+p)
	case rw.wasRelative(l, old):
		rel := relPath(path.Dir(rw.note), p)
		if strings.HasPrefix(l.Target, "./") {
			rel = dotRelative(rel)
		}
		candidates = append(candidates, rel)
	}
	candidates = append(candidates, p, "/"+want)
	for _, c := range candidates {
		if !rw.resolvesTo(l, c, want) {
			continue
		}
		enc := escapePath(c)
		if angle {
			enc = angleEscaper.Replace(c)
		}
		if isExternal([]byte(enc)) { // "a:b.md" would read as a URL scheme
			enc = strings.Replace(enc, ":", "%3A", 1)
		}
		return enc, true
	}
	return "", false
}

// wasRelative reports whether a Markdown link's URL was written relative to
// the note's folder.
func (rw *rewriter) wasRelative(l Link, old string) bool {
	if isDotRelative(l.Target) {
		return true
	}
	p, ok := rw.before.relative(rw.oldNote, l.Target)
	return ok && p == old
}

// withoutNoteExt returns p without its ".md" extension, unless target, the
// link's target as it was written, had it.
func withoutNoteExt(p, target string) string {
	ext := path.Ext(p)
	if strings.EqualFold(ext, ".md") && !strings.EqualFold(path.Ext(target), ".md") {
		return p[:len(p)-len(ext)]
	}
	return p
}

// relPath returns the path of to relative to the folder dir ("." for the
// vault root).
func relPath(dir, to string) string {
	if dir == "." || dir == "" {
		return to
	}
	ds, ts := strings.Split(dir, "/"), strings.Split(to, "/")
	i := 0
	for i < len(ds) && i < len(ts)-1 && ds[i] == ts[i] {
		i++
	}
	parts := make([]string, 0, len(ds)-i+len(ts)-i)
	for range len(ds) - i {
		parts = append(parts, "..")
	}
	return strings.Join(append(parts, ts[i:]...), "/")
}

// dotRelative prefixes a relative path with "./" unless it starts with "../".
func dotRelative(p string) string {
	if isDotRelative(p) {
		return p
	}
	return "./" + p
}

// escapePath percent-encodes each segment of a slash-separated path for a
// Markdown link destination.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// angleEscaper encodes what may not stand as is in a destination written
// <like this>, where spaces may.
var angleEscaper = strings.NewReplacer("%", "%25", "`", "%60", "<", "%3C", ">", "%3E", "#", "%23", "?", "%3F", "\\", "%5C", "\n", "%0A", "\r", "%0D")
