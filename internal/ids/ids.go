// Package ids holds the one rule for identifiers callers choose: workspace
// ids and session (conversation) ids.
package ids

import (
	"regexp"
	"sync"
)

// pattern, compiled on first use: 1-128 letters, digits and . _ : @ -, starting with a letter or
// digit.
var pattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`) })

// Rule describes a valid id, for error messages.
const Rule = "1-128 characters of letters, digits and . _ : @ - starting with a letter or digit"

// Valid reports whether id is a valid workspace or session id.
func Valid(id string) bool { return pattern().MatchString(id) }
