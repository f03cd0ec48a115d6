package registry_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

func nop(context.Context, *registry.Call) (any, error) { return nil, nil }

func TestAddRejectsBadTools(t *testing.T) {
	tests := []struct {
		name string
		tool registry.Tool
		want string
	}{
		{"bad name", registry.Tool{ID: registry.ID{Toolbox: "nexus", Tool: "has space"}, Source: registry.Local, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}, "MCP name rules"},
		{"no handler", registry.Tool{ID: registry.ID{Toolbox: "nexus", Tool: "x"}, Source: registry.Local, InputSchema: json.RawMessage(`{"type":"object"}`)}, "no handler"},
		{"not object", registry.Tool{ID: registry.ID{Toolbox: "nexus", Tool: "x"}, Source: registry.Local, InputSchema: json.RawMessage(`{"type":"string"}`), Handler: nop}, "type object"},
		{"not json", registry.Tool{ID: registry.ID{Toolbox: "nexus", Tool: "x"}, Source: registry.Local, InputSchema: json.RawMessage(`{`), Handler: nop}, "input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := registry.New().Add(tt.tool)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Add = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

// TestSchemaCompiledOnFirstUse: a tool's input schema is compiled when it
// is first needed, not when the tool is registered; one that does not
// compile says why (CompileSchema) and checks only that the arguments are
// an object, and a good one validates.
func TestSchemaCompiledOnFirstUse(t *testing.T) {
	r := registry.New()
	bad := registry.Tool{ID: registry.ID{Toolbox: "nexus", Server: "s", Tool: "bad"}, Source: registry.Local, Handler: nop,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","default":"x"}}}`)}
	good := registry.Tool{ID: registry.ID{Toolbox: "nexus", Server: "s", Tool: "good"}, Source: registry.Local, Handler: nop,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)}
	for _, tool := range []registry.Tool{bad, good} {
		if err := r.Add(tool); err != nil {
			t.Fatalf("Add %s: %v", tool.ID.Tool, err)
		}
	}
	b, _ := r.Lookup("bad")
	if err := b.CompileSchema(); err == nil || !strings.Contains(err.Error(), "input schema") {
		t.Fatalf("CompileSchema of a schema whose default is of the wrong type = %v", err)
	}
	if err := b.Validate(map[string]any{"a": "anything"}); err != nil {
		t.Errorf("a schema that does not compile refused an object: %v", err)
	}
	g, _ := r.Lookup("good")
	if err := g.CompileSchema(); err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(map[string]any{}); err == nil {
		t.Error("a missing required argument passed")
	}
	if err := g.Validate(map[string]any{"a": 1}); err != nil {
		t.Error(err)
	}
	if got := string(g.ListedSchemaJSON()); !strings.HasPrefix(got, `{"properties":{"a":{"type":"integer"},"context":`) {
		t.Errorf("ListedSchemaJSON = %s", got)
	}
}

func TestNamesAndListing(t *testing.T) {
	r := registry.New()
	for _, id := range []registry.ID{{"nexus", "substrate", "b"}, {"dev", "github", "a"}, {"nexus", "substrate", "a"}} {
		if err := r.Add(registry.Tool{ID: id, Source: registry.Local, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(registry.Tool{ID: registry.ID{"nexus", "other", "a"}, Source: registry.Local, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}); err == nil {
		t.Fatal("duplicate flat name accepted")
	}
	var names []string
	for _, tool := range r.List() {
		names = append(names, tool.ID.Name())
	}
	if got := strings.Join(names, ","); got != "a,b,dev__github__a" {
		t.Fatalf("List = %s", got)
	}
	tool, ok := r.Lookup("dev__github__a")
	if !ok {
		t.Fatal("lookup by flat name failed")
	}
	props := tool.ListedSchema()["properties"].(map[string]any)
	if props["context"] == nil || props["workspaceContext"] == nil {
		t.Fatalf("listed schema lacks context: %v", tool.ListedSchema())
	}
}

func TestReplaceServer(t *testing.T) {
	r := registry.New()
	changes := 0
	r.OnChange(func() { changes++ })
	tool := func(server, name, schema string) registry.Tool {
		return registry.Tool{ID: registry.ID{Toolbox: "dev", Server: server, Tool: name}, Source: registry.MCP,
			InputSchema: json.RawMessage(schema), Handler: nop}
	}
	if errs := r.ReplaceServer("dev", "a", []registry.Tool{tool("a", "x", `{"type":"object"}`), tool("a", "y", `{"type":"object"}`)}); errs != nil {
		t.Fatal(errs)
	}
	r.ReplaceServer("dev", "b", []registry.Tool{tool("b", "x", `{"type":"object"}`)})
	// A downstream schema that does not compile is still served (and not validated).
	errs := r.ReplaceServer("dev", "a", []registry.Tool{
		tool("a", "z", `{"type":"object","properties":{"n":{"type":"integer","default":"x"}}}`),
		tool("a", "bad name", `{"type":"object"}`),
		tool("b", "stray", `{"type":"object"}`),
	})
	if len(errs) != 2 {
		t.Fatalf("errors: %v", errs)
	}
	var names []string
	for _, tl := range r.List() {
		names = append(names, tl.ID.Name())
	}
	if got := strings.Join(names, ","); got != "dev__a__z,dev__b__x" {
		t.Fatalf("after replace: %s", got)
	}
	z, _ := r.LookupID(registry.ID{Toolbox: "dev", Server: "a", Tool: "z"})
	if err := z.Validate(map[string]any{"n": "anything"}); err != nil {
		t.Fatalf("uncompiled downstream schema must not reject: %v", err)
	}
	if changes != 3 {
		t.Fatalf("OnChange called %d times, want 3", changes)
	}
}

// TestViews: what a surface lists is decided by the view alone; a meta-tool
// is in the MetaTools view only, every other tool in the Tools view only.
func TestViews(t *testing.T) {
	reg := registry.New()
	for _, tool := range []registry.Tool{
		{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "s", Tool: "b_tool"}, Source: registry.Local},
		{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "bounded", Tool: "a_meta"}, Source: registry.Local, Meta: true},
		{ID: registry.ID{Toolbox: "tb", Server: "srv", Tool: "c"}, Source: registry.MCP},
	} {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		tool.Handler = func(context.Context, *registry.Call) (any, error) { return nil, nil }
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	names := func(v registry.View) []string {
		var out []string
		for _, t := range reg.Listed(v) {
			out = append(out, t.ID.Name())
		}
		return out
	}
	if got, want := names(registry.Tools), []string{"b_tool", "tb__srv__c"}; !slices.Equal(got, want) {
		t.Errorf("Tools view lists %v, want %v", got, want)
	}
	if got, want := names(registry.MetaTools), []string{"a_meta"}; !slices.Equal(got, want) {
		t.Errorf("MetaTools view lists %v, want %v", got, want)
	}
	if len(reg.List()) != 3 {
		t.Errorf("List has %d tools, want all 3", len(reg.List()))
	}
}
