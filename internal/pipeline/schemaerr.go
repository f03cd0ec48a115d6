package pipeline

import (
	"strings"
)

// schemaMessage turns a jsonschema validation error, which names schema
// locations ("validating /properties/entities/items/properties/role: enum:
// ..."), into a message that names the argument ("entities[].role: enum: ...").
func schemaMessage(err error) string {
	field, msg := schemaParts(err)
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
