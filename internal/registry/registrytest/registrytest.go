// Package registrytest pins the tools a local server defines
// ([registry.Def]) with one snapshot file per tool, for that server's tests.
//
// A snapshot holds what clients see of the tool (name, title, description,
// annotations, family, the input schema as listed) and the output schema
// derived from its result type, which clients do not see but which shows
// a change of the result in review. Changes are additive (ADR-012): a
// change that removes a tool, removes a property (of the input or the
// output), makes an input property required, makes an output property
// optional, or narrows what an input property accepts (or widens what an
// output property may be) is a break, refused even with -update unless the
// tool is in the test's list of deliberate breaks.
package registrytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

// Snapshots is a server's tools and where their snapshots are.
type Snapshots struct {
	// Dir holds one <tool>.json per tool, and nothing else.
	Dir string
	// Toolbox and Server are where the tools are registered.
	Toolbox, Server string
	// Defs are the server's tools, as it registers them.
	Defs []registry.Def
	// Update rewrites the snapshots (the test's -update flag); breaks are
	// still refused.
	Update bool
	// Breaks are the tools whose breaking change is deliberate: their
	// snapshots are rewritten (or removed) under Update whatever changed.
	Breaks []string
}

// Check registers s.Defs in a registry of their own, as [registry.AddAll]
// does at start, and compares each tool with its snapshot.
func Check(t testing.TB, s Snapshots) {
	t.Helper()
	for _, err := range s.check() {
		t.Error(err)
	}
}

// check returns every stale snapshot and every refused break.
func (s Snapshots) check() []error {
	reg := registry.New()
	if err := registry.AddAll(reg, s.Toolbox, s.Server, s.Defs...); err != nil {
		return []error{err}
	}
	var errs []error
	seen := map[string]bool{}
	for _, d := range s.Defs {
		tool, ok := reg.LookupID(registry.ID{Toolbox: s.Toolbox, Server: s.Server, Tool: d.Name})
		if !ok {
			errs = append(errs, fmt.Errorf("tool %s is not registered", d.Name))
			continue
		}
		out, err := d.OutputSchema()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got, err := Snapshot(tool, out)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen[d.Name+".json"] = true
		if err := s.compare(d.Name, got); err != nil {
			errs = append(errs, err)
		}
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return append(errs, fmt.Errorf("snapshots: %w", err))
	}
	for _, e := range entries {
		if seen[e.Name()] {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		switch {
		case !slices.Contains(s.Breaks, name):
			errs = append(errs, fmt.Errorf("tool %s was removed (snapshot %s): a breaking change (ADR-012); if it is deliberate, list %s in the test's deliberate breaks and run the test with -update", name, filepath.Join(s.Dir, e.Name()), name))
		case !s.Update:
			errs = append(errs, fmt.Errorf("tool %s was removed: run the test with -update to remove its snapshot %s", name, filepath.Join(s.Dir, e.Name())))
		default:
			if err := os.Remove(filepath.Join(s.Dir, e.Name())); err != nil {
				errs = append(errs, fmt.Errorf("snapshots: %w", err))
			}
		}
	}
	return errs
}

// compare checks got, the snapshot of tool name, with the one on disk,
// rewriting it under Update unless the change is a refused break.
func (s Snapshots) compare(name string, got []byte) error {
	path := filepath.Join(s.Dir, name+".json")
	want, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !s.Update {
			return fmt.Errorf("tool %s has no snapshot: run the test with -update to create %s", name, path)
		}
		return write(path, got)
	case err != nil:
		return fmt.Errorf("snapshots: %w", err)
	case bytes.Equal(got, want):
		return nil
	}
	breaks, err := Breaks(want, got)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if len(breaks) > 0 && !slices.Contains(s.Breaks, name) {
		return fmt.Errorf("tool %s changed in a breaking way (ADR-012: changes are additive): %s; if it is deliberate, list %s in the test's deliberate breaks and run the test with -update",
			name, strings.Join(breaks, "; "), name)
	}
	if !s.Update {
		return fmt.Errorf("snapshot %s is stale: the tool changed; if the change is deliberate, run the test with -update and commit the result", path)
	}
	return write(path, got)
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("snapshots: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("snapshots: %w", err)
	}
	return nil
}

