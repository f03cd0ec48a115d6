package registry

// A tool's quick check: the common subset of JSON Schema compiled, once,
// into a small tree that accepts arguments without the full validator.

import (
	"math"
	"reflect"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// quick is a schema of the common subset of JSON Schema (type, properties,
// required, additionalProperties, items, enum of strings, string lengths,
// number and array bounds; annotations ignored), compiled once when the tool
// is added. Its accepts is sound, never complete: it is true only for an
// instance the full validator ([jsonschema.Resolved.Validate]) accepts, and
// false for everything else, including what it merely cannot decide. The
// full validator then runs, so every error is the full validator's, word for
// word. A schema outside the subset compiles to nil (no quick check).
//
// Why: the full validator walks the schema by reflection with a 4 KB stack
// frame per level, so a call that validates grows its goroutine's stack
// (copying it) as often as it validates; for a small tool that was about
// half of the pipeline's own CPU per call (BenchmarkOverheadNexus).
type quick struct {
	types    uint8 // bit set of jsonKinds; 0 means any
	enum     []string
	minLen   int // -1: none
	maxLen   int // -1: none
	min, max float64
	xmin     float64 // exclusiveMinimum
	xmax     float64 // exclusiveMaximum
	hasNum   bool    // any of min, max, xmin, xmax is set (unset are ±Inf)
	minItems int     // -1: none
	maxItems int     // -1: none
	items    *quick
	props    map[string]*quick
	required []string
	// additional: nil allows any other property; noMore forbids them
	// (additionalProperties: false); otherwise they must pass it.
	additional *quick
	noMore     bool
	// defaults: this schema or one in it gives a default, so that
	// [jsonschema.Resolved.ApplyDefaults] may change an instance (without
	// one it changes nothing and is skipped).
	defaults bool
}

// JSON kinds as bits of quick.types.
const (
	kNull uint8 = 1 << iota
	kBool
	kObject
	kArray
	kNumber
	kInteger
	kString
)

var kindBits = map[string]uint8{"null": kNull, "boolean": kBool, "object": kObject, "array": kArray,
	"number": kNumber | kInteger, "integer": kInteger, "string": kString}

// compileQuick compiles s, or returns nil when s uses anything outside the
// subset.
func compileQuick(s *jsonschema.Schema) *quick {
	if s == nil || !onlySubset(s) {
		return nil
	}
	q := &quick{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1,
		min: math.Inf(-1), max: math.Inf(1), xmin: math.Inf(-1), xmax: math.Inf(1)}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, name := range types {
		b, ok := kindBits[name]
		if !ok {
			return nil
		}
		q.types |= b
	}
	if s.Enum != nil {
		q.enum = make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			str, ok := e.(string)
			if !ok {
				return nil // numbers, objects...: equality is the full validator's
			}
			q.enum = append(q.enum, str)
		}
	}
	for _, b := range []struct {
		from *int
		to   *int
	}{{s.MinLength, &q.minLen}, {s.MaxLength, &q.maxLen}, {s.MinItems, &q.minItems}, {s.MaxItems, &q.maxItems}} {
		if b.from != nil {
			if *b.from < 0 {
				return nil
			}
			*b.to = *b.from
		}
	}
	for _, b := range []struct {
		from *float64
		to   *float64
	}{{s.Minimum, &q.min}, {s.Maximum, &q.max}, {s.ExclusiveMinimum, &q.xmin}, {s.ExclusiveMaximum, &q.xmax}} {
		if b.from != nil {
			*b.to, q.hasNum = *b.from, true
		}
	}
	if s.Items != nil {
		if q.items = compileQuick(s.Items); q.items == nil {
			return nil
		}
	}
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quick, len(s.Properties))
		for name, ps := range s.Properties {
			if q.props[name] = compileQuick(ps); q.props[name] == nil {
				return nil
			}
		}
	}
	q.required = s.Required
	q.defaults = s.Default != nil || q.items != nil && q.items.defaults
	for _, p := range q.props {
		q.defaults = q.defaults || p.defaults
	}
	switch a := s.AdditionalProperties; {
	case a == nil:
	case isFalseSchema(a):
		q.noMore = true
	default:
		if q.additional = compileQuick(a); q.additional == nil {
			return nil
		}
		q.defaults = q.defaults || q.additional.defaults
	}
	return q
}

// isFalseSchema reports whether s is the false schema (as jsonschema decodes
// false: a schema that is "not" the empty schema, and nothing else).
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

// onlySubset reports whether s sets only keywords the quick check knows
// (annotations included, which it ignores). Every other keyword (a $ref,
// allOf, a pattern, a format, ...) leaves the schema to the full validator.
func onlySubset(s *jsonschema.Schema) bool {
	c := *s
	// The subset, then the annotations and identifiers that do not
	// validate. (Defaults are applied before validation.)
	c.Type, c.Types, c.Enum = "", nil, nil
	c.MinLength, c.MaxLength, c.Minimum, c.Maximum, c.ExclusiveMinimum, c.ExclusiveMaximum = nil, nil, nil, nil, nil, nil
	c.Items, c.MinItems, c.MaxItems = nil, nil, nil
	c.Properties, c.Required, c.AdditionalProperties = nil, nil, nil
	c.Title, c.Description, c.Comment, c.Default, c.Examples = "", "", "", nil, nil
	c.Deprecated, c.ReadOnly, c.WriteOnly, c.Schema, c.ID, c.PropertyOrder = false, false, false, "", "", nil
	return reflect.ValueOf(c).IsZero()
}

// jsonKind is the bit of a value decoded by encoding/json into any.
func jsonKind(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return kNull
	case bool:
		return kBool
	case string:
		return kString
	case float64:
		if _, f := math.Modf(v); f == 0 {
			return kInteger
		}
		return kNumber
	case map[string]any:
		return kObject
	case []any:
		return kArray
	}
	return 0
}

// accepts reports whether v (decoded by encoding/json into any) surely
// passes the schema; false means "ask the full validator".
func (q *quick) accepts(v any) bool {
	k := jsonKind(v)
	if k == 0 || q.types != 0 && q.types&k == 0 {
		return false
	}
	switch v := v.(type) {
	case string:
		if q.enum != nil {
			found := false
			for _, e := range q.enum {
				if e == v {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		if q.minLen >= 0 || q.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if q.minLen >= 0 && n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
				return false
			}
		}
		return true
	case float64:
		return q.enum == nil && (!q.hasNum || v >= q.min && v <= q.max && v > q.xmin && v < q.xmax)
	case map[string]any:
		if q.enum != nil {
			return false
		}
		for _, name := range q.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		for name, x := range v {
			if p, ok := q.props[name]; ok {
				if !p.accepts(x) {
					return false
				}
				continue
			}
			if q.noMore || q.additional != nil && !q.additional.accepts(x) {
				return false
			}
		}
		return true
	case []any:
		if q.enum != nil || q.minItems >= 0 && len(v) < q.minItems || q.maxItems >= 0 && len(v) > q.maxItems {
			return false
		}
		if q.items != nil {
			for _, x := range v {
				if !q.items.accepts(x) {
					return false
				}
			}
		}
		return true
	}
	return q.enum == nil // null, booleans
}
