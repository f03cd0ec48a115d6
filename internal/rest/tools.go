package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// ToolList is the body of GET /api/tools: seed 004's {"tools": [...]}.
type ToolList struct {
	Tools []ToolInfo `json:"tools"`
}

// ToolInfo is one tool: seed 004's ToolMetadata (name, description, source,
// parameters) plus the tool's identity and its schemas.
type ToolInfo struct {
	// Name is the flat name, the one to call the tool by.
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Source      string      `json:"source"` // "local" or "mcp"
	Parameters  []Parameter `json:"parameters"`
	Toolbox     string      `json:"toolbox"`
	Server      string      `json:"server"`
	Tool        string      `json:"tool"`
	Title       string      `json:"title,omitempty"`
	// InputSchema is the schema as every surface lists it, with the call
	// context properties ("context", "workspaceContext", "sessionId").
	InputSchema  map[string]any  `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// Parameter is seed 004's ToolParameter, derived from one property of the
// tool's own input schema, plus its enum and default when the schema has them.
type Parameter struct {
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required"`
	Enum        json.RawMessage `json:"enum,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
}

func (h *handler) listTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	source, toolbox := q.Get("source"), q.Get("toolbox")
	if source != "" && source != string(registry.Local) && source != string(registry.MCP) {
		h.fail(w, 0, errs.Invalid("source", "must be %q or %q, got %q", registry.Local, registry.MCP, source))
		return
	}
	h.open(r.Context())
	list := ToolList{Tools: []ToolInfo{}}
	for _, t := range h.reg.Listed(registry.Tools) {
		if (source != "" && string(t.Source) != source) || (toolbox != "" && t.ID.Toolbox != toolbox) {
			continue
		}
		if h.p != nil && !h.p.Visible(r.Context(), t) {
			continue // the caller may not use it: not listed
		}
		list.Tools = append(list.Tools, Info(t))
	}
	w.Header().Set("X-Request-Id", errs.NewRequestID())
	writeJSON(w, http.StatusOK, list)
}

// Info describes t as GET /api/tools lists it.
func Info(t *registry.Tool) ToolInfo {
	info := ToolInfo{
		Name: t.Name(), Description: t.Description, Source: string(t.Source), Parameters: Parameters(t.InputSchema),
		Toolbox: t.ID.Toolbox, Server: t.ID.Server, Tool: t.ID.Tool, Title: t.Title,
		InputSchema: t.ListedSchema(),
	}
	if len(t.OutputSchema) > 0 && json.Valid(t.OutputSchema) {
		info.OutputSchema = t.OutputSchema
	}
	return info
}

// Parameters lists the properties of an object schema in the order the
// schema declares them. It reads the tool's own schema, so the call context
// properties every listed schema gains are not among them.
func Parameters(schema json.RawMessage) []Parameter {
	out := []Parameter{}
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return out
	}
	var required []string
	json.Unmarshal(top["required"], &required)
	names, props := orderedObject(top["properties"])
	for _, name := range names {
		var p map[string]json.RawMessage
		if json.Unmarshal(props[name], &p) != nil {
			p = nil // a boolean schema: anything goes
		}
		param := Parameter{Name: name, Type: schemaType(p), Required: slices.Contains(required, name)}
		json.Unmarshal(p["description"], &param.Description)
		if e, ok := p["enum"]; ok {
			param.Enum = e
		}
		if d, ok := p["default"]; ok {
			param.Default = d
		}
		out = append(out, param)
	}
	return out
}

// orderedObject decodes a JSON object, keeping the order of its keys.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage) {
	values := map[string]json.RawMessage{}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, values
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, values
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, values
		}
		if _, dup := values[key]; !dup {
			keys = append(keys, key)
		}
		values[key] = v
	}
	return keys, values
}

// schemaType names the JSON type(s) a property schema accepts: its "type"
// ("string", or "string|number" for several; "null" is left out of a
// union), else the kinds of its enum or const values, else the types of
// its anyOf/oneOf branches, else "any".
func schemaType(p map[string]json.RawMessage) string {
	var types []string
	add := func(t string) {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(p["type"], &one) == nil && one != "":
		return one
	case json.Unmarshal(p["type"], &many) == nil && len(many) > 0:
		for _, t := range many {
			add(t)
		}
	case p["const"] != nil:
		add(valueKind(p["const"]))
	case p["enum"] != nil:
		var values []json.RawMessage
		json.Unmarshal(p["enum"], &values)
		for _, v := range values {
			add(valueKind(v))
		}
	default:
		for _, k := range []string{"anyOf", "oneOf"} {
			var branches []map[string]json.RawMessage
			json.Unmarshal(p[k], &branches)
			for _, b := range branches {
				for _, t := range strings.Split(schemaType(b), "|") {
					add(t)
				}
			}
		}
	}
	if len(types) > 1 {
		types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	}
	if slices.Contains(types, "any") || len(types) == 0 {
		return "any"
	}
	return strings.Join(types, "|")
}

// valueKind is the JSON Schema type of a JSON value.
func valueKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "any"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "number"
	}
	return "integer"
}