// Snapshot is the snapshot file of a registered tool whose derived output
// schema is output.
func Snapshot(t *registry.Tool, output json.RawMessage) ([]byte, error) {
	snap := map[string]any{
		"name": t.ID.Name(), "toolbox": t.ID.Toolbox, "server": t.ID.Server, "source": t.Source,
		"family": t.Family, "description": t.Description, "readOnly": t.ReadOnly, "annotations": t.Annotations,
		"inputSchema": t.ListedSchema(), "outputSchema": output,
	}
	if t.Title != "" {
		snap["title"] = t.Title
	}
	if t.Meta {
		snap["meta"] = true
	}
	if t.SelfValidating {
		snap["selfValidating"] = true
	}
	b, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", t.ID.Name(), err)
	}
	return append(b, '\n'), nil
}

// Breaks lists the breaking changes (see the package documentation) from
// the snapshot old to the snapshot new.
func Breaks(old, new []byte) ([]string, error) {
	var o, n map[string]any
	if err := json.Unmarshal(old, &o); err != nil {
		return nil, fmt.Errorf("old snapshot: %w", err)
	}
	if err := json.Unmarshal(new, &n); err != nil {
		return nil, fmt.Errorf("new snapshot: %w", err)
	}
	var out []string
	for _, side := range []struct {
		key    string
		output bool
	}{{"inputSchema", false}, {"outputSchema", true}} {
		was, _ := o[side.key].(map[string]any)
		is, _ := n[side.key].(map[string]any)
		if was != nil && is == nil {
			out = append(out, side.key+" removed")
			continue
		}
		if was != nil {
			out = breaks(out, side.key, was, is, side.output)
		}
	}
	return out, nil
}

// breaks appends the breaking changes from schema o to schema n at path; in
// an output schema (output) a property that may be absent or of a new type
// breaks readers, in an input schema one that must be present or can no
// longer be of a type breaks callers.
func breaks(out []string, path string, o, n map[string]any, output bool) []string {
	// The types of sub must stay within those of super: an input may
	// accept more, an output may not produce more (nil is any value).
	sub, super := jsonTypes(o), jsonTypes(n)
	if output {
		sub, super = super, sub
	}
	switch {
	case super == nil:
	case sub == nil && output:
		out = append(out, fmt.Sprintf("%s may now be any JSON value", path))
	case sub == nil:
		out = append(out, fmt.Sprintf("%s no longer accepts any JSON value", path))
	default:
		for _, typ := range sub {
			if slices.Contains(super, typ) || (typ == "integer" && slices.Contains(super, "number")) {
				continue
			}
			if output {
				out = append(out, fmt.Sprintf("%s may now be %s", path, typ))
			} else {
				out = append(out, fmt.Sprintf("%s no longer accepts %s", path, typ))
			}
		}
	}
	op, _ := o["properties"].(map[string]any)
	np, _ := n["properties"].(map[string]any)
	for _, name := range sortedKeys(op) {
		if _, ok := np[name]; !ok {
			out = append(out, fmt.Sprintf("%s.properties.%s removed", path, name))
			continue
		}
		was, _ := op[name].(map[string]any)
		is, _ := np[name].(map[string]any)
		if was != nil && is != nil {
			out = breaks(out, path+".properties."+name, was, is, output)
		}
	}
	or, nr := strings1(o["required"]), strings1(n["required"])
	if output {
		for _, name := range or {
			if _, kept := np[name]; kept && !slices.Contains(nr, name) {
				out = append(out, fmt.Sprintf("%s.properties.%s no longer always present", path, name))
			}
		}
	} else {
		for _, name := range nr {
			if !slices.Contains(or, name) {
				out = append(out, fmt.Sprintf("%s.properties.%s newly required", path, name))
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		was, _ := o[key].(map[string]any)
		is, _ := n[key].(map[string]any)
		if was != nil && is != nil {
			out = breaks(out, path+"."+key, was, is, output)
		}
	}
	return out
}

// jsonTypes is what "type" allows ("null" included); nil allows any value.
func jsonTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return strings1(t)
	}
	return nil
}

// strings1 is the strings of a decoded JSON array.
func strings1(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
