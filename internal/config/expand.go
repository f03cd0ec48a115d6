package config

// Environment expansion: ${VAR}, ${VAR:-default} and $$.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Expand expands ${NAME} and ${NAME:-default} in s from env, and turns $$
// into a literal $. A $ before anything else is kept as it is. NAME is
// letters, digits and '_', not starting with a digit. The default is used
// when NAME is unset (a variable set to "" is set); it may itself hold
// ${...} and $$, and runs to the matching '}'. missing lists, in order and
// once each, the variables that were needed but unset and had no default;
// err is a syntax error.
func Expand(s string, env func(string) (string, bool)) (out string, missing []string, err error) {
	e := &expander{s: s, env: env}
	out, err = e.run(false, true)
	return out, e.missing, err
}

// expander is the state of one Expand: the string, the position in it, and
// the variables found missing.
type expander struct {
	s       string
	i       int
	env     func(string) (string, bool)
	missing []string
}

// run expands up to the end of s or, in a default (inDefault), up to the
// '}' that closes it, which it leaves unread. With eval false it only checks
// the syntax: a default that is not used looks nothing up.
func (e *expander) run(inDefault, eval bool) (string, error) {
	var b strings.Builder
	for e.i < len(e.s) {
		c := e.s[e.i]
		switch {
		case c == '}' && inDefault:
			return b.String(), nil
		case c != '$':
			b.WriteByte(c)
			e.i++
		case strings.HasPrefix(e.s[e.i:], "$$"):
			b.WriteByte('$')
			e.i += 2
		case strings.HasPrefix(e.s[e.i:], "${"):
			if err := e.variable(&b, eval); err != nil {
				return "", err
			}
		default:
			b.WriteByte('$')
			e.i++
		}
	}
	if inDefault {
		return "", errors.New("a ${ is not closed with }: write $$ for a literal $")
	}
	return b.String(), nil
}

// variable expands the ${NAME} or ${NAME:-default} at the position into b
// (with eval false it only checks the syntax).
func (e *expander) variable(b *strings.Builder, eval bool) error {
	e.i += 2 // ${
	start := e.i
	for e.i < len(e.s) && (e.s[e.i] == '_' || isAlnum(e.s[e.i])) {
		e.i++
	}
	name := e.s[start:e.i]
	if e.i >= len(e.s) {
		return errors.New("a ${ is not closed with }: write $$ for a literal $")
	}
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return fmt.Errorf("%s: a variable name is letters, digits and '_', not starting with a digit (write $$ for a literal $)", e.shown(start))
	}
	var val string
	set := false
	if eval {
		val, set = e.env(name)
	}
	switch {
	case e.s[e.i] == '}':
		e.i++
		if eval && !set {
			if !slices.Contains(e.missing, name) {
				e.missing = append(e.missing, name)
			}
		}
		b.WriteString(val)
	case strings.HasPrefix(e.s[e.i:], ":-"):
		e.i += 2
		def, err := e.run(true, eval && !set)
		if err != nil {
			return err
		}
		e.i++ // }
		if set {
			b.WriteString(val)
		} else {
			b.WriteString(def)
		}
	default:
		return fmt.Errorf("%s is not supported: write ${%s} or ${%s:-default}", e.shown(start), name, name)
	}
	return nil
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shown quotes the ${...} that starts at start-2, for an error: up to its
// closing '}', or its first 20 bytes.
func (e *expander) shown(start int) string {
	rest := e.s[start-2:]
	if i := strings.IndexByte(rest, '}'); i >= 0 && i < 40 {
		return strconv.Quote(rest[:i+1])
	}
	if len(rest) > 20 {
		rest = strings.ToValidUTF8(rest[:20], "") + "..."
	}
	return strconv.Quote(rest)
}
