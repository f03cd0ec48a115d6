package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

type echoIn struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// newPipeline returns a pipeline over one valence-family tool "echo" that
// records what it was called with, and one that panics.
func newPipeline(t testing.TB, sessions pipeline.Sessions) (*pipeline.Pipeline, *[]*registry.Call) {
	t.Helper()
	reg := registry.New()
	var calls []*registry.Call
	err := reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "echo"},
		Description: "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","maxLength":10},"count":{"type":"integer","minimum":0,"default":3}},"required":["name"],"additionalProperties":false}`),
		Source:      registry.Local,
		Family:      registry.Valence,
		Handler: registry.Bind(func(ctx context.Context, c *registry.Call, in echoIn) (any, error) {
			calls = append(calls, c)
			if in.Name == "missing" {
				return nil, errs.Missing("thing", in.Name)
			}
			if in.Name == "boom" {
				return nil, errors.New("database exploded")
			}
			return map[string]any{"success": true, "name": in.Name, "count": in.Count}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "panics"},
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Source:      registry.Local, Family: registry.Tutor,
		Handler: func(context.Context, *registry.Call) (any, error) { panic("oops") },
	})
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.New(pipeline.Options{Registry: reg, Sessions: sessions, MaxArgBytes: 1024}), &calls
}

func TestBadInputIsRejectedBeforeTheHandler(t *testing.T) {
	tests := []struct {
		name, tool, args string
		code             errs.Code
		wantMsg          string
	}{
		{"unknown tool", "nope", `{}`, errs.NotFound, `unknown tool "nope"`},
		{"not json", "echo", `{"name":`, errs.BadRequest, "not valid JSON"},
		{"array", "echo", `[1,2]`, errs.BadRequest, "must be a JSON object, got an array"},
		{"string", "echo", `"x"`, errs.BadRequest, "must be a JSON object, got a string"},
		{"missing required", "echo", `{}`, errs.BadRequest, `missing properties: ["name"]`},
		{"wrong type", "echo", `{"name":5}`, errs.BadRequest, "name: type: 5 has type"},
		{"wrong nested type", "echo", `{"name":"a","count":"x"}`, errs.BadRequest, "count: type"},
		{"below minimum", "echo", `{"name":"a","count":-1}`, errs.BadRequest, "count: minimum"},
		{"too long", "echo", `{"name":"abcdefghijklmnop"}`, errs.BadRequest, "name: maxLength"},
		{"unknown field", "echo", `{"name":"a","nmae":"b"}`, errs.BadRequest, `unexpected additional properties ["nmae"]`},
		{"invalid utf-8", "echo", "{\"name\":\"a\xff\"}", errs.BadRequest, "not valid UTF-8"},
		{"lone surrogate", "echo", `{"name":"a\ud800"}`, errs.BadRequest, "unpaired UTF-16 surrogate"},
		{"oversized", "echo", `{"name":"` + strings.Repeat("a", 2000) + `"}`, errs.BadRequest, "the limit is 1024 bytes"},
		{"context not object", "echo", `{"name":"a","context":"x"}`, errs.BadRequest, "context: must be an object, got a string"},
		{"session id not string", "echo", `{"name":"a","context":{"sessionId":1}}`, errs.BadRequest, "context.sessionId: must be a string"},
		{"bad workspace", "echo", `{"name":"a","workspaceContext":{"workspaceId":"../etc"}}`, errs.BadRequest, "workspaceContext.workspaceId: workspace id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, calls := newPipeline(t, nil)
			o := p.Call(context.Background(), pipeline.Request{Tool: tt.tool, Args: json.RawMessage(tt.args)})
			if o.Err == nil {
				t.Fatalf("want %s error, got result %s", tt.code, o.Result)
			}
			if o.Err.Code != tt.code || !strings.Contains(o.Err.Message, tt.wantMsg) {
				t.Fatalf("got %s %q, want %s containing %q", o.Err.Code, o.Err.Message, tt.code, tt.wantMsg)
			}
			if len(*calls) != 0 {
				t.Fatalf("handler ran %d times on bad input", len(*calls))
			}
		})
	}
}

func TestGoodInputReachesHandlerWithDefaultsAndWithoutContext(t *testing.T) {
	p, calls := newPipeline(t, nil)
	o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","context":{"sessionId":"s1"},"workspaceContext":{"workspaceId":"w1"}}`)})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if got, want := string(o.Result), `{"count":3,"name":"a","success":true}`; got != want {
		t.Fatalf("result %s, want %s", got, want)
	}
	c := (*calls)[0]
	if strings.Contains(string(c.Args), "context") {
		t.Fatalf("handler saw context fields: %s", c.Args)
	}
	if c.SessionID != "s1" || c.Workspace != "w1" || c.RequestID == "" {
		t.Fatalf("call context = %+v", c)
	}
}

