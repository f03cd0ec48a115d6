package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestHandlerArgs checks what a handler gets as its arguments: the caller's
// own bytes when the pipeline left the arguments as they were, else the
// arguments encoded again (a null or a context argument removed, a default
// applied).
func TestHandlerArgs(t *testing.T) {
	reg := registry.New()
	var got []json.RawMessage
	record := func(_ context.Context, c *registry.Call) (any, error) {
		got = append(got, c.Args)
		return map[string]any{}, nil
	}
	for name, schema := range map[string]string{
		"plain":    `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false}`,
		"defaults": `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","default":7}}}`,
	} {
		if err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: name},
			InputSchema: json.RawMessage(schema), Source: registry.Local, Family: registry.Valence, Handler: record}); err != nil {
			t.Fatal(err)
		}
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"plain", `{"text":"a", "n":1}`, `{"text":"a", "n":1}`},                  // as sent
		{"plain", `{"text":"a","n":null}`, `{"text":"a"}`},                       // a null removed
		{"plain", `{"text":"a","context":{"workspaceId":"w1"}}`, `{"text":"a"}`}, // the context removed
		{"plain", ` {"text":"a"}`, `{"text":"a"}`},                               // not an object at byte 0: encoded again
		{"plain", ``, `{}`}, // none
		{"defaults", `{"text":"a"}`, `{"n":7,"text":"a"}`},       // a default applied
		{"defaults", `{"text":"a","n":2}`, `{"n":2,"text":"a"}`}, // a schema with defaults: encoded again
	} {
		got = got[:0]
		o := p.Call(context.Background(), pipeline.Request{Tool: tc.tool, Args: json.RawMessage(tc.args), Surface: "test"})
		if o.Err != nil {
			t.Fatalf("%s %s: %v", tc.tool, tc.args, o.Err)
		}
		if len(got) != 1 || string(got[0]) != tc.want {
			t.Errorf("%s %s: handler got %s, want %s", tc.tool, tc.args, got, tc.want)
		}
	}
}
