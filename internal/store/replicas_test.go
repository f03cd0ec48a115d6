package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestReplicasStartTogether opens one empty PostgreSQL schema from several
// stores at the same moment, as replicas started together do: every one
// must open, exactly one must have created the schema, and each migration
// must be applied once.
func TestReplicasStartTogether(t *testing.T) {
	for round := range 3 {
		url := storetest.PostgresURL(t)
		const replicas = 6
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			stores [replicas]*store.Store
			errs   [replicas]error
		)
		for i := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				stores[i], errs[i] = store.Open(context.Background(), store.Options{URL: url})
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		for i := range replicas {
			if errs[i] != nil {
				t.Fatalf("round %d: replica %d: %v", round, i, errs[i])
			}
			defer stores[i].Close()
			if stores[i].Created {
				created++
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d replicas report creating the schema, want 1", round, created)
		}
		var n, distinct int
		if err := stores[0].DB().QueryRow(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n != distinct || n == 0 {
			t.Errorf("round %d: %d migration rows for %d versions", round, n, distinct)
		}
	}
}

// TestClaimRunsOncePerPeriod has replicas race for one periodic job: exactly
// one claims each period, whichever store they use.
func TestClaimRunsOncePerPeriod(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		claims := func(name string, every time.Duration) int {
			var (
				wg sync.WaitGroup
				mu sync.Mutex
				n  int
			)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.Claim(ctx, name, fmt.Sprintf("replica-%d", i), every)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						mu.Lock()
						n++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			return n
		}
		if n := claims("retention", time.Hour); n != 1 {
			t.Errorf("first period: %d replicas claimed the job, want 1", n)
		}
		if n := claims("retention", time.Hour); n != 0 {
			t.Errorf("same period again: %d replicas claimed the job, want 0", n)
		}
		if n := claims("pruning", time.Hour); n != 1 {
			t.Errorf("another job: %d replicas claimed it, want 1", n)
		}
		// A period later (the racers finish well within one).
		time.Sleep(time.Second)
		if n := claims("retention", time.Second); n != 1 {
			t.Errorf("next period: %d replicas claimed the job, want 1", n)
		}
	})
}
