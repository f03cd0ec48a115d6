package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/vault/markdown"
)

// Moves keep links whole (what Obsidian does and the original did not:
// contract section 5, item 8): moving or renaming a note or a folder
// rewrites every [[wikilink]] and Markdown link that pointed at what moved,
// in the same step as the move (journal.go: all of it happens, or none).

type moveIn struct {
	place
	NewPath   string `json:"newPath"`
	Overwrite bool   `json:"overwrite"`
}

// moved is what a move did.
type moved struct {
	From, To string
	// Rewritten are the notes whose links were rewritten (at their paths
	// after the move), Links how many links.
	Rewritten []string
	Links     int
	// Replaced is where an overwritten destination went (the trash).
	Replaced string
}

// Move moves the file or folder from to to (both clean), rewriting the
// links to what moved. With overwrite an existing destination goes to the
// trash first; without, it is an error.
func (v *Vault) Move(from, to string, folder, overwrite bool) (moved, error) {
	if err := v.writable(); err != nil {
		return moved{}, err
	}
	unlock, err := v.exclusive()
	if err != nil {
		return moved{}, err
	}
	defer unlock()
	st, err := v.root.Lstat(from)
	if err != nil {
		return moved{}, v.fsError(from, err)
	}
	switch {
	case folder && !st.IsDir():
		return moved{}, errs.E(errs.BadRequest, "Path is not a folder: %s", from)
	case !folder && st.IsDir():
		return moved{}, errs.E(errs.BadRequest, "Path is not a file: %s", from)
	case from == to:
		return moved{From: from, To: to}, nil
	case folder && strings.HasPrefix(to+"/", from+"/"):
		return moved{}, errs.E(errs.BadRequest, "cannot move folder %s into itself (%s)", from, to)
	}
	out := moved{From: from, To: to}
	p, links, err := v.planMove(from, to, folder)
	if err != nil {
		return moved{}, err
	}
	// Case-only renames on a case-insensitive system find the source
	// itself at the destination: not a collision.
	if there, err := v.root.Lstat(to); err == nil && !os.SameFile(st, there) {
		if !overwrite {
			return moved{}, errs.E(errs.Conflict, "Destination already exists: %s", to)
		}
		// The destination goes to the trash in the same step as the move.
		out.Replaced = v.trashPath(to)
		p.Renames = append([]rename{{From: to, To: out.Replaced}}, p.Renames...)
	}
	for _, w := range p.Writes {
		out.Rewritten = append(out.Rewritten, w.Path)
	}
	out.Links = links
	if err := v.apply(p); err != nil {
		return moved{}, err
	}
	return out, nil
}

// planMove plans moving from to to: the rename, and the rewrite of every
// note whose links point at what moves (or, for a note that moves, whose
// relative links would break); links counts the links rewritten.
func (v *Vault) planMove(from, to string, folder bool) (p plan, links int, err error) {
	var paths []string
	if err := v.walk("", -1, func(p string, d fs.DirEntry) {
		if !d.IsDir() {
			paths = append(paths, p)
		}
	}); err != nil {
		return plan{}, 0, err
	}
	movedTo := map[string]string{}
	after := make([]string, 0, len(paths))
	newPath := func(p string) string {
		if !folder {
			if p == from {
				return to
			}
			return p
		}
		if rest, ok := strings.CutPrefix(p, from+"/"); ok {
			return to + "/" + rest
		}
		return p
	}
	for _, p := range paths {
		np := newPath(p)
		if np != p {
			movedTo[p] = np
		}
		after = append(after, np)
	}
	before, afterR := markdown.NewResolver(paths), markdown.NewResolver(after)
	// A note can link to what moved only if it says the name of one of the
	// moved files (or of the folder): read only those.
	var names [][]byte
	for p := range movedTo {
		base := strings.TrimSuffix(path.Base(p), path.Ext(p))
		names = append(names, bytes.ToLower([]byte(base)))
	}
	p = plan{Renames: []rename{{From: from, To: to}}}
	for _, old := range paths {
		if !strings.EqualFold(path.Ext(old), ".md") {
			continue
		}
		b, err := v.root.ReadFile(old)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return plan{}, 0, v.fsError(old, err)
		}
		np := newPath(old)
		lower := bytes.ToLower(b)
		mentions := np != old // a note that moves may have relative links to fix
		for _, n := range names {
			if bytes.Contains(lower, n) || bytes.Contains(lower, bytes.ReplaceAll(n, []byte(" "), []byte("%20"))) {
				mentions = true
				break
			}
		}
		if !mentions {
			continue
		}
		out, changed := markdown.Rewrite(b, np, before, afterR, movedTo)
		if changed > 0 {
			p.Writes = append(p.Writes, rewrite{Path: np, Old: b, New: out})
			links += changed
		}
	}
	return p, links, nil
}

