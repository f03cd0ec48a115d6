package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/trace"
)

func (h *handler) openapi(w http.ResponseWriter, r *http.Request) {
	h.open(r.Context())
	b, err := marshalOpenAPI(OpenAPIFor(h.reg, h.version, func(t *registry.Tool) bool { return h.p == nil || h.p.Visible(r.Context(), t) }))
	if err != nil {
		h.fail(w, 0, &errs.Error{Code: errs.Internal, Message: "internal error", Err: err})
		return
	}
	w.Header().Set("X-Request-Id", errs.NewRequestID())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// MarshalOpenAPI encodes [OpenAPI] as indented JSON; the output depends only
// on the registry and version (object keys are sorted).
func MarshalOpenAPI(reg *registry.Registry, version string) ([]byte, error) {
	return marshalOpenAPI(OpenAPI(reg, version))
}

func marshalOpenAPI(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// OpenAPI returns the OpenAPI 3.1 document of the REST surface for the tools
// now in reg: one POST /api/tools/{name}:call path per tool, whose request
// body is the tool's listed input schema and whose 200 response is its
// output schema (for a downstream tool, the MCP CallToolResult carrying it),
// plus /api/tools, /api/traces, /healthz, /readyz and /openapi.json.
//
// Tool schemas become components ("{name}.input", "{name}.output"); their
// local references ("#/$defs/x") are rewritten to point into the component,
// since in the document they would otherwise resolve against its root.
func OpenAPI(reg *registry.Registry, version string) map[string]any {
	return OpenAPIFor(reg, version, nil)
}

// OpenAPIFor is [OpenAPI] with only the tools keep keeps (nil keeps all):
// served, the document lists the tools its reader may use.
func OpenAPIFor(reg *registry.Registry, version string, keep func(*registry.Tool) bool) map[string]any {
	tools := reg.Listed(registry.Tools)
	if keep != nil {
		tools = slices.DeleteFunc(slices.Clone(tools), func(t *registry.Tool) bool { return !keep(t) })
	}
	schemas := baseSchemas()
	paths := map[string]any{}
	tags := map[string]string{
		"tools":  "Tool discovery and calls.",
		"traces": "Traced tool calls.",
		"meta":   "Health and this document.",
	}
	taken := map[string]bool{}
	for _, t := range tools {
		name := t.Name()
		taken[name] = true
		in := name + ".input"
		schemas[in] = embedSchema(t.ListedSchema(), in)
		okSchema := map[string]any{"description": "The tool's JSON result; the tool declares no output schema."}
		if len(t.OutputSchema) > 0 {
			var out any
			if json.Unmarshal(t.OutputSchema, &out) == nil {
				schemas[name+".output"] = embedSchema(out, name+".output")
				okSchema = ref(name + ".output")
			}
		}
		okDesc := "The tool's result."
		if t.Source == registry.MCP {
			okDesc = "The downstream server's result, unmodified. `isError: true` in it is a tool-level error: the call itself succeeded, so the status is still 200."
			if _, has := okSchema["$ref"]; has {
				okSchema = map[string]any{"allOf": []any{ref("CallToolResult"), map[string]any{
					"type": "object", "properties": map[string]any{"structuredContent": okSchema}}}}
			} else {
				okSchema = ref("CallToolResult")
			}
		}
		tag := t.ID.Server
		tagDesc := "Local server " + t.ID.Server + "."
		if t.ID.Toolbox != registry.BuiltinToolbox {
			tag = t.ID.Toolbox + "/" + t.ID.Server
			tagDesc = "Downstream MCP server " + t.ID.Server + " of toolbox " + t.ID.Toolbox + "."
		}
		tags[tag] = tagDesc
		op := map[string]any{
			"operationId": name,
			"summary":     summary(t),
			"tags":        []any{tag},
			"requestBody": map[string]any{
				"required":    hasRequired(t.ListedSchema()),
				"description": "The tool's arguments. An empty body means no arguments.",
				"content":     map[string]any{"application/json": map[string]any{"schema": ref(in)}},
			},
			"responses": map[string]any{
				"200": map[string]any{
					"description": okDesc,
					"headers":     callHeaders(),
					"content":     map[string]any{"application/json": map[string]any{"schema": okSchema}},
				},
				"400":     responseRef("call.400"),
				"404":     responseRef("call.404"),
				"409":     responseRef("call.409"),
				"500":     responseRef("call.500"),
				"default": responseRef("call.default"),
			},
			"x-nexus-tool": map[string]any{
				"toolbox": t.ID.Toolbox, "server": t.ID.Server, "tool": t.ID.Tool,
				"source": string(t.Source), "family": string(t.Family),
			},
		}
		if t.Description != "" {
			op["description"] = t.Description
		}
		paths["/api/tools/"+name+callSuffix] = map[string]any{"post": op}
	}
	opID := func(id string) string { // never collide with a tool's operationId
		for taken[id] {
			id += "_"
		}
		taken[id] = true
		return id
	}
	paths["/api/tools"] = map[string]any{"get": map[string]any{
		"operationId": opID("listTools"),
		"summary":     "List the tools",
		"description": "Every tool Nexus serves, local or downstream, sorted by name: seed 004's tool metadata plus the listed input schema.",
		"tags":        []any{"tools"},
		"parameters": []any{
			queryParam("source", "Only tools of this source.", map[string]any{"type": "string", "enum": []any{"local", "mcp"}}),
			queryParam("toolbox", "Only tools of this toolbox (\"nexus\" for the local servers).", map[string]any{"type": "string"}),
		},
		"responses": map[string]any{
			"200": jsonResponse("The tools.", ref("ToolList")),
			"400": responseRef("BadRequest"),
		},
	}}
	paths["/api/traces"] = map[string]any{"get": map[string]any{
		"operationId": opID("listTraces"),
		"summary":     "List traced tool calls",
		"description": "Traced calls, most recently recorded first. Pass nextCursor back as cursor, with the same filters, for the next page.",
		"tags":        []any{"traces"},
		"parameters": []any{
			queryParam("tool", "Flat tool name (for an unknown tool, the name it was called with).", map[string]any{"type": "string", "maxLength": 400}),
			queryParam("source", "Tool source.", map[string]any{"type": "string", "enum": []any{"local", "mcp"}}),
			queryParam("session", "Session (conversation) id.", map[string]any{"type": "string", "maxLength": 200}),
			queryParam("workspace", "Workspace id.", map[string]any{"type": "string", "maxLength": 200}),
			queryParam("outcome", "Outcome of the call.", map[string]any{"type": "string", "enum": []any{"ok", "error"}}),
			queryParam("limit", "Page size.", map[string]any{"type": "integer", "minimum": 1, "maximum": trace.MaxLimit, "default": trace.DefaultLimit}),
			queryParam("cursor", "nextCursor of the previous page. Opaque; valid only with the filters it was issued for.", map[string]any{"type": "string"}),
		},
		"responses": map[string]any{
			"200": jsonResponse("A page of traced calls.", ref("TracePage")),
			"400": responseRef("BadRequest"),
			"503": jsonResponse("Traces are not stored by this server.", ref("Error")),
		},
	}}
	paths["/healthz"] = map[string]any{"get": map[string]any{
		"operationId": opID("getHealth"),
		"summary":     "Liveness",
		"tags":        []any{"meta"},
		"responses": map[string]any{
			"200": jsonResponse("The process answers: its version, store and the tools it serves.", ref("Health")),
		},
	}}
	paths["/readyz"] = map[string]any{"get": map[string]any{
		"operationId": opID("getReady"),
		"summary":     "Readiness",
		"tags":        []any{"meta"},
		"responses": map[string]any{
			"200": jsonResponse("This replica can serve requests.", ref("Health")),
			"503": jsonResponse("This replica should get no requests: the store does not answer, or it is draining (status \"draining\").", ref("Health")),
		},
	}}
	paths["/openapi.json"] = map[string]any{"get": map[string]any{
		"operationId": opID("getOpenAPI"),
		"summary":     "This document",
		"tags":        []any{"meta"},
		"responses": map[string]any{
			"200": jsonResponse("The OpenAPI 3.1 document of the REST API, generated from the tools now served.", map[string]any{"type": "object"}),
		},
	}}
	var tagList []any
	names := make([]string, 0, len(tags))
	for n := range tags {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tagList = append(tagList, map[string]any{"name": n, "description": tags[n]})
	}
	return map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":   "Nexus",
			"version": version,
			"description": "REST surface of Nexus, the MCP tool hub. Every call goes through the same pipeline as MCP calls. " +
				"Every error response, of a tool or of the API itself, is {error: {code, message, details?, requestId, field?}} " +
				"(the inner object is Tutor Nexus ADR-012's ErrorResponse); the HTTP status follows the error code. " +
				"A downstream tool's isError result is returned with status 200.",
		},
		"tags":  tagList,
		"paths": paths,
		"components": map[string]any{
			"schemas":   schemas,
			"responses": errorResponses(),
			"headers": map[string]any{
				HeaderRequestID: header("Id of the request, as recorded in traces and logs."),
				HeaderSession:   header("The session (conversation) the call belongs to: the one named in context.sessionId, or a new one."),
				HeaderWorkspace: header("The workspace the call ran in."),
			},
		},
	}
}

