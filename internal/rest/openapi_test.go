package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/rest"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite golden files (testdata/openapi.golden.json)")

func fetchOpenAPI(t *testing.T, e *env) (raw []byte, doc map[string]any) {
	t.Helper()
	r := e.do(t, "GET", "/openapi.json", "")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	return r.body, r.json
}

func TestOpenAPIGolden(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	raw, _ := fetchOpenAPI(t, e)
	again, _ := fetchOpenAPI(t, e)
	if !bytes.Equal(raw, again) {
		t.Fatal("two requests gave different documents")
	}
	testtools.Golden(t, filepath.Join("testdata", "openapi.golden.json"), raw, *update)
}

func TestOpenAPIStructure(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	_, doc := fetchOpenAPI(t, e)
	checkOpenAPI(t, doc, e.reg)

	// Local references inside a tool's schema are rewritten into its component.
	course := doc["components"].(map[string]any)["schemas"].(map[string]any)["tn_course_get.input"]
	if got := get(course, "properties.course.$ref"); got != "#/components/schemas/tn_course_get.input/$defs/ref" {
		t.Fatalf("$ref in tn_course_get.input = %v", got)
	}
	// The tool schema in the registry is untouched.
	tool, _ := e.reg.Lookup("tn_course_get")
	if got := get(tool.ListedSchema(), "properties.course.$ref"); got != "#/$defs/ref" {
		t.Fatalf("the registry's schema was modified: $ref %v", got)
	}
	// A downstream tool answers with the MCP result carrying its output schema.
	op := get(doc, "paths./api/tools/dev__files__read:call.post")
	if get(op, "responses.200.content.application/json.schema.allOf.0.$ref") != "#/components/schemas/CallToolResult" {
		t.Fatalf("downstream 200 schema: %v", get(op, "responses.200.content"))
	}
	// Every tool's errors have the one Error shape, whatever its family.
	for _, p := range []string{"paths./api/tools/echo:call.post.responses.400.$ref", "paths./api/tools/tn_course_get:call.post.responses.404.$ref",
		"paths./api/tools/open_box:call.post.responses.409.$ref"} {
		r, _ := get(doc, p).(string)
		if !strings.HasPrefix(r, "#/components/responses/call.") {
			t.Fatalf("%s = %v", p, get(doc, p))
		}
		if s := get(resolve(doc, map[string]any{"$ref": r}), "content.application/json.schema.$ref"); s != "#/components/schemas/Error" {
			t.Fatalf("%s: schema %v", r, s)
		}
	}
	if get(doc, "paths./api/tools/echo:call.post.requestBody.required") != true ||
		get(doc, "paths./api/tools/echo:call.post.summary") != "Echo a name back." {
		t.Fatalf("echo operation: %v", get(doc, "paths./api/tools/echo:call.post"))
	}
}

func TestOpenAPIFollowsTheRegistry(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	// A downstream server appears, with a tool whose name is one of the
	// surface's own operationIds and a schema with a recursive reference.
	errs := e.reg.ReplaceServer("dev", "tree", []registry.Tool{{
		ID:          registry.ID{Toolbox: "dev", Server: "tree", Tool: "walk"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/properties/node"}}}}}}`),
		Source:      registry.MCP,
		Handler:     func(context.Context, *registry.Call) (any, error) { return nil, nil },
	}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := e.reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "odd", Tool: "listTools"},
		InputSchema: json.RawMessage(`{"type":"object","$id":"https://example.com/x","properties":{"default":{"$ref":"#/$defs/d"},"$ref":{"type":"string"}},"$defs":{"d":{"description":"anything","default":{"$ref":"#/not/a/ref"}}}}`),
		Source:      registry.Local, Family: registry.Valence,
		Handler: func(context.Context, *registry.Call) (any, error) { return nil, nil },
	}); err != nil {
		t.Fatal(err)
	}
	_, doc := fetchOpenAPI(t, e)
	checkOpenAPI(t, doc, e.reg)
	if get(doc, "paths./api/tools.get.operationId") != "listTools_" {
		t.Fatalf("operationId of GET /api/tools = %v", get(doc, "paths./api/tools.get.operationId"))
	}
	odd := doc["components"].(map[string]any)["schemas"].(map[string]any)["listTools.input"].(map[string]any)
	if _, has := odd["$id"]; has {
		t.Error("$id kept")
	}
	if got := get(odd, "$defs.d.default.$ref"); got != "#/not/a/ref" {
		t.Errorf("a default value was rewritten: %v", got)
	}
	if got := get(odd, "properties.default.$ref"); got != "#/components/schemas/listTools.input/$defs/d" {
		t.Errorf("a property named default was not rewritten: %v", got)
	}
}

