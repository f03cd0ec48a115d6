package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestTransportKeepsItsSessionAfterManyOthers: a live connection keeps its
// session and workspace however many other connections come and go, and a
// connection's entry goes when it ends.
func TestTransportKeepsItsSessionAfterManyOthers(t *testing.T) {
	p, _ := newPipeline(t, sessions{})
	ctx := context.Background()
	call := func(transport, args string) *pipeline.Outcome {
		t.Helper()
		o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(args), Transport: transport})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o
	}
	first := call("alpha-conn", `{"name":"a","workspaceContext":{"workspaceId":"alpha"}}`)
	const others = 100_001
	for i := range others {
		tr := fmt.Sprintf("other-%d", i)
		call(tr, `{"name":"b"}`)
		if i%2 == 0 {
			p.EndTransport(tr)
		}
	}
	again := call("alpha-conn", `{"name":"c"}`)
	if again.SessionID != first.SessionID || again.Workspace != "alpha" {
		t.Fatalf("after %d other connections: session %s in %q, want %s in alpha", others, again.SessionID, again.Workspace, first.SessionID)
	}
	if n, want := p.Transports(), 1+others/2; n != want {
		t.Fatalf("%d transports bound, want %d (ended ones must go)", n, want)
	}
	p.EndTransport("alpha-conn")
	if n, want := p.Transports(), others/2; n != want {
		t.Fatalf("%d transports bound after the end, want %d", n, want)
	}
}

// TestTransportSessionPerWorkspace: a connection that names another
// workspace gets another session for it, never the same id in two
// workspaces; calls naming none use the connection's first workspace.
func TestTransportSessionPerWorkspace(t *testing.T) {
	p, _ := newPipeline(t, sessions{})
	ctx := context.Background()
	call := func(args string) *pipeline.Outcome {
		o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(args), Transport: "conn"})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o
	}
	a := call(`{"name":"a","context":{"workspaceId":"alpha"}}`)
	b := call(`{"name":"a","context":{"workspaceId":"beta"}}`)
	plain := call(`{"name":"a"}`)
	if a.SessionID == b.SessionID || b.Workspace != "beta" {
		t.Fatalf("alpha %s, beta %s in %q: one session in two workspaces", a.SessionID, b.SessionID, b.Workspace)
	}
	if plain.SessionID != a.SessionID || plain.Workspace != "alpha" {
		t.Fatalf("a call naming no workspace: %s in %q, want %s in alpha", plain.SessionID, plain.Workspace, a.SessionID)
	}
}

// TestDeclaredContextBelongsToTheTool: a tool whose own schema declares
// context, sessionId or workspaceContext gets them unchanged and lists its
// own definitions; Nexus then takes the call's context from outside the
// arguments (MCP _meta, or use_tool).
func TestDeclaredContextBelongsToTheTool(t *testing.T) {
	reg := registry.New()
	var got *registry.Call
	err := reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "own"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"},"sessionId":{"type":"string"},"workspaceContext":{"type":"object"},"x":{"type":"integer"}},"additionalProperties":false}`),
		Source:      registry.Local, Family: registry.Valence,
		Handler: func(_ context.Context, c *registry.Call) (any, error) {
			got = c
			return map[string]any{"success": true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Lookup("own")
	props := tool.ListedSchema()["properties"].(map[string]any)
	if props["context"].(map[string]any)["type"] != "string" || props["sessionId"].(map[string]any)["maxLength"] != nil {
		t.Fatalf("listed schema replaced the tool's own definitions: %v", props)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: sessions{}})
	args := `{"context":"free text","sessionId":"abc","workspaceContext":{"k":"v"},"x":1}`
	o := p.Call(context.Background(), pipeline.Request{Tool: "own", Args: json.RawMessage(args),
		Context: &pipeline.CallContext{SessionID: "from-meta", WorkspaceID: "meta-ws"}})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	var sent, want map[string]any
	json.Unmarshal(got.Args, &sent)
	json.Unmarshal([]byte(args), &want)
	if fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Fatalf("the tool got %s, want %s", got.Args, args)
	}
	if got.SessionID != "from-meta" || got.Workspace != "meta-ws" {
		t.Fatalf("context from _meta: session %q workspace %q", got.SessionID, got.Workspace)
	}
}

// ctxSessions refuses to store when its context is done, like a database.
type ctxSessions struct{ sessions }

func (s ctxSessions) Ensure(ctx context.Context, id, ws, owner, tier string) (string, string, error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	return s.sessions.Ensure(ctx, id, ws, owner, tier)
}

