package catalog

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns that one *regexp.Regexp on every call. The package's patterns are
// only used when a catalog or transfer guide is read, so start-up, which
// links the package, does not compile them.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
