package secrets

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// keyringFormat names the keyring document's format, in its "format" field.
const keyringFormat = "nexus-keyring/1"

// maxKeyringSize bounds a keyring file or NEXUS_KEYRING value (a keyring of
// thousands of versions is far smaller).
const maxKeyringSize = 1 << 20

var (
	// ErrBadKeyring reports a keyring document that cannot be used: not
	// JSON, another format, or keys and versions that do not add up.
	ErrBadKeyring = errors.New("invalid keyring")

	// ErrInsecureFile reports a keyring file that group or others may read.
	ErrInsecureFile = errors.New("keyring file is readable by group or others")
)

// Keyring holds the versioned key-encryption keys (KEKs). Versions run from
// 1 to the newest; the current version wraps new data keys, and every
// version unwraps. It is safe for concurrent use. Its String form shows
// versions, never keys, and it has no JSON form: the only way to write its
// keys is [Keyring.Save].
type Keyring struct {
	mu      sync.RWMutex
	keks    []*kek // keks[i] has version i+1
	current int
	fpKey   []byte // HMAC key of Fingerprint, derived from version 1
}

// kek is one version of the key-encryption key. It is never changed once
// made.
type kek struct {
	version int
	key     []byte
	created time.Time
	aead    cipher.AEAD
}

// keyringDoc is the keyring file and NEXUS_KEYRING content:
//
//	{"format": "nexus-keyring/1", "current": 2,
//	 "keys": [{"version": 1, "created": "2026-11-23T08:00:00Z", "key": "<base64 of 32 bytes>"}, ...]}
type keyringDoc struct {
	Format  string   `json:"format"`
	Current int      `json:"current"`
	Keys    []keyDoc `json:"keys"`
}

type keyDoc struct {
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	Key     string    `json:"key"`
}

// New returns a keyring with one fresh random KEK, version 1, current.
func New() *Keyring {
	k := &Keyring{}
	k.add(randomBytes(keySize), time.Now().UTC())
	k.current = 1
	k.deriveFingerprintKey()
	return k
}

// Load reads the keyring file at path. It refuses a file that group or
// others may read ([ErrInsecureFile]), with the chmod that fixes it.
func Load(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: keyring: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secrets: keyring: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets: keyring %s is not a regular file: %w", path, ErrBadKeyring)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("secrets: keyring %s has mode %04o: %w; only its owner may read it: run chmod 600 %s",
			path, perm, ErrInsecureFile, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyringSize+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: keyring: %w", err)
	}
	k, err := parseKeyring(data)
	if err != nil {
		return nil, fmt.Errorf("secrets: keyring %s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreate reads the keyring file at path, or, when there is none,
// creates it (and its directory, mode 0700) with one fresh KEK and file mode
// 0600. When several processes create it at once, one file wins and all of
// them use it. Errors are those of [Load].
func LoadOrCreate(path string) (*Keyring, error) {
	k, err := Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secrets: keyring: %w", err)
	}
	k = New()
	err = writeFile(path, k.encode(), false)
	if errors.Is(err, fs.ErrExist) {
		return Load(path) // another process created it first
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: keyring: create: %w", err)
	}
	return k, nil
}

// FromEnv parses a keyring given as text, in the format of the keyring file:
// the NEXUS_KEYRING environment variable of replicas, which share one
// keyring. Errors wrap [ErrBadKeyring] and never quote the text.
func FromEnv(value string) (*Keyring, error) {
	k, err := parseKeyring([]byte(value))
	if err != nil {
		return nil, fmt.Errorf("secrets: NEXUS_KEYRING: %w", err)
	}
	return k, nil
}

// Save writes the keyring to path atomically, mode 0600: a temporary file
// in the same directory, synced, then renamed over path. A reader sees the
// old file or the new one, never a part.
func (k *Keyring) Save(path string) error {
	if err := writeFile(path, k.encode(), true); err != nil {
		return fmt.Errorf("secrets: keyring: save: %w", err)
	}
	return nil
}

// Rotate adds a new random KEK and makes it current; it returns its version.
// Older versions stay, to unwrap values sealed before; [Keyring.Rewrap]
// moves them to the new version. Save the keyring, and give it to every
// replica, before sealing with it.
func (k *Keyring) Rotate() (version int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.add(randomBytes(keySize), time.Now().UTC())
	k.current = len(k.keks)
	return k.current
}

// Current returns the version of the KEK that wraps new data keys.
func (k *Keyring) Current() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// Versions returns the number of KEK versions, 1 to Versions().
func (k *Keyring) Versions() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.keks)
}

// String describes the keyring without its keys, so that logging or
// printing it by mistake discloses nothing.
func (k *Keyring) String() string {
	return fmt.Sprintf("secrets.Keyring{current: %d, versions: %d}", k.Current(), k.Versions())
}

