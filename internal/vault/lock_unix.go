//go:build unix

package vault

import (
	"os"
	"syscall"
)

// lockPath is the file whose lock serialises the writes of every process
// writing the vault (replicas on one machine, nexus call beside nexus
// serve).
const lockPath = ".nexus/lock"

// lock takes the vault's write lock, shared with other processes (flock),
// and returns its release. Called with mu held.
func (v *Vault) lock() (func(), error) {
	if err := v.mkdirs(".nexus"); err != nil {
		return nil, err
	}
	f, err := v.root.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, v.fsError(lockPath, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, v.fsError(lockPath, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