// sessions is an in-memory [pipeline.Sessions] that counts creations.
type sessions map[string]string

func (s sessions) Lookup(_ context.Context, id string) (string, string, bool, error) {
	ws, ok := s[id]
	return ws, "", ok, nil
}

func (s sessions) Ensure(_ context.Context, id, ws, _, _ string) (string, string, error) {
	if got, ok := s[id]; ok {
		return got, "", nil
	}
	s[id] = ws
	return ws, "", nil
}

func (s sessions) NewSession(_ context.Context, ws string) (string, error) {
	id := fmt.Sprintf("new-%d", len(s))
	s[id] = ws
	return id, nil
}

func TestWorkspacePrecedence(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"nothing", `{"name":"a"}`, "default"},
		{"workspaceContext wins", `{"name":"a","workspaceContext":{"workspaceId":"wc"},"context":{"workspaceId":"c","sessionId":"new"}}`, "wc"},
		{"context next", `{"name":"a","context":{"workspaceId":"c","sessionId":"new"}}`, "c"},
		{"a session's own workspace named explicitly", `{"name":"a","context":{"workspaceId":"from-session","sessionId":"s"}}`, "from-session"},
		{"session next", `{"name":"a","context":{"sessionId":"s"}}`, "from-session"},
		{"unknown session", `{"name":"a","context":{"sessionId":"other"}}`, "default"},
		{"empty values fall through", `{"name":"a","workspaceContext":{"workspaceId":""},"context":{"workspaceId":"","sessionId":"s"}}`, "from-session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPipeline(t, sessions{"s": "from-session"})
			o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(tt.args)})
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if o.Workspace != tt.want {
				t.Fatalf("workspace %q, want %q", o.Workspace, tt.want)
			}
		})
	}
}

func TestErrorsRenderPerFamily(t *testing.T) {
	p, _ := newPipeline(t, nil)
	ctx := context.Background()

	o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"missing"}`)})
	body, isErr := o.Body()
	if !isErr || string(body) != `{"success":false,"error_code":"NOT_FOUND","error_message":"thing \"missing\" not found"}` {
		t.Fatalf("valence error body %s (isError %v)", body, isErr)
	}

	o = p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"boom"}`)})
	body, _ = o.Body()
	if o.Err.Code != errs.Internal || strings.Contains(string(body), "exploded") || !strings.Contains(string(body), o.RequestID) {
		t.Fatalf("internal error must hide the cause and name the request: %s", body)
	}

	o = p.Call(ctx, pipeline.Request{Tool: "panics", Args: json.RawMessage(`{}`)})
	body, isErr = o.Body()
	var te struct{ Code, Message, RequestID string }
	if err := json.Unmarshal(body, &te); err != nil || !isErr || te.Code != "INTERNAL_ERROR" || te.RequestID != o.RequestID {
		t.Fatalf("tutor-family panic body %s", body)
	}

	o = p.Call(ctx, pipeline.Request{Tool: "nope"})
	body, isErr = o.Body()
	if !isErr || string(body) != `unknown tool "nope"` || o.IsJSON() {
		t.Fatalf("unknown tool body %q", body)
	}
}

func FuzzCall(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"a"}`, `{"name":"a","count":2,"context":{"sessionId":"x"}}`, `[]`, `null`, `{"name":"\ud800"}`, "\xff", `{"context":{"workspaceId":7}}`} {
		f.Add([]byte(s))
	}
	p, calls := newPipeline(f, nil)
	f.Fuzz(func(t *testing.T, raw []byte) {
		before := len(*calls)
		o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: raw})
		if o.Err == nil {
			var got map[string]any
			if err := json.Unmarshal(o.Result, &got); err != nil {
				t.Fatalf("result is not JSON: %s", o.Result)
			}
			if len(*calls) != before+1 {
				t.Fatal("success without a handler call")
			}
			return
		}
		if o.Err.Code == errs.BadRequest && len(*calls) != before {
			t.Fatalf("handler ran on rejected input %q", raw)
		}
		if o.Err.Message == "" {
			t.Fatal("error without a message")
		}
	})
}

func TestSurrogatePairsAreAccepted(t *testing.T) {
	p, _ := newPipeline(t, nil)
	for _, args := range []string{`{"name":"\ud83d\ude00"}`, `{"name":"\\ud800"}`, `{"name":"\u00e9\n"}`} {
		if o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(args)}); o.Err != nil {
			t.Errorf("%s: %v", args, o.Err)
		}
	}
	for _, args := range []string{`{"name":"\udc00"}`, `{"name":"\ud800x"}`, `{"name":"\ud800\u0041"}`, `{"name":"\ud800\ud800"}`} {
		if o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(args)}); o.Err == nil || !strings.Contains(o.Err.Message, "surrogate") {
			t.Errorf("%s: want surrogate error, got %v", args, o.Err)
		}
	}
}

func TestTopLevelNullMeansAbsent(t *testing.T) {
	p, calls := newPipeline(t, nil)
	o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","count":null,"context":null}`)})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if got := string((*calls)[0].Args); got != `{"count":3,"name":"a"}` {
		t.Fatalf("handler args %s", got)
	}
	o = p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":null}`)})
	if o.Err == nil || !strings.Contains(o.Err.Message, `missing properties: ["name"]`) {
		t.Fatalf("null required property: %v", o.Err)
	}
}

