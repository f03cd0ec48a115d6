package substrate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// Real-data precision of tension detection (issue 8; docs/benchmarks.md,
// "Tension detection"). A measurement, not CI: it runs only with
// NEXUS_REALDATA=1.
//
//	NEXUS_REALDATA=1          enables the test
//	NEXUS_REALDATA_BELIEFS    beliefs to create (default 50000)
//	NEXUS_REALDATA_SAMPLE     where the sample of detected pairs is written
//	                          (default /tmp/tension-sample.json; never in the repository)
//	NEXUS_SHARED_DATA         the shared data directory (see bench_test.go)

// realSamplePair is one detected tension of the sample file.
type realSamplePair struct {
	A        string `json:"a"`
	B        string `json:"b"`
	Type     string `json:"type"`
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
}

// TestRealDataTensions creates corpus beliefs one by one through
// belief_create on SQLite, counts the tensions detected per 1,000 beliefs by
// type and writes a seeded random sample of 100 detected pairs.
func TestRealDataTensions(t *testing.T) {
	if os.Getenv("NEXUS_REALDATA") != "1" {
		t.Skip("real-data tension measurement: set NEXUS_REALDATA=1 (and NEXUS_SHARED_DATA if ../shared/data is elsewhere) to run it")
	}
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("NEXUS_REALDATA_BELIEFS")); err == nil && v > 0 {
		n = v
	}
	out := os.Getenv("NEXUS_REALDATA_SAMPLE")
	if out == "" {
		out = "/tmp/tension-sample.json"
	}

	st := storetest.OpenTestSQLite(t)
	reg := registry.New()
	if err := New(st, nil).Register(reg); err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	ctx := context.Background()

	content := map[string]string{} // belief id -> content
	var found []Tension
	byType := map[string]int{}
	start := time.Now()
	for i, in := range corpus(t, n) {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		o := p.Call(ctx, pipeline.Request{Tool: "belief_create", Args: raw})
		if o.Err != nil {
			t.Fatalf("belief %d: %v", i, o.Err)
		}
		var res struct {
			Belief   struct{ ID, Content string }
			Tensions []Tension
		}
		if err := json.Unmarshal(o.Result, &res); err != nil {
			t.Fatalf("belief %d: decode result: %v", i, err)
		}
		content[res.Belief.ID] = res.Belief.Content
		for _, tn := range res.Tensions {
			byType[tn.Type]++
			found = append(found, tn)
		}
		if (i+1)%10_000 == 0 {
			t.Logf("%d beliefs, %d tensions, %v", i+1, len(found), time.Since(start).Round(time.Second))
		}
	}

	per := func(c int) float64 { return 1000 * float64(c) / float64(n) }
	types := make([]string, 0, len(byType))
	for ty := range byType {
		types = append(types, ty)
	}
	slices.Sort(types)
	var b strings.Builder
	fmt.Fprintf(&b, "beliefs=%d tensions=%d (%.1f per 1,000 beliefs)\n", n, len(found), per(len(found)))
	for _, ty := range types {
		fmt.Fprintf(&b, "  %-18s %6d  %7.1f per 1,000\n", ty, byType[ty], per(byType[ty]))
	}
	t.Log("\n" + b.String())

	// A seeded sample of 100 detected pairs, for labelling by hand.
	rng := rand.New(rand.NewPCG(8, 2026))
	idx := rng.Perm(len(found))
	sample := make([]realSamplePair, 0, 100)
	for _, k := range idx[:min(100, len(idx))] {
		tn := found[k]
		sample = append(sample, realSamplePair{A: content[tn.BeliefAID], B: content[tn.BeliefBID],
			Type: tn.Type, Severity: tn.Severity, Reason: tn.Description})
	}
	data, err := json.MarshalIndent(struct {
		Summary string           `json:"summary"`
		Pairs   []realSamplePair `json:"pairs"`
	}{b.String(), sample}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatalf("write sample: %v", err)
	}
	t.Logf("wrote %d sampled pairs to %s in %v", len(sample), out, time.Since(start).Round(time.Second))
}
