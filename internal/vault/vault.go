// Package vault is Nexus's notes vault (seed 000's agents, SPEC section 3,
// issue 28): a folder of Markdown notes served by the original Nexus's
// agents, contentManager, vaultManager, vaultLibrarian and memoryManager
// (contract: ../shared/contracts/vault-agents.md).
//
// Every access to the folder goes through an os.Root, so no path, however
// written, and no symbolic link reaches outside it; paths are checked and
// put in one form first (path.go). Writes are atomic: a note is written
// to a temporary file beside it, synced, and renamed over it, so a reader
// sees the old note or the new one, never half of either. An edit is made
// against the content the client read: a note that changed since (its
// hash is not the one the client read, or not the one read at the start of
// the edit) is a CONFLICT that names both hashes, never a silent
// overwrite. Deleted notes and folders go to the vault's trash folder,
// .trash (Obsidian's own), where they can be restored.
package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// trashDir is the vault's trash folder.
const trashDir = ".trash"

// Vault is one folder of notes.
type Vault struct {
	// Name is the vault's name in the configuration; Dir its folder.
	Name, Dir string
	// ReadOnly refuses every write.
	ReadOnly bool
	root     *os.Root
	// mu serialises the writes of this process, and the lock file
	// (lock_unix.go) those of every process writing the vault, so that an
	// edit's check of the note's hash and its rename are one step for
	// every other edit made through Nexus, on any replica of this machine.
	mu  sync.Mutex
	now func() time.Time
	// crash, in tests, is called after each step of a change of several
	// files (journal.go), to stop the process there.
	crash func(step int)
}

// Open opens the vault in dir, which must be a folder. An interrupted move
// found there is rolled back first (journal.go).
func Open(name, dir string, readOnly bool) (*Vault, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("vault %q: %w", name, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("vault %q: %s is not a folder", name, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("vault %q: %w", name, err)
	}
	v := &Vault{Name: name, Dir: dir, ReadOnly: readOnly, root: root, now: time.Now}
	if !readOnly {
		// Under the lock: another process's move in progress is finished
		// (and its journal gone) before this one looks for a journal.
		unlock, err := v.exclusive()
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("vault %q: %w", name, err)
		}
		err = v.recover()
		unlock()
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("vault %q: recovering an interrupted move: %w", name, err)
		}
	}
	return v, nil
}

// Close releases the vault's folder.
func (v *Vault) Close() error { return v.root.Close() }

// Hash is the hash of a note's content that an edit names to say which
// version it was made against: "sha256:" and the SHA-256 in hex.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// File is a note or file as read.
type File struct {
	Path     string
	Content  []byte
	Hash     string
	Size     int64
	Modified time.Time
}

// Read reads the file at vault path p (already Clean).
func (v *Vault) Read(p string) (File, error) {
	st, err := v.root.Stat(p)
	if err != nil {
		return File{}, v.fsError(p, err)
	}
	if st.IsDir() {
		return File{}, errs.E(errs.BadRequest, "Not a file: %s", p)
	}
	b, err := v.root.ReadFile(p)
	if err != nil {
		return File{}, v.fsError(p, err)
	}
	return File{Path: p, Content: b, Hash: Hash(b), Size: int64(len(b)), Modified: st.ModTime()}, nil
}

// Stat describes the file or folder at p.
func (v *Vault) Stat(p string) (fs.FileInfo, error) {
	st, err := v.root.Stat(p)
	if err != nil {
		return nil, v.fsError(p, err)
	}
	return st, nil
}

// writable refuses a write to a read-only vault.
func (v *Vault) writable() error {
	if v.ReadOnly {
		return errs.E(errs.Forbidden, "Vault '%s' is read-only: it cannot be written", v.Name)
	}
	return nil
}

// Create writes a new file at p, with its parent folders, and never
// replaces one: an existing file is `File already exists: <p>`.
func (v *Vault) Create(p string, content []byte) (File, error) {
	if err := v.writable(); err != nil {
		return File{}, err
	}
	unlock, err := v.exclusive()
	if err != nil {
		return File{}, err
	}
	defer unlock()
	if err := v.mkdirs(path.Dir(p)); err != nil {
		return File{}, err
	}
	tmp, err := v.writeTemp(p, content)
	if err != nil {
		return File{}, err
	}
	defer v.root.Remove(tmp)
	// A hard link fails if p exists: creating and checking are one step,
	// for another process too.
	if err := v.root.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return File{}, errs.E(errs.Conflict, "File already exists: %s", p)
		}
		return File{}, v.fsError(p, err)
	}
	v.syncDir(path.Dir(p))
	return v.Read(p)
}

// exclusive takes the vault's write lock: this process's (mu), then every
// process's (lock). It returns the release of both.
func (v *Vault) exclusive() (func(), error) {
	v.mu.Lock()
	unlock, err := v.lock()
	if err != nil {
		v.mu.Unlock()
		return nil, err
	}
	return func() {
		unlock()
		v.mu.Unlock()
	}, nil
}

// Edit is a change to a note's content: given the content it is made
// against, the new content.
type Edit func(old []byte) ([]byte, error)

