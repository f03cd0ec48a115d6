package registry

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestQuickAgreesWithValidator checks the quick check against the full
// validator: whatever it accepts, the validator accepts (it is sound), and it
// accepts the valid instances of the subset's schemas (it is useful).
func TestQuickAgreesWithValidator(t *testing.T) {
	schemas := []struct {
		schema    string
		inSubset  bool
		instances []string
	}{
		{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, true,
			[]string{`{"text":"a"}`, `{}`, `{"text":1}`, `{"text":"a","x":1}`, `{"text":null}`, `{"TEXT":"a"}`}},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"f":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}}}`, true,
			[]string{`{"n":1}`, `{"n":10}`, `{"n":0}`, `{"n":11}`, `{"n":1.5}`, `{"f":0.5}`, `{"f":0}`, `{"f":1}`, `{"f":"x"}`, `{"other":[1]}`}},
		{`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"enum":["ab","abc","é€","a"]}}}`, true,
			[]string{`{"s":"ab"}`, `{"s":"abc"}`, `{"s":"é€"}`, `{"s":"a"}`, `{"s":"zz"}`, `{"s":2}`}},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":2},"minItems":1,"maxItems":2}},"additionalProperties":{"type":"boolean"}}`, true,
			[]string{`{"tags":["a"]}`, `{"tags":[]}`, `{"tags":["a","b","c"]}`, `{"tags":["abc"]}`, `{"tags":[1]}`, `{"x":true}`, `{"x":1}`}},
		{`{"type":"object","properties":{"o":{"type":["object","null"],"properties":{"k":{"type":"string","description":"d","title":"t"}},"required":["k"]}}}`, true,
			[]string{`{"o":{"k":"v"}}`, `{"o":{}}`, `{"o":null}`, `{"o":[]}`, `{"o":{"k":"v","z":[{"a":1}]}}`}},
		{`{"type":"object","properties":{"b":{"type":"boolean"},"e":{"enum":["x"]}}}`, true,
			[]string{`{"b":true}`, `{"b":"true"}`, `{"e":"x"}`, `{"e":"y"}`, `{"e":1}`, `{"e":null}`}},
		// Outside the subset: the full validator alone decides.
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}`, false, []string{`{"p":"a"}`, `{"p":"b"}`}},
		{`{"type":"object","properties":{"n":{"enum":[1,2]}}}`, false, []string{`{"n":1}`, `{"n":3}`}},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, false, []string{`{"a":1}`, `{"a":true}`}},
		{`{"type":"object","properties":{"f":{"type":"string","format":"date-time"}}}`, false, []string{`{"f":"x"}`}},
	}
	for _, c := range schemas {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		q := compileQuick(&s)
		if (q != nil) != c.inSubset {
			t.Errorf("%s: in the subset = %v, want %v", c.schema, q != nil, c.inSubset)
			continue
		}
		for _, in := range c.instances {
			var v map[string]any
			if err := json.Unmarshal([]byte(in), &v); err != nil {
				t.Fatal(err)
			}
			full := rs.Validate(v) == nil
			if q == nil {
				continue
			}
			if got := q.accepts(v); got != full {
				// Sound: never accept what the validator refuses. And here,
				// within the subset, as complete as the validator.
				t.Errorf("%s, %s: quick check %v, validator %v", c.schema, in, got, full)
			}
		}
	}
}

// TestValidateDefaultsQuick checks that a schema with defaults in the quick
// subset still gets its defaults applied.
func TestValidateDefaultsQuick(t *testing.T) {
	tool := Tool{ID: ID{Toolbox: BuiltinToolbox, Server: "s", Tool: "t"}, Source: Local,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":3},"s":{"type":"string"}},"additionalProperties":false}`),
		Handler:     Bind(func(_ context.Context, _ *Call, _ struct{}) (any, error) { return nil, nil })}
	if err := prepare(&tool); err != nil {
		t.Fatal(err)
	}
	if q := tool.schema.get().quick; q == nil || !q.defaults {
		t.Fatalf("quick = %+v, want a quick check that knows of defaults", q)
	}
	args := map[string]any{"s": "x"}
	if err := tool.Validate(args); err != nil {
		t.Fatal(err)
	}
	if args["n"] != float64(3) {
		t.Errorf("args = %v, want the default n applied", args)
	}
	if err := tool.Validate(map[string]any{"s": 1}); err == nil {
		t.Error("a string given a number passed")
	}
}

// FuzzQuickIsSound: for arguments of any shape against the subset's schemas,
// the quick check never accepts what the full validator refuses (go test
// -fuzz FuzzQuickIsSound ./internal/registry).
func FuzzQuickIsSound(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":4}},"required":["text"],"additionalProperties":false}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"f":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}}}`,
		`{"type":"object","properties":{"s":{"type":"string","enum":["ab","é€"]},"b":{"type":"boolean"},"o":{"type":["object","null"],"properties":{"k":{"type":"string"}},"required":["k"]}}}`,
		`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":2},"minItems":1,"maxItems":2}},"additionalProperties":{"type":"boolean"}}`,
	}
	type compiled struct {
		q  *quick
		rs *jsonschema.Resolved
	}
	var cs []compiled
	for _, src := range schemas {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			f.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			f.Fatal(err)
		}
		q := compileQuick(&s)
		if q == nil {
			f.Fatalf("%s: not in the subset", src)
		}
		cs = append(cs, compiled{q, rs})
	}
	for _, seed := range []string{`{"text":"abc"}`, `{"n":3,"f":0.5}`, `{"n":3.0}`, `{"n":1e1}`, `{"s":"é€","o":{"k":"v"}}`,
		`{"o":null}`, `{"tags":["a","bc"],"x":true}`, `{"tags":[]}`, `{"text":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`, `{}`, `[]`, `null`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		for i, c := range cs {
			if c.q.accepts(v) {
				if err := c.rs.Validate(v); err != nil {
					t.Fatalf("schema %d: quick check accepts %s, validator refuses: %v", i, in, err)
				}
			}
		}
	})
}
