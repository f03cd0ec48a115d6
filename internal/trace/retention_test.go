package trace_test

import (
	"context"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// TestPruneDeletesOnlyOldTraces: Prune removes exactly the traces that
// started before the cutoff, across batch boundaries, on both stores.
func TestPruneDeletesOnlyOldTraces(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		const n = 12000 // more than two batches
		seed(t, st, n, base)
		cutoff := base.Add(11000 * time.Second) // records 0..10999 are older
		var before, older int64                 // the writer may drop records under load
		st.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&before)
		st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM traces WHERE started_at < ?`), store.Micros(cutoff)).Scan(&older)
		if older < 10000 {
			t.Fatalf("only %d of %d seeded traces are older than the cutoff", older, n)
		}
		deleted, err := trace.Prune(context.Background(), st, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		var left, oldest int64
		st.DB().QueryRow(`SELECT COUNT(*), MIN(started_at) FROM traces`).Scan(&left, &oldest)
		if deleted != older || left != before-older || oldest < store.Micros(cutoff) {
			t.Fatalf("deleted %d, left %d (oldest %d), want %d, %d (not before %d)", deleted, left, oldest, older, before-older, store.Micros(cutoff))
		}
		if again, err := trace.Prune(context.Background(), st, cutoff); err != nil || again != 0 {
			t.Fatalf("second prune: %d, %v", again, err)
		}
	})
}
