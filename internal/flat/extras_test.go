package flat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// hiddenServer refuses the downstream server "hidden" (of any toolbox) to
// everyone, as an access rule on it would.
type hiddenServer struct{ noSecrets }

func (hiddenServer) Server(_ principal.Principal, _, server string) bool { return server != "hidden" }

// someToolboxes are configured toolboxes that open at once.
type someToolboxes struct{}

func (someToolboxes) Toolboxes() []registry.Toolbox { return []registry.Toolbox{{Name: "tb"}} }
func (someToolboxes) Open(context.Context, string) (*registry.Opened, error) {
	return &registry.Opened{ServerErrors: map[string]string{}}, nil
}
func (someToolboxes) OpenAll(context.Context) {}

// TestExtrasFollowAccessRules: a downstream server's prompts, resources and
// templates are listed to, and served to, the callers who may use the
// server, and to nobody else (as if they did not exist); a server's new
// listing replaces its old one on the surface.
func TestExtrasFollowAccessRules(t *testing.T) {
	reg := registry.New()
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions(), Authorizer: hiddenServer{}})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t",
		Catalog: &mcpkit.Catalog{Registry: reg, Toolboxes: someToolboxes{}}}))
	extras := func(server, prompt, uri string) *registry.Extras {
		return &registry.Extras{
			Prompts: []registry.Prompt{{ID: registry.ID{Toolbox: "tb", Server: server, Tool: prompt}, Prompt: &mcp.Prompt{Name: prompt},
				Get: func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: server + " " + prompt}}}}, nil
				}}},
			Resources: []registry.Resource{{Resource: &mcp.Resource{URI: uri, Name: uri}}},
			Templates: []registry.ResourceTemplate{{Template: &mcp.ResourceTemplate{URITemplate: uri + "/{x}", Name: "t"}}},
			Read: func(_ context.Context, u string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: u, Text: server + " " + u}}}, nil
			},
		}
	}
	if errs := reg.ReplaceExtras("tb", "open", extras("open", "hello", "open://a")); len(errs) > 0 {
		t.Fatal(errs)
	}
	if errs := reg.ReplaceExtras("tb", "hidden", extras("hidden", "secret", "hidden://a")); len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "tb__open__hello" {
		t.Fatalf("prompts/list: %+v %v", lp, err)
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != "open://a" {
		t.Fatalf("resources/list: %+v %v", lr, err)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "open://a/{x}" {
		t.Fatalf("resources/templates/list: %+v %v", lt, err)
	}
	if got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tb__open__hello"}); err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "open hello" {
		t.Fatalf("prompts/get: %+v %v", got, err)
	}
	if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "open://a/b"}); err != nil || rr.Contents[0].Text != "open open://a/b" {
		t.Fatalf("resources/read by template: %+v %v", rr, err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tb__hidden__secret"}); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Errorf("a hidden server's prompt: %v, want unknown prompt", err)
	}
	for _, uri := range []string{"hidden://a", "hidden://a/b"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("a hidden server's resource %s: %v, want not found", uri, err)
		}
	}

	// A new listing of the open server replaces its prompt.
	reg.ReplaceExtras("tb", "open", extras("open", "bye", "open://a"))
	if lp, err := cs.ListPrompts(ctx, nil); err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "tb__open__bye" {
		t.Fatalf("prompts/list after the server's list changed: %+v %v", lp, err)
	}
	reg.ReplaceExtras("tb", "open", nil)
	if lp, err := cs.ListPrompts(ctx, nil); err != nil || len(lp.Prompts) != 0 {
		t.Fatalf("prompts/list after the server went: %+v %v", lp, err)
	}
}
