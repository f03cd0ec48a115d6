package bounded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// listBytes returns the size of the tools/list results (all pages) a client
// receives from srv, and the number of tools.
func listBytes(tb testing.TB, srv *mcp.Server) (int, int) {
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer cs.Close()
	total, n, cursor := 0, 0, ""
	for {
		page, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			tb.Fatal(err)
		}
		pb, _ := json.Marshal(page)
		total, n = total+len(pb), n+len(page.Tools)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return total, n
}

// downstreamTools returns n downstream tools in 25 servers of two
// toolboxes, with schemas of realistic size (the substrate's own schemas,
// cycled).
func downstreamTools(tb testing.TB, reg *registry.Registry, n int) {
	local := registry.New()
	if err := substrate.New(storetest.OpenTestSQLite(tb), nil).Register(local); err != nil {
		tb.Fatal(err)
	}
	models := local.List()
	per := map[[2]string][]registry.Tool{}
	for i := range n {
		m := models[i%len(models)]
		tbx := []string{"dev", "prod"}[i%2]
		srv := fmt.Sprintf("server%02d", i%25)
		per[[2]string{tbx, srv}] = append(per[[2]string{tbx, srv}], registry.Tool{
			ID: registry.ID{Toolbox: tbx, Server: srv, Tool: fmt.Sprintf("%s_%d", m.ID.Tool, i)}, Description: m.Description,
			InputSchema: m.InputSchema, Source: registry.MCP, Family: registry.Workbench,
			Handler: func(context.Context, *registry.Call) (any, error) { return nil, nil },
		})
	}
	for k, tools := range per {
		if errs := reg.ReplaceServer(k[0], k[1], tools); errs != nil {
			tb.Fatal(errs)
		}
	}
}

// TestContextCost reports the tools/list size of the flat and bounded
// surfaces with 500 downstream tools (tokens estimated as bytes / 4) and
// fails if the bounded surface's exceeds 2,000 tokens: a size, not a timing,
// so it is stable.
func TestContextCost(t *testing.T) {
	reg := registry.New()
	downstreamTools(t, reg, 500)
	p := pipeline.New(pipeline.Options{Registry: reg})
	cat := &mcpkit.Catalog{Registry: reg}
	b, err := bounded.NewSurface(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	flatBytes, flatN := listBytes(t, mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t"})))
	boundedBytes, boundedN := listBytes(t, b.Server())
	agentBytes, agentN := listBytes(t, mcpkit.Must(agents.New(p, mcpkit.Options{Name: "nexus", Version: "t", Catalog: cat})))
	t.Logf("500 downstream tools: flat %d tools %d bytes (~%d tokens); agents %d tools %d bytes (~%d tokens); bounded %d tools %d bytes (~%d tokens)",
		flatN, flatBytes, flatBytes/4, agentN, agentBytes, agentBytes/4, boundedN, boundedBytes, boundedBytes/4)
	if flatN != 500 {
		t.Fatalf("flat lists %d tools, want 500", flatN)
	}
	if boundedBytes/4 >= 2000 {
		t.Fatalf("bounded tools/list is ~%d tokens, over 2,000", boundedBytes/4)
	}
}