// checkOpenAPI validates doc structurally: required fields, every tool has
// its operation, operationIds are unique, every $ref resolves.
func checkOpenAPI(t *testing.T, doc map[string]any, reg *registry.Registry) {
	t.Helper()
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", doc["openapi"])
	}
	for _, p := range []string{"info.title", "info.version", "paths", "components.schemas"} {
		if get(doc, p) == nil {
			t.Errorf("missing %s", p)
		}
	}
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/tools", "/api/traces", "/healthz", "/readyz", "/openapi.json"} {
		if get(paths[p], "get.operationId") == nil {
			t.Errorf("no GET %s", p)
		}
	}
	for _, tool := range reg.List() {
		name := tool.ID.Name()
		op := get(paths["/api/tools/"+name+":call"], "post")
		if op == nil {
			t.Errorf("tool %s has no operation", name)
			continue
		}
		if get(op, "operationId") != name {
			t.Errorf("operationId of %s is %v", name, get(op, "operationId"))
		}
		if get(op, "requestBody.content.application/json.schema.$ref") != "#/components/schemas/"+name+".input" {
			t.Errorf("%s request body: %v", name, get(op, "requestBody"))
		}
		for _, status := range []string{"200", "400", "404", "409", "500"} {
			if get(op, "responses."+status) == nil {
				t.Errorf("%s has no %s response", name, status)
			}
		}
	}
	ids := map[string]string{}
	for p, item := range paths {
		if !strings.HasPrefix(p, "/") {
			t.Errorf("path %q does not start with /", p)
		}
		for method, op := range item.(map[string]any) {
			id, _ := get(op, "operationId").(string)
			if id == "" {
				t.Errorf("%s %s has no operationId", method, p)
			}
			if prev, dup := ids[id]; dup {
				t.Errorf("operationId %q on %s and %s %s", id, prev, method, p)
			}
			ids[id] = method + " " + p
			responses, _ := get(op, "responses").(map[string]any)
			if len(responses) == 0 {
				t.Errorf("%s %s has no responses", method, p)
			}
			for status, resp := range responses {
				resp = resolve(doc, resp)
				if d, _ := get(resp, "description").(string); d == "" {
					t.Errorf("%s %s response %s has no description", method, p, status)
				}
			}
		}
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if _, ok := pointer(doc, r); !ok {
					t.Errorf("$ref %q at %s does not resolve", r, at)
				}
			}
			for k, x := range v {
				if k == "enum" || k == "const" || k == "default" || k == "examples" {
					continue
				}
				walk(x, at+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
}

// resolve follows a $ref (one level).
func resolve(doc map[string]any, v any) any {
	if r, ok := get(v, "$ref").(string); ok {
		if target, ok := pointer(doc, r); ok {
			return target
		}
	}
	return v
}

// pointer resolves a "#/..." JSON pointer in doc.
func pointer(doc map[string]any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	var v any = doc
	rest := strings.TrimPrefix(ref, "#")
	if rest == "" {
		return v, true
	}
	if !strings.HasPrefix(rest, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(rest[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// TestOpenAPIServedAsJSON checks the handler's response as a client sees it.
func TestOpenAPIServedAsJSON(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest("HEAD", "/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("HEAD: status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	b, err := rest.MarshalOpenAPI(e.reg, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := fetchOpenAPI(t, e)
	if !bytes.Equal(b, raw) {
		t.Fatal("MarshalOpenAPI differs from what the handler serves")
	}
}
