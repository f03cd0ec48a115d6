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

// TestHeldCallIsItsUsers: a held call's request state resumes it only for
// the user who made the call, and only for the same tool; anyone else finds
// nothing and leaves it held.
func TestHeldCallIsItsUsers(t *testing.T) {
	var h holds
	ic := &inCall{flight: newFlight()}
	handle := h.put("greet", "alice", ic)
	if hc := h.take(handle, "greet", "bob"); hc != nil {
		t.Fatal("another user resumed alice's held call")
	}
	if hc := h.take(handle, "other", "alice"); hc != nil {
		t.Fatal("a retry of another tool resumed the held call")
	}
	if hc := h.take(handle, "greet", "alice"); hc == nil || hc.ic != ic {
		t.Fatalf("alice's retry: %+v", hc)
	}
	if hc := h.take(handle, "greet", "alice"); hc != nil {
		t.Fatal("a held call was resumed twice")
	}
}
