package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/registry"
)

// handle builds a typed handler that is never run: only its types matter.
func handle[In, Out any]() registry.Typed {
	return registry.Handle(func(context.Context, *registry.Call, In) (Out, error) {
		var out Out
		return out, nil
	})
}

type result struct {
	OK bool `json:"ok"`
}

type item struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

// TestDefChecksTypesAgainstSchema is the checker's rules, one case each.
func TestDefChecksTypesAgainstSchema(t *testing.T) {
	const obj = `{"type":"object","properties":%s,"required":%s,"additionalProperties":false}`
	schema := func(props, required string) json.RawMessage {
		return json.RawMessage(strings.Replace(strings.Replace(obj, "%s", props, 1), "%s", required, 1))
	}
	tests := []struct {
		name    string
		schema  json.RawMessage
		handler registry.Typed
		want    string // "" when the definition is valid
	}{
		{"matching", schema(`{"q":{"type":"string"},"limit":{"type":"integer","default":10}}`, `["q"]`),
			handle[struct {
				Q     string `json:"q"`
				Limit int    `json:"limit"`
			}, *result](), ""},
		{"missing property", schema(`{"q":{"type":"string"},"limit":{"type":"integer"}}`, `[]`),
			handle[struct {
				Q string `json:"q"`
			}, result](), "property limit has no field"},
		{"extra field", schema(`{"q":{"type":"string"}}`, `[]`),
			handle[struct {
				Q     string `json:"q"`
				Limit int    `json:"limit"`
			}, result](), "field limit is not a property"},
		{"unexported and ignored fields are not properties", schema(`{"q":{"type":"string"}}`, `[]`),
			handle[struct {
				Q      string `json:"q"`
				Ignore string `json:"-"`
				hidden string
			}, result](), ""},
		{"context field the pipeline removes", schema(`{"q":{"type":"string"}}`, `[]`),
			handle[struct {
				Q         string `json:"q"`
				SessionID string `json:"sessionId"`
			}, result](), `the pipeline removes "sessionId"`},
		{"declared context field", schema(`{"sessionId":{"type":"string"}}`, `[]`),
			handle[struct {
				SessionID string `json:"sessionId"`
			}, result](), ""},
		{"type mismatch", schema(`{"limit":{"type":"string"}}`, `[]`),
			handle[struct {
				Limit int `json:"limit"`
			}, result](), "property limit is string; its field is [integer]"},
		{"number into an integer field", schema(`{"x":{"type":"number"}}`, `[]`),
			handle[struct {
				X int `json:"x"`
			}, result](), "property x is number"},
		{"integer into a float field", schema(`{"x":{"type":"integer"}}`, `[]`),
			handle[struct {
				X float64 `json:"x"`
			}, result](), ""},
		{"pointer field", schema(`{"x":{"type":["number","null"]}}`, `[]`),
			handle[struct {
				X *float64 `json:"x"`
			}, result](), ""},
		{"required omitempty field", schema(`{"q":{"type":"string"}}`, `["q"]`),
			handle[struct {
				Q string `json:"q,omitempty"`
			}, result](), "required property q is an omitempty or omitzero field"},
		{"required omitzero field", schema(`{"q":{"type":"string"}}`, `["q"]`),
			handle[struct {
				Q string `json:"q,omitzero"`
			}, result](), "required property q is an omitempty or omitzero field"},
		{"optional plain field", schema(`{"q":{"type":"string"}}`, `[]`),
			handle[struct {
				Q string `json:"q"`
			}, result](), ""},
		{"nested items", schema(`{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name"]}}}`, `[]`),
			handle[struct {
				Items []item `json:"items"`
			}, result](), ""},
		{"nested missing property", schema(`{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"role":{"type":"string"}}}}}`, `[]`),
			handle[struct {
				Items []item `json:"items"`
			}, result](), "property items[].role has no field"},
		{"nested type mismatch", schema(`{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"integer"}}}}}}`, `[]`),
			handle[struct {
				Items []item `json:"items"`
			}, result](), "property items[].tags[] is integer; its field is [string]"},
		{"nested required omitempty", schema(`{"item":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array"}},"required":["tags"]}}`, `[]`),
			handle[struct {
				Item *item `json:"item"`
			}, result](), "required property item.tags is an omitempty or omitzero field"},
		{"free-form object into a map", schema(`{"meta":{"type":"object"}}`, `[]`),
			handle[struct {
				Meta map[string]any `json:"meta"`
			}, result](), ""},
		{"object properties into a map", schema(`{"meta":{"type":"object","properties":{"n":{"type":"string"}}}}`, `[]`),
			handle[struct {
				Meta map[string]int `json:"meta"`
			}, result](), "property meta.n is string; its field is [integer]"},
		{"free-form object into a struct", schema(`{"item":{"type":"object"}}`, `[]`),
			handle[struct {
				Item item `json:"item"`
			}, result](), "field item.name is not a property"},
		{"anyOf into json.RawMessage", schema(`{"tools":{"anyOf":[{"type":"object"},{"type":"array"}]}}`, `[]`),
			handle[struct {
				Tools json.RawMessage `json:"tools"`
			}, result](), ""},
		{"anyOf into a typed field", schema(`{"tools":{"anyOf":[{"type":"object"},{"type":"array"}]}}`, `[]`),
			handle[struct {
				Tools []string `json:"tools"`
			}, result](), "property tools is object"},
		{"untyped property into a typed field", schema(`{"v":{"description":"anything"}}`, `[]`),
			handle[struct {
				V string `json:"v"`
			}, result](), "property v allows any JSON value"},
		{"untyped property into any", schema(`{"v":{}}`, `[]`),
			handle[struct {
				V any `json:"v"`
			}, result](), ""},
		{"input not a struct", schema(`{}`, `[]`), handle[map[string]any, result](), "is not a struct"},
		{"output not a struct", schema(`{}`, `[]`), handle[struct{}, []string](), "result type []string is not a struct"},
		{"output an interface", schema(`{}`, `[]`), handle[struct{}, any](), ""},
		{"no schema", nil, handle[struct{}, result](), "no input schema"},
		{"no handler", schema(`{}`, `[]`), registry.Typed{}, "no handler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := registry.Def{Name: "t", Description: "d", Family: registry.Valence, Schema: tt.schema, Handler: tt.handler}
			_, err := d.Tool(registry.BuiltinToolbox, "s")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("want an error with %q, got %v", tt.want, err)
			}
		})
	}
}

