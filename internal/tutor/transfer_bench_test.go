package tutor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// BenchmarkTransferResolve calls tn_transfer_resolve through the pipeline
// with 10 source courses, to SFU, against 20 times the real rule set: the
// real rules of transfers.json and 19 copies of them at synthetic
// destination institutions (237,640 rules). The index is built once, as after an import; each call
// pays the pipeline (decoding, schema validation, tracing off), argument
// reading, resolution and rendering.
func BenchmarkTransferResolve(b *testing.B) { benchTransferResolve(b, "SFU") }

// BenchmarkTransferResolveAllDestinations is BenchmarkTransferResolve
// without targetInstitution: the 10 courses to every destination (the 38
// real ones and 19 synthetic copies of each), one award per destination.
func BenchmarkTransferResolveAllDestinations(b *testing.B) { benchTransferResolve(b, "") }

func benchTransferResolve(b *testing.B, target string) {
	st := storetest.OpenBench(b, store.SQLite, "resolve")
	rows, err := transfer.LoadRows(filepath.Join(testtools.SharedData(b), "langara", "transfers.json"))
	if err != nil {
		b.Fatal(err)
	}
	s := New(st, conversation.New(st), Options{CursorKey: []byte("k")})
	real := transfer.Parser{Dir: s.dir}.ParseAll(rows)
	var rules []transfer.Rule
	for i := range 20 {
		for _, r := range real {
			if i > 0 { // the first copy is the real set
				r.Destination = fmt.Sprintf("syn%02d-%s", i, r.Destination)
			}
			rules = append(rules, r)
		}
	}
	v, err := s.rulesVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	s.rules = &ruleSet{version: v, checked: time.Now(), ix: transfer.NewIndex(rules), ids: map[string]string{}}
	reg := registry.New()
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.transferTools()...); err != nil {
		b.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conversation.New(st)})
	// Ten real Langara courses with many agreements, to every destination.
	var have []string
	seen := map[string]bool{}
	for _, r := range real {
		if c := r.Course.Code(); r.Course.Institution == "langara" && !seen[c] && len(have) < 10 && slices.Contains([]string{"CPSC", "MATH", "ENGL", "PHYS", "CHEM"}, r.Course.Subject) {
			seen[c] = true
			have = append(have, c)
		}
	}
	in := map[string]any{"sourceInstitution": "langara", "sourceCourses": have, "asOfDate": "2024-09-01"}
	if target != "" {
		in["targetInstitution"] = target
	}
	args, _ := json.Marshal(in)
	ds := make([]time.Duration, 0, b.N)
	matches := 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		o := p.Call(context.Background(), pipeline.Request{Tool: "tn_transfer_resolve", Args: args, Surface: "bench"})
		ds = append(ds, time.Since(t0))
		if o.Err != nil {
			b.Fatal(o.Err)
		}
		if matches == 0 {
			body, _ := o.Body()
			var out struct{ ExactMatches []any }
			json.Unmarshal(body, &out)
			matches = len(out.ExactMatches)
		}
	}
	b.StopTimer()
	storetest.ReportLatencies(b, ds)
	b.ReportMetric(float64(len(rules)), "rules")
	b.ReportMetric(float64(matches), "exact-matches")
}
