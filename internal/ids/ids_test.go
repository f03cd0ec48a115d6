package ids

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"default": true, "team-a.prod:1@x_y": true, "A": true, strings.Repeat("a", 128): true,
		"": false, "-a": false, ".a": false, "a b": false, "a/b": false, strings.Repeat("a", 129): false, "a\x00": false, "é": false,
	} {
		if Valid(id) != want {
			t.Errorf("Valid(%q) = %v", id, !want)
		}
	}
}
