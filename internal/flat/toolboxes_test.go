package flat

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestFlatDoesNotRunMetaTools: the flat surface does not list the bounded
// surface's meta-tools, and a tools/call of one is the SDK's unknown-tool
// error, not a run of the tool (it used to reach the pipeline as a name
// "not listed yet").
func TestFlatDoesNotRunMetaTools(t *testing.T) {
	reg := registry.New()
	var ran atomic.Int32
	for _, name := range []string{"use_tool", "open_toolbox", "get_tools"} {
		err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "bounded", Tool: name},
			Source: registry.Local, Family: registry.Workbench, Meta: true, InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(context.Context, *registry.Call) (any, error) { ran.Add(1); return "ran", nil }})
		if err != nil {
			t.Fatal(err)
		}
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	srv := mcpkit.Must(New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t"}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 0 {
		t.Fatalf("tools/list: %v %v, want no tools", lt, err)
	}
	for _, name := range []string{"use_tool", "open_toolbox", "get_tools"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("call %s: %v %v, want the JSON-RPC unknown-tool error", name, res, err)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the flat surface ran a meta-tool %d times", n)
	}
}
