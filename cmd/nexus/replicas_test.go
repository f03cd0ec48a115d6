package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// startReplicas starts n "nexus serve" replicas on one new PostgreSQL
// schema, all at the same moment (as a deployment starts them), and returns
// their base URLs once each is ready.
func startReplicas(t *testing.T, n int, extra ...string) []string {
	t.Helper()
	db := storetest.PostgresURL(t)
	bases := make([]string, n)
	for i := range n {
		addr := testtools.FreeAddr(t)
		logs := filepath.Join(t.TempDir(), "replica.log")
		f, err := os.Create(logs)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, append([]string{"serve", "--addr", addr, "--db", db, "--log-level", "debug"}, extra...)...)
		cmd.Stderr = f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			f.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logs)
				t.Logf("replica %d (%s) logs:\n%s", i, addr, b)
			}
		})
		bases[i] = "http://" + addr
	}
	for _, base := range bases {
		testtools.EventuallyErr(t, 30*time.Second, "a replica to become ready at "+base, func() error { return ready(base) })
	}
	return bases
}

// roundRobin is a reverse proxy that sends each request to the next of
// bases, as a load balancer with no affinity does; it counts the requests
// each got.
func roundRobin(t *testing.T, bases []string) (string, []*atomic.Int64) {
	t.Helper()
	targets := make([]*url.URL, len(bases))
	counts := make([]*atomic.Int64, len(bases))
	for i, b := range bases {
		targets[i], _ = url.Parse(b)
		counts[i] = new(atomic.Int64)
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := int(next.Add(1) % uint64(len(targets)))
			counts[i].Add(1)
			pr.SetURL(targets[i])
			pr.Out.Host = targets[i].Host
			if os.Getenv("NEXUS_TEST_TRACE_BALANCER") != "" {
				var body []byte
				if pr.In.Body != nil {
					body, _ = io.ReadAll(pr.In.Body)
					pr.Out.Body = io.NopCloser(bytes.NewReader(body))
				}
				fmt.Fprintf(os.Stderr, "balancer %s -> %d %s %s sid=%s %.120s\n", time.Now().Format("05.000"), i, pr.In.Method, pr.In.URL.Path, pr.In.Header.Get("Mcp-Session-Id"), body)
			}
		},
		ModifyResponse: func(r *http.Response) error {
			if os.Getenv("NEXUS_TEST_TRACE_BALANCER") != "" {
				fmt.Fprintf(os.Stderr, "balancer %s <- %s %d %s\n", time.Now().Format("05.000"), r.Request.URL.Host, r.StatusCode, r.Header.Get("Content-Type"))
			}
			return nil
		},
		FlushInterval: -1,
	}
	ts := httptest.NewServer(rp)
	t.Cleanup(ts.Close)
	return ts.URL, counts
}

// TestReplicasServeOneSession: two replicas on one PostgreSQL database behind
// a round-robin balancer serve one MCP session as if they were one server:
// the session started on one replica is re-created on the other from the
// store, its calls keep one conversation, and on the bounded surface a tool
// discovered through one replica is listed and callable through the other.
func TestReplicasServeOneSession(t *testing.T) {
	bases := startReplicas(t, 2, "--no-demo")
	front, counts := roundRobin(t, bases)
	ctx := context.Background()

	t.Run("flat", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp")
		var sessions []string
		for i := range 6 {
			if names := toolNames(t, cs); !slices.Contains(names, "belief_query") {
				t.Fatalf("request %d: tools/list lacks belief_query: %v", i, names)
			}
			res := call(t, cs, "belief_query", map[string]any{"query": "replicas"})
			if res.IsError {
				t.Fatalf("request %d: belief_query: %+v", i, res.Content)
			}
			sessions = append(sessions, res.Meta[mcpkit.MetaSession].(string))
		}
		for _, s := range sessions[1:] {
			if s != sessions[0] {
				t.Errorf("the session's calls got conversations %v across replicas, want one", sessions)
				break
			}
		}
	})

	t.Run("bounded", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp/bounded")
		res := call(t, cs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}})
		if res.IsError {
			t.Fatalf("get_tools: %+v", res.Content)
		}
		for i := range 4 { // both replicas, twice
			if names := toolNames(t, cs); !slices.Contains(names, "substrate_belief_create") {
				t.Fatalf("listing %d: the discovered tool is missing: %v", i, names)
			}
			res := call(t, cs, "substrate_belief_create", map[string]any{"content": "Replica " + string(rune('A'+i)) + " serves a discovered tool"})
			if res.IsError {
				t.Fatalf("call %d of the discovered tool: %+v", i, res.Content)
			}
		}
	})

	t.Run("concurrent first requests", func(t *testing.T) {
		// Many requests of one session reach a replica that does not hold
		// it at the same moment: it is re-created once, and all succeed.
		cs, _ := connect(t, front+"/mcp")
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_query", Arguments: map[string]any{"query": "concurrent"}})
				if err != nil || res.IsError {
					t.Errorf("a concurrent call: %v %+v", err, res)
				}
			}()
		}
		wg.Wait()
	})

	t.Run("ended session", func(t *testing.T) {
		cs, _ := connect(t, front+"/mcp")
		id := cs.ID()
		call(t, cs, "belief_query", map[string]any{"query": "x"})
		cs.Close() // DELETE, through one replica
		// Every replica forgets it: the one that served the DELETE at once,
		// the others when the event reaches them.
		for _, base := range bases {
			testtools.EventuallyErr(t, 5*time.Second, base+" to forget the deleted session", func() error {
				req, _ := http.NewRequest("POST", base+"/mcp", stringsReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					return fmt.Errorf("a deleted session answered %d, want 404", resp.StatusCode)
				}
				return nil
			})
		}
	})

	for i, c := range counts {
		if c.Load() == 0 {
			t.Errorf("replica %d got no requests", i)
		}
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