func TestEveryCallGetsASession(t *testing.T) {
	ss := sessions{"known": "ws-known"}
	p, _ := newPipeline(t, ss)
	ctx := context.Background()
	call := func(args, transport string) *pipeline.Outcome {
		t.Helper()
		o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(args), Transport: transport})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o
	}
	if o := call(`{"name":"a","context":{"sessionId":"known"}}`, ""); o.SessionID != "known" || o.Workspace != "ws-known" {
		t.Fatalf("named session: %s %s", o.SessionID, o.Workspace)
	}
	if o := call(`{"name":"a","sessionId":"fresh","workspaceContext":{"workspaceId":"w2"}}`, ""); o.SessionID != "fresh" || ss["fresh"] != "w2" {
		t.Fatalf("top-level sessionId must be created in the call's workspace: %s %v", o.SessionID, ss)
	}
	a1, a2 := call(`{"name":"a"}`, "mcp-1"), call(`{"name":"a"}`, "mcp-1")
	b := call(`{"name":"a"}`, "mcp-2")
	if a1.SessionID == "" || a1.SessionID != a2.SessionID || b.SessionID == a1.SessionID {
		t.Fatalf("transport sessions: %s %s %s", a1.SessionID, a2.SessionID, b.SessionID)
	}
	// A transport session is bound to the workspace of its first call.
	w1 := call(`{"name":"a","context":{"workspaceId":"w-first"}}`, "mcp-3")
	if w2 := call(`{"name":"a"}`, "mcp-3"); w2.SessionID != w1.SessionID || w2.Workspace != "w-first" {
		t.Fatalf("transport session workspace: %s %s", w2.SessionID, w2.Workspace)
	}
	if w3 := call(`{"name":"a","workspaceContext":{"workspaceId":"w-other"}}`, "mcp-3"); w3.Workspace != "w-other" {
		t.Fatalf("an explicit workspace wins: %s", w3.Workspace)
	}
	c1, c2 := call(`{"name":"a"}`, ""), call(`{"name":"a"}`, "")
	if c1.SessionID == c2.SessionID {
		t.Fatal("calls without a transport must each start a session")
	}
	n := len(ss)
	if o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"context":{"sessionId":"never"}}`)}); o.Err == nil {
		t.Fatal("invalid call succeeded")
	}
	if len(ss) != n {
		t.Fatal("an invalid call created a session")
	}
	if o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","sessionId":5}`)}); o.Err == nil || !strings.Contains(o.Err.Message, "sessionId: must be a string") {
		t.Fatalf("numeric sessionId: %v", o.Err)
	}
}

func TestCallsAreSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reg := registry.New()
	reg.Add(registry.Tool{
		ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "echo"}, Source: registry.Local, Family: registry.Valence,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Handler:     func(context.Context, *registry.Call) (any, error) { return map[string]any{"success": true}, nil },
	})
	p := pipeline.New(pipeline.Options{Registry: reg, Tracer: tp.Tracer("test")})
	p.Call(context.Background(), pipeline.Request{Tool: "echo", Surface: "test", Args: json.RawMessage(`{"name":"a","context":{"sessionId":"s1","workspaceId":"w1"}}`)})
	p.Call(context.Background(), pipeline.Request{Tool: "echo", Surface: "test", Args: json.RawMessage(`{}`)})
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes() {
			m[string(kv.Key)] = kv.Value.String()
		}
		return m
	}
	ok, bad := spans[0], spans[1]
	if a := attrs(ok); ok.Name() != "tools/call echo" || a["nexus.server"] != "test" || a["mcp.session.id"] != "s1" || a["nexus.workspace"] != "w1" || a["nexus.source"] != "local" || ok.Status().Code != codes.Unset {
		t.Fatalf("success span: %s %v %v", ok.Name(), a, ok.Status())
	}
	if a := attrs(bad); a["error.type"] != "BAD_REQUEST" || bad.Status().Code != codes.Error {
		t.Fatalf("error span: %v %v", a, bad.Status())
	}
}
