package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/rest"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// testTools are the tools of the test registry: one per family, and a
// downstream tool whose handler returns a CallToolResult as a proxy does.
func testTools() []registry.Tool {
	type echoIn struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	failures := map[string]error{
		"missing":       errs.Missing("thing", "missing"),
		"conflict":      errs.E(errs.Conflict, "thing changed meanwhile"),
		"unprocessable": errs.E(errs.UnprocessableEntity, "cannot do that"),
		"forbidden":     errs.E(errs.Forbidden, "not yours"),
		"unauthorized":  errs.E(errs.Unauthorized, "who are you"),
		"unavailable":   errs.E(errs.Unavailable, "try later"),
		"limited":       &errs.Error{Code: errs.RateLimited, Message: "slow down", RetryAfter: 30},
		"boom":          errors.New("database exploded"),
	}
	return []registry.Tool{
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "echo"},
			Description: "Echo a name back.\nSecond line of the description.",
			InputSchema: json.RawMessage(`{"type":"object",
				"properties":{
					"name":{"type":"string","maxLength":20,"description":"Who to echo."},
					"count":{"type":"integer","minimum":0,"default":3},
					"mode":{"type":"string","enum":["fast","slow"]},
					"note":{"type":["string","null"],"default":null},
					"tags":{"type":"array","items":{"type":"string"}}
				},
				"required":["name"],"additionalProperties":false}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"success":{"type":"boolean"},"name":{"type":"string"},"count":{"type":"integer"}},"required":["success"]}`),
			Source:       registry.Local,
			Family:       registry.Valence,
			ReadOnly:     true,
			Handler: registry.Bind(func(ctx context.Context, c *registry.Call, in echoIn) (any, error) {
				if err := failures[in.Name]; err != nil {
					return nil, err
				}
				return map[string]any{"success": true, "name": in.Name, "count": in.Count}, nil
			}),
		},
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "tutor", Tool: "tn_course_get"},
			Description: "Get a course.",
			InputSchema: json.RawMessage(`{"type":"object",
				"$defs":{"ref":{"type":"string","pattern":"^[a-z]+:.+$","description":"institution:course_code"}},
				"properties":{"course":{"$ref":"#/$defs/ref"}},"required":["course"]}`),
			Source: registry.Local,
			Family: registry.Tutor,
			Handler: registry.Bind(func(ctx context.Context, c *registry.Call, in struct {
				Course string `json:"course"`
			}) (any, error) {
				if in.Course == "sfu:CMPT 999" {
					return nil, &errs.Error{Code: errs.NotFound, Message: "course sfu:CMPT 999 not found", Reason: "unknown_course"}
				}
				return map[string]any{"course": in.Course, "title": "Intro"}, nil
			}),
		},
		{
			ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "workbench", Tool: "open_box"},
			Description: "Open a toolbox.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"toolbox":{"type":"string"}},"required":["toolbox"]}`),
			Source:      registry.Local,
			Family:      registry.Workbench,
			Handler: registry.Bind(func(ctx context.Context, c *registry.Call, in struct {
				Toolbox string `json:"toolbox"`
			}) (any, error) {
				if in.Toolbox != "dev" {
					return nil, errs.E(errs.NotFound, "Toolbox '%s' not found", in.Toolbox)
				}
				return map[string]any{"toolbox": "dev", "tools": []any{}}, nil
			}),
		},
		{
			ID:           registry.ID{Toolbox: "dev", Server: "files", Tool: "read"},
			Description:  "Read a file (downstream).",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Source:       registry.MCP,
			Family:       registry.Workbench,
			Handler: registry.Bind(func(ctx context.Context, c *registry.Call, in struct {
				Path string `json:"path"`
			}) (any, error) {
				if in.Path == "missing.txt" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ENOENT: missing.txt"}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}},
					StructuredContent: map[string]any{"text": "hello"}}, nil
			}),
		},
	}
}

type env struct {
	h      http.Handler
	reg    *registry.Registry
	st     *store.Store
	traces *trace.Writer
}

