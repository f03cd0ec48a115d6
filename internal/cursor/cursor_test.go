package cursor

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestRoundTripAndTampering(t *testing.T) {
	s := Signer{Key: []byte("k"), Label: "test"}
	c := s.Encode(42, "tn_course_search", "q=math")
	if pos, err := s.Decode(c, "tn_course_search", "q=math"); err != nil || pos != 42 {
		t.Fatalf("Decode = %d, %v", pos, err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	for i := range raw {
		alt := append([]byte(nil), raw...)
		alt[i] ^= 1
		if _, err := s.Decode(base64.RawURLEncoding.EncodeToString(alt), "tn_course_search", "q=math"); !errors.Is(err, ErrInvalid) {
			t.Errorf("byte %d altered: %v, want ErrInvalid", i, err)
		}
	}
	for _, bad := range []struct {
		c     string
		scope []string
		s     Signer
	}{
		{c, []string{"tn_course_search", "q=physics"}, s},  // another query
		{c, []string{"tn_course_search", "q=", "math"}, s}, // scopes do not run together
		{c, []string{"tn_course_search", "q=math"}, Signer{Key: []byte("other"), Label: "test"}},
		{c, []string{"tn_course_search", "q=math"}, Signer{Key: []byte("k"), Label: "other"}},
		{"", nil, s}, {"!!!", nil, s}, {c + "A", []string{"tn_course_search", "q=math"}, s},
		// The base64 decoder skips line breaks: a cursor with one inserted
		// is not the cursor issued.
		{c[:5] + "\r" + c[5:], []string{"tn_course_search", "q=math"}, s},
		{c[:5] + "\r\n" + c[5:], []string{"tn_course_search", "q=math"}, s},
		{c + "\n", []string{"tn_course_search", "q=math"}, s},
	} {
		if _, err := bad.s.Decode(bad.c, bad.scope...); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(%q, %q) = %v, want ErrInvalid", bad.c, bad.scope, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	s := Signer{Key: []byte("k"), Label: "fuzz"}
	f.Add(s.Encode(1, "a"))
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		pos, err := s.Decode(c, "a")
		if err == nil && s.Encode(pos, "a") != c {
			t.Fatalf("%q decodes to %d, which encodes differently", c, pos)
		}
	})
}