// Update changes the note at p with edit. expected, when not empty, is the
// hash of the content the client read: a note whose hash is another is a
// CONFLICT. The note is read, edited and written back atomically; if it
// changed on disk in the meantime (another editor saved it), the edit is a
// CONFLICT and nothing is written.
func (v *Vault) Update(p, expected string, edit Edit) (before, after File, err error) {
	if err := v.writable(); err != nil {
		return File{}, File{}, err
	}
	unlock, err := v.exclusive()
	if err != nil {
		return File{}, File{}, err
	}
	defer unlock()
	before, err = v.Read(p)
	if err != nil {
		return File{}, File{}, err
	}
	if expected != "" && expected != before.Hash {
		return File{}, File{}, conflict(p, expected, before.Hash)
	}
	content, err := edit(before.Content)
	if err != nil {
		return File{}, File{}, err
	}
	if err := v.replace(p, content, before.Hash); err != nil {
		return File{}, File{}, err
	}
	after, err = v.Read(p)
	return before, after, err
}

// replace writes content over the file at p, which must still have hash
// was when the new content is in place beside it. Called with mu held.
func (v *Vault) replace(p string, content []byte, was string) error {
	tmp, err := v.writeTemp(p, content)
	if err != nil {
		return err
	}
	defer v.root.Remove(tmp) // gone after the rename; there on a failure
	now, err := v.root.ReadFile(p)
	if err != nil {
		return v.fsError(p, err)
	}
	if h := Hash(now); h != was {
		return conflict(p, was, h)
	}
	if err := v.root.Rename(tmp, p); err != nil {
		return v.fsError(p, err)
	}
	v.syncDir(path.Dir(p))
	return nil
}

// conflict is the error of an edit made against content that is no longer
// the note's.
func conflict(p, read, now string) error {
	return errs.E(errs.Conflict, "CONFLICT: %s changed since it was read (read: %s, now: %s); read it again and redo the edit", p, read, now)
}

// writeTemp writes content to a new temporary file beside p and syncs it;
// it returns the temporary file's vault path.
func (v *Vault) writeTemp(p string, content []byte) (string, error) {
	dir, base := path.Split(p)
	for range 10 {
		tmp := fmt.Sprintf("%s.%s.nexus-%x.tmp", dir, base, rand.Uint64())
		f, err := v.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", v.fsError(p, err)
		}
		_, err = f.Write(content)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			v.root.Remove(tmp)
			return "", v.fsError(p, err)
		}
		return tmp, nil
	}
	return "", errs.E(errs.Internal, "could not create a temporary file beside %s", p)
}

// syncDir syncs a folder, so that a rename in it survives a crash (best
// effort: not every system can).
func (v *Vault) syncDir(dir string) {
	if dir == "" || dir == "/" {
		dir = "."
	}
	if f, err := v.root.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// mkdirs makes folder dir and its parents.
func (v *Vault) mkdirs(dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	if err := v.root.MkdirAll(dir, 0o755); err != nil {
		return v.fsError(dir, err)
	}
	return nil
}

// Mkdir makes folder p and its parents; existed says it was there.
func (v *Vault) Mkdir(p string) (existed bool, err error) {
	if err := v.writable(); err != nil {
		return false, err
	}
	if st, err := v.root.Stat(p); err == nil {
		if !st.IsDir() {
			return false, errs.E(errs.Conflict, "Path exists but is not a folder")
		}
		return true, nil
	}
	return false, v.mkdirs(p)
}

// Trash moves the file or folder at p to the trash, under the time of the
// deletion: .trash/<yyyymmdd-hhmmss.mmm>/<p>. It returns where it went.
func (v *Vault) Trash(p string) (string, error) {
	if err := v.writable(); err != nil {
		return "", err
	}
	unlock, err := v.exclusive()
	if err != nil {
		return "", err
	}
	defer unlock()
	return v.trash(p)
}

func (v *Vault) trash(p string) (string, error) {
	if _, err := v.root.Lstat(p); err != nil {
		return "", v.fsError(p, err)
	}
	to := v.trashPath(p)
	if err := v.mkdirs(path.Dir(to)); err != nil {
		return "", err
	}
	if err := v.root.Rename(p, to); err != nil {
		return "", v.fsError(p, err)
	}
	v.syncDir(path.Dir(p))
	return to, nil
}

// trashPath is where p goes in the trash now: under the time of the
// deletion, .trash/<yyyymmdd-hhmmss.mmm>/<p>, with a number after the time
// if that is taken.
func (v *Vault) trashPath(p string) string {
	stamp := v.now().UTC().Format("20060102-150405.000")
	to := path.Join(trashDir, stamp, p)
	for i := 2; ; i++ {
		if _, err := v.root.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			return to
		}
		to = path.Join(trashDir, fmt.Sprintf("%s-%d", stamp, i), p)
	}
}

// fsError turns a file system error about p into the error a client
// reads: a file not found, a path that leads out of the vault, or the
// system's own words.
func (v *Vault) fsError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.E(errs.NotFound, "File not found: %s", p)
	case strings.Contains(err.Error(), "path escapes from parent"):
		// os.Root's refusal of a symbolic link that leads out of the
		// vault (its error has no exported value to test).
		return errs.E(errs.Forbidden, "invalid path %q: it leads out of the vault through a symbolic link", p)
	case errors.Is(err, fs.ErrPermission):
		return errs.E(errs.Forbidden, "%s: permission denied", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errs.E(errs.Internal, "%s: %s %v", p, pe.Op, pe.Err)
	}
	return errs.E(errs.Internal, "%s: %v", p, err)
}
