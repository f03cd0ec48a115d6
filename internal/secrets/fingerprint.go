package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Fingerprint returns a short identifier of secret: the first 8 bytes of
// HMAC-SHA256 under a key derived (HKDF-SHA256) from the keyring's version 1
// KEK, in hex (16 characters). Equal secrets have equal fingerprints under
// one keyring, so an owner can tell which key is which, or that two
// credentials hold the same key, and rotation keeps fingerprints.
//
// Why HMAC and not a bare hash: SHA-256 of a secret is a public function,
// so anyone holding a fingerprint (a database dump, a screenshot of a list)
// could test guesses against it offline (a base URL, a short or reused key)
// and match a key leaked elsewhere to its owner here. Under a key kept
// outside the database, a fingerprint says nothing to anyone without the
// keyring. 64 bits keep it short; collisions among one owner's credentials
// are negligible.
func (k *Keyring) Fingerprint(secret []byte) string {
	mac := hmac.New(sha256.New, k.fpKey)
	mac.Write(secret)
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// maskMinLen is the shortest secret (after a known prefix, in characters)
// whose last 4 characters Mask shows: at most a quarter of it.
const maskMinLen = 16

// fullMask stands for a secret too short to show any of; its length is
// fixed, so it does not tell the secret's length either.
const fullMask = "****"

// Mask returns secret for display: a known provider prefix, "…", and the
// last 4 characters ("sk-…AbCd"). A secret whose remainder is shorter than
// 16 characters shows nothing: "****".
func Mask(secret string) string {
	// Public, provider-defined key prefixes, kept so that an owner recognises
	// the kind of key; the longest match wins.
	prefix := ""
	for _, p := range [...]string{"sk-ant-", "sk-proj-", "sk-or-", "sk-"} {
		if strings.HasPrefix(secret, p) && len(p) > len(prefix) {
			prefix = p
		}
	}
	rest := secret[len(prefix):]
	if !utf8.ValidString(rest) || utf8.RuneCountInString(rest) < maskMinLen {
		return fullMask
	}
	runes := []rune(rest)
	return prefix + "…" + string(runes[len(runes)-4:])
}
