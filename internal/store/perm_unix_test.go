//go:build unix

package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store"
)

// TestDatabaseFilesArePrivate: under the common umask 022, a new data
// directory is 0700 and the SQLite database and its WAL and SHM files are
// 0600, whether the database is in the data directory or at a path given
// with its URL (whose directory is left as it is). An existing database
// readable by others is made 0600 when opened (issue 21, item 11).
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	mode := func(t *testing.T, path string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	// open opens the store, writes (so that the WAL and SHM exist) and
	// checks the database files while it is open.
	open := func(t *testing.T, o store.Options, db string) {
		t.Helper()
		st, err := store.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.DB().ExecContext(ctx, `CREATE TABLE IF NOT EXISTS perm_probe (x INTEGER)`); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB().ExecContext(ctx, `INSERT INTO perm_probe VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{db, db + "-wal", db + "-shm"} {
			if m := mode(t, f); m != 0o600 {
				t.Errorf("%s: mode %v, want 0600", filepath.Base(f), m)
			}
		}
	}

	t.Run("new data directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "share", "nexus")
		open(t, store.Options{DataDir: dir}, filepath.Join(dir, store.FileName))
		if m := mode(t, dir); m != 0o700 {
			t.Errorf("data directory: mode %v, want 0700", m)
		}
	})
	t.Run("database at a path", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "chosen.db")
		open(t, store.Options{URL: "sqlite:" + db}, db)
		if m := mode(t, dir); m != 0o755 {
			t.Errorf("the directory the user chose: mode %v, want it left 0755", m)
		}
	})
	t.Run("existing database readable by others", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, store.FileName)
		open(t, store.Options{DataDir: dir}, db)
		for _, f := range []string{db, db + "-wal", db + "-shm"} {
			if err := os.Chmod(f, 0o644); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		open(t, store.Options{DataDir: dir}, db)
	})
}
