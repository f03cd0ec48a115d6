package vault

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// searchPaths are the notes searchContent finds for query.
func searchPaths(t *testing.T, s *Server, query string) []string {
	t.Helper()
	r, err := s.searchContent(context.Background(), nil, searchContentIn{Query: query, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range r.Data.(map[string]any)["results"].([]contentHit) {
		out = append(out, h.FilePath)
	}
	return out
}

// eventually polls cond for up to 10 s (a generous bound on a loaded
// machine: the watcher settles in 50 ms).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 10 s", what)
}

// TestExternalEditsAreSearchable: notes written, changed, moved and deleted
// by another editor (straight on disk) are found by their new words, in new
// folders too, and forgotten when gone; the link graph follows.
func TestExternalEditsAreSearchable(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "alpha [[b]]", "b.md": "bravo"})
	s := NewServer([]*Vault{v}, Options{})
	s.Start()
	t.Cleanup(func() { s.Close() })
	eventually(t, "the first index", func() bool { return slices.Equal(searchPaths(t, s, "bravo"), []string{"b.md"}) })
	if _, back := s.libs[v].graph("b.md"); !slices.Equal(back, []string{"a.md"}) {
		t.Errorf("backlinks of b.md: %v", back)
	}
	write := func(p, content string) {
		full := filepath.Join(v.Dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "alpha changed to zephyr")
	eventually(t, "an edit", func() bool { return slices.Equal(searchPaths(t, s, "zephyr"), []string{"a.md"}) })
	if _, back := s.libs[v].graph("b.md"); len(back) != 0 {
		t.Errorf("a.md no longer links to b.md, yet backlinks %v", back)
	}
	write("new/deeper/c.md", "quasar in a new folder, see [[b]]")
	eventually(t, "a note in a new folder", func() bool { return slices.Equal(searchPaths(t, s, "quasar"), []string{"new/deeper/c.md"}) })
	write("new/deeper/d.md", "nebula written right after the folder appeared")
	eventually(t, "a second note in the new folder", func() bool { return slices.Equal(searchPaths(t, s, "nebula"), []string{"new/deeper/d.md"}) })
	if err := os.Rename(filepath.Join(v.Dir, "new"), filepath.Join(v.Dir, "moved")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a folder moved", func() bool { return slices.Equal(searchPaths(t, s, "quasar"), []string{"moved/deeper/c.md"}) })
	write("moved/deeper/e.md", "pulsar written in the moved folder")
	eventually(t, "a note written in the moved folder", func() bool { return slices.Equal(searchPaths(t, s, "pulsar"), []string{"moved/deeper/e.md"}) })
	if err := os.Remove(filepath.Join(v.Dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a note deleted", func() bool { return len(searchPaths(t, s, "bravo")) == 0 })
	write(".obsidian/workspace.md", "hidden ghost")
	write("x.md", "visible marker")
	eventually(t, "the next note", func() bool { return len(searchPaths(t, s, "marker")) == 1 })
	if got := searchPaths(t, s, "ghost"); len(got) != 0 {
		t.Errorf("a dot-folder's note was indexed: %v", got)
	}
}
