package trace_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

func TestWriterStoresEveryRecord(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		w := trace.NewWriter(s, slog.New(slog.DiscardHandler))
		const n = 1000
		for i := range n {
			r := trace.Record{RequestID: "r", Surface: "test", Toolbox: "nexus", Server: "substrate", Tool: "belief_get",
				Source: "local", Workspace: "w", StartedAt: time.Now(), Duration: time.Millisecond, Outcome: trace.OK}
			if i%10 == 0 {
				r.Outcome, r.ErrorCode = trace.Error, "NOT_FOUND"
			}
			w.Record(r)
		}
		w.Flush()
		var total, errors int
		s.DB().QueryRow(`SELECT COUNT(*), SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END) FROM traces`).Scan(&total, &errors)
		if total != n || errors != n/10 {
			t.Fatalf("stored %d records (%d errors), want %d (%d)", total, errors, n, n/10)
		}
		w.Record(trace.Record{RequestID: "last", Workspace: "w", StartedAt: time.Now(), Outcome: trace.OK})
		w.Close()
		s.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&total)
		if total != n+1 {
			t.Fatalf("Close did not flush: %d", total)
		}
		if w.Dropped() != 0 {
			t.Fatalf("dropped %d", w.Dropped())
		}
	})
}
