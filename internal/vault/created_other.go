//go:build !linux

package vault

import (
	"io/fs"
	"time"
)

// created is a file's modification time where its change time is not read
// (the original reported Node's ctime).
func created(info fs.FileInfo) time.Time { return info.ModTime() }