func newEnv(t *testing.T, st *store.Store, o rest.Options) *env {
	t.Helper()
	reg := registry.New()
	for _, tool := range testTools() {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	tw := trace.NewWriter(st, slog.New(slog.DiscardHandler))
	t.Cleanup(tw.Close)
	p := pipeline.New(pipeline.Options{Registry: reg, Traces: tw, Sessions: conversation.New(st)})
	o.Pipeline, o.Store, o.Version = p, st, "1.2.3"
	if o.CursorKey == nil {
		o.CursorKey = []byte("test cursor key")
	}
	return &env{h: rest.Handler(o), reg: reg, st: st, traces: tw}
}

type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (e *env) do(t *testing.T, method, target, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, want application/json (body %s)", method, target, ct, r.body)
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Fatalf("%s %s: no X-Request-Id", method, target)
	}
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v\n%s", method, target, err, r.body)
	}
	r.json, _ = v.(map[string]any)
	return r
}

// get follows a dotted path ("error.code", "content.0.text") into v.
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func TestListTools(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"dev__files__read", "echo", "open_box", "tn_course_get"}},
		{"?source=local", []string{"echo", "open_box", "tn_course_get"}},
		{"?source=mcp", []string{"dev__files__read"}},
		{"?toolbox=dev", []string{"dev__files__read"}},
		{"?toolbox=nexus&source=mcp", []string{}},
		{"?toolbox=elsewhere", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.do(t, "GET", "/api/tools"+tt.query, "")
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			tools, ok := r.json["tools"].([]any)
			if !ok {
				t.Fatalf("no tools array: %s", r.body)
			}
			got := []string{}
			for _, tool := range tools {
				got = append(got, get(tool, "name").(string))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("tools %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("shape", func(t *testing.T) {
		var list rest.ToolList
		r := e.do(t, "GET", "/api/tools", "")
		if err := json.Unmarshal(r.body, &list); err != nil {
			t.Fatal(err)
		}
		byName := map[string]rest.ToolInfo{}
		for _, ti := range list.Tools {
			byName[ti.Name] = ti
		}
		echo := byName["echo"]
		if echo.Source != "local" || echo.Toolbox != "nexus" || echo.Server != "test" || echo.Tool != "echo" ||
			echo.Description != "Echo a name back.\nSecond line of the description." {
			t.Fatalf("echo = %+v", echo)
		}
		wantParams := []rest.Parameter{
			{Name: "name", Type: "string", Description: "Who to echo.", Required: true},
			{Name: "count", Type: "integer", Default: json.RawMessage(`3`)},
			{Name: "mode", Type: "string", Enum: json.RawMessage(`["fast","slow"]`)},
			{Name: "note", Type: "string", Default: json.RawMessage(`null`)},
			{Name: "tags", Type: "array"},
		}
		if !reflect.DeepEqual(echo.Parameters, wantParams) {
			t.Fatalf("parameters\n got %+v\nwant %+v", echo.Parameters, wantParams)
		}
		props, _ := echo.InputSchema["properties"].(map[string]any)
		for _, p := range []string{"name", "count", "context", "workspaceContext", "sessionId"} {
			if props[p] == nil {
				t.Errorf("inputSchema lacks property %q", p)
			}
		}
		if !json.Valid(echo.OutputSchema) || len(echo.OutputSchema) == 0 {
			t.Errorf("outputSchema %s", echo.OutputSchema)
		}
		read := byName["dev__files__read"]
		if read.Source != "mcp" || read.Toolbox != "dev" || read.Server != "files" || read.Tool != "read" ||
			!reflect.DeepEqual(read.Parameters, []rest.Parameter{{Name: "path", Type: "string", Required: true}}) {
			t.Fatalf("dev__files__read = %+v", read)
		}
		if p := byName["tn_course_get"].Parameters; len(p) != 1 || p[0].Type != "any" || !p[0].Required {
			t.Fatalf("tn_course_get parameters %+v", p) // a $ref property: its type is not resolved
		}
		// The raw listing keeps seed 004's field names.
		first := r.json["tools"].([]any)[0].(map[string]any)
		for _, k := range []string{"name", "description", "source", "parameters", "toolbox", "server", "tool", "inputSchema"} {
			if _, ok := first[k]; !ok {
				t.Errorf("tool lacks %q", k)
			}
		}
	})

	t.Run("bad source", func(t *testing.T) {
		r := e.do(t, "GET", "/api/tools?source=remote", "")
		if r.status != 400 || get(r.json, "error.code") != "BAD_REQUEST" || get(r.json, "error.field") != "source" {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})

	t.Run("follows the registry", func(t *testing.T) {
		e.reg.ReplaceServer("dev", "git", []registry.Tool{{ID: registry.ID{Toolbox: "dev", Server: "git", Tool: "log"},
			InputSchema: json.RawMessage(`{"type":"object"}`), Source: registry.MCP,
			Handler: func(context.Context, *registry.Call) (any, error) { return &mcp.CallToolResult{}, nil }}})
		defer e.reg.ReplaceServer("dev", "git", nil)
		r := e.do(t, "GET", "/api/tools?toolbox=dev", "")
		if n := len(r.json["tools"].([]any)); n != 2 {
			t.Fatalf("%d dev tools after a downstream server appeared, want 2", n)
		}
	})
}

func TestParameters(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []rest.Parameter
	}{
		{"no properties", `{"type":"object"}`, []rest.Parameter{}},
		{"not json", `{`, []rest.Parameter{}},
		{"declaration order", `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"},"m":{"type":"boolean"}},"required":["m"]}`,
			[]rest.Parameter{{Name: "z", Type: "string"}, {Name: "a", Type: "number"}, {Name: "m", Type: "boolean", Required: true}}},
		{"type union", `{"properties":{"v":{"type":["integer","string","null"]}}}`, []rest.Parameter{{Name: "v", Type: "integer|string"}}},
		{"only null", `{"properties":{"v":{"type":["null"]}}}`, []rest.Parameter{{Name: "v", Type: "null"}}},
		{"enum without type", `{"properties":{"v":{"enum":["a",1,2.5]}}}`,
			[]rest.Parameter{{Name: "v", Type: "string|integer|number", Enum: json.RawMessage(`["a",1,2.5]`)}}},
		{"const", `{"properties":{"v":{"const":true}}}`, []rest.Parameter{{Name: "v", Type: "boolean"}}},
		{"anyOf", `{"properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"},{"type":"object"}]}}}`, []rest.Parameter{{Name: "v", Type: "string|object"}}},
		{"unconstrained", `{"properties":{"v":{},"w":true,"x":{"anyOf":[{"type":"string"},{}]}}}`,
			[]rest.Parameter{{Name: "v", Type: "any"}, {Name: "w", Type: "any"}, {Name: "x", Type: "any"}}},
		{"description and default object", `{"properties":{"v":{"type":"object","description":"d","default":{"a":1}}}}`,
			[]rest.Parameter{{Name: "v", Type: "object", Description: "d", Default: json.RawMessage(`{"a":1}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rest.Parameters(json.RawMessage(tt.schema))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCall(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{MaxBodyBytes: 4096})
	tests := []struct {
		name, path, body string
		status           int
		want             map[string]any // dotted path -> value ("*" means present)
		workspace        string
	}{
		{"ok", "echo:call", `{"name":"ann"}`, 200, map[string]any{"success": true, "name": "ann", "count": 3.0}, "default"},
		{"ok with workspace", "echo:call", `{"name":"ann","count":1,"workspaceContext":{"workspaceId":"w1"}}`, 200,
			map[string]any{"count": 1.0}, "w1"},
		{"percent-encoded colon", "echo%3Acall", `{"name":"ann"}`, 200, map[string]any{"success": true}, "default"},
		{"null body", "echo:call", `null`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
		{"empty body", "echo:call", ``, 400, map[string]any{"error.code": "BAD_REQUEST", "error.message": "*"}, "default"},
		{"schema error names the field", "echo:call", `{"name":5}`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
		{"not json", "echo:call", `{"name":`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
		{"array", "echo:call", `[1]`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
		{"unauthorized", "echo:call", `{"name":"unauthorized"}`, 401, map[string]any{"error.code": "UNAUTHORIZED", "error.message": "who are you"}, "default"},
		{"forbidden", "echo:call", `{"name":"forbidden"}`, 403, map[string]any{"error.code": "FORBIDDEN"}, "default"},
		{"not found", "echo:call", `{"name":"missing"}`, 404, map[string]any{"success": nil, "error.code": "NOT_FOUND", "error.message": `thing "missing" not found`}, "default"},
		{"conflict", "echo:call", `{"name":"conflict"}`, 409, map[string]any{"error.code": "CONFLICT"}, "default"},
		{"unprocessable", "echo:call", `{"name":"unprocessable"}`, 422, map[string]any{"error.code": "UNPROCESSABLE_ENTITY"}, "default"},
		{"rate limited", "echo:call", `{"name":"limited"}`, 429, map[string]any{"error.code": "RATE_LIMITED", "error.details.retryAfter": 30.0}, "default"},
		{"internal", "echo:call", `{"name":"boom"}`, 500, map[string]any{"error.code": "INTERNAL_ERROR"}, "default"},
		{"unavailable", "echo:call", `{"name":"unavailable"}`, 503, map[string]any{"error.code": "SERVICE_UNAVAILABLE"}, "default"},
		{"tutor ok", "tn_course_get:call", `{"course":"sfu:CMPT 120"}`, 200, map[string]any{"title": "Intro"}, "default"},
		{"tutor $defs schema", "tn_course_get:call", `{"course":"CMPT"}`, 400, map[string]any{"error.code": "BAD_REQUEST", "error.requestId": "*"}, "default"},
		{"tutor not found", "tn_course_get:call", `{"course":"sfu:CMPT 999"}`, 404,
			map[string]any{"error.code": "NOT_FOUND", "error.message": "course sfu:CMPT 999 not found", "error.details.reason": "unknown_course", "error.requestId": "*"}, "default"},
		{"workbench ok", "open_box:call", `{"toolbox":"dev"}`, 200, map[string]any{"toolbox": "dev"}, "default"},
		{"workbench text error is wrapped", "open_box:call", `{"toolbox":"nope"}`, 404,
			map[string]any{"error.code": "NOT_FOUND", "error.message": "Toolbox 'nope' not found", "error.requestId": "*"}, "default"},
		{"workbench bad arguments", "open_box:call", `{}`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
		{"unknown tool", "nope:call", `{}`, 404, map[string]any{"error.code": "NOT_FOUND", "error.message": `unknown tool "nope"`}, "default"},
		{"downstream ok", "dev__files__read:call", `{"path":"a.txt"}`, 200,
			map[string]any{"content.0.type": "text", "content.0.text": "hello", "structuredContent.text": "hello"}, "default"},
		{"downstream tool error is still 200", "dev__files__read:call", `{"path":"missing.txt"}`, 200,
			map[string]any{"isError": true, "content.0.text": "ENOENT: missing.txt"}, "default"},
		{"downstream bad arguments", "dev__files__read:call", `{}`, 400, map[string]any{"error.code": "BAD_REQUEST"}, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, "POST", "/api/tools/"+tt.path, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			for path, want := range tt.want {
				got := get(r.json, path)
				if (want == "*" && got == nil) || (want != "*" && !reflect.DeepEqual(got, want)) {
					t.Errorf("%s = %#v, want %#v (body %s)", path, got, want, r.body)
				}
			}
			id := r.header.Get("X-Request-Id")
			for _, p := range []string{"requestId", "error.requestId"} {
				if v := get(r.json, p); v != nil && v != id {
					t.Errorf("%s %v differs from X-Request-Id %s", p, v, id)
				}
			}
			if got := r.header.Get("X-Nexus-Workspace"); got != tt.workspace {
				t.Errorf("X-Nexus-Workspace %q, want %q", got, tt.workspace)
			}
			if s := r.header.Get("X-Nexus-Session"); tt.status < 300 && s == "" {
				t.Errorf("a successful call has no X-Nexus-Session")
			}
		})
	}

	t.Run("internal error hides the cause", func(t *testing.T) {
		r := e.do(t, "POST", "/api/tools/echo:call", `{"name":"boom"}`)
		if strings.Contains(string(r.body), "exploded") || !strings.Contains(string(r.body), r.header.Get("X-Request-Id")) {
			t.Fatalf("body %s", r.body)
		}
	})
	t.Run("retry after", func(t *testing.T) {
		r := e.do(t, "POST", "/api/tools/echo:call", `{"name":"limited"}`)
		if got := r.header.Get("Retry-After"); got != "30" {
			t.Fatalf("Retry-After %q", got)
		}
	})
	t.Run("named session", func(t *testing.T) {
		r := e.do(t, "POST", "/api/tools/echo:call", `{"name":"ann","context":{"sessionId":"my-session"}}`)
		if got := r.header.Get("X-Nexus-Session"); got != "my-session" {
			t.Fatalf("X-Nexus-Session %q", got)
		}
		r = e.do(t, "POST", "/api/tools/echo:call", `{"name":"ann","context":{"sessionId":"my-session"}}`)
		if got := r.header.Get("X-Nexus-Session"); got != "my-session" {
			t.Fatalf("X-Nexus-Session %q", got)
		}
	})
	t.Run("body over the limit", func(t *testing.T) {
		r := e.do(t, "POST", "/api/tools/echo:call", `{"name":"`+strings.Repeat("a", 5000)+`"}`)
		if r.status != 413 || get(r.json, "error.code") != "BAD_REQUEST" {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

func TestRoutesAnswerJSON(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	tests := []struct {
		method, target string
		status         int
		allow          string
	}{
		{"GET", "/api/tools/echo:call", 405, "POST"},
		{"PUT", "/api/tools/echo:call", 405, "POST"},
		{"DELETE", "/api/tools", 405, "GET, HEAD"},
		{"POST", "/api/tools", 405, "GET, HEAD"},
		{"POST", "/api/traces", 405, "GET, HEAD"},
		{"POST", "/openapi.json", 405, "GET, HEAD"},
		{"POST", "/api/tools/echo", 404, ""},
		{"POST", "/api/tools/echo:run", 404, ""},
		{"POST", "/api/tools/:call", 404, ""},
		{"POST", "/api/tools/echo:call/more", 404, ""},
		{"POST", "/api/tools/", 404, ""},
		{"GET", "/api/nope", 404, ""},
		{"GET", "/", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			r := e.do(t, tt.method, tt.target, "{}")
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if get(r.json, "error.code") == nil || get(r.json, "error.message") == nil {
				t.Errorf("not the error shape: %s", r.body)
			}
		})
	}
}

func TestTraces(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st, rest.Options{})
		var sessionOfFirst, idOfFirst string
		calls := []struct{ path, body string }{
			{"echo:call", `{"name":"ann","workspaceContext":{"workspaceId":"w1"}}`},
			{"echo:call", `{"name":"missing"}`},
			{"dev__files__read:call", `{"path":"a.txt"}`},
			{"dev__files__read:call", `{"path":"missing.txt"}`},
			{"nope:call", `{}`},
		}
		for i, c := range calls {
			r := e.do(t, "POST", "/api/tools/"+c.path, c.body)
			if i == 0 {
				sessionOfFirst, idOfFirst = r.header.Get("X-Nexus-Session"), r.header.Get("X-Request-Id")
			}
		}
		for range 60 {
			e.do(t, "POST", "/api/tools/open_box:call", `{"toolbox":"dev"}`)
		}
		e.traces.Flush()

		names := func(r response) []string {
			var out []string
			for _, it := range r.json["items"].([]any) {
				out = append(out, get(it, "name").(string))
			}
			return out
		}
		tests := []struct {
			query string
			want  []string
		}{
			{"tool=echo", []string{"echo", "echo"}},
			{"tool=dev__files__read&outcome=error", []string{"dev__files__read"}},
			{"source=mcp", []string{"dev__files__read", "dev__files__read"}},
			{"outcome=error&limit=10", []string{"nope", "dev__files__read", "echo"}},
			{"workspace=w1", []string{"echo"}},
			{"session=" + url.QueryEscape(sessionOfFirst), []string{"echo"}},
			{"tool=nope", []string{"nope"}},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				r := e.do(t, "GET", "/api/traces?"+tt.query, "")
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if got := names(r); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("names %v, want %v", got, tt.want)
				}
				if r.json["hasMore"] != false || r.json["nextCursor"] != nil {
					t.Fatalf("a complete page has hasMore %v, nextCursor %v", r.json["hasMore"], r.json["nextCursor"])
				}
			})
		}

		t.Run("item", func(t *testing.T) {
			var page rest.TracePage
			r := e.do(t, "GET", "/api/traces?workspace=w1", "")
			if err := json.Unmarshal(r.body, &page); err != nil || len(page.Items) != 1 {
				t.Fatalf("page %s: %v", r.body, err)
			}
			it := page.Items[0]
			started, err := time.Parse(time.RFC3339Nano, it.StartedAt)
			if err != nil || time.Since(started) > time.Minute || started.Location() != time.UTC {
				t.Fatalf("startedAt %q: %v", it.StartedAt, err)
			}
			want := rest.TraceItem{RequestID: idOfFirst, Name: "echo", Toolbox: "nexus", Server: "test", Tool: "echo",
				Source: "local", Surface: "rest", SessionID: sessionOfFirst, Workspace: "w1", UserID: "local", StartedAt: it.StartedAt,
				DurationUS: it.DurationUS, Outcome: "ok", ArgsBytes: len(calls[0].body), ResultBytes: it.ResultBytes}
			if it != want || it.ResultBytes == 0 || it.DurationUS < 0 {
				t.Fatalf("item\n got %+v\nwant %+v", it, want)
			}
		})

		t.Run("pages", func(t *testing.T) {
			seen := map[string]bool{}
			cursor, pages := "", 0
			for {
				q := "/api/traces?limit=7"
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				r := e.do(t, "GET", q, "")
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				pages++
				for _, it := range r.json["items"].([]any) {
					id := get(it, "requestId").(string)
					if seen[id] {
						t.Fatalf("%s on two pages", id)
					}
					seen[id] = true
				}
				if r.json["hasMore"] != (r.json["nextCursor"] != nil) {
					t.Fatalf("hasMore %v with nextCursor %v", r.json["hasMore"], r.json["nextCursor"])
				}
				if r.json["hasMore"] == false {
					break
				}
				cursor = r.json["nextCursor"].(string)
			}
			if len(seen) != 65 || pages != 10 {
				t.Fatalf("%d records on %d pages, want 65 on 10", len(seen), pages)
			}
		})

		t.Run("default limit", func(t *testing.T) {
			r := e.do(t, "GET", "/api/traces", "")
			if n := len(r.json["items"].([]any)); n != trace.DefaultLimit || r.json["hasMore"] != true {
				t.Fatalf("%d items, hasMore %v", n, r.json["hasMore"])
			}
		})

		first := e.do(t, "GET", "/api/traces?limit=2&outcome=ok", "")
		cursor := first.json["nextCursor"].(string)
		tampered := []byte(cursor)
		tampered[3] ^= 'A' ^ 'B'
		bad := []struct{ query, field string }{
			{"source=remote", "source"},
			{"outcome=failed", "outcome"},
			{"limit=0", "limit"},
			{"limit=501", "limit"},
			{"limit=ten", "limit"},
			{"limit=", "limit"},
			{"tool=a&tool=b", "tool"},
			{"workspace=" + strings.Repeat("w", 201), "workspace"},
			{"cursor=garbage", "cursor"},
			{"outcome=ok&cursor=" + url.QueryEscape(string(tampered)), "cursor"},
			{"outcome=error&cursor=" + url.QueryEscape(cursor), "cursor"},
		}
		for _, tt := range bad {
			t.Run("bad "+tt.query[:min(len(tt.query), 40)], func(t *testing.T) {
				r := e.do(t, "GET", "/api/traces?"+tt.query, "")
				if r.status != 400 || get(r.json, "error.code") != "BAD_REQUEST" || get(r.json, "error.field") != tt.field ||
					!strings.HasPrefix(get(r.json, "error.message").(string), tt.field+": ") {
					t.Fatalf("status %d: %s; want 400 naming %s", r.status, r.body, tt.field)
				}
			})
		}
		t.Run("cursor from another key", func(t *testing.T) {
			other := newEnv(t, st, rest.Options{CursorKey: []byte("another key")})
			r := other.do(t, "GET", "/api/traces?limit=2&outcome=ok&cursor="+url.QueryEscape(cursor), "")
			if r.status != 400 || get(r.json, "error.field") != "cursor" {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
		})
	})
}

func TestTracesWithoutStore(t *testing.T) {
	e := newEnv(t, storetest.OpenTestSQLite(t), rest.Options{})
	h := rest.Handler(rest.Options{Registry: e.reg})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/traces", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "SERVICE_UNAVAILABLE") {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[errs.Code]int{
		errs.BadRequest: 400, errs.Unauthorized: 401, errs.Forbidden: 403, errs.NotFound: 404, errs.Conflict: 409,
		errs.UnprocessableEntity: 422, errs.RateLimited: 429, errs.Internal: 500, errs.Unavailable: 503, "SOMETHING_NEW": 500,
	} {
		if got := rest.HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, want)
		}
	}
}
