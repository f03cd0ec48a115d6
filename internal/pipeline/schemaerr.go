package pipeline

import (
	"strings"
)

// schemaMessage turns a jsonschema validation error, which names schema
// locations ("validating /properties/entities/items/properties/role: enum:
// ..."), into a message that names the argument ("entities[].role: enum: ...").
func schemaMessage(err error) string {
	msg := err.Error()
	field := ""
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
	if field == "" {
		return msg
	}
	return field + ": " + msg
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
