package flat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

func TestToolListFollowsTheRegistryAndProxiesResultsUnchanged(t *testing.T) {
	reg := registry.New()
	downstream := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "raw"}, &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"k": "v"},
		Meta:              mcp.Meta{"downstream/meta": true},
	}
	proxy := registry.Tool{ID: registry.ID{Toolbox: "dev", Server: "mem", Tool: "read"}, Source: registry.MCP,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler:     func(context.Context, *registry.Call) (any, error) { return downstream, nil }}
	p := pipeline.New(pipeline.Options{Registry: reg})
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "test", Surface: "test"}))

	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	if lt, _ := cs.ListTools(ctx, nil); len(lt.Tools) != 0 {
		t.Fatalf("tools before: %v", lt.Tools)
	}
	// The client speaks the 2026-07-28 protocol, where list changes reach
	// it on its subscriptions/listen stream; the server may register that
	// subscription a moment after Connect returns (under load, after the
	// first change), and a change before it is not notified. So the tool
	// is added, and removed and added again, until a notification comes.
	notified := false
	for try := 0; try < 50 && !notified; try++ {
		if try > 0 {
			reg.ReplaceServer("dev", "mem", nil)
		}
		reg.ReplaceServer("dev", "mem", []registry.Tool{proxy})
		select {
		case <-changed:
			notified = true
		case <-time.After(200 * time.Millisecond):
		}
	}
	if !notified {
		t.Fatal("no tools/list_changed")
	}
	time.Sleep(100 * time.Millisecond) // a debounced notification still on its way
	for len(changed) > 0 {
		<-changed
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "dev__mem__read" {
		t.Fatalf("tools after: %v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dev__mem__read", Arguments: map[string]any{"context": map[string]any{"workspaceId": "w"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res)
	want, _ := json.Marshal(downstream)
	if string(got) != string(want) {
		t.Fatalf("proxied result changed:\n got %s\nwant %s", got, want)
	}
	reg.ReplaceServer("dev", "mem", nil)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after removal")
	}
	if lt, _ := cs.ListTools(ctx, nil); len(lt.Tools) != 0 {
		t.Fatalf("tools after removal: %v", lt.Tools)
	}
}
