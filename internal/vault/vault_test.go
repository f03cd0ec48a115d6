package vault

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// newVault is a vault in a fresh folder with the given files.
func newVault(t *testing.T, files map[string]string) *Vault {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Open("test", dir, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func disk(t *testing.T, v *Vault, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(v.Dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSymlinksOut: a symbolic link that leads out of the vault, to a
// folder or to a file, is refused with an error that says so; a link
// within the vault works.
func TestSymlinksOut(t *testing.T) {
	v := newVault(t, map[string]string{"notes/a.md": "inside"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"out":           outside,
		"notes/leak.md": filepath.Join(outside, "secret.md"),
		"rel":           "../" + filepath.Base(outside),
		"notes/same.md": "a.md",
	} {
		if err := os.Symlink(target, filepath.Join(v.Dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"out/secret.md", "notes/leak.md", "rel/secret.md"} {
		f, err := v.Read(p)
		if err == nil || !strings.Contains(err.Error(), "leads out of the vault") || errs.CodeOf(err) != errs.Forbidden {
			t.Errorf("Read(%q) = %q, %v; want refused as leading out of the vault", p, f.Content, err)
		}
		if _, _, err := v.Update(p, "", func(b []byte) ([]byte, error) { return []byte("overwritten"), nil }); err == nil {
			t.Errorf("Update of %q succeeded", p)
		}
	}
	for _, p := range []string{"out/new.md", "rel/new.md"} {
		if _, err := v.Create(p, []byte("x")); err == nil || !strings.Contains(err.Error(), "leads out of the vault") {
			t.Errorf("Create(%q): %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(b) != "secret" {
		t.Errorf("the file outside became %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.md")); err == nil {
		t.Error("a file was written outside the vault")
	}
	if f, err := v.Read("notes/same.md"); err != nil || string(f.Content) != "inside" {
		t.Errorf("a link within the vault: %q, %v", f.Content, err)
	}
}

// TestCreateNeverOverwrites: creating over an existing note is an error
// and the note is untouched.
func TestCreateNeverOverwrites(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "mine"})
	if _, err := v.Create("a.md", []byte("theirs")); errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "File already exists: a.md") {
		t.Errorf("Create over a note: %v", err)
	}
	if got := disk(t, v, "a.md"); got != "mine" {
		t.Errorf("the note became %q", got)
	}
	f, err := v.Create("new/deep/b.md", []byte("hello"))
	if err != nil || f.Hash != Hash([]byte("hello")) || disk(t, v, "new/deep/b.md") != "hello" {
		t.Errorf("Create with parents: %+v, %v", f, err)
	}
	assertNoTemp(t, v)
}

// assertNoTemp: no temporary file is left behind.
func assertNoTemp(t *testing.T, v *Vault) {
	t.Helper()
	filepath.WalkDir(v.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestEditConflicts: an edit against a hash that is not the note's is a
// CONFLICT naming both; a note changed on disk while an edit was made
// (another editor saving it) is a CONFLICT too, and keeps what the other
// editor wrote.
func TestEditConflicts(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "one"})
	stale := Hash([]byte("zero"))
	_, _, err := v.Update("a.md", stale, func(old []byte) ([]byte, error) { return []byte("two"), nil })
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), stale) || !strings.Contains(err.Error(), Hash([]byte("one"))) {
		t.Errorf("stale hash: %v", err)
	}
	_, _, err = v.Update("a.md", Hash([]byte("one")), func(old []byte) ([]byte, error) {
		// Another editor saves the note while this edit is made.
		if err := os.WriteFile(filepath.Join(v.Dir, "a.md"), []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		return append(old, " mine"...), nil
	})
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), Hash([]byte("theirs"))) {
		t.Errorf("changed on disk during the edit: %v", err)
	}
	if got := disk(t, v, "a.md"); got != "theirs" {
		t.Errorf("the other editor's note became %q", got)
	}
	before, after, err := v.Update("a.md", "", func(old []byte) ([]byte, error) { return append(old, "!"...), nil })
	if err != nil || string(before.Content) != "theirs" || string(after.Content) != "theirs!" {
		t.Errorf("an edit without a hash: %q -> %q, %v", before.Content, after.Content, err)
	}
	assertNoTemp(t, v)
}

// TestRacingWriters: writers that read the same version and edit it at
// once: one wins, every other gets a CONFLICT, and the note holds exactly
// the winner's edit.
func TestRacingWriters(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "base"})
	read := Hash([]byte("base"))
	const n = 8
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, results[i] = v.Update("a.md", read, func(old []byte) ([]byte, error) {
				return append(old, []byte(" edit "+string(rune('A'+i)))...), nil
			})
		})
	}
	wg.Wait()
	won := -1
	for i, err := range results {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("two writers won: %d and %d", won, i)
		case err == nil:
			won = i
		case errs.CodeOf(err) != errs.Conflict:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if want := "base edit " + string(rune('A'+won)); won < 0 || disk(t, v, "a.md") != want {
		t.Errorf("note %q, winner %d", disk(t, v, "a.md"), won)
	}
}

