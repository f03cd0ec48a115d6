package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

// withLocal registers the substrate's eight tools in the built-in toolbox.
var substrateTools = []string{"belief_create", "belief_get", "belief_query", "belief_supersede",
	"entity_get", "entity_search", "tension_list", "tension_resolve"}

func withLocal(t *testing.T) *registry.Registry {
	t.Helper()
	r := registry.New()
	for _, name := range substrateTools {
		if err := r.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "substrate", Tool: name},
			Source: registry.Local, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func names(r *registry.Registry) string {
	var out []string
	for _, tool := range r.List() {
		out = append(out, tool.ID.Name())
	}
	return strings.Join(out, ",")
}

// TestBuiltinToolboxIsReserved: a downstream server in a toolbox named
// "nexus" neither replaces nor removes Nexus's own tools.
func TestBuiltinToolboxIsReserved(t *testing.T) {
	r := withLocal(t)
	before := names(r)
	downstream := registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "substrate", Tool: "belief_create"},
		Source: registry.MCP, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}

	errs := r.ReplaceServer(registry.BuiltinToolbox, "substrate", []registry.Tool{downstream})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `toolbox "nexus" is reserved`) {
		t.Errorf("ReplaceServer(nexus, substrate) = %v, want one error saying the toolbox is reserved", errs)
	}
	if got := names(r); got != before {
		t.Errorf("after ReplaceServer(nexus, substrate): %s, want %s", got, before)
	}
	if got, _ := r.Lookup("belief_create"); got == nil || got.Source != registry.Local {
		t.Errorf("belief_create is %+v, want the local tool", got)
	}

	// Another server name, and Add, are refused too.
	downstream.ID.Server, downstream.ID.Tool = "other", "extra"
	if errs := r.ReplaceServer(registry.BuiltinToolbox, "other", []registry.Tool{downstream}); len(errs) != 1 {
		t.Errorf("ReplaceServer(nexus, other) = %v", errs)
	}
	if err := r.Add(downstream); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("Add of a downstream tool in toolbox nexus = %v", err)
	}
	if got := names(r); got != before {
		t.Errorf("after the refused calls: %s, want %s", got, before)
	}
}

// flatNameSeeds are the seed corpus of FuzzFlatNamesUnique: names with
// "__", "_" at either end, "-", ".", case, the built-in toolbox, and lengths
// at and past the MCP limit.
var flatNameSeeds = [][6]string{
	{"a__b", "c", "d", "a", "b__c", "d"}, // the example
	{"a", "b", "_c", "a", "b_", "c"},     // server ending with "_" and tool starting with "_"
	{"a_", "b", "c", "a", "_b", "c"},
	{"a", "b", "__c", "a", "b_", "_c"},
	{"a", "b_", "_c", "a_", "b", "c"},
	{"Dev", "api", "get", "dev", "api", "get"},
	{"dev", "api", "get-user", "dev", "api", "get_user"},
	{"dev", "api", "v1.list", "dev", "api.v1", "list"},
	{"dev", "a-b", "c", "dev-a", "b", "c"},
	{"nexus", "substrate", "belief_create", "nexus", "other", "belief_create"},
	{"nexus", "x", "a__b__c", "a", "b", "c"},
	{"nexus", "x", "belief_create", "belief", "create", "x"},
	{"", "b", "c", "a", "", "c"},
	{"a", "b", "", "a", "b", "c"},
	{strings.Repeat("t", 63), strings.Repeat("s", 63), "x", strings.Repeat("t", 63), strings.Repeat("s", 62), "sx"},
	{"a", "b", strings.Repeat("x", 122), "a", "b", strings.Repeat("x", 123)},
}

// FuzzFlatNamesUnique checks SPEC section 2's promise that flat names are
// unique: two different IDs the registry accepts never share a flat name,
// whatever the order they are registered in, and a flat name always leads
// back to its own ID. go test runs the seed corpus; go test -fuzz
// FuzzFlatNamesUnique ./internal/registry searches further.
func FuzzFlatNamesUnique(f *testing.F) {
	for _, s := range flatNameSeeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5])
	}
	f.Fuzz(func(t *testing.T, tb1, s1, t1, tb2, s2, t2 string) {
		a := registry.ID{Toolbox: tb1, Server: s1, Tool: t1}
		b := registry.ID{Toolbox: tb2, Server: s2, Tool: t2}
		tool := func(id registry.ID) registry.Tool {
			src := registry.MCP
			if id.Toolbox == registry.BuiltinToolbox {
				src = registry.Local
			}
			return registry.Tool{ID: id, Source: src, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}
		}
		// Each on its own: does the registry accept it?
		okA := registry.New().Add(tool(a)) == nil
		okB := registry.New().Add(tool(b)) == nil
		// Downstream flat names are unique by construction. A built-in
		// tool's flat name is its own name, so two local servers could
		// offer the same one: the registry refuses the second.
		collide := okA && okB && a != b && a.Name() == b.Name()
		if collide && (a.Toolbox != registry.BuiltinToolbox || b.Toolbox != registry.BuiltinToolbox) {
			t.Fatalf("%+v and %+v are both accepted and share the flat name %q", a, b, a.Name())
		}
		// Together, in both orders: each is served as itself, except the
		// second of two colliding built-in tools, which is refused.
		for _, order := range [][2]registry.ID{{a, b}, {b, a}} {
			if a == b {
				break
			}
			r := registry.New()
			for i, id := range order {
				accepted := (id == a && okA) || (id == b && okB)
				err := r.Add(tool(id))
				got, ok := r.LookupID(id)
				switch {
				case i == 1 && collide:
					if err == nil || ok {
						t.Fatalf("%+v after %+v: Add = %v, served %v; want refused as a duplicate", id, order[0], err, ok)
					}
				case accepted && (err != nil || !ok || got.ID != id):
					t.Fatalf("%+v (registered with %+v): Add = %v, served as %+v %v", id, order, err, got, ok)
				case !accepted && (err == nil || ok):
					t.Fatalf("%+v is refused alone but accepted beside %+v", id, order)
				}
			}
			// A flat name always leads back to the ID registered under it.
			for _, tool := range r.List() {
				if got, ok := r.LookupID(tool.ID); !ok || got != tool {
					t.Fatalf("LookupID(%+v) = %+v %v", tool.ID, got, ok)
				}
			}
		}
	})
}