func TestDefNeedsAFamily(t *testing.T) {
	d := registry.Def{Name: "t", Schema: json.RawMessage(`{"type":"object"}`), Handler: handle[struct{}, result]()}
	if _, err := d.Tool(registry.BuiltinToolbox, "s"); err == nil || !strings.Contains(err.Error(), "no family") {
		t.Fatalf("got %v", err)
	}
}

// TestAddAll registers every definition, or none when one is wrong, and
// the registered handler decodes the arguments and returns the typed result.
func TestAddAll(t *testing.T) {
	type echoIn struct {
		Text string `json:"text"`
	}
	type echoOut struct {
		Echo      string `json:"echo"`
		Workspace string `json:"workspace"`
	}
	good := registry.Def{
		Name: "echo", Title: "Echo", Description: "Echo the text.", ReadOnly: true, Family: registry.Valence,
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: registry.Handle(func(_ context.Context, c *registry.Call, in echoIn) (*echoOut, error) {
			return &echoOut{Echo: in.Text, Workspace: c.Workspace}, nil
		}),
	}
	bad := good
	bad.Name = "bad"
	bad.Schema = json.RawMessage(`{"type":"object","properties":{"txt":{"type":"string"}}}`)

	reg := registry.New()
	if err := registry.AddAll(reg, registry.BuiltinToolbox, "demo", good, bad); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("AddAll with a wrong definition: %v", err)
	}
	if n := len(reg.List()); n != 0 {
		t.Fatalf("a failed AddAll registered %d tools", n)
	}
	if err := registry.AddAll(reg, registry.BuiltinToolbox, "demo", good); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Lookup("echo")
	if !ok {
		t.Fatal("echo is not registered")
	}
	if tool.Title != "Echo" || !tool.ReadOnly || tool.Family != registry.Valence || tool.Source != registry.Local || len(tool.OutputSchema) != 0 {
		t.Fatalf("registered %+v", tool)
	}
	got, err := tool.Handler(context.Background(), &registry.Call{Args: json.RawMessage(`{"text":"hi"}`), Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := got.(*echoOut); !ok || out.Echo != "hi" || out.Workspace != "w" {
		t.Fatalf("handler returned %#v", got)
	}
	out, err := good.OutputSchema()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","properties":{"echo":{"type":"string"},"workspace":{"type":"string"}},"required":["echo","workspace"],"additionalProperties":false}`; string(out) != want {
		t.Fatalf("output schema %s, want %s", out, want)
	}
}

// TestOutputThatDoesNotDerive: registration checks a result type's kind; a
// struct whose schema does not derive fails in OutputSchema, which every
// server's snapshot test calls for every tool.
func TestOutputThatDoesNotDerive(t *testing.T) {
	d := registry.Def{Name: "t", Description: "d", Family: registry.Valence, Schema: json.RawMessage(`{"type":"object"}`),
		Handler: registry.Handle(func(context.Context, *registry.Call, struct{}) (struct {
			F func() `json:"f"`
		}, error) {
			return struct {
				F func() `json:"f"`
			}{}, nil
		})}
	if _, err := d.OutputSchema(); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("OutputSchema of a result with a func field: %v", err)
	}
}
