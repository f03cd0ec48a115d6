package secrets_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/secrets"
)

func TestFingerprint(t *testing.T) {
	k := secrets.New()
	key := []byte("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")
	fp := k.Fingerprint(key)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(fp) {
		t.Fatalf("Fingerprint = %q, want 16 hex digits", fp)
	}
	if k.Fingerprint([]byte(string(key))) != fp {
		t.Fatal("equal secrets have different fingerprints")
	}
	if k.Fingerprint([]byte("sk-proj-abcdefghijklmnopqrstuvwxyz012345678A")) == fp {
		t.Fatal("different secrets share a fingerprint")
	}
	if secrets.New().Fingerprint(key) == fp {
		t.Fatal("another keyring gives the same fingerprint")
	}
	bare := sha256.Sum256(key)
	if strings.HasPrefix(hex.EncodeToString(bare[:]), fp) {
		t.Fatal("the fingerprint is a bare SHA-256")
	}
	if strings.Contains(fp, "abcd") && strings.Contains(string(key), fp) {
		t.Fatal("the fingerprint quotes the secret")
	}
	k.Rotate()
	if k.Fingerprint(key) != fp {
		t.Fatal("rotation changed the fingerprint")
	}
	if cloneKeyring(t, k).Fingerprint(key) != fp {
		t.Fatal("a saved and loaded keyring gives another fingerprint")
	}
	if k.Fingerprint(nil) != k.Fingerprint([]byte{}) || k.Fingerprint(nil) == fp {
		t.Fatal("empty secret fingerprint")
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct{ secret, want string }{
		{"", "****"},
		{"abc", "****"},
		{"sk-", "****"},
		{"sk-AbCd", "****"},
		{"sk-0123456789AbCd", "****"},       // 14 after the prefix: too short
		{"sk-0123456789abAbCd", "sk-…AbCd"}, // 16 after the prefix
		{"0123456789abcdeF", "…cdeF"},       // no known prefix, 16 characters
		{"0123456789abcde", "****"},         // 15
		{"sk-proj-0123456789abcdefghijWXYZ", "sk-proj-…WXYZ"},
		{"sk-ant-api03-0123456789abcdefghij-AAbb", "sk-ant-…AAbb"},
		{"sk-or-v1-0123456789abcdef0123", "sk-or-…0123"},
		{"https://llm.example.edu/v1", "…u/v1"},    // a URL key is a secret like any other
		{"clé-secrète-très-longue-ééééé", "…éééé"}, // characters, not bytes
		{"\xff\xfe0123456789abcdefgh", "****"},     // invalid UTF-8: nothing shown
	} {
		if got := secrets.Mask(tc.secret); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.secret, got, tc.want)
		}
	}
}
