package pipeline

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// schemaMessage turns a jsonschema validation error, which names schema
// locations ("validating /properties/entities/items/properties/role: enum:
// ..."), into a message that names the argument ("entities[].role: enum: ...").
func schemaMessage(err error) string {
	field, msg := schemaParts(err)
	msg = boundMessage(msg)
	if field == "" {
		return msg
	}
	return field + ": " + msg
}

// schemaField returns the argument path a validation error names, if any.
func schemaField(err error) string {
	field, _ := schemaParts(err)
	return field
}

// schemaParts splits a validation error into the argument path it names
// (empty for the whole object) and the reason.
func schemaParts(err error) (field, msg string) {
	msg = err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, tail, found := strings.Cut(rest, ": ")
		if !found {
			break
		}
		if loc != "root" {
			field = fieldPath(loc)
		}
		msg = tail
	}
	return field, msg
}

// fieldPath converts a schema pointer such as /properties/a/items/properties/b
// into the argument path a[].b.
func fieldPath(loc string) string {
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items", "prefixItems", "additionalProperties":
			b.WriteString("[]")
		}
	}
	return b.String()
}

// bound matches the validator's messages for numeric bounds, which write
// the value as a fraction and the bound with six decimals ("maximum:
// 1000/1 is greater than 100.000000").
var bound = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(minimum|maximum|exclusiveMinimum|exclusiveMaximum): (-?\d+(?:/\d+)?) is (less than|greater than|less than or equal to|greater than or equal to) (-?\d+(?:\.\d+)?)$`)
})

// boundMessage writes a numeric bound's numbers as a person would:
// "maximum: 1000 is greater than 100". Other messages are returned as they
// are.
func boundMessage(msg string) string {
	m := bound().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	val, ok := new(big.Rat).SetString(m[2])
	lim, ok2 := new(big.Rat).SetString(m[4])
	if !ok || !ok2 {
		return msg
	}
	num := func(r *big.Rat) string {
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("%s: %s is %s %s", m[1], num(val), m[3], num(lim))
}
