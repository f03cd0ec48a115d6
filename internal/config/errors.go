package config

// Errors: the Error type, how the loader records and sorts them, the paths
// inside the file they name, and the suggestions for unknown keys.

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"
)

// Error is one problem found in a configuration file. Parse returns them
// joined with errors.Join; errors.As finds the first.
type Error struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	// Path inside the file, e.g. toolboxes.dev.mcpServers.github.url; empty
	// for errors about the file as a whole.
	Path   string
	Reason string
}

// Error renders FILE:LINE:COL: PATH: REASON (LINE, COL and PATH when known).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// withFile sets the file e is about and returns e.
func (e *Error) withFile(file string) *Error {
	e.File = file
	return e
}

// result returns the errors recorded, sorted by position and joined; nil
// when there are none.
func (l *loader) result() error {
	sort.SliceStable(l.errs, func(i, j int) bool {
		a, b := l.errs[i].(*Error), l.errs[j].(*Error)
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if l.dropped > 0 {
		l.errs = append(l.errs, &Error{File: l.file, Reason: fmt.Sprintf("%d more errors not shown", l.dropped)})
	}
	return errors.Join(l.errs...)
}

// fail records an error at node n (nil: position unknown) and path.
func (l *loader) fail(n *yaml.Node, p, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		// Past the limit errors are only counted (repeats included), and
		// cheaply: a file of aliases can make a great many.
		l.dropped++
		return
	}
	e := &Error{File: l.file, Path: p, Reason: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	msg := e.Error()
	if l.seen[msg] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[msg] = true
	l.errs = append(l.errs, e)
}

// Paths: keys join with dots; a key that is not plain letters, digits, '_',
// '-' or '$' is quoted in brackets: mcpServers["my.server"].
var plainKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_$-]+$`) })

// join returns the path of key inside p.
func join(p, key string) string {
	if !plainKey().MatchString(key) {
		return p + "[" + strconv.Quote(key) + "]"
	}
	if p == "" {
		return key
	}
	return p + "." + key
}

// index returns the path of item i of the list at p.
func index(p string, i int) string { return fmt.Sprintf("%s[%d]", p, i) }

// unknownKey reports a key the format does not have, suggesting the closest
// known one.
func (l *loader) unknownKey(f field, p string, known []string, note string) {
	kp := join(p, f.name)
	if s := suggest(f.name, known); s != "" {
		l.fail(f.key, kp, "unknown key %q (did you mean %q?)", f.name, s)
		return
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	l.fail(f.key, kp, "unknown key %q (known keys: %s%s)", f.name, strings.Join(sorted, ", "), note)
}

// suggest returns the known key closest to name: the same but for case, or
// within an edit distance of 2 and of a third of name's length.
func suggest(name string, known []string) string {
	best, bestD := "", min(2, max(1, len(name)/3))+1
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance returns the Levenshtein distance of a and b, or 64 when either
// is longer than 64 bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
