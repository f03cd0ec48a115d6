package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

type callerKey struct{}

// TestCallsRecorded: every tools/call the proxy forwards is recorded, on
// the SDK path (stdio) and the raw passthrough (Streamable HTTP): the
// tool, its server, the caller's context, sizes and the outcome (a result,
// a result marked isError, the server's invalid-params error, a filtered
// tool refused by the proxy itself); other methods are not calls.
func TestCallsRecorded(t *testing.T) {
	for _, d := range downstreams[:2] {
		t.Run(d.name, func(t *testing.T) {
			var (
				mu  sync.Mutex
				got []pipeline.Passthrough
			)
			p := New(testConfig(d.start(t)), Options{Logger: testLogger(t), Stderr: devNull(t),
				Record: func(ctx context.Context, c pipeline.Passthrough) {
					if ctx.Value(callerKey{}) != "ada" {
						t.Errorf("a call of %s recorded without its caller's context", c.Tool)
					}
					mu.Lock()
					got = append(got, c)
					mu.Unlock()
				}})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, "ada")))
			}))
			t.Cleanup(func() {
				p.Close()
				ts.Close()
			})
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs := connect(t, client, ts.URL+"/mcp/servers/tb/s")
			if res := call(t, cs, "echo", map[string]any{"text": "hello"}); res.IsError || text(t, res) == "" {
				t.Fatal("echo answered nothing")
			}
			if res := call(t, cs, "fail", nil); !res.IsError {
				t.Fatal("fail: want a result marked isError")
			}
			ctx := context.Background()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
				t.Fatal("nope: want the server's error")
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			filtered := connect(t, client, ts.URL+"/mcp/servers/tb/filtered")
			if _, err := filtered.CallTool(ctx, &mcp.CallToolParams{Name: "hidden"}); err == nil {
				t.Fatal("hidden: want the proxy's unknown tool")
			}

			mu.Lock()
			defer mu.Unlock()
			type outcome struct {
				server, tool string
				err          errs.Code
				isError      bool
			}
			var outcomes []outcome
			for _, c := range got {
				outcomes = append(outcomes, outcome{c.Server, c.Tool, c.Err, c.IsError})
				if c.Toolbox != "tb" || c.Duration <= 0 || c.Start.IsZero() || c.ResultBytes <= 0 {
					t.Errorf("record %+v: want toolbox, start, duration and the answer's size", c)
				}
			}
			want := []outcome{{"s", "echo", "", false}, {"s", "fail", "", true}, {"s", "nope", errs.BadRequest, false}, {"filtered", "hidden", errs.BadRequest, false}}
			if !slices.Equal(outcomes, want) {
				t.Fatalf("recorded %+v, want %+v", outcomes, want)
			}
			if got[0].ArgsBytes != len(`{"text":"hello"}`) {
				t.Errorf("echo's arguments recorded as %d bytes, want %d", got[0].ArgsBytes, len(`{"text":"hello"}`))
			}
		})
	}
}
