package config

// Reading values: strings (with ${VAR} expansion), booleans, durations,
// lists and mappings of strings.

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// str reads a string value (numbers and booleans as written), expanding
// ${VAR}. ok is false when the value is null (absent) or invalid.
func (l *loader) str(f field, p string) (string, bool) {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return "", false
	}
	text, ok := scalarText(n)
	if !ok {
		l.fail(n, p, "must be a string, not %s", kindName(n))
		return "", false
	}
	return l.expand(n, p, text)
}

// expand expands ${VAR} in text, the value of node n at path p; ok is false
// (and an error recorded) on a syntax error or a variable unset.
func (l *loader) expand(n *yaml.Node, p, text string) (string, bool) {
	v, missing, err := Expand(text, l.env)
	if err != nil {
		l.fail(n, p, "%v", err)
		return "", false
	}
	for _, name := range missing {
		l.fail(n, p, "environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
	}
	return v, len(missing) == 0
}

// boolean reads a true or false value. ok is false when the value is null
// (absent) or invalid.
func (l *loader) boolean(f field, p string) (bool, bool) {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.fail(n, p, "must be true or false, not %s", kindName(n))
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	if err != nil {
		l.fail(n, p, "must be true or false")
		return false, false
	}
	return b, true
}

// duration reads a positive duration ("30s", "2m"). ok is false when the
// value is null (absent) or invalid.
// count reads a whole number from lo to hi.
func (l *loader) count(f field, p string, lo, hi int) (int, bool) {
	v, ok := l.str(f, p)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		l.fail(l.node(f.val), p, "must be a whole number from %d to %d, not %q", lo, hi, v)
		return 0, false
	}
	return n, true
}

func (l *loader) duration(f field, p string) (time.Duration, bool) {
	v, ok := l.str(f, p)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		l.fail(l.node(f.val), p, "%q is not a duration: give a number with a unit, like \"30s\" or \"2m\"", v)
		return 0, false
	}
	if d <= 0 {
		l.fail(l.node(f.val), p, "must be more than 0 (%q)", v)
		return 0, false
	}
	return d, true
}

// strList reads a list of strings; nil when null.
func (l *loader) strList(f field, p string, check func(string) string) []string {
	n := l.node(f.val)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.fail(n, p, "must be a list of strings, not %s", kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		ip := index(p, i)
		c = l.node(c)
		if c == nil {
			return out
		}
		text, ok := scalarText(c)
		if !ok {
			l.fail(c, ip, "must be a string, not %s", kindName(c))
			continue
		}
		v, ok := l.expand(c, ip, text)
		if !ok {
			continue
		}
		if reason := check(v); reason != "" {
			l.fail(c, ip, "%s", reason)
			continue
		}
		out = append(out, v)
	}
	return out
}

// strMap reads a mapping of names to strings (env, headers); keys are not
// expanded. nil when null.
func (l *loader) strMap(f field, p, what string, checkKey, checkValue func(string) string) map[string]string {
	fields, ok := l.mapping(f.val, p, "a mapping of "+what+" names to strings")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(fields))
	for _, kf := range fields {
		kp := join(p, kf.name)
		if reason := checkKey(kf.name); reason != "" {
			l.fail(kf.key, kp, "%s", reason)
			continue
		}
		v, ok := l.str(kf, kp)
		if !ok {
			if n := l.node(kf.val); n != nil && isNull(n) {
				l.fail(n, kp, "must be a string, not null")
			}
			continue
		}
		if reason := checkValue(v); reason != "" {
			l.fail(l.node(kf.val), kp, "%s", reason)
			continue
		}
		out[kf.name] = v
	}
	return out
}
