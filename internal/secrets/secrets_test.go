package secrets_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/secrets"
)

var aad = []byte("user:42/credential:7")

func TestSealOpenRoundTrip(t *testing.T) {
	k := secrets.New()
	for _, tc := range []struct {
		name      string
		plaintext []byte
		aad       []byte
	}{
		{"empty", []byte{}, aad},
		{"nil", nil, aad},
		{"openai key", []byte("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"), aad},
		{"base url", []byte("https://llm.example.edu/v1"), []byte("user:1/credential:2/base_url")},
		{"binary", []byte{0, 1, 2, 255, 254, 0}, []byte{0}},
		{"unicode", []byte("clé secrète 🔑"), []byte("user:é")},
		{"large", bytes.Repeat([]byte("x"), 1<<20), aad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := k.Seal(tc.plaintext, tc.aad)
			if err != nil {
				t.Fatal(err)
			}
			if s.KeyVersion != 1 || len(s.WrappedKey) != 60 || len(s.Nonce) != 12 || len(s.Ciphertext) != len(tc.plaintext)+16 {
				t.Fatalf("sealed shape: version %d, wrapped %d, nonce %d, ciphertext %d",
					s.KeyVersion, len(s.WrappedKey), len(s.Nonce), len(s.Ciphertext))
			}
			got, err := k.Open(s, tc.aad)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.plaintext) {
				t.Fatalf("Open = %q, want %q", got, tc.plaintext)
			}
			parsed, err := secrets.ParseSealed(s.String())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := k.Open(parsed, tc.aad); err != nil || !bytes.Equal(got, tc.plaintext) {
				t.Fatalf("Open(ParseSealed(String)) = %q, %v", got, err)
			}
		})
	}
}

func TestSealIsFresh(t *testing.T) {
	k := secrets.New()
	a, _ := k.Seal([]byte("same"), aad)
	b, _ := k.Seal([]byte("same"), aad)
	if bytes.Equal(a.WrappedKey, b.WrappedKey) || bytes.Equal(a.Nonce, b.Nonce) || bytes.Equal(a.Ciphertext, b.Ciphertext) {
		t.Fatal("two seals of one plaintext share a data key, nonce or ciphertext")
	}
}

