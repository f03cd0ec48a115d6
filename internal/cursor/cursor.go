// Package cursor is the one rule for pagination cursors: opaque to clients,
// tamper-evident, and bound to the query they were issued for.
//
// A cursor is base64url (no padding) of a version byte, a position (8 bytes,
// big endian) and the first 16 bytes of HMAC-SHA256(key, label | version |
// position | scope), where scope is the query's identity (its filters, each
// length-prefixed so that no two scopes encode alike). A cursor altered in
// any byte, or presented with another query, does not verify.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

const (
	version = 1
	macLen  = 16
	size    = 1 + 8 + macLen
)

// ErrInvalid is returned for a cursor that was not issued by this signer for
// this scope.
var ErrInvalid = errors.New("is not a cursor this server issued for this query; start again without one")

// Signer issues and checks cursors of one kind.
type Signer struct {
	// Key is the HMAC key (a server secret that outlives restarts).
	Key []byte
	// Label separates kinds of cursors signed with one key.
	Label string
}

func (s Signer) mac(payload []byte, scope []string) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(s.Label))
	m.Write([]byte{0})
	m.Write(payload)
	for _, v := range scope {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(v)))
		m.Write(n[:])
		m.Write([]byte(v))
	}
	return m.Sum(nil)[:macLen]
}

// Encode returns the cursor of position pos in the query identified by
// scope.
func (s Signer) Encode(pos int64, scope ...string) string {
	b := make([]byte, 0, size)
	b = append(b, version)
	b = binary.BigEndian.AppendUint64(b, uint64(pos))
	b = append(b, s.mac(b, scope)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the position of cursor c, issued for scope; a cursor that
// does not verify, whose position is negative, or that is not written in its
// one canonical form, is [ErrInvalid].
func (s Signer) Decode(c string, scope ...string) (int64, error) {
	// The decoder skips CR and LF wherever they are, so a cursor with line
	// breaks inserted would decode too: only the exact encoding is one.
	if len(c) != base64.RawURLEncoding.EncodedLen(size) {
		return 0, ErrInvalid
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || len(b) != size || b[0] != version {
		return 0, ErrInvalid
	}
	payload, mac := b[:1+8], b[1+8:]
	if !hmac.Equal(mac, s.mac(payload, scope)) {
		return 0, ErrInvalid
	}
	pos := int64(binary.BigEndian.Uint64(payload[1:]))
	if pos < 0 {
		return 0, ErrInvalid
	}
	return pos, nil
}