func (s *Server) moveNote(ctx context.Context, c *registry.Call, in moveIn) (result, error) {
	return s.move(ctx, c, in, false, "Failed to move note")
}

func (s *Server) moveFolder(ctx context.Context, c *registry.Call, in moveIn) (result, error) {
	return s.move(ctx, c, in, true, "Failed to move folder")
}

// renameIn is editFolder's input: a rename never replaces a folder.
type renameIn struct {
	place
	NewPath string `json:"newPath"`
}

func (s *Server) editFolder(ctx context.Context, c *registry.Call, in renameIn) (result, error) {
	return s.move(ctx, c, moveIn{place: in.place, NewPath: in.NewPath}, true, "Failed to rename folder")
}

func (s *Server) move(ctx context.Context, c *registry.Call, in moveIn, folder bool, prefix string) (result, error) {
	v, from, err := s.at(ctx, c, in.place, false)
	if err != nil {
		return result{}, prefixed(prefix, err)
	}
	to, err := Clean(in.NewPath, false)
	if err != nil {
		return result{}, prefixed(prefix, errs.E(errs.BadRequest, "%v", err))
	}
	m, err := v.Move(from, to, folder, in.Overwrite)
	if err != nil {
		return result{}, prefixed(prefix, err)
	}
	s.touched(v, append([]string{m.From, m.To}, m.Rewritten...)...)
	data := map[string]any{"path": m.From, "newPath": m.To, "linksRewritten": m.Links, "notesUpdated": nonNil(m.Rewritten)}
	if m.Replaced != "" {
		data["replacedTo"] = m.Replaced
	}
	if folder {
		return ok(data), nil
	}
	return ok(data, recommendation{Type: "link_check", Message: fmt.Sprintf("%d links in %d notes were rewritten to the new path; links written in other forms (a URL, plain text) were not.", m.Links, len(m.Rewritten))}), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type duplicateIn struct {
	Vault         string `json:"vault"`
	SourcePath    string `json:"sourcePath"`
	TargetPath    string `json:"targetPath"`
	Overwrite     bool   `json:"overwrite"`
	AutoIncrement bool   `json:"autoIncrement"`
}

func (s *Server) duplicateNote(ctx context.Context, c *registry.Call, in duplicateIn) (result, error) {
	const prefix = "Failed to duplicate note"
	v, src, err := s.at(ctx, c, place{Vault: in.Vault, Path: in.SourcePath}, false)
	if err != nil {
		return result{}, prefixed(prefix, err)
	}
	dst, err := Clean(in.TargetPath, false)
	if err != nil {
		return result{}, prefixed(prefix, errs.E(errs.BadRequest, "%v", err))
	}
	f, err := v.Read(src)
	if err != nil {
		return result{}, prefixed(prefix, err)
	}
	inc, over := false, false
	_, statErr := v.Stat(dst)
	exists := statErr == nil
	switch {
	case exists && in.AutoIncrement:
		ext := path.Ext(dst)
		base := strings.TrimSuffix(dst, ext)
		for i := 1; i <= 999; i++ {
			cand := base + " copy" + ext
			if i > 1 {
				cand = fmt.Sprintf("%s copy %d%s", base, i, ext)
			}
			if _, err := v.Stat(cand); isNotExist(err) {
				dst, inc = cand, true
				break
			}
		}
		if !inc {
			return result{}, errs.E(errs.Conflict, "%s: Target file already exists: %s (and its copies 1 to 999)", prefix, dst)
		}
	case exists && in.Overwrite:
		if _, err := v.Trash(dst); err != nil {
			return result{}, prefixed(prefix, err)
		}
		over = true
	case exists:
		return result{}, errs.E(errs.Conflict, "%s: Target file already exists: %s", prefix, dst)
	}
	if _, err := v.Create(dst, f.Content); err != nil {
		return result{}, prefixed(prefix, err)
	}
	s.touched(v, dst)
	return ok(map[string]any{"sourcePath": src, "targetPath": dst, "wasAutoIncremented": inc, "wasOverwritten": over},
		recommendation{Type: "customization", Message: "The copy has the original's frontmatter and links: change its title and tags so the two are told apart."}), nil
}
