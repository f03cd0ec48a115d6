package textsearch

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/nexus-mcp/nexus/internal/logtest"
)

// TestStatsCloseEndsRefreshes: Close cancels a background refresh that is
// running and returns only once it has ended, and no refresh starts after
// it. A refresh that outlived its owner read a closed database ("nexus
// call" logged "refresh search statistic ... database is closed" when it
// exited under load).
func TestStatsCloseEndsRefreshes(t *testing.T) {
	logs := &logtest.Capture{}
	s := NewStats(0, 10, slog.New(logs)) // every value is stale at once
	fetch := func(context.Context) (int, error) { return 1, nil }
	started := make(chan struct{})
	var ended, refreshes atomic.Int32
	refresh := func(ctx context.Context) (int, error) {
		refreshes.Add(1)
		close(started)
		<-ctx.Done() // a slow query, until cancelled
		ended.Add(1)
		return 0, ctx.Err()
	}
	if _, err := s.Get(context.Background(), "k", fetch, refresh); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "k", fetch, refresh); err != nil {
		t.Fatal(err)
	}
	<-started
	s.Close()
	if ended.Load() != 1 {
		t.Fatal("Close returned while a refresh was running")
	}
	if _, err := s.Get(context.Background(), "k", fetch, refresh); err != nil {
		t.Fatal(err)
	}
	s.Close() // twice is fine
	// A refresh Close cancelled is no failure: a one-shot command ("nexus
	// call") warned "refresh search statistic ... context canceled" as it
	// exited.
	if recs := logs.Records(); len(recs) > 0 {
		t.Errorf("Close's cancellation was logged: %s %s", recs[0].Level, recs[0].Message)
	}
	if n := refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1: one started after Close", n)
	}
}