func ref(schema string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + schema}
}

func responseRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/responses/" + name}
}

func header(desc string) map[string]any {
	return map[string]any{"description": desc, "schema": map[string]any{"type": "string"}}
}

func callHeaders() map[string]any {
	h := map[string]any{}
	for _, name := range []string{HeaderRequestID, HeaderSession, HeaderWorkspace} {
		h[name] = map[string]any{"$ref": "#/components/headers/" + name}
	}
	return h
}

func jsonResponse(desc string, schema map[string]any) map[string]any {
	return map[string]any{
		"description": desc,
		"headers":     map[string]any{HeaderRequestID: map[string]any{"$ref": "#/components/headers/" + HeaderRequestID}},
		"content":     map[string]any{"application/json": map[string]any{"schema": schema}},
	}
}

func queryParam(name, desc string, schema map[string]any) map[string]any {
	return map[string]any{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
}

// errorResponses are the error responses of tool calls ("call.404", ...)
// and of the surface itself ("BadRequest"); all have the one Error shape.
func errorResponses() map[string]any {
	resp := func(desc string) map[string]any {
		return map[string]any{
			"description": desc,
			"headers":     callHeaders(),
			"content":     map[string]any{"application/json": map[string]any{"schema": ref("Error")}},
		}
	}
	return map[string]any{
		"BadRequest": jsonResponse("Invalid query parameter (field names it).", ref("Error")),
		"call.400":   resp("BAD_REQUEST: invalid arguments (not JSON, not an object, or against the schema); the message names the argument."),
		"call.404":   resp("NOT_FOUND: the tool, or an object the arguments name, does not exist."),
		"call.409":   resp("CONFLICT."),
		"call.500":   resp("INTERNAL_ERROR; the message carries the request id."),
		"call.default": resp("Any other error; the status follows the code " +
			"(UNAUTHORIZED 401, FORBIDDEN 403, UNPROCESSABLE_ENTITY 422, RATE_LIMITED 429 with Retry-After, " +
			"SERVICE_UNAVAILABLE 503). The HTTP front answers 413 to a body over the size limit, 408 to a body not " +
			"received in time and 403 to a Host or Origin it does not accept, in the same shape."),
	}
}

// baseSchemas are the schemas of the surface itself.
func baseSchemas() map[string]any {
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer"}
	codes := []any{}
	for _, c := range []errs.Code{errs.BadRequest, errs.Unauthorized, errs.Forbidden, errs.NotFound, errs.Conflict,
		errs.UnprocessableEntity, errs.RateLimited, errs.Internal, errs.Unavailable} {
		codes = append(codes, string(c))
	}
	object := func(desc string, required []any, props map[string]any) map[string]any {
		s := map[string]any{"type": "object", "properties": props}
		if desc != "" {
			s["description"] = desc
		}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{
		"ErrorCode": map[string]any{"type": "string", "enum": codes, "description": "Error code (Tutor Nexus ADR-012)."},
		"Error": object("Every error response: Tutor Nexus ADR-012's ErrorResponse, plus the offending field, under error.", []any{"error"}, map[string]any{
			"error": object("", []any{"code", "message", "requestId"}, map[string]any{
				"code":    ref("ErrorCode"),
				"message": str,
				"details": object("", nil, map[string]any{"reason": str, "retryAfter": integer,
					"limit": object("The quota a RATE_LIMITED error refers to.", []any{"current", "max", "window"},
						map[string]any{"current": map[string]any{"type": "number"}, "max": map[string]any{"type": "number"}, "window": str})}),
				"requestId": map[string]any{"type": "string", "description": "Equals the X-Request-Id header."},
				"field":     map[string]any{"type": "string", "description": "The offending parameter or argument, when there is one."},
			}),
		}),
		"CallToolResult": map[string]any{
			"type":        "object",
			"description": "An MCP CallToolResult, as the downstream server returned it.",
			"properties": map[string]any{
				"content":           map[string]any{"type": "array", "items": object("", []any{"type"}, map[string]any{"type": str})},
				"structuredContent": map[string]any{},
				"isError":           map[string]any{"type": "boolean"},
				"_meta":             map[string]any{"type": "object"},
			},
		},
		"ToolParameter": object("One property of a tool's input schema (seed 004 ToolParameter).", []any{"name", "type", "required"}, map[string]any{
			"name":        str,
			"type":        map[string]any{"type": "string", "description": "JSON Schema type; several joined with |; any when unconstrained."},
			"description": str,
			"required":    map[string]any{"type": "boolean"},
			"enum":        map[string]any{"type": "array"},
			"default":     map[string]any{},
		}),
		"ToolInfo": object("A tool (seed 004 ToolMetadata plus identity and schemas).",
			[]any{"name", "description", "source", "parameters", "toolbox", "server", "tool", "inputSchema"}, map[string]any{
				"name":         map[string]any{"type": "string", "description": "Flat name: the tool's own for local tools, toolbox__server__tool for downstream ones."},
				"description":  str,
				"source":       map[string]any{"type": "string", "enum": []any{"local", "mcp"}},
				"parameters":   map[string]any{"type": "array", "items": ref("ToolParameter")},
				"toolbox":      str,
				"server":       str,
				"tool":         str,
				"title":        str,
				"inputSchema":  map[string]any{"type": "object", "description": "The input schema as listed, with the call context properties."},
				"outputSchema": map[string]any{"type": "object"},
			}),
		"ToolList": object("", []any{"tools"}, map[string]any{"tools": map[string]any{"type": "array", "items": ref("ToolInfo")}}),
		"TraceItem": object("A traced call.", []any{"requestId", "name", "toolbox", "server", "tool", "source", "surface",
			"workspace", "startedAt", "durationUs", "outcome", "argsBytes", "resultBytes"}, map[string]any{
			"requestId":   str,
			"name":        str,
			"toolbox":     str,
			"server":      str,
			"tool":        str,
			"source":      map[string]any{"type": "string", "description": "local or mcp; empty for an unknown tool."},
			"surface":     str,
			"sessionId":   str,
			"workspace":   str,
			"userId":      map[string]any{"type": "string", "description": "The user the call acted as; a user who is not an admin sees only their own calls."},
			"startedAt":   map[string]any{"type": "string", "format": "date-time"},
			"durationUs":  integer,
			"outcome":     map[string]any{"type": "string", "enum": []any{"ok", "error"}},
			"errorCode":   str,
			"argsBytes":   integer,
			"resultBytes": integer,
		}),
		"TracePage": object("", []any{"items", "hasMore"}, map[string]any{
			"items":      map[string]any{"type": "array", "items": ref("TraceItem")},
			"nextCursor": str,
			"hasMore":    map[string]any{"type": "boolean"},
		}),
		"Health": map[string]any{"type": "object", "required": []any{"status"}, "properties": map[string]any{
			"status":  str,
			"version": str,
		}},
	}
}

// embedSchema returns a deep copy of a tool's schema to be placed at
// components/schemas/name: local references ("#", "#/$defs/x") are
// rewritten to point into it, and a top-level $id, which would change how
// those resolve, is dropped.
func embedSchema(schema any, name string) any {
	base := "#/components/schemas/" + name
	out := rewrite(schema, base)
	if m, ok := out.(map[string]any); ok {
		delete(m, "$id")
	}
	return out
}

// rewrite copies a schema (or a list of schemas), rewriting local references.
func rewrite(v any, base string) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			switch k {
			case "$ref", "$dynamicRef":
				if s, ok := x.(string); ok && (s == "#" || strings.HasPrefix(s, "#/")) {
					x = base + s[1:]
				}
			case "enum", "const", "default", "examples", "example":
				// values, not schemas: kept as they are
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				// names to schemas: a property may be called "$ref" or "default"
				if named, ok := x.(map[string]any); ok {
					c := make(map[string]any, len(named))
					for n, sub := range named {
						c[n] = rewrite(sub, base)
					}
					x = c
				}
			default:
				x = rewrite(x, base)
			}
			m[k] = x
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = rewrite(x, base)
		}
		return s
	}
	return v
}

func hasRequired(schema map[string]any) bool {
	r, _ := schema["required"].([]any)
	return len(r) > 0
}

// summary is the tool's title, else the first line of its description
// (at most 120 characters), else its name.
func summary(t *registry.Tool) string {
	s := t.Title
	if s == "" {
		s, _, _ = strings.Cut(strings.TrimSpace(t.Description), "\n")
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return t.Name()
	}
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:119]) + "…"
	}
	return s
}