// TestTamperEveryByte flips each bit of each byte of every field, and
// truncates and extends each field: every change is ErrTampered.
func TestTamperEveryByte(t *testing.T) {
	k := secrets.New()
	s, err := k.Seal([]byte("sk-ant-api03-secret"), aad)
	if err != nil {
		t.Fatal(err)
	}
	fields := []struct {
		name string
		get  func(*secrets.Sealed) *[]byte
	}{
		{"wrapped key", func(s *secrets.Sealed) *[]byte { return &s.WrappedKey }},
		{"nonce", func(s *secrets.Sealed) *[]byte { return &s.Nonce }},
		{"ciphertext", func(s *secrets.Sealed) *[]byte { return &s.Ciphertext }},
	}
	for _, f := range fields {
		n := len(*f.get(&s))
		for i := range n {
			for bit := range 8 {
				c := copySealed(s)
				(*f.get(&c))[i] ^= 1 << bit
				if _, err := k.Open(c, aad); !errors.Is(err, secrets.ErrTampered) {
					t.Fatalf("%s byte %d bit %d flipped: err = %v, want ErrTampered", f.name, i, bit, err)
				}
			}
		}
		for _, change := range []struct {
			name string
			f    func([]byte) []byte
		}{
			{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
			{"extended", func(b []byte) []byte { return append(b, 0) }},
			{"empty", func([]byte) []byte { return nil }},
		} {
			c := copySealed(s)
			*f.get(&c) = change.f(*f.get(&c))
			if _, err := k.Open(c, aad); !errors.Is(err, secrets.ErrTampered) {
				t.Errorf("%s %s: err = %v, want ErrTampered", f.name, change.name, err)
			}
		}
	}
}

func TestTamperVersion(t *testing.T) {
	k := secrets.New()
	s, _ := k.Seal([]byte("secret"), aad)
	k.Rotate()
	k.Rotate()
	for _, tc := range []struct {
		version int
		want    error
	}{
		{2, secrets.ErrTampered}, // another existing KEK
		{3, secrets.ErrTampered},
		{4, secrets.ErrUnknownVersion},
		{0, secrets.ErrUnknownVersion},
		{-1, secrets.ErrUnknownVersion},
		{1 << 40, secrets.ErrUnknownVersion},
	} {
		c := copySealed(s)
		c.KeyVersion = tc.version
		if _, err := k.Open(c, aad); !errors.Is(err, tc.want) {
			t.Errorf("version %d: Open err = %v, want %v", tc.version, err, tc.want)
		}
		if _, err := k.Rewrap(c); !errors.Is(err, tc.want) {
			t.Errorf("version %d: Rewrap err = %v, want %v", tc.version, err, tc.want)
		}
	}
	if _, err := k.Open(s, aad); err != nil {
		t.Fatalf("untouched value: %v", err)
	}

	// A relabelled version fails even where two versions hold the same key
	// bytes: the version is bound to the wrapped key.
	doc := saved(t, secrets.New())
	key := between(doc, `"key": "`, `"`)
	twins, err := secrets.FromEnv(`{"format": "nexus-keyring/1", "current": 1, "keys": [
		{"version": 1, "created": "2026-01-01T00:00:00Z", "key": "` + key + `"},
		{"version": 2, "created": "2026-01-01T00:00:00Z", "key": "` + key + `"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	s, _ = twins.Seal([]byte("secret"), aad)
	s.KeyVersion = 2
	if _, err := twins.Open(s, aad); !errors.Is(err, secrets.ErrTampered) {
		t.Fatalf("version relabelled between equal keys: err = %v, want ErrTampered", err)
	}
}

func TestWrongAAD(t *testing.T) {
	k := secrets.New()
	s, _ := k.Seal([]byte("secret"), []byte("user:1/credential:1"))
	for _, other := range []string{"user:1/credential:2", "user:2/credential:1", "user:1/credential:1 ", "user:1/credential:", "x"} {
		if _, err := k.Open(s, []byte(other)); !errors.Is(err, secrets.ErrTampered) {
			t.Errorf("AAD %q: err = %v, want ErrTampered", other, err)
		}
	}
	if _, err := k.Open(s, nil); !errors.Is(err, secrets.ErrNoAAD) {
		t.Errorf("no AAD: Open err = %v, want ErrNoAAD", err)
	}
	if _, err := k.Seal([]byte("secret"), []byte{}); !errors.Is(err, secrets.ErrNoAAD) {
		t.Errorf("no AAD: Seal err = %v, want ErrNoAAD", err)
	}
}

func TestOtherKeyring(t *testing.T) {
	s, _ := secrets.New().Seal([]byte("secret"), aad)
	if _, err := secrets.New().Open(s, aad); !errors.Is(err, secrets.ErrTampered) {
		t.Fatalf("another keyring's value: err = %v, want ErrTampered", err)
	}
}

func TestRotateAndRewrap(t *testing.T) {
	k := secrets.New()
	old, _ := k.Seal([]byte("old secret"), aad)
	before := cloneKeyring(t, k)
	if v := k.Rotate(); v != 2 || k.Current() != 2 || k.Versions() != 2 {
		t.Fatalf("Rotate = %d, Current %d, Versions %d; want 2, 2, 2", v, k.Current(), k.Versions())
	}
	if got, err := k.Open(old, aad); err != nil || string(got) != "old secret" {
		t.Fatalf("Open of a version-1 value after rotation = %q, %v", got, err)
	}
	fresh, _ := k.Seal([]byte("new secret"), aad)
	if fresh.KeyVersion != 2 {
		t.Fatalf("Seal after rotation used version %d", fresh.KeyVersion)
	}
	rewrapped, err := k.Rewrap(old)
	if err != nil {
		t.Fatal(err)
	}
	if rewrapped.KeyVersion != 2 || bytes.Equal(rewrapped.WrappedKey, old.WrappedKey) {
		t.Fatalf("Rewrap kept version %d or the wrapped key", rewrapped.KeyVersion)
	}
	if !bytes.Equal(rewrapped.Nonce, old.Nonce) || !bytes.Equal(rewrapped.Ciphertext, old.Ciphertext) {
		t.Fatal("Rewrap changed the nonce or ciphertext")
	}
	if got, err := k.Open(rewrapped, aad); err != nil || string(got) != "old secret" {
		t.Fatalf("Open of a rewrapped value = %q, %v", got, err)
	}
	if _, err := k.Open(rewrapped, []byte("user:43/credential:7")); !errors.Is(err, secrets.ErrTampered) {
		t.Fatalf("rewrapping lost the AAD binding: %v", err)
	}
	again, err := k.Rewrap(rewrapped)
	if err != nil || again.String() != rewrapped.String() {
		t.Fatalf("Rewrap of a current value changed it (%v)", err)
	}
	// The keyring before rotation still opens the old value, and knows
	// nothing of version 2.
	if _, err := before.Open(old, aad); err != nil {
		t.Fatal(err)
	}
	if _, err := before.Open(rewrapped, aad); !errors.Is(err, secrets.ErrUnknownVersion) {
		t.Fatalf("old keyring opening a version-2 value: err = %v, want ErrUnknownVersion", err)
	}
	bad := copySealed(old)
	bad.WrappedKey[10] ^= 1
	if _, err := k.Rewrap(bad); !errors.Is(err, secrets.ErrTampered) {
		t.Fatalf("Rewrap of a tampered wrapped key: err = %v, want ErrTampered", err)
	}
}

func TestStringForm(t *testing.T) {
	k := secrets.New()
	s, _ := k.Seal([]byte("secret"), aad)
	text := s.String()
	if !strings.HasPrefix(text, "nxe1.") || strings.ContainsAny(text[5:], "+/=") {
		t.Fatalf("String = %q: want the nxe1. prefix and base64url", text)
	}
	if fmt.Sprint(s) != text || fmt.Sprintf("%v", s) != text {
		t.Fatal("fmt does not print the String form")
	}
	// Change every character: the value is refused (by the parser or by Open).
	for i := range len(text) {
		for _, c := range []byte{'A', 'b', '_', '.', '!'} {
			if text[i] == c {
				continue
			}
			changed := text[:i] + string(c) + text[i+1:]
			parsed, err := secrets.ParseSealed(changed)
			if err == nil {
				_, err = k.Open(parsed, aad)
			}
			if err == nil {
				t.Fatalf("character %d changed to %q: still opens", i, c)
			}
		}
	}
}

func TestParseSealedErrors(t *testing.T) {
	k := secrets.New()
	s, _ := k.Seal([]byte("secret"), aad)
	body := s.String()[5:]
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	enc := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct{ name, text string }{
		{"empty", ""},
		{"no prefix", body},
		{"other format", "nxe2." + body},
		{"prefix only", "nxe1."},
		{"padded", "nxe1." + base64.URLEncoding.EncodeToString(raw)},
		{"std alphabet", "nxe1." + strings.NewReplacer("-", "+", "_", "/").Replace(body) + "+/"},
		{"not base64", "nxe1.%%%%"},
		{"version 0", "nxe1." + enc(append([]byte{0}, raw[1:]...))},
		{"non-canonical version", "nxe1." + enc(append([]byte{0x81, 0x00}, raw[1:]...))},
		{"huge version", "nxe1." + enc(append([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, raw[1:]...))},
		{"truncated", "nxe1." + enc(raw[:1+60+12+15])},
		{"whitespace", " " + s.String()},
		{"line break", s.String()[:30] + "\r\n" + s.String()[30:]},
	} {
		if _, err := secrets.ParseSealed(tc.text); !errors.Is(err, secrets.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tc.name, err)
		}
	}
}

// TestNothingSecretDisclosed: the plaintext, the data key and the KEKs never
// appear in an error, in the string form of a Sealed value or of the
// keyring, in any encoding.
func TestNothingSecretDisclosed(t *testing.T) {
	k := secrets.New()
	plaintext := "sk-ant-api03-TOPSECRETvalue0123456789"
	s, _ := k.Seal([]byte(plaintext), aad)
	var outputs []string
	outputs = append(outputs, s.String(), fmt.Sprintf("%v %+v %#v %s", s, s, s, s))
	outputs = append(outputs, fmt.Sprintf("%v %+v %#v %s", k, k, k, k))
	record := func(_ []byte, err error) {
		if err == nil {
			t.Fatal("expected an error")
		}
		outputs = append(outputs, err.Error(), fmt.Sprintf("%+v %#v", err, err))
	}
	record(k.Open(s, []byte("wrong")))
	c := copySealed(s)
	c.Ciphertext[0] ^= 1
	record(k.Open(c, aad))
	c = copySealed(s)
	c.WrappedKey[20] ^= 1
	record(k.Open(c, aad))
	c.KeyVersion = 9
	record(k.Open(c, aad))
	_, err := secrets.ParseSealed("nxe1." + plaintext)
	record(nil, err)
	_, err = k.Rewrap(c)
	record(nil, err)

	dir := t.TempDir()
	if err := k.Save(dir + "/keyring.json"); err != nil {
		t.Fatal(err)
	}
	doc := readFile(t, dir+"/keyring.json")
	key := between(doc, `"key": "`, `"`)
	for _, bad := range []string{strings.Replace(doc, key, key[:10]+"\x01"+key[11:], 1), strings.Replace(doc, key, key[:20], 1),
		strings.Replace(doc, key, key+"}", 1), doc[:len(doc)-5]} {
		_, err := secrets.FromEnv(bad)
		record(nil, err)
	}
	rawKey, _ := base64.StdEncoding.DecodeString(key)
	for _, out := range outputs {
		for _, secret := range []string{plaintext, plaintext[10:20], key, key[:12], string(rawKey)} {
			if strings.Contains(out, secret) {
				t.Errorf("output discloses a secret: %q", out)
			}
		}
	}
}

func TestConcurrentSealRotate(t *testing.T) {
	k := secrets.New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				msg := fmt.Appendf(nil, "%d/%d", i, j)
				s, err := k.Seal(msg, aad)
				if err != nil {
					t.Error(err)
					return
				}
				if j%10 == 0 && i == 0 {
					k.Rotate()
				}
				s, err = k.Rewrap(s)
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := k.Open(s, aad); err != nil || !bytes.Equal(got, msg) {
					t.Errorf("Open = %q, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkRewrap measures the cost of rotation per credential (crypto
// only; reading and writing the row is the store's).
func BenchmarkRewrap(b *testing.B) {
	k := secrets.New()
	s, _ := k.Seal([]byte("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"), aad)
	k.Rotate()
	for b.Loop() {
		if _, err := k.Rewrap(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	k := secrets.New()
	plaintext := []byte("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789abcdefghij")
	for b.Loop() {
		if _, err := k.Seal(plaintext, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	k := secrets.New()
	s, _ := k.Seal([]byte("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"), aad)
	for b.Loop() {
		if _, err := k.Open(s, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func copySealed(s secrets.Sealed) secrets.Sealed {
	return secrets.Sealed{
		KeyVersion: s.KeyVersion,
		WrappedKey: bytes.Clone(s.WrappedKey),
		Nonce:      bytes.Clone(s.Nonce),
		Ciphertext: bytes.Clone(s.Ciphertext),
	}
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(after, to)
	return v
}
