package quota_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestTurnSlots: a user runs at most Max turns at once; the next is
// RATE_LIMITED with a retry-after; another user is not affected; an ended
// turn frees its slot, and so does a lease that passed (a killed replica's
// turn); racing turns take exactly Max slots; prune deletes passed leases.
func TestTurnSlots(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		ts, err := quota.NewTurnSlots(s, quota.TurnOptions{Max: 2, Lease: time.Minute, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		end1, err := ts.Begin(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		end2, err := ts.Begin(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		_, err = ts.Begin(ctx, "ann")
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.RateLimited || e.RetryAfter < 1 {
			t.Fatalf("a third turn: %v, want RATE_LIMITED with retry-after", err)
		}
		endB, err := ts.Begin(ctx, "bob")
		if err != nil {
			t.Fatalf("another user: %v", err)
		}
		endB()
		end1()
		end1() // twice is harmless
		end3, err := ts.Begin(ctx, "ann")
		if err != nil {
			t.Fatalf("after a turn ended: %v", err)
		}
		// A replica that dies holds its slots until their lease passes:
		// here end2 and end3 are never called before the clock moves.
		c.Advance(2 * time.Minute)
		endA, err := ts.Begin(ctx, "ann")
		if err != nil {
			t.Fatalf("after the leases passed: %v", err)
		}
		endA()
		end2()
		end3()
		if n, err := quota.PruneTurnSlots(ctx, s, c.Now().Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("prune after every turn ended: %d %v", n, err)
		}

		// Racing: exactly Max of 20 begin.
		var won atomic.Int64
		var wg sync.WaitGroup
		ends := make(chan func(), 20)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				end, err := ts.Begin(ctx, "cat")
				if err == nil {
					won.Add(1)
					ends <- end
				} else if !errors.As(err, &e) || e.Code != errs.RateLimited {
					t.Errorf("a racing turn: %v", err)
				}
			}()
		}
		wg.Wait()
		close(ends)
		if won.Load() != 2 {
			t.Fatalf("%d racing turns began, want 2", won.Load())
		}
		for end := range ends {
			end()
		}
	})
}
