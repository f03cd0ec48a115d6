package secrets_test

import (
	"errors"
	"testing"

	"github.com/nexus-mcp/nexus/internal/secrets"
)

// FuzzParseSealed: ParseSealed never panics, accepts only what String
// writes (the form round-trips exactly), and Open of whatever it accepts
// never panics and never succeeds on a value this keyring did not seal.
func FuzzParseSealed(f *testing.F) {
	k := secrets.New()
	s, _ := k.Seal([]byte("sk-seed"), aad)
	for _, seed := range []string{s.String(), "", "nxe1.", "nxe1.AA", "nxe1.____", "nxe2." + s.String()[5:], s.String()[:40]} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parsed, err := secrets.ParseSealed(text)
		if err != nil {
			if !errors.Is(err, secrets.ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if parsed.String() != text {
			t.Fatalf("String(ParseSealed(%q)) = %q", text, parsed.String())
		}
		if _, err := k.Rewrap(parsed); err == nil && text != s.String() {
			// Only a value this keyring wrapped authenticates.
			t.Fatalf("Rewrap accepted a forged value %q", text)
		}
		got, err := k.Open(parsed, aad)
		if err == nil && (text != s.String() || string(got) != "sk-seed") {
			t.Fatalf("Open accepted a forged value %q", text)
		}
	})
}

// FuzzFromEnv: FromEnv never panics; what it accepts is a usable keyring
// that survives a save and reload.
func FuzzFromEnv(f *testing.F) {
	k := secrets.New()
	k.Rotate()
	f.Add(saved(f, k))
	for _, seed := range []string{"", "{}", "[]", "null", `{"format":"nexus-keyring/1","current":1,"keys":[{"version":1,"key":"AAEC"}]}`,
		`{"format":"nexus-keyring/1","current":1,"keys":[{"version":1,"key":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="}]}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		k, err := secrets.FromEnv(value)
		if err != nil {
			if !errors.Is(err, secrets.ErrBadKeyring) {
				t.Fatalf("error not ErrBadKeyring: %v", err)
			}
			return
		}
		if k.Current() < 1 || k.Current() > k.Versions() {
			t.Fatalf("current %d of %d versions", k.Current(), k.Versions())
		}
		s, err := k.Seal([]byte("x"), aad)
		if err != nil {
			t.Fatal(err)
		}
		again := cloneKeyring(t, k)
		if got, err := again.Open(s, aad); err != nil || string(got) != "x" {
			t.Fatalf("reloaded keyring: Open = %q, %v", got, err)
		}
	})
}
