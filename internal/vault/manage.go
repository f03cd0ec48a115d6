package vault

import (
	"context"
	"errors"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// vaultManager: files and folders (contract section 2).

func (s *Server) managerModes() []registry.Def {
	return []registry.Def{
		def("listDirectory", "List a folder of the vault (\"\" or \"/\" for its root): files (name, path, size, created, modified; newest first) and folders, to a depth, filtered by a regular expression (or glob) on the name.", true, registry.Handle(s.listDirectory)),
		def("createFolder", "Create a folder (and its parents); an existing one is fine (existed: true).", false, registry.Handle(s.createFolder)),
		def("editFolder", "Rename a folder; links to the notes in it are rewritten.", false, registry.Handle(s.editFolder)),
		def("deleteFolder", "Delete a folder (recursive: with what is in it) to the vault's trash, .trash.", false, registry.Handle(s.deleteFolder)),
		def("deleteNote", "Delete a note or file to the vault's trash, .trash.", false, registry.Handle(s.deleteNote)),
		def("moveNote", "Move or rename a note (newPath with its extension); the [[wikilinks]] and Markdown links to it in other notes are rewritten, all in one step.", false, registry.Handle(s.moveNote)),
		def("moveFolder", "Move or rename a folder; links to the notes in it are rewritten, all in one step.", false, registry.Handle(s.moveFolder)),
		def("duplicateNote", "Copy a note to targetPath; with autoIncrement an existing target gives \"<name> copy.md\", \"<name> copy 2.md\"...", false, registry.Handle(s.duplicateNote)),
		def("openNote", "Obsidian only: open a note in Obsidian's editor. Nexus serves the vault as a folder, with no editor to open it in; this mode answers an error saying so. Read a note with contentManager readContent.", true, registry.Handle(s.openNote)),
	}
}

// place names a file or folder of a vault.
type place struct {
	Vault string `json:"vault"`
	Path  string `json:"path"`
}

func (s *Server) at(ctx context.Context, c *registry.Call, p place, root bool) (*Vault, string, error) {
	v, err := s.vaultFor(ctx, c, p.Vault)
	if err != nil {
		return nil, "", err
	}
	clean, err := Clean(p.Path, root)
	if err != nil {
		return nil, "", errs.E(errs.BadRequest, "%v", err)
	}
	return v, clean, nil
}

type listIn struct {
	place
	Filter         string `json:"filter"`
	Depth          int    `json:"depth"`
	IncludeFiles   *bool  `json:"includeFiles"`
	IncludeFolders *bool  `json:"includeFolders"`
	FilesOnly      bool   `json:"filesOnly"`
	FoldersOnly    bool   `json:"foldersOnly"`
}

type fileItem struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Created  int64  `json:"created"`
	Modified int64  `json:"modified"`
}

type folderItem struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// nameFilter is listDirectory's filter: a case-insensitive regular
// expression on the name, or, if it is not one, a glob (* and ?).
func nameFilter(f string) func(string) bool {
	if f == "" {
		return func(string) bool { return true }
	}
	if re, err := regexp.Compile("(?i)" + f); err == nil {
		return re.MatchString
	}
	var b strings.Builder
	b.WriteString("(?i)^")
	for _, r := range f {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re := regexp.MustCompile(b.String()) // quoted: always compiles
	return re.MatchString
}

func (s *Server) listDirectory(ctx context.Context, c *registry.Call, in listIn) (result, error) {
	v, dir, err := s.at(ctx, c, in.place, true)
	if err != nil {
		return result{}, prefixed("Failed to list directory contents", err)
	}
	if dir != "" {
		st, err := v.Stat(dir)
		if err != nil || !st.IsDir() {
			return result{}, errs.E(errs.NotFound, "Failed to list directory contents: Folder not found at path: %s", dir)
		}
	}
	files, folders := true, true
	if in.IncludeFiles != nil {
		files = *in.IncludeFiles
	}
	if in.IncludeFolders != nil {
		folders = *in.IncludeFolders
	}
	switch {
	case in.FilesOnly:
		files, folders = true, false
	case in.FoldersOnly:
		files, folders = false, true
	}
	match := nameFilter(in.Filter)
	fileItems, folderItems := []fileItem{}, []folderItem{}
	err = v.walk(dir, in.Depth, func(p string, d fs.DirEntry) {
		if !match(d.Name()) {
			return
		}
		if d.IsDir() {
			if folders {
				folderItems = append(folderItems, folderItem{Name: d.Name(), Path: p})
			}
			return
		}
		if !files {
			return
		}
		info, err := d.Info()
		if err != nil {
			return // gone since it was listed
		}
		fileItems = append(fileItems, fileItem{Name: d.Name(), Path: p, Size: info.Size(), Created: created(info).UnixMilli(), Modified: info.ModTime().UnixMilli()})
	})
	if err != nil {
		return result{}, prefixed("Failed to list directory contents", err)
	}
	slices.SortStableFunc(fileItems, func(a, b fileItem) int {
		if a.Modified != b.Modified {
			return int(b.Modified - a.Modified)
		}
		return strings.Compare(a.Path, b.Path)
	})
	slices.SortFunc(folderItems, func(a, b folderItem) int { return strings.Compare(a.Name, b.Name) })
	data := map[string]any{"summary": map[string]int{"fileCount": len(fileItems), "folderCount": len(folderItems), "totalItems": len(fileItems) + len(folderItems)}}
	if files {
		data["files"] = fileItems
	}
	if folders {
		data["folders"] = folderItems
	}
	return ok(data), nil
}

// walk calls fn for each file and folder under dir ("" the root), to depth
// levels below its direct children (0: the children only), leaving out
// dot-files and dot-folders. A symbolic link is listed (as a file, never
// followed) only if it leads to something inside the vault.
func (v *Vault) walk(dir string, depth int, fn func(p string, d fs.DirEntry)) error {
	start := dir
	if start == "" {
		start = "."
	}
	base := strings.Count(start, "/")
	return fs.WalkDir(v.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return v.fsError(dir, err)
			}
			return nil // unreadable below: skip it
		}
		if p == start {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if _, err := v.root.Stat(p); err != nil {
				return nil // a link out of the vault (or to nothing): not the vault's
			}
		}
		level := strings.Count(p, "/") - base
		if start == "." {
			level = strings.Count(p, "/")
		}
		if depth >= 0 && level > depth {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fn(p, d)
		return nil
	})
}