// TestSessionReportingAndStoring covers when a session is reported and
// stored: a failed call still reports its connection's session; a write
// without a connection or a named session stores nothing; a write whose
// caller hung up still stores its session.
func TestSessionReportingAndStoring(t *testing.T) {
	store := sessions{}
	p, _ := newPipeline(t, ctxSessions{store})
	ctx := context.Background()
	ok := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a"}`), Transport: "conn"})
	bad := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":7}`), Transport: "conn"})
	if bad.Err == nil || bad.SessionID == "" || bad.SessionID != ok.SessionID {
		t.Fatalf("a failed call on the connection reports session %q, want %q", bad.SessionID, ok.SessionID)
	}
	before := len(store)
	oneOff := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a"}`)})
	if oneOff.Err != nil || oneOff.SessionID == "" || len(store) != before {
		t.Fatalf("a call without a connection: session %q, %d sessions stored (was %d)", oneOff.SessionID, len(store), before)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel() // the caller is gone by the time the session is stored
	named := p.Call(cctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","context":{"sessionId":"kept"}}`)})
	if named.Err != nil || store["kept"] == "" {
		t.Fatalf("a successful write whose caller hung up: %v, stored %v", named.Err, store)
	}
}

// TestDeepArgumentsAreRefused: arguments nested deeper than 512 levels are
// a BAD_REQUEST that says so, on every surface (they all call this).
func TestDeepArgumentsAreRefused(t *testing.T) {
	small, _ := newPipeline(t, nil)
	p := pipeline.New(pipeline.Options{Registry: small.Registry()}) // the default size limit
	deep := `{"name":"a","context":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(deep)})
	if o.Err == nil || !strings.Contains(o.Err.Message, "nested deeper than 512") {
		t.Fatalf("600 levels: %v", o.Err)
	}
}

// TestGivenContextIsAFallback: a session named in the arguments decides the
// workspace over the context given outside them (use_tool passes its own).
func TestGivenContextIsAFallback(t *testing.T) {
	p, _ := newPipeline(t, sessions{"y": "alpha"})
	o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","context":{"sessionId":"y"}}`),
		Context: &pipeline.CallContext{SessionID: "outer", WorkspaceID: "default"}})
	if o.Err != nil || o.Workspace != "alpha" || o.SessionID != "y" {
		t.Fatalf("got %v in %q (session %q), want session y in alpha", o.Err, o.Workspace, o.SessionID)
	}
}

// TestUnreadableArgumentsReportTheConnectionsSession: a call whose
// arguments cannot be read (too deep, NUL, not an object) still reports the
// session of its connection.
func TestUnreadableArgumentsReportTheConnectionsSession(t *testing.T) {
	p, _ := newPipeline(t, sessions{})
	ctx := context.Background()
	first := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a","context":{"workspaceId":"w"}}`), Transport: "conn"})
	for _, args := range []string{`[]`, `"x"`, `{"name":"a\u0000"}`, `{"name":` + strings.Repeat("[", 600) + `}`} {
		o := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(args), Transport: "conn"})
		if o.Err == nil || o.SessionID != first.SessionID || o.Workspace != "w" {
			t.Errorf("%.30s: %v, session %q in %q, want %q in w", args, o.Err, o.SessionID, o.Workspace, first.SessionID)
		}
	}
}

// TestNULOnlyForNexusTools: NUL is refused in the strings of Nexus's own
// tools, not in what a meta-tool (use_tool) passes on to a downstream server.
func TestNULOnlyForNexusTools(t *testing.T) {
	reg := registry.New()
	for _, tool := range []registry.Tool{
		{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "bounded", Tool: "pass"}, Meta: true},
		{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "local", Tool: "store"}},
	} {
		tool.Source, tool.Family, tool.InputSchema = registry.Local, registry.Workbench, json.RawMessage(`{"type":"object"}`)
		tool.Handler = func(context.Context, *registry.Call) (any, error) { return "ok", nil }
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	args := json.RawMessage(`{"arguments":{"name":"N\u0000UL"}}`)
	if o := p.Call(context.Background(), pipeline.Request{Tool: "pass", Args: args}); o.Err != nil {
		t.Errorf("a meta-tool passing NUL on: %v", o.Err)
	}
	if o := p.Call(context.Background(), pipeline.Request{Tool: "store", Args: args}); o.Err == nil || o.Err.Field != "arguments.name" {
		t.Errorf("a Nexus tool given NUL: %v", o.Err)
	}
}

// TestRefusedRequestsAreRenderedLikeCalls: a request a surface could not map
// to a tool is rendered by the pipeline in the family it names, with the
// connection's session, and runs no handler.
func TestRefusedRequestsAreRenderedLikeCalls(t *testing.T) {
	p, calls := newPipeline(t, sessions{})
	ctx := context.Background()
	first := p.Call(ctx, pipeline.Request{Tool: "echo", Args: json.RawMessage(`{"name":"a"}`), Transport: "conn"})
	n := len(*calls)
	o := p.Call(ctx, pipeline.Request{Tool: "agent", Transport: "conn", RenderAs: "echo",
		Refused: errs.Invalid("mode", "is required: one of echo")})
	body, isErr := o.Body()
	if !isErr || string(body) != `{"success":false,"error_code":"BAD_REQUEST","error_message":"mode: is required: one of echo"}` {
		t.Fatalf("refused: %s (error %v)", body, isErr)
	}
	if o.SessionID != first.SessionID || len(*calls) != n || o.RequestID == "" {
		t.Fatalf("session %q (want %q), %d handler calls (want %d)", o.SessionID, first.SessionID, len(*calls), n)
	}
}
