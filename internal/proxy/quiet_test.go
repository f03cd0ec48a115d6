package proxy

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestQuietStdioSessionsEnd: a stdio server's passthrough session whose
// client has no request in flight and no GET stream open ends after the
// quiet timeout, with its process; one whose client holds its GET stream
// open stays, however long it does not call.
func TestQuietStdioSessionsEnd(t *testing.T) {
	const quietFor = 300 * time.Millisecond
	p := New(testConfig(downstreams[0].start(t)), Options{Logger: testLogger(t), Stderr: devNull(t), QuietTimeout: quietFor})
	ts := httptest.NewServer(p)
	t.Cleanup(func() {
		p.Close()
		ts.Close()
	})
	ctx := context.Background()
	connect := func(noGET bool) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp/servers/tb/s", DisableStandaloneSSE: noGET}, testtools.WithSession())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	echo := func(cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		return err
	}
	listening, silent := connect(false), connect(true)
	for _, cs := range []*mcp.ClientSession{listening, silent} {
		if err := echo(cs); err != nil {
			t.Fatal(err)
		}
	}
	links := func() int {
		ep, _, e := p.endpoint("tb", "s")
		if e != nil {
			t.Fatal(e)
		}
		ep.mu.Lock()
		defer ep.mu.Unlock()
		return len(ep.links)
	}
	if n := links(); n != 2 {
		t.Fatalf("%d downstream sessions, want 2", n)
	}
	testtools.EventuallyErr(t, 10*time.Second, "the silent client's session to end", func() error {
		if n := links(); n != 1 {
			return fmt.Errorf("%d downstream sessions, want 1", n)
		}
		return nil
	})
	time.Sleep(2 * quietFor) // not synchronisation: the listening client stays quiet past the timeout
	if err := echo(listening); err != nil {
		t.Errorf("the client with its GET stream open: %v", err)
	}
	if err := echo(silent); err == nil {
		t.Error("the silent client's session still answers after the quiet timeout")
	}
}