func (s *Server) createFolder(ctx context.Context, c *registry.Call, in place) (result, error) {
	v, p, err := s.at(ctx, c, in, false)
	if err != nil {
		return result{}, prefixed("Failed to create folder", err)
	}
	existed, err := v.Mkdir(p)
	if err != nil {
		return result{}, prefixed("Failed to create folder", err)
	}
	return ok(map[string]any{"path": p, "existed": existed}), nil
}

type deleteFolderIn struct {
	place
	Recursive bool `json:"recursive"`
}

func (s *Server) deleteFolder(ctx context.Context, c *registry.Call, in deleteFolderIn) (result, error) {
	v, p, err := s.at(ctx, c, in.place, false)
	if err != nil {
		return result{}, prefixed("Failed to delete folder", err)
	}
	st, err := v.Stat(p)
	if err != nil {
		return result{}, errs.E(errs.NotFound, "Failed to delete folder: Folder not found: %s", p)
	}
	if !st.IsDir() {
		return result{}, errs.E(errs.BadRequest, "Failed to delete folder: Path is not a folder: %s", p)
	}
	if !in.Recursive {
		entries, err := fs.ReadDir(v.root.FS(), p)
		if err == nil && len(entries) > 0 {
			return result{}, errs.E(errs.Conflict, "Failed to delete folder: Folder is not empty: %s", p)
		}
	}
	to, err := v.Trash(p)
	if err != nil {
		return result{}, prefixed("Failed to delete folder", err)
	}
	s.touched(v, p)
	return ok(map[string]any{"path": p, "trashedTo": to}), nil
}

func (s *Server) deleteNote(ctx context.Context, c *registry.Call, in place) (result, error) {
	v, p, err := s.at(ctx, c, in, false)
	if err != nil {
		return result{}, prefixed("Failed to delete note", err)
	}
	st, err := v.Stat(p)
	if err != nil {
		return result{}, errs.E(errs.NotFound, "Failed to delete note: File not found: %s", p)
	}
	if st.IsDir() {
		return result{}, errs.E(errs.BadRequest, "Failed to delete note: Path is not a file: %s", p)
	}
	to, err := v.Trash(p)
	if err != nil {
		return result{}, prefixed("Failed to delete note", err)
	}
	s.touched(v, p)
	return ok(map[string]any{"path": p, "trashedTo": to}), nil
}

// openIn is openNote's input (the original's mode parameter, which the
// agent's own mode hides, is left out: contract section 2).
type openIn struct {
	place
	Focus *bool `json:"focus"`
}

func (s *Server) openNote(_ context.Context, _ *registry.Call, in openIn) (result, error) {
	return result{}, errs.E(errs.UnprocessableEntity, "openNote opens a note in Obsidian's editor, and Nexus serves the vault as a folder with no editor to open it in: read the note with contentManager readContent instead")
}

// isNotExist reports whether err is a file or folder not found.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errs.CodeOf(err) == errs.NotFound
}
