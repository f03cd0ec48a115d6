package downstream

import "testing"

// TestAccepts: the SDK's rule for a Streamable HTTP POST's Accept header,
// which the passthrough and the HTTP front's fast path both follow.
func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		values           []string
		jsonOK, streamOK bool
	}{
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json", "text/event-stream"}, true, true},
		{[]string{"Application/JSON;q=0.9 , TEXT/EVENT-STREAM;charset=utf-8"}, true, true},
		{[]string{"*/*"}, true, true},
		{[]string{"application/*, text/*"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"text/event-stream"}, false, true},
		{[]string{"text/html", ""}, false, false},
		{nil, false, false},
	} {
		j, s := Accepts(c.values)
		if j != c.jsonOK || s != c.streamOK {
			t.Errorf("Accepts(%q) = %v, %v; want %v, %v", c.values, j, s, c.jsonOK, c.streamOK)
		}
	}
}
