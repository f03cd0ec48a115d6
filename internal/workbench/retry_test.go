package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestRetriesSafeCalls: a call the server fails is tried again when the
// tool is safe to repeat (readOnlyHint or idempotentHint), within the
// server's retries, and counted; a tool that may change something is not,
// nor any call of a server configured with retries: 0.
func TestRetriesSafeCalls(t *testing.T) {
	var calls atomic.Int32
	failFirst := func(n int32) mcp.ToolHandler {
		var seen atomic.Int32
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			if seen.Add(1) <= n {
				return nil, errors.New("a hiccup")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
		}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	flaky := func() string {
		srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "read", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, failFirst(2))
		srv.AddTool(&mcp.Tool{Name: "put", InputSchema: obj, Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, failFirst(1))
		srv.AddTool(&mcp.Tool{Name: "send", InputSchema: obj}, failFirst(1))
		srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, failFirst(100))
		return httpPeer(t, config.StreamableHTTP, srv)
	}
	url := flaky()
	zero := 0
	strict := urlServer(config.StreamableHTTP, flaky())
	strict.Retries = &zero
	reg := registry.New()
	m := NewManager(toolboxConfig("tb", named{"f", urlServer(config.StreamableHTTP, url)}, named{"strict", strict}), reg, Options{BreakerFailures: 100})
	t.Cleanup(func() { m.Close() })
	open(t, m, "tb")
	retries := func(server string) uint64 {
		for _, s := range m.Servers() {
			if s.Server == server {
				return s.Retries
			}
		}
		return 0
	}
	for _, c := range []struct {
		tool  string
		ok    bool
		calls int32
	}{
		{"tb__f__read", true, 3},       // two failures, two retries
		{"tb__f__put", true, 2},        // idempotent: one retry
		{"tb__f__send", false, 1},      // may change something: not retried
		{"tb__f__broken", false, 3},    // retried twice, then its failure
		{"tb__strict__read", false, 1}, // retries: 0
	} {
		calls.Store(0)
		res, err := call(t, reg, c.tool, nil)
		if ok := err == nil && !res.IsError; ok != c.ok {
			t.Errorf("%s: ok %v (%+v %v), want %v", c.tool, ok, res, err, c.ok)
		}
		if n := calls.Load(); n != c.calls {
			t.Errorf("%s: the server saw %d calls, want %d", c.tool, n, c.calls)
		}
	}
	if n, s := retries("f"), retries("strict"); n != 5 || s != 0 {
		t.Errorf("retries counted: f %d, strict %d; want 5 and 0", n, s)
	}
}