// GoString is String, for %#v.
func (k *Keyring) GoString() string { return k.String() }

func (k *Keyring) currentKEK() *kek {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keks[k.current-1]
}

func (k *Keyring) kek(version int) (*kek, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if version < 1 || version > len(k.keks) {
		return nil, fmt.Errorf("version %d (the keyring has 1 to %d): %w", version, len(k.keks), ErrUnknownVersion)
	}
	return k.keks[version-1], nil
}

// add appends the next version; the caller holds the lock or owns k.
func (k *Keyring) add(key []byte, created time.Time) {
	aead, err := newGCM(key)
	if err != nil {
		panic(err) // unreachable: every key is 32 bytes
	}
	k.keks = append(k.keks, &kek{version: len(k.keks) + 1, key: key, created: created, aead: aead})
}

// deriveFingerprintKey derives the Fingerprint key from version 1, which a
// keyring always keeps, so fingerprints outlive rotations.
func (k *Keyring) deriveFingerprintKey() {
	key, err := hkdf.Key(sha256.New, k.keks[0].key, nil, "nexus/secrets/fingerprint/v1", 32)
	if err != nil {
		panic(err) // unreachable: 32 bytes of SHA-256 HKDF output
	}
	k.fpKey = key
}

func (k *Keyring) encode() []byte {
	k.mu.RLock()
	doc := keyringDoc{Format: keyringFormat, Current: k.current}
	for _, kek := range k.keks {
		doc.Keys = append(doc.Keys, keyDoc{Version: kek.version, Created: kek.created, Key: base64.StdEncoding.EncodeToString(kek.key)})
	}
	k.mu.RUnlock()
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // unreachable: plain fields
	}
	return append(data, '\n')
}

// parseKeyring reads a keyring document. Its errors describe what is wrong
// by field and offset, and never quote the document, which holds keys.
func parseKeyring(data []byte) (*Keyring, error) {
	if len(data) > maxKeyringSize {
		return nil, fmt.Errorf("larger than %d bytes: %w", maxKeyringSize, ErrBadKeyring)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("empty: %w", ErrBadKeyring)
	}
	var doc keyringDoc
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, fmt.Errorf("content after the JSON object: %w", ErrBadKeyring)
	}
	if doc.Format != keyringFormat {
		return nil, fmt.Errorf("format is not %q: %w", keyringFormat, ErrBadKeyring)
	}
	if len(doc.Keys) == 0 {
		return nil, fmt.Errorf("no keys: %w", ErrBadKeyring)
	}
	slices.SortFunc(doc.Keys, func(a, b keyDoc) int { return a.Version - b.Version })
	k := &Keyring{}
	for i, kd := range doc.Keys {
		if kd.Version != i+1 {
			return nil, fmt.Errorf("key versions must run 1, 2, ... without gaps or repeats; found %d at position %d: %w", kd.Version, i+1, ErrBadKeyring)
		}
		key, err := base64.StdEncoding.Strict().DecodeString(kd.Key)
		if err != nil || len(key) != keySize {
			return nil, fmt.Errorf("key of version %d is not base64 of %d bytes: %w", kd.Version, keySize, ErrBadKeyring)
		}
		if isZero(key) {
			return nil, fmt.Errorf("key of version %d is all zeros: %w", kd.Version, ErrBadKeyring)
		}
		k.add(key, kd.Created)
	}
	if doc.Current < 1 || doc.Current > len(k.keks) {
		return nil, fmt.Errorf("current version %d is not among the keys (1 to %d): %w", doc.Current, len(k.keks), ErrBadKeyring)
	}
	k.current = doc.Current
	k.deriveFingerprintKey()
	return k, nil
}

// jsonError describes a decoding error without the decoder's own message,
// which may quote a character of the document.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("not valid JSON (at byte %d): %w", syntax.Offset, ErrBadKeyring)
	case errors.As(err, &typ):
		return fmt.Errorf("field %q has the wrong type: %w", typ.Field, ErrBadKeyring)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("truncated JSON: %w", ErrBadKeyring)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%s: %w", strings.TrimPrefix(err.Error(), "json: "), ErrBadKeyring)
	}
	return fmt.Errorf("not a keyring document: %w", ErrBadKeyring)
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// writeFile writes data to path through a temporary file of mode 0600 in
// the same directory. With replace it renames over any existing file;
// without, it links the file into place and fails with fs.ErrExist when
// path exists, so that concurrent creators do not overwrite each other.
func writeFile(path string, data []byte, replace bool) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		_ = os.Remove(tmp.Name()) // after a rename or link, a no-op or the spare name
	}()
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// A file system without hard links: check, then rename (racy
			// only between two first runs on such a file system).
			if _, statErr := os.Lstat(path); statErr == nil {
				return fs.ErrExist
			}
			err = os.Rename(tmp.Name(), path)
		}
	}
	if err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
