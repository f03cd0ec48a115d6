package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MaxLines is the longest a Go source file may be (issue 8): a longer one
// holds more than one concern and is split by concern.
const MaxLines = 800

// TestNoSourceFileOverMaxLines walks the repository's Go files (tests
// included) and fails on any longer than MaxLines.
func TestNoSourceFileOverMaxLines(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte("\n")); n > MaxLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern", path, n, MaxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
