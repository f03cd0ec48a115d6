package jsondepth

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  int
	}{
		{`{}`, 10, 1}, {`{"a":[1,{"b":[]}]}`, 10, 4}, {`"[[[["`, 10, 0}, {`{"a":"\"[["}`, 10, 1},
		{strings.Repeat("[", 100), 10, 11}, {`[]]]]{`, 10, 1}, {``, 10, 0},
	} {
		if got := Of([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("Of(%q, %d) = %d, want %d", tc.in, tc.limit, got, tc.want)
		}
	}
}
