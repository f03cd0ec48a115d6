package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

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
