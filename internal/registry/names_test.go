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

// TestPlainNames: a plain tool is listed and found under its own name and
// still found under its qualified name; a plain name that Nexus's own tool
// or another server's plain tool has is a collision naming both, which
// leaves the later one out; a plain name with "__" is refused.
func TestPlainNames(t *testing.T) {
	r := withLocal(t)
	plain := func(toolbox, server, name string) registry.Tool {
		return registry.Tool{ID: registry.ID{Toolbox: toolbox, Server: server, Tool: name}, Plain: true,
			Source: registry.MCP, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: nop}
	}
	if errs := r.ReplaceServer("e", "everything", []registry.Tool{plain("e", "everything", "echo"), plain("e", "everything", "belief_get")}); len(errs) != 1 ||
		!strings.Contains(errs[0].Error(), `naming collision: tool "belief_get" of server "everything" (toolbox "e") and Nexus's own tool are both named "belief_get"`) {
		t.Errorf("a plain name that Nexus's own tool has: %v", errs)
	}
	for _, name := range []string{"echo", "e__everything__echo"} {
		if got, ok := r.Lookup(name); !ok || got.ID.Tool != "echo" || got.Name() != "echo" {
			t.Errorf("Lookup(%q) = %+v %v, want the plain tool echo", name, got, ok)
		}
	}
	if got, ok := r.LookupID(registry.ID{Toolbox: "e", Server: "everything", Tool: "echo"}); !ok || got.Name() != "echo" {
		t.Errorf("LookupID: %+v %v", got, ok)
	}
	if got, ok := r.Lookup("belief_get"); !ok || got.Source != registry.Local {
		t.Errorf("belief_get is %+v %v, want Nexus's own", got, ok)
	}
	errs := r.ReplaceServer("f", "other", []registry.Tool{plain("f", "other", "echo"), plain("f", "other", "a__b")})
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), `naming collision: tool "echo" of server "other" (toolbox "f") and tool "echo" of server "everything" (toolbox "e") are both named "echo"`) ||
		!strings.Contains(errs[0].Error()+errs[1].Error(), `tool "a__b" of f/other cannot keep its own name`) {
		t.Errorf("a second server's plain echo, and a plain name with __: %v", errs)
	}
	// Replacing the server again keeps its own names (no collision with
	// itself), and removing it frees them.
	if errs := r.ReplaceServer("e", "everything", []registry.Tool{plain("e", "everything", "echo")}); len(errs) != 0 {
		t.Errorf("replacing the server: %v", errs)
	}
	r.ReplaceServer("e", "everything", nil)
	if _, ok := r.Lookup("e__everything__echo"); ok {
		t.Error("the qualified name outlived its tool")
	}
	if errs := r.ReplaceServer("f", "other", []registry.Tool{plain("f", "other", "echo")}); len(errs) != 0 {
		t.Errorf("echo once everything's is gone: %v", errs)
	}
}
