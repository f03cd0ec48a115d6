package registry_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// A local tool in a dozen lines: a static definition with its JSON schema, a
// typed handler bound with registry.Bind, registered once; every surface then
// calls it through the pipeline, which validates, traces and renders.
func Example() {
	type greetIn struct {
		Name string `json:"name"`
	}
	reg := registry.New()
	err := reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "hello", Tool: "greet"},
		Description: "Greet someone by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`),
		Source:      registry.Local, Family: registry.Valence, ReadOnly: true,
		Handler: registry.Bind(func(_ context.Context, c *registry.Call, in greetIn) (any, error) {
			if in.Name == "nobody" {
				return nil, errs.Missing("person", in.Name)
			}
			return map[string]any{"success": true, "greeting": "Hello, " + in.Name, "workspace": c.Workspace}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	for _, args := range []string{`{"name":"Ada"}`, `{"name":""}`, `{"name":"nobody"}`} {
		body, _ := p.Call(context.Background(), pipeline.Request{Tool: "greet", Args: json.RawMessage(args)}).Body()
		fmt.Println(string(body))
	}
	// Output:
	// {"greeting":"Hello, Ada","success":true,"workspace":"default"}
	// {"success":false,"error_code":"BAD_REQUEST","error_message":"invalid arguments for greet: name: minLength: \"\" contains 0 Unicode code points, fewer than 1"}
	// {"success":false,"error_code":"NOT_FOUND","error_message":"person \"nobody\" not found"}
}
