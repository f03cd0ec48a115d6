package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store"
)

// TestOpenSQLiteSaysWhy: a SQLite file Nexus cannot open is named with the
// cause, not only SQLite's "unable to open database file (14)".
func TestOpenSQLiteSaysWhy(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "missing", "x.db"): "the directory " + filepath.Join(dir, "missing") + " does not exist",
		dir:                                   dir + " is a directory",
	} {
		st, err := store.Open(context.Background(), store.Options{URL: path})
		if err == nil {
			st.Close()
			t.Errorf("%s: opened", path)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want the path and %q", path, err, want)
		}
	}
}
