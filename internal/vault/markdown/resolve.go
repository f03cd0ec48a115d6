package markdown

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// Resolver resolves link targets against the vault's files, as Obsidian
// does: case-insensitively, a target without an extension naming the ".md"
// note, a bare name naming a file anywhere in the vault. A nil *Resolver is
// an empty vault. A Resolver is safe for concurrent use.
type Resolver struct {
	byPath map[string]string   // lower-cased path → path
	byName map[string][]string // lower-cased base name → paths, shortest first, then in path order
}

// NewResolver returns a Resolver of the vault whose files are paths:
// vault-relative, with '/' as separator, such as "notes/a.md" or
// "img/x.png".
func NewResolver(paths []string) *Resolver {
	sorted := slices.Clone(paths)
	slices.SortFunc(sorted, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	r := &Resolver{
		byPath: make(map[string]string, len(sorted)),
		byName: make(map[string][]string, len(sorted)),
	}
	for _, p := range sorted {
		key := strings.ToLower(p)
		if _, dup := r.byPath[key]; dup {
			continue
		}
		r.byPath[key] = p
		name := path.Base(key)
		r.byName[name] = append(r.byName[name], p)
	}
	return r
}

// Resolve returns the vault path of the file that link l of the note at
// path from points to, and false when there is none.
//
// A link within the note ([[#Heading]]) resolves to from. A target with a
// '/' is a path from the vault root, except that a target starting with
// "./" or "../", and a Markdown link's relative URL, are relative to the
// folder of from (a Markdown link whose URL matches no file there falls
// back to the other rules). A target without a '/' is a bare name: the file
// of that name in the folder of from if there is one, else the one with the
// shortest path, ties going to the first path in byte order. Wherever a
// target names no file, the target with ".md" added is tried.
func (r *Resolver) Resolve(from string, l Link) (path string, ok bool) {
	if r == nil {
		return "", false
	}
	if l.Target == "" {
		return r.exact(from)
	}
	if p, ok, done := r.literal(from, l); done {
		return p, ok
	}
	return r.byBareName(from, l.Target)
}

// literal resolves a target written as a path: from the root ("/x" or, for
// a wikilink, "folder/x"), or relative to the folder of from ("./x", "../x"
// or, for a Markdown link, any relative URL). done is false when the target
// is a bare name still to be looked up by name.
func (r *Resolver) literal(from string, l Link) (p string, ok, done bool) {
	t := l.Target
	switch {
	case strings.HasPrefix(t, "/"):
		p, ok = r.exact(strings.TrimLeft(t, "/"))
		return p, ok, true
	case isDotRelative(t):
		p, ok = r.relative(from, t)
		return p, ok, true
	}
	if l.Markdown {
		if p, ok = r.relative(from, t); ok {
			return p, true, true
		}
	}
	if strings.Contains(t, "/") {
		p, ok = r.exact(t)
		return p, ok, true
	}
	return "", false, false
}

// relative resolves a path relative to the folder of from; it does not
// climb out of the vault.
func (r *Resolver) relative(from, t string) (string, bool) {
	p := path.Join(path.Dir(from), t)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return r.exact(p)
}

// exact looks a vault path up, then the path with ".md" added.
func (r *Resolver) exact(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	key := strings.ToLower(path.Clean(p))
	if found, ok := r.byPath[key]; ok {
		return found, true
	}
	found, ok := r.byPath[key+".md"]
	return found, ok
}

// byBareName looks a file up by name, preferring the folder of from.
func (r *Resolver) byBareName(from, name string) (string, bool) {
	key := strings.ToLower(name)
	candidates := r.byName[key]
	if len(candidates) == 0 {
		candidates = r.byName[key+".md"]
	}
	if len(candidates) == 0 {
		return "", false
	}
	dir := path.Dir(from)
	for _, c := range candidates {
		if strings.EqualFold(path.Dir(c), dir) {
			return c, true
		}
	}
	return candidates[0], true
}

// nameCount returns how many files of the vault have the base name of p.
func (r *Resolver) nameCount(p string) int {
	if r == nil {
		return 0
	}
	return len(r.byName[strings.ToLower(path.Base(p))])
}

func isDotRelative(t string) bool {
	return t == "." || t == ".." || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../")
}
