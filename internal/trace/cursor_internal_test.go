package trace

import "testing"

// TestCursorLastCharacterAltered: base64 has spare bits in a cursor's last
// character; a lenient decoder read "…B" as "…A", so a cursor altered there
// still verified. Every altered character is refused.
func TestCursorLastCharacterAltered(t *testing.T) {
	key := []byte("key")
	f := Filter{Tool: "belief_get"}
	c := encodeCursor(key, f, 7)
	last := c[len(c)-1]
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		if byte(r) == last {
			continue
		}
		if _, err := decodeCursor(key, f, c[:len(c)-1]+string(r)); err == nil {
			t.Errorf("cursor with its last character %q altered to %q verified", last, r)
		}
	}
	if seq, err := decodeCursor(key, f, c); err != nil || seq != 7 {
		t.Fatalf("the cursor itself: %d, %v", seq, err)
	}
}
