package vault

import (
	"io/fs"
	"syscall"
	"time"
)

// created is a file's change time, which the original reported as its
// creation time (Node's ctime); the modification time when the system
// does not say.
func created(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return info.ModTime()
}
