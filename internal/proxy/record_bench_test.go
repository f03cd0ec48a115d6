package proxy

import (
	"context"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// What recording every forwarded tools/call costs the passthrough (issue
// 25: at most 5 % of its throughput), in process: the raw passthrough of
// BenchmarkPassthroughRaw with the pipeline's RecordPassthrough writing
// traces to a SQLite store, as "nexus serve" does. Compare, interleaved:
//
//	go test ./internal/proxy -run '^$' -bench 'PassthroughRaw$|PassthroughRawRecorded$' -benchtime 20000x -count 4
func BenchmarkPassthroughRawRecorded(b *testing.B) {
	st, err := store.Open(context.Background(), store.Options{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	tw := trace.NewWriter(st, nil)
	b.Cleanup(func() {
		tw.Close()
		st.Close()
	})
	p := pipeline.New(pipeline.Options{Registry: registry.New(), Traces: tw})
	benchProtocol(b, false, 8, "2025-11-25", false, Options{Record: p.RecordPassthrough})
}
