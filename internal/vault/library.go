package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/nexus-mcp/nexus/internal/vault/markdown"
	"github.com/nexus-mcp/nexus/internal/vault/noteindex"
)

// The library: a vault's notes indexed for search (noteindex) with their
// link graph (each note's links, and who links to each file), built when
// Nexus starts and kept current by watching the folder (fsnotify), so that
// a note edited in another editor is found by its new words within a
// second, and at once after an edit made through Nexus.

// settle is how long the watcher waits for a burst of events about a file
// (an editor's save is often several) before reading it.
const settle = 50 * time.Millisecond

// library is one vault's index and link graph.
type library struct {
	v   *Vault
	ix  *noteindex.Index
	log *slog.Logger

	mu        sync.RWMutex
	files     map[string]bool            // every file of the vault (not dot-paths)
	links     map[string][]markdown.Link // each note's links, as written
	resolver  *markdown.Resolver         // over files
	outgoing  map[string][]string        // each note's links, resolved
	backlinks map[string]map[string]bool // each file's linkers
	stale     bool                       // files changed since the resolver was built

	indexed atomic.Int64 // notes indexed so far (the start's progress)
	ready   chan struct{}
}

func newLibrary(v *Vault, log *slog.Logger) *library {
	return &library{v: v, ix: noteindex.New(), log: log, files: map[string]bool{}, links: map[string][]markdown.Link{},
		outgoing: map[string][]string{}, backlinks: map[string]map[string]bool{}, ready: make(chan struct{})}
}

// isNote reports whether a path is a Markdown note (attachments are listed
// but not indexed).
func isNote(p string) bool { return strings.EqualFold(path.Ext(p), ".md") }