// TestTrashAndReadOnly: a deleted note is in the trash, whole; a read-only
// vault refuses every write.
func TestTrashAndReadOnly(t *testing.T) {
	v := newVault(t, map[string]string{"notes/a.md": "keep me"})
	to, err := v.Trash("notes/a.md")
	if err != nil || !strings.HasPrefix(to, ".trash/") || !strings.HasSuffix(to, "/notes/a.md") {
		t.Fatalf("Trash: %q, %v", to, err)
	}
	if got := disk(t, v, to); got != "keep me" {
		t.Errorf("trashed note %q", got)
	}
	if _, err := os.Stat(filepath.Join(v.Dir, "notes/a.md")); !os.IsNotExist(err) {
		t.Errorf("the note is still there: %v", err)
	}
	ro, err := Open("ro", v.Dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for what, err := range map[string]error{
		"create": func() error { _, err := ro.Create("b.md", nil); return err }(),
		"update": func() error {
			_, _, err := ro.Update(to, "", func(b []byte) ([]byte, error) { return b, nil })
			return err
		}(),
		"trash": func() error { _, err := ro.Trash(to); return err }(),
		"mkdir": func() error { _, err := ro.Mkdir("d"); return err }(),
	} {
		if errs.CodeOf(err) != errs.Forbidden || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s in a read-only vault: %v", what, err)
		}
	}
}

// TestFuzzyFind: the closest part of the note is found wherever it is, and
// its similarity is what the documentation says.
func TestFuzzyFind(t *testing.T) {
	text := strings.Repeat("filler text that is not it. ", 100) + "The quick brown fox jumps over the lazy dog." + " tail"
	start, end, sim, err := fuzzyFind([]rune(text), []rune("The quikc brown fox jumps over the lazy dog."))
	if err != nil {
		t.Fatal(err)
	}
	if got := string([]rune(text)[start:end]); got != "The quick brown fox jumps over the lazy dog." || sim < 0.95 || sim >= 1 {
		t.Errorf("found %q, similarity %.3f", got, sim)
	}
	if _, _, sim, _ := fuzzyFind([]rune("abc"), []rune("xyz")); sim > 0 {
		t.Errorf("nothing alike: similarity %.2f", sim)
	}
	out, n, err := replaceText("one two three", "two", "2", 0.95)
	if err != nil || out != "one 2 three" || n != 1 {
		t.Errorf("exact replace: %q %d %v", out, n, err)
	}
	out, n, _ = replaceText("alpha beta gamma", "betta", "B", 1.0)
	if n != 0 || out != "alpha beta gamma" {
		t.Errorf("threshold 1.0 replaced a near match: %q", out)
	}
	out, n, _ = replaceText("alpha beta gamma", "betta", "B", 0.7)
	if n != 1 || out != "alpha B gamma" {
		t.Errorf("threshold 0.7: %q %d", out, n)
	}
}

// TestRacingWritersAcrossProcesses: two handles of one folder (as two
// replicas, or nexus call beside nexus serve, would have) edit a note read
// at the same version: one wins, the other gets a CONFLICT.
func TestRacingWritersAcrossProcesses(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "base"})
	w, err := Open("other", v.Dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	read := Hash([]byte("base"))
	for round := range 20 {
		var wg sync.WaitGroup
		results := make([]error, 2)
		for i, h := range []*Vault{v, w} {
			wg.Go(func() {
				_, _, results[i] = h.Update("a.md", read, func(old []byte) ([]byte, error) {
					return append(old, []byte(" "+string(rune('A'+i)))...), nil
				})
			})
		}
		wg.Wait()
		if (results[0] == nil) == (results[1] == nil) {
			t.Fatalf("round %d: outcomes %v, %v: want one win and one CONFLICT", round, results[0], results[1])
		}
		f, _ := v.Read("a.md")
		read = f.Hash
	}
}
