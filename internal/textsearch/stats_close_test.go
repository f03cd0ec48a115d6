package textsearch

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestStatsCloseEndsRefreshes: Close cancels a background refresh that is
// running and returns only once it has ended, and no refresh starts after
// it. A refresh that outlived its owner read a closed database ("nexus
// call" logged "refresh search statistic ... database is closed" when it
// exited under load).
func TestStatsCloseEndsRefreshes(t *testing.T) {
	s := NewStats(0, 10, nil) // every value is stale at once
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
	if n := refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1: one started after Close", n)
	}
}