// build indexes every note of the vault, logging its progress.
func (l *library) build(ctx context.Context) error {
	defer close(l.ready)
	start := time.Now()
	var paths []string
	err := l.v.walk("", -1, func(p string, d fs.DirEntry) {
		if !d.IsDir() {
			paths = append(paths, p)
		}
	})
	if err != nil {
		return err
	}
	l.mu.Lock()
	for _, p := range paths {
		l.files[p] = true
	}
	l.resolver = markdown.NewResolver(paths)
	l.mu.Unlock()
	last := time.Now()
	for _, p := range paths {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isNote(p) {
			l.read(p)
			if n := l.indexed.Add(1); time.Since(last) > 2*time.Second {
				last = time.Now()
				l.log.Info("vault: indexing", "vault", l.v.Name, "notes", n, "of", len(paths))
			}
		}
	}
	l.relink()
	l.log.Info("vault: indexed", "vault", l.v.Name, "notes", l.ix.Len(), "files", len(paths), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// read (re)indexes the note at p, or forgets it if it is gone.
func (l *library) read(p string) {
	f, err := l.v.Read(p)
	if err != nil {
		l.forget(p)
		return
	}
	n := markdown.Parse(f.Content)
	doc := noteindex.Doc{Path: p, Tags: n.Tags, Properties: flatten(n.Frontmatter), Body: string(f.Content[n.BodyStart:]),
		BodyLine: 1 + bytes.Count(f.Content[:n.BodyStart], []byte("\n")), Modified: f.Modified, Size: f.Size}
	for _, h := range n.Headings {
		doc.Headings = append(doc.Headings, h.Text)
	}
	l.ix.Put(doc)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.files[p] {
		l.files[p] = true
		l.stale = true
	}
	l.links[p] = n.Links
	if !l.stale && l.resolver != nil {
		l.link(p)
	}
}

// flatten turns frontmatter into the index's properties: strings, lists
// joined with ", ".
func flatten(fm map[string]any) map[string]string {
	if len(fm) == 0 {
		return nil
	}
	out := make(map[string]string, len(fm))
	for k, v := range fm {
		switch v := v.(type) {
		case nil:
		case []any:
			parts := make([]string, 0, len(v))
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			out[k] = strings.Join(parts, ", ")
		default:
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// forget removes p (a file, or a folder and what was in it) from the
// library.
func (l *library) forget(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for f := range l.files {
		if p == "" || f == p || strings.HasPrefix(f, p+"/") {
			delete(l.files, f)
			delete(l.links, f)
			l.ix.Delete(f)
			l.stale = true
		}
	}
}

// link resolves p's links into the graph. Called with mu held.
func (l *library) link(p string) {
	for _, t := range l.outgoing[p] {
		delete(l.backlinks[t], p)
	}
	var out []string
	for _, lk := range l.links[p] {
		t, ok := l.resolver.Resolve(p, lk)
		if !ok || t == p || slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
		if l.backlinks[t] == nil {
			l.backlinks[t] = map[string]bool{}
		}
		l.backlinks[t][p] = true
	}
	l.outgoing[p] = out
}

// relink resolves every note's links again, when files came or went (a
// bare [[Name]] may now mean another file).
func (l *library) relink() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.relinkLocked()
}

func (l *library) relinkLocked() {
	paths := make([]string, 0, len(l.files))
	for p := range l.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	l.resolver = markdown.NewResolver(paths)
	l.outgoing, l.backlinks = map[string][]string{}, map[string]map[string]bool{}
	for p := range l.links {
		l.link(p)
	}
	l.stale = false
}

// graph is what links a note: its links resolved and the notes linking to
// it, sorted.
func (l *library) graph(p string) (outgoing, backlinks []string) {
	l.mu.Lock()
	if l.stale {
		l.relinkLocked()
	}
	outgoing = slices.Clone(l.outgoing[p])
	for b := range l.backlinks[p] {
		backlinks = append(backlinks, b)
	}
	l.mu.Unlock()
	slices.Sort(backlinks)
	return outgoing, backlinks
}

// touched re-reads what an edit made through Nexus changed, at once (the
// watcher would too, a moment later).
func (l *library) touched(paths ...string) {
	for _, p := range paths {
		if p == "" {
			l.v.walk("", -1, func(q string, d fs.DirEntry) {
				if !d.IsDir() {
					l.addFile(q)
				}
			})
			continue
		}
		if st, err := l.v.root.Stat(p); err == nil && st.IsDir() {
			l.forget(p)
			l.v.walk(p, -1, func(q string, d fs.DirEntry) {
				if !d.IsDir() {
					l.addFile(q)
				}
			})
			continue
		}
		l.addFile(p)
	}
}

// addFile indexes a file that appeared or changed (a note is read; any
// other file is only listed), or forgets it if it is gone.
func (l *library) addFile(p string) {
	if _, err := l.v.root.Lstat(p); err != nil {
		l.forget(p)
		return
	}
	if isNote(p) {
		l.read(p)
		return
	}
	l.mu.Lock()
	if !l.files[p] {
		l.files[p], l.stale = true, true
	}
	l.mu.Unlock()
}

// run builds the library and then follows changes to the vault's folder
// until ctx ends: every folder is watched (new ones as they appear) from
// before the build starts, so that nothing changed during it is missed,
// and each changed path is read again once its events settle. Without a
// watcher (the system refuses one), the library is built and kept current
// by Nexus's own edits only.
func (l *library) run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		if berr := l.build(ctx); berr != nil {
			return berr
		}
		return fmt.Errorf("vault %q: watching: %w", l.v.Name, err)
	}
	defer w.Close()
	addDirs := func(dir string) {
		if dir == "" || dir == "." {
			w.Add(l.v.Dir)
		} else {
			w.Add(filepath.Join(l.v.Dir, filepath.FromSlash(dir)))
		}
		l.v.walk(dir, -1, func(p string, d fs.DirEntry) {
			if d.IsDir() {
				if err := w.Add(filepath.Join(l.v.Dir, filepath.FromSlash(p))); err != nil {
					l.log.Warn("vault: cannot watch a folder", "vault", l.v.Name, "folder", p, "err", err)
				}
			}
		})
	}
	addDirs("")
	if err := l.build(ctx); err != nil {
		return err
	}
	pending := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: read the whole vault again.
			l.log.Warn("vault: watching", "vault", l.v.Name, "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				pending[""] = true
				timer.Reset(settle)
			}
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			rel, err := filepath.Rel(l.v.Dir, ev.Name)
			if err != nil || rel == "." {
				continue
			}
			rel = filepath.ToSlash(rel)
			if hidden(rel) || strings.HasSuffix(rel, ".tmp") {
				continue
			}
			if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
				// A folder moved away keeps its watches under its old
				// name (the system follows the folder, not its path):
				// drop them; its new name is watched afresh when it
				// appears.
				for _, watched := range w.WatchList() {
					if watched == ev.Name || strings.HasPrefix(watched, ev.Name+string(filepath.Separator)) {
						w.Remove(watched)
					}
				}
			}
			if ev.Has(fsnotify.Create) {
				if st, err := l.v.root.Lstat(rel); err == nil && st.IsDir() {
					addDirs(rel)
				}
			}
			pending[rel] = true
			timer.Reset(settle)
		case <-timer.C:
			if pending[""] {
				l.forget("")
				l.touched("")
				clear(pending)
			}
			for p := range pending {
				l.touched(p)
			}
			clear(pending)
		}
	}
}
