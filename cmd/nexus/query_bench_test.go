package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/substrate/substratetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// BenchmarkQueryOverMCP: what MCP adds to belief_query (issue 25). The
// same questions against a copy of the substrate benchmark's SQLite store
// of 100,000 beliefs (`go test ./internal/substrate -bench BeliefQuery`
// builds it in $NEXUS_BENCH_DIR), first through the pipeline in this
// process, then over MCP (one session of the SDK's client, Streamable
// HTTP) to `nexus serve` (its own process) on the same file, one call at a
// time, NEXUS_BENCH_ROUNDS (default 10) rounds of the 20 questions each,
// then as raw POSTs on that session (the server and the HTTP hop without
// the SDK client's decoding). It reports the p50s and what MCP adds.
func BenchmarkQueryOverMCP(b *testing.B) {
	dir := cmp.Or(os.Getenv("NEXUS_BENCH_DIR"), filepath.Join(os.TempDir(), "nexus-bench"))
	orig := filepath.Join(dir, "beliefs-100000", "nexus.db")
	if _, err := os.Stat(orig); err != nil {
		b.Skipf("no benchmark store at %s: run go test ./internal/substrate -run '^$' -bench BeliefQuery/sqlite -benchtime 1x first", orig)
	}
	src, err := sql.Open("sqlite", orig)
	if err != nil {
		b.Fatal(err)
	}
	src.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	src.Close()
	db := filepath.Join(b.TempDir(), "nexus.db")
	copyFile(b, orig, db)
	rounds := envInt("NEXUS_BENCH_ROUNDS", 10)
	ctx := context.Background()
	p50 := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}

	// In process: the pipeline over the store, as the surfaces call it.
	st, err := store.Open(ctx, store.Options{URL: "sqlite:" + db})
	if err != nil {
		b.Fatal(err)
	}
	reg := registry.New()
	if err := substrate.New(st, nil).Register(reg); err != nil {
		b.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	var inProc []time.Duration
	for r := range rounds + 1 {
		for _, q := range substratetest.Queries {
			raw, _ := json.Marshal(map[string]any{"query": q})
			t0 := time.Now()
			o := p.Call(ctx, pipeline.Request{Tool: "belief_query", Args: raw})
			if d := time.Since(t0); r > 0 { // the first round warms up
				inProc = append(inProc, d)
			}
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
	}
	st.Close()

	// Over MCP, on the same file.
	srv := startBenchServe(b, db)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp"}, testtools.WithSession())
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var overMCP []time.Duration
	var size int
	for r := range rounds + 1 {
		for _, q := range substratetest.Queries {
			t0 := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_query", Arguments: map[string]any{"query": q}})
			if d := time.Since(t0); r > 0 {
				overMCP = append(overMCP, d)
			}
			if err != nil || res.IsError {
				b.Fatalf("%q: %v %v", q, err, res)
			}
			if r > 0 {
				enc, _ := json.Marshal(res)
				size += len(enc)
			}
		}
	}
	// The same calls as raw POSTs on the client's session: the server and
	// the HTTP hop without the SDK client's decoding of the result.
	hc := &http.Client{}
	var raw []time.Duration
	for r := range rounds + 1 {
		for i, q := range substratetest.Queries {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
				"params": map[string]any{"name": "belief_query", "arguments": map[string]any{"query": q}}})
			req, _ := http.NewRequest(http.MethodPost, srv.base+"/mcp", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", cs.ID())
			req.Header.Set("Mcp-Protocol-Version", testtools.SessionProtocol)
			t0 := time.Now()
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if d := time.Since(t0); r > 0 {
				raw = append(raw, d)
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"result"`) {
				b.Fatalf("%q: %d %.200s", q, resp.StatusCode, data)
			}
		}
	}
	in, over := p50(inProc), p50(overMCP)
	b.ReportMetric(float64(in.Microseconds())/1e3, "in-process-p50-ms")
	b.ReportMetric(float64(over.Microseconds())/1e3, "mcp-p50-ms")
	b.ReportMetric(float64(p50(raw).Microseconds())/1e3, "raw-http-p50-ms")
	b.ReportMetric(float64((over-in).Microseconds())/1e3, "added-p50-ms")
	b.ReportMetric(float64(size)/float64(len(overMCP))/1e3, "result-KB")
}
