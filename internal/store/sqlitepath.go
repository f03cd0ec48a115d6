package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// sqlitePathProblem says why SQLite cannot open (or create) the database
// file path, in words, where SQLite itself says only "unable to open
// database file (14)": the directory does not exist, is not a directory or
// may not be written, or the path is a directory. It returns "" when it
// finds none of these.
func sqlitePathProblem(path string) string {
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Sprintf("%s is a directory, not a database file", path)
		}
		return ""
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("the directory %s does not exist (Nexus creates the database file, not its directory)", dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("the directory %s cannot be reached: permission denied", dir)
	case err != nil:
		return fmt.Sprintf("the directory %s: %v", dir, err)
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".nexus-write-check-*")
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Sprintf("the directory %s may not be written by this user", dir)
		}
		return fmt.Sprintf("cannot create a file in the directory %s: %v", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return ""
}
