package main

import (
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSessionRestoreCost measures what a replica pays to serve a session
// another replica started (issue 25): two "nexus serve" replicas on one
// PostgreSQL database; a raw client initializes a session on the first,
// then sends tools/list to the second twice. The first of those includes
// restoring the session there; the second does not. It reports the p50 and
// p90 of both and of their difference. It runs only when asked:
//
//	NEXUS_BENCH_RESTORE=1 go test ./cmd/nexus -run TestSessionRestoreCost -v
//
// NEXUS_BENCH_SESSIONS (default 300) is how many sessions it restores.
func TestSessionRestoreCost(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_RESTORE") == "" {
		t.Skip("a benchmark: NEXUS_BENCH_RESTORE=1 runs it")
	}
	n := envInt("NEXUS_BENCH_SESSIONS", 300)
	reps, _ := startReplicas(t, 2, "--no-demo", "--log-level", "info")
	a, b := reps[0].base()+"/mcp", reps[1].base()+"/mcp"
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(url, session, body string) (string, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		d := time.Since(start)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %d %s", url, resp.StatusCode, data)
		}
		return resp.Header.Get("Mcp-Session-Id"), d
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	var first, again, diff []time.Duration
	for i := range n + 10 {
		id, _ := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"restore","version":"1"}}}`)
		post(a, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, d1 := post(b, id, list)
		_, d2 := post(b, id, list)
		post(a, id, list) // the session stays live on both
		if i < 10 {
			continue // warm-up
		}
		first, again, diff = append(first, d1), append(again, d2), append(diff, d1-d2)
	}
	q := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	t.Logf("%d sessions restored on a second replica (PostgreSQL store):", n)
	for _, row := range []struct {
		name string
		ds   []time.Duration
	}{{"first tools/list there (restore + list)", first}, {"second tools/list there", again}, {"restore (first - second, per session)", diff}} {
		t.Logf("  %-42s p50 %7.3f ms  p90 %7.3f ms", row.name, q(row.ds, .5).Seconds()*1e3, q(row.ds, .9).Seconds()*1e3)
	}
}
