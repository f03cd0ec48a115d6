package registrytest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

func TestBreaks(t *testing.T) {
	snap := func(in, out string) []byte {
		return []byte(`{"name":"t","description":"d","inputSchema":` + in + `,"outputSchema":` + out + `}`)
	}
	const (
		in  = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"},"o":{"type":"object","properties":{"a":{"type":"string"}}}},"required":["q"]}`
		out = `{"type":"object","properties":{"id":{"type":"string"},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["id"]}`
	)
	tests := []struct {
		name     string
		in, out  string
		wantHave []string // substrings of the breaks, in order; none: no break
	}{
		{"unchanged", in, out, nil},
		{"added input property", strings.Replace(in, `"q":{`, `"new":{"type":"string"},"q":{`, 1), out, nil},
		{"added output property", in, strings.Replace(out, `"id":{`, `"new":{"type":"string"},"id":{`, 1), nil},
		{"input property now optional", strings.Replace(in, `"required":["q"]`, `"required":[]`, 1), out, nil},
		{"output property now always present", in, strings.Replace(out, `"required":["id"]`, `"required":["id","tags"]`, 1), nil},
		{"input accepts more types", strings.Replace(in, `"n":{"type":"integer"}`, `"n":{"type":["integer","string"]}`, 1), out, nil},
		{"integer input becomes number", strings.Replace(in, `"n":{"type":"integer"}`, `"n":{"type":"number"}`, 1), out, nil},
		{"description change", in, out, nil},
		{"removed input property", strings.Replace(in, `"n":{"type":"integer"},`, ``, 1), out,
			[]string{"inputSchema.properties.n removed"}},
		{"removed nested input property", strings.Replace(in, `"properties":{"a":{"type":"string"}}`, `"properties":{}`, 1), out,
			[]string{"inputSchema.properties.o.properties.a removed"}},
		{"removed output property", in, strings.Replace(out, `"id":{"type":"string"},`, ``, 1),
			[]string{"outputSchema.properties.id removed"}},
		{"output items type changed", in, strings.Replace(out, `"items":{"type":"string"}`, `"items":{"type":"integer"}`, 1),
			[]string{"outputSchema.properties.tags.items may now be integer"}},
		{"newly required input property", strings.Replace(in, `"required":["q"]`, `"required":["q","n"]`, 1), out,
			[]string{"inputSchema.properties.n newly required"}},
		{"output property no longer always present", in, strings.Replace(out, `"required":["id"]`, `"required":[]`, 1),
			[]string{"outputSchema.properties.id no longer always present"}},
		{"input type narrowed", strings.Replace(in, `"n":{"type":"integer"}`, `"n":{"type":"string"}`, 1), out,
			[]string{"inputSchema.properties.n no longer accepts integer"}},
		{"output untyped", in, strings.Replace(out, `"id":{"type":"string"}`, `"id":{}`, 1),
			[]string{"outputSchema.properties.id may now be any JSON value"}},
		{"output schema removed", in, `null`, []string{"outputSchema removed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := snap(in, out)
			if tt.name == "description change" {
				old = []byte(strings.Replace(string(old), `"description":"d"`, `"description":"before"`, 1))
			}
			got, err := Breaks(old, snap(tt.in, tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.wantHave) {
				t.Fatalf("breaks %q, want %q", got, tt.wantHave)
			}
			for i, w := range tt.wantHave {
				if !strings.Contains(got[i], w) {
					t.Fatalf("breaks %q, want %q", got, tt.wantHave)
				}
			}
		})
	}
}

type out struct {
	ID string `json:"id"`
}

func def(name, description, schema string) registry.Def {
	return registry.Def{
		Name: name, Description: description, Family: registry.Valence, Schema: json.RawMessage(schema),
		Handler: registry.Handle(func(context.Context, *registry.Call, struct {
			Q string `json:"q"`
			N int    `json:"n"`
		}) (*out, error) {
			return &out{}, nil
		}),
	}
}

// TestCheck is the snapshot test's life: created under -update, stale
// without it, rewritten for an additive change, a break refused even with
// -update unless listed, a removed tool likewise.
func TestCheck(t *testing.T) {
	const (
		base      = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`
		required  = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"]}`
		described = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","description":"How many."}},"required":["q"]}`
		forgotten = "run the test with -update"
		breaking  = "breaking"
	)
	dir := t.TempDir()
	steps := []struct {
		name   string
		defs   []registry.Def
		update bool
		breaks []string
		want   []string // substrings of the errors, in order
		files  []string // the snapshots after the step
	}{
		{"no snapshots", []registry.Def{def("a", "A.", base)}, false, nil, []string{"has no snapshot"}, nil},
		{"created", []registry.Def{def("a", "A.", base), def("b", "B.", base)}, true, nil, nil, []string{"a.json", "b.json"}},
		{"unchanged", []registry.Def{def("a", "A.", base), def("b", "B.", base)}, false, nil, nil, []string{"a.json", "b.json"}},
		{"description changed", []registry.Def{def("a", "A, now.", base), def("b", "B.", base)}, false, nil, []string{forgotten}, []string{"a.json", "b.json"}},
		{"description updated", []registry.Def{def("a", "A, now.", base), def("b", "B.", base)}, true, nil, nil, []string{"a.json", "b.json"}},
		{"property described", []registry.Def{def("a", "A, now.", described), def("b", "B.", base)}, true, nil, nil, []string{"a.json", "b.json"}},
		{"newly required", []registry.Def{def("a", "A, now.", described), def("b", "B.", required)}, true, nil, []string{breaking + " way (ADR-012: changes are additive): inputSchema.properties.n newly required"}, []string{"a.json", "b.json"}},
		{"newly required, deliberately", []registry.Def{def("a", "A, now.", described), def("b", "B.", required)}, true, []string{"b"}, nil, []string{"a.json", "b.json"}},
		{"tool removed", []registry.Def{def("a", "A, now.", described)}, true, nil, []string{"tool b was removed"}, []string{"a.json", "b.json"}},
		{"tool removed, deliberately, without update", []registry.Def{def("a", "A, now.", described)}, false, []string{"b"}, []string{forgotten}, []string{"a.json", "b.json"}},
		{"tool removed, deliberately", []registry.Def{def("a", "A, now.", described)}, true, []string{"b"}, nil, []string{"a.json"}},
		{"wrong definition", []registry.Def{def("a", "A, now.", `{"type":"object","properties":{"q":{"type":"string"}}}`)}, true, nil, []string{"field n is not a property"}, []string{"a.json"}},
	}
	for _, st := range steps {
		errs := Snapshots{Dir: dir, Toolbox: registry.BuiltinToolbox, Server: "s", Defs: st.defs, Update: st.update, Breaks: st.breaks}.check()
		if len(errs) != len(st.want) {
			t.Fatalf("%s: errors %v, want %q", st.name, errs, st.want)
		}
		for i, w := range st.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Fatalf("%s: errors %v, want %q", st.name, errs, st.want)
			}
		}
		entries, _ := os.ReadDir(dir)
		var files []string
		for _, e := range entries {
			files = append(files, e.Name())
		}
		if !slices.Equal(files, st.files) {
			t.Fatalf("%s: snapshots %v, want %v", st.name, files, st.files)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]any
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	if snap["description"] != "A, now." || snap["family"] != "valence" || snap["outputSchema"] == nil {
		t.Fatalf("snapshot %s", b)
	}
}
