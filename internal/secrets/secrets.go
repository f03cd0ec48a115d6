// Package secrets seals BYOK credentials (users' API keys, base URLs) with
// envelope encryption, so that no secret is ever stored in plain text.
//
// # Scheme
//
// Every sealed value has its own random 32-byte data key: the plaintext is
// encrypted with AES-256-GCM under that data key, and the data key is then
// wrapped (AES-256-GCM again, with its own nonce) by a key-encryption key
// (KEK). KEKs are versioned (1, 2, ...) and kept in a [Keyring] outside the
// database: a 0600 file in the data directory, or the NEXUS_KEYRING
// environment variable for replicas. A [Sealed] value records the version
// of the KEK that wrapped its data key.
//
// Additional authenticated data (AAD) binds a sealed value to its owner and
// purpose, e.g. "user:42/credential:7": a value copied to another row, user
// or purpose does not open. The KEK version is bound to the wrapped key the
// same way, so a relabelled version fails too.
//
// Rotation is cheap and needs no downtime: [Keyring.Rotate] adds a new
// current KEK, old versions stay to unwrap, and [Keyring.Rewrap] re-wraps a
// value's data key under the current KEK without touching its ciphertext.
//
// # Threat model
//
// A copy of the database (dump, backup, replica, SQL injection that reads)
// reveals no secret: it holds only wrapped keys and ciphertexts, and
// fingerprints that are keyed by the keyring ([Keyring.Fingerprint]). Any
// change to a stored value, or moving it to another owner, is detected
// ([ErrTampered]). An attacker who holds both the database and the keyring,
// or who runs code in the server process, reads every secret: the keyring
// must stay outside the database and its backups. Errors and string forms
// never carry key material or plaintext.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

const (
	keySize     = 32 // AES-256 data keys and KEKs
	nonceSize   = 12 // AES-GCM standard nonce
	tagSize     = 16 // AES-GCM tag
	wrappedSize = nonceSize + keySize + tagSize

	// sealedPrefix starts the string form of a Sealed value; its digit is the
	// format version, so a later format can be told apart.
	sealedPrefix = "nxe1."

	wrapLabel = "nexus/secrets/wrap/v1\x00"
	dataLabel = "nexus/secrets/data/v1\x00"
)

var (
	// ErrTampered reports a sealed value that fails authentication: a byte
	// changed anywhere, a truncated field, a KEK version relabelled to another
	// existing version, or opening with AAD other than the one it was sealed
	// with (AES-GCM cannot tell these apart, deliberately).
	ErrTampered = errors.New("sealed value failed authentication: tampered, corrupted, or opened with the wrong AAD")

	// ErrUnknownVersion reports a sealed value whose KEK version is not in
	// the keyring (a keyring older than the value, or another keyring).
	ErrUnknownVersion = errors.New("key version not in the keyring")

	// ErrMalformed reports a string that is not the string form of a Sealed
	// value (see [ParseSealed]).
	ErrMalformed = errors.New("not a sealed value")

	// ErrNoAAD reports a Seal or Open without AAD: every sealed value must be
	// bound to its owner and purpose.
	ErrNoAAD = errors.New(`AAD is required: bind the value to its owner and purpose, e.g. "user:ID/credential:ID"`)
)

// Sealed is a secret encrypted under a data key that is wrapped by the KEK
// of version KeyVersion. It holds no secret in the clear; its String form
// is what a database column stores.
type Sealed struct {
	// KeyVersion is the version of the KEK that wrapped the data key.
	KeyVersion int
	// WrappedKey is the data key wrapped by the KEK: its nonce, then the
	// AES-GCM ciphertext and tag (60 bytes).
	WrappedKey []byte
	// Nonce is the AES-GCM nonce of Ciphertext (12 bytes).
	Nonce []byte
	// Ciphertext is the plaintext encrypted under the data key, with its tag.
	Ciphertext []byte
}

