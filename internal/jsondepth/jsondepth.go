// Package jsondepth measures how deep arrays and objects nest in JSON text,
// without decoding it, so that every entry point (the stdio transport, the
// pipeline) refuses over-deep input alike and before a decoder recurses.
package jsondepth

// Max is how deep arrays and objects may nest in what Nexus accepts.
const Max = 512

// Of returns how deep arrays and objects nest in b, counting no further than
// limit+1 (b need not be valid JSON).
func Of(b []byte, limit int) int {
	d, max := 0, 0
	inString, escaped := false, false
	for _, ch := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
		case ch == '"':
			inString = true
		case ch == '[' || ch == '{':
			d++
			if d > max {
				if max = d; max > limit {
					return max
				}
			}
		case ch == ']' || ch == '}':
			d--
		}
	}
	return max
}
