package metrics_test

import (
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/metrics"
)

// BenchmarkObserveCall is what the pipeline's observer adds to one call:
// a counter and a histogram of an existing series.
func BenchmarkObserveCall(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveCall("belief_query", "mcp-flat-http", "ok", 1200*time.Microsecond)
	}
}

// BenchmarkObserveCallParallel is BenchmarkObserveCall from every core at
// once, on the same series (the contended case).
func BenchmarkObserveCallParallel(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveCall("belief_query", "mcp-flat-http", "ok", 1200*time.Microsecond)
		}
	})
}
