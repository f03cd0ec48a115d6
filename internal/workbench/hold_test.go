package workbench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/relay"
)

// TestRetryOfACallNotHeldHere: a sessionless client's retry whose request
// state names a held call this replica does not hold (another replica's,
// or one that ended) is told to call the tool again, and reaches no
// server.
func TestRetryOfACallNotHeldHere(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	textTool(srv, "greet", "hello")
	url := httpPeer(t, config.StreamableHTTP, srv)
	reg := registry.New()
	m := NewManager(toolboxConfig("tb", named{"s", urlServer(config.StreamableHTTP, url)}), reg, Options{})
	t.Cleanup(func() { m.Close() })
	open(t, m, "tb")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = relay.With(ctx, &relay.Caller{RequestState: heldPrefix + "ELSEWHERE",
		InputResponses: mcp.InputResponseMap{"nexus-1": &mcp.ElicitResult{Action: "accept"}}})
	o := pipeline.New(pipeline.Options{Registry: reg}).Call(ctx, pipeline.Request{Tool: "tb__s__greet", Surface: "test"})
	if o.Err == nil || !strings.Contains(o.Err.Message, "the call this retry continues is no longer held here (it ended, timed out, or is held by another replica); call the tool again") {
		t.Fatalf("a retry of a call held elsewhere: %+v %v", o.MCP, o.Err)
	}
}