// String returns the compact string form of s for a database column:
// "nxe1." then base64url (unpadded) of the version as a varint, the wrapped
// key, the nonce and the ciphertext. [ParseSealed] reads it back.
func (s Sealed) String() string {
	b := binary.AppendUvarint(nil, uint64(max(s.KeyVersion, 0)))
	b = append(b, s.WrappedKey...)
	b = append(b, s.Nonce...)
	b = append(b, s.Ciphertext...)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseSealed reads the string form written by [Sealed.String]. It checks
// the form only; [Keyring.Open] authenticates the content. Errors wrap
// [ErrMalformed].
func ParseSealed(text string) (Sealed, error) {
	rest, ok := strings.CutPrefix(text, sealedPrefix)
	if !ok {
		return Sealed{}, fmt.Errorf("secrets: parse: missing the %q prefix: %w", sealedPrefix, ErrMalformed)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	if err != nil || base64.RawURLEncoding.EncodedLen(len(b)) != len(rest) { // the decoder skips \r and \n
		return Sealed{}, fmt.Errorf("secrets: parse: invalid base64url: %w", ErrMalformed)
	}
	v, n := binary.Uvarint(b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) || v == 0 || v > math.MaxInt32 {
		return Sealed{}, fmt.Errorf("secrets: parse: invalid key version: %w", ErrMalformed)
	}
	b = b[n:]
	if len(b) < wrappedSize+nonceSize+tagSize {
		return Sealed{}, fmt.Errorf("secrets: parse: too short (%d bytes after the version): %w", len(b), ErrMalformed)
	}
	return Sealed{
		KeyVersion: int(v),
		WrappedKey: clone(b[:wrappedSize]),
		Nonce:      clone(b[wrappedSize : wrappedSize+nonceSize]),
		Ciphertext: clone(b[wrappedSize+nonceSize:]),
	}, nil
}

// Seal encrypts plaintext under a fresh data key, bound to aad, and wraps
// the data key with the current KEK. aad must not be empty ([ErrNoAAD]).
func (k *Keyring) Seal(plaintext, aad []byte) (Sealed, error) {
	if len(aad) == 0 {
		return Sealed{}, fmt.Errorf("secrets: seal: %w", ErrNoAAD)
	}
	kek := k.currentKEK()
	dataKey := randomBytes(keySize)
	defer clear(dataKey)
	aead, err := newGCM(dataKey)
	if err != nil {
		return Sealed{}, fmt.Errorf("secrets: seal: %w", err)
	}
	nonce := randomBytes(nonceSize)
	ciphertext := aead.Seal(nil, nonce, plaintext, dataAAD(aad))
	return Sealed{
		KeyVersion: kek.version,
		WrappedKey: kek.wrap(dataKey),
		Nonce:      nonce,
		Ciphertext: ciphertext,
	}, nil
}

// Open unwraps the data key of s with the KEK of s.KeyVersion and decrypts
// the plaintext, which must have been sealed with the same aad. Errors wrap
// [ErrUnknownVersion], [ErrTampered] or [ErrNoAAD], and never contain key
// material or plaintext.
func (k *Keyring) Open(s Sealed, aad []byte) ([]byte, error) {
	if len(aad) == 0 {
		return nil, fmt.Errorf("secrets: open: %w", ErrNoAAD)
	}
	dataKey, err := k.unwrap(s)
	if err != nil {
		return nil, fmt.Errorf("secrets: open: %w", err)
	}
	defer clear(dataKey)
	if len(s.Nonce) != nonceSize || len(s.Ciphertext) < tagSize {
		return nil, fmt.Errorf("secrets: open: nonce or ciphertext has the wrong length: %w", ErrTampered)
	}
	aead, err := newGCM(dataKey)
	if err != nil {
		return nil, fmt.Errorf("secrets: open: %w", err)
	}
	plaintext, err := aead.Open(nil, s.Nonce, s.Ciphertext, dataAAD(aad))
	if err != nil {
		return nil, fmt.Errorf("secrets: open: ciphertext: %w", ErrTampered)
	}
	return plaintext, nil
}

// Rewrap unwraps the data key of s with the KEK of its version and wraps it
// with the current KEK, leaving the nonce and ciphertext as they are: a
// rotation re-wraps 60 bytes per credential and never re-encrypts a secret.
// A value already under the current version is returned unchanged, after
// its wrapped key is authenticated. Rewrap cannot check the ciphertext (it
// does not know the AAD); a tampered ciphertext still fails at Open.
func (k *Keyring) Rewrap(s Sealed) (Sealed, error) {
	dataKey, err := k.unwrap(s)
	if err != nil {
		return Sealed{}, fmt.Errorf("secrets: rewrap: %w", err)
	}
	defer clear(dataKey)
	kek := k.currentKEK()
	if s.KeyVersion == kek.version {
		return s, nil
	}
	return Sealed{
		KeyVersion: kek.version,
		WrappedKey: kek.wrap(dataKey),
		Nonce:      s.Nonce,
		Ciphertext: s.Ciphertext,
	}, nil
}

// unwrap returns the data key of s, authenticated with the KEK of its
// version and the version itself.
func (k *Keyring) unwrap(s Sealed) ([]byte, error) {
	kek, err := k.kek(s.KeyVersion)
	if err != nil {
		return nil, err
	}
	if len(s.WrappedKey) != wrappedSize {
		return nil, fmt.Errorf("wrapped data key has the wrong length: %w", ErrTampered)
	}
	dataKey, err := kek.aead.Open(nil, s.WrappedKey[:nonceSize], s.WrappedKey[nonceSize:], wrapAAD(kek.version))
	if err != nil {
		return nil, fmt.Errorf("wrapped data key: %w", ErrTampered)
	}
	return dataKey, nil
}

// wrap returns the data key wrapped by the KEK: nonce, then ciphertext and
// tag, bound to the KEK's version.
func (kek *kek) wrap(dataKey []byte) []byte {
	nonce := randomBytes(nonceSize)
	return kek.aead.Seal(nonce, nonce, dataKey, wrapAAD(kek.version))
}

func wrapAAD(version int) []byte {
	return binary.BigEndian.AppendUint64([]byte(wrapLabel), uint64(version))
}

func dataAAD(aad []byte) []byte {
	return append([]byte(dataLabel), aad...)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	return aead, nil
}

// randomBytes returns n bytes from crypto/rand, which never fails (it
// crashes the program rather than return predictable bytes).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
