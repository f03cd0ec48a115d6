package quota_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// noon is a fixed clock: 12:00 UTC, 43,200 s before the next UTC midnight.
var noon = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func newQuotas(t testing.TB, s *store.Store) *quota.Quotas {
	t.Helper()
	q, err := quota.New(s, quota.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// admitN admits n prompts of subject and fails on any error.
func admitN(t testing.TB, q *quota.Quotas, subject string, tier quota.Tier, now time.Time, n int) {
	t.Helper()
	for i := range n {
		u, err := q.Admit(context.Background(), subject, tier, now)
		if err != nil {
			t.Fatalf("prompt %d of %d: %v", i+1, n, err)
		}
		if u.Current != i+1 {
			t.Fatalf("prompt %d: current %d", i+1, u.Current)
		}
	}
}

func TestAdmitUpToTheLimitThenRateLimited(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, ctx := newQuotas(t, s), context.Background()
		for i := 1; i <= 100; i++ {
			u, err := q.Admit(ctx, "u1", quota.Free, noon)
			if err != nil {
				t.Fatalf("prompt %d: %v", i, err)
			}
			want := quota.Usage{Current: i, Max: 100, Window: "day", ResetAt: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}
			if u != want {
				t.Fatalf("prompt %d: %+v, want %+v", i, u, want)
			}
		}
		for range 3 { // refused prompts count nothing
			u, err := q.Admit(ctx, "u1", quota.Free, noon)
			var e *errs.Error
			if !errors.As(err, &e) || e.Code != errs.RateLimited {
				t.Fatalf("prompt 101: %v, want RATE_LIMITED", err)
			}
			if u.Current != 100 || u.Max != 100 {
				t.Fatalf("usage %+v", u)
			}
			// ADR-012's example, to the byte.
			got, _ := json.Marshal(e.Response("req-1"))
			const want = `{"code":"RATE_LIMITED","message":"Daily prompt limit exceeded","details":{"reason":"User has used 100/100 prompts today","retryAfter":43200,"limit":{"current":100,"max":100,"window":"day"}},"requestId":"req-1"}`
			if string(got) != want {
				t.Fatalf("response\n got %s\nwant %s", got, want)
			}
		}
		if u, err := q.Peek(ctx, "u1", quota.Free, noon); err != nil || u.Current != 100 {
			t.Fatalf("peek %+v %v", u, err)
		}
	})
}

func TestRetryAfterIsSecondsToUTCMidnight(t *testing.T) {
	vancouver := time.FixedZone("PST", -8*3600)
	for _, c := range []struct {
		now  time.Time
		want int
	}{
		{noon, 43200},
		{time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), 86400},
		{time.Date(2026, 11, 23, 23, 59, 59, 500_000_000, time.UTC), 1},
		{time.Date(2026, 11, 23, 12, 0, 0, 300_000_000, time.UTC), 43200},
		// 20:00 in Vancouver is 04:00 UTC the next day: 20 hours to go.
		{time.Date(2026, 11, 23, 20, 0, 0, 0, vancouver), 72000},
	} {
		e := quota.Exceeded(quota.Usage{Current: 10, Max: 10, Window: "day",
			ResetAt: midnightAfter(c.now)}, c.now)
		if e.RetryAfter != c.want {
			t.Errorf("%v: retryAfter %d, want %d", c.now, e.RetryAfter, c.want)
		}
	}
}

func midnightAfter(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

func TestANewUTCDayResets(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, ctx := newQuotas(t, s), context.Background()
		admitN(t, q, "u1", quota.Anonymous, noon, 10)
		late := time.Date(2026, 11, 23, 23, 59, 59, 0, time.UTC)
		if _, err := q.Admit(ctx, "u1", quota.Anonymous, late); errs.CodeOf(err) != errs.RateLimited {
			t.Fatalf("23:59:59: %v", err)
		} else if errs.From(err).RetryAfter != 1 {
			t.Fatalf("retryAfter %d", errs.From(err).RetryAfter)
		}
		next := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
		u, err := q.Admit(ctx, "u1", quota.Anonymous, next)
		if err != nil || u.Current != 1 || !u.ResetAt.Equal(next.AddDate(0, 0, 1)) {
			t.Fatalf("next day: %+v %v", u, err)
		}
		// A time in another zone counts in its UTC day.
		u, err = q.Peek(ctx, "u1", quota.Anonymous, next.In(time.FixedZone("PST", -8*3600)))
		if err != nil || u.Current != 1 {
			t.Fatalf("peek in PST: %+v %v", u, err)
		}
	})
}

func TestTiersDiffer(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, ctx := newQuotas(t, s), context.Background()
		for _, c := range []struct {
			tier quota.Tier
			max  int
		}{{quota.Anonymous, 10}, {quota.Free, 100}, {quota.Paid, 500}} {
			subject := "user-" + string(c.tier)
			admitN(t, q, subject, c.tier, noon, c.max)
			_, err := q.Admit(ctx, subject, c.tier, noon)
			if e := errs.From(err); e == nil || e.Code != errs.RateLimited || e.Limit.Max != float64(c.max) {
				t.Fatalf("%s after %d: %v", c.tier, c.max, err)
			}
		}
		// Upgraded to paid, the free user at 100 goes on; downgraded to
		// anonymous, they are over the limit and told how far.
		if u, err := q.Admit(ctx, "user-free", quota.Paid, noon); err != nil || u.Current != 101 || u.Max != 500 {
			t.Fatalf("upgraded: %+v %v", u, err)
		}
		_, err := q.Admit(ctx, "user-free", quota.Anonymous, noon)
		if e := errs.From(err); e == nil || e.Reason != "User has used 101/10 prompts today" {
			t.Fatalf("downgraded: %v", err)
		}
	})
}

func TestCustomLimits(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, err := quota.New(s, quota.Limits{Anonymous: 0, Free: 2, Paid: 3})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// A zero limit admits nothing and writes nothing.
		u, err := q.Admit(ctx, "anon", quota.Anonymous, noon)
		if errs.CodeOf(err) != errs.RateLimited || u.Current != 0 || errs.From(err).Reason != "User has used 0/0 prompts today" {
			t.Fatalf("zero limit: %+v %v", u, err)
		}
		admitN(t, q, "f", quota.Free, noon, 2)
		if _, err := q.Admit(ctx, "f", quota.Free, noon); errs.CodeOf(err) != errs.RateLimited {
			t.Fatalf("third: %v", err)
		}
		if _, err := quota.New(s, quota.Limits{Free: -1}); err == nil {
			t.Fatal("a negative limit was accepted")
		}
	})
}

func TestPeekAndBYOKCountNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, ctx := newQuotas(t, s), context.Background()
		u, err := q.Peek(ctx, "u1", quota.Free, noon)
		if err != nil || u != (quota.Usage{Max: 100, Window: "day", ResetAt: midnightAfter(noon)}) {
			t.Fatalf("peek of nothing: %+v %v", u, err)
		}
		admitN(t, q, "u1", quota.Anonymous, noon, 10)
		for range 20 {
			if u, err = q.AdmitPrompt(ctx, "u1", quota.Anonymous, true, noon); err != nil || u.Current != 10 {
				t.Fatalf("BYOK prompt: %+v %v", u, err)
			}
			if u, err = q.Peek(ctx, "u1", quota.Anonymous, noon); err != nil || u.Current != 10 || u.Remaining() != 0 {
				t.Fatalf("peek: %+v %v", u, err)
			}
		}
		if _, err := q.AdmitPrompt(ctx, "u1", quota.Anonymous, false, noon); errs.CodeOf(err) != errs.RateLimited {
			t.Fatalf("counted prompt: %v", err)
		}
	})
}

func TestBadInput(t *testing.T) {
	q := newQuotas(t, storetest.OpenTestSQLite(t))
	ctx := context.Background()
	if _, err := q.Admit(ctx, "", quota.Free, noon); errs.CodeOf(err) != errs.BadRequest || errs.From(err).Field != "subject" {
		t.Errorf("empty subject: %v", err)
	}
	if _, err := q.Admit(ctx, "u", quota.Tier("gold"), noon); errs.CodeOf(err) != errs.BadRequest || errs.From(err).Field != "tier" {
		t.Errorf("unknown tier: %v", err)
	}
	if _, err := q.Peek(ctx, "u", "", noon); errs.CodeOf(err) != errs.BadRequest {
		t.Errorf("peek with no tier: %v", err)
	}
	if _, err := quota.New(nil, quota.DefaultLimits()); err == nil {
		t.Error("New without a store succeeded")
	}
}

func TestParseTier(t *testing.T) {
	for in, want := range map[string]quota.Tier{"anonymous": quota.Anonymous, " Free ": quota.Free, "PAID": quota.Paid} {
		if got, err := quota.ParseTier(in); err != nil || got != want {
			t.Errorf("ParseTier(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "gold", "free\x00"} {
		_, err := quota.ParseTier(in)
		if e := errs.From(err); e == nil || e.Code != errs.BadRequest || e.Field != "tier" {
			t.Errorf("ParseTier(%q): %v", in, err)
		}
	}
	_, err := quota.ParseTier("gold")
	if want := `tier: unknown tier "gold": want anonymous, free or paid`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestPruneDeletesOnlyOldWindows(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q, ctx := newQuotas(t, s), context.Background()
		days := []time.Time{noon.AddDate(0, 0, -40), noon.AddDate(0, 0, -2), noon.AddDate(0, 0, -1), noon}
		for _, d := range days {
			admitN(t, q, "a", quota.Free, d, 3)
			admitN(t, q, "b", quota.Free, d, 1)
		}
		n, err := q.Prune(ctx, noon.AddDate(0, 0, -1))
		if err != nil || n != 4 {
			t.Fatalf("prune: %d %v", n, err)
		}
		for i, d := range days {
			u, err := q.Peek(ctx, "a", quota.Free, d)
			want := 3
			if i < 2 {
				want = 0
			}
			if err != nil || u.Current != want {
				t.Fatalf("day %d: %+v %v, want %d", i, u, err, want)
			}
		}
		if n, err := q.Prune(ctx, noon); err != nil || n != 2 {
			t.Fatalf("second prune: %d %v", n, err)
		}
	})
}

// TestConcurrentAdmitAtTheLimit sends 50 prompts at once for a user at 95/100
// through two replicas (two pools on one database): exactly 5 are admitted,
// the other 45 are RATE_LIMITED, and nothing else fails (no SQLITE_BUSY:
// the store's SQLite connections wait up to 10 s for the write lock).
func TestConcurrentAdmitAtTheLimit(t *testing.T) {
	replicas := map[string]func(t *testing.T) [2]*store.Store{
		"sqlite": func(t *testing.T) [2]*store.Store {
			dir := t.TempDir()
			return [2]*store.Store{open(t, store.Options{DataDir: dir}), open(t, store.Options{DataDir: dir})}
		},
		"postgres": func(t *testing.T) [2]*store.Store {
			url := storetest.PostgresURL(t)
			st := [2]*store.Store{open(t, store.Options{URL: url}), open(t, store.Options{URL: url})}
			// Six connections a replica: the test's PostgreSQL server is
			// shared, and with the store's default pool the 50 prompts
			// would open up to 50 connections (25 a replica, each blocked
			// on the row lock) and fail with "too many clients". Twelve
			// still contend for the one row; the others queue in the pools.
			for _, s := range st {
				s.DB().SetMaxOpenConns(6)
			}
			return st
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			st := replicas[name](t)
			qs := [2]*quota.Quotas{newQuotas(t, st[0]), newQuotas(t, st[1])}
			for round := range 5 {
				subject := fmt.Sprintf("user-%d", round)
				admitN(t, qs[0], subject, quota.Free, noon, 95)
				var (
					wg                sync.WaitGroup
					mu                sync.Mutex
					admitted, limited int
					others            []error
					start             = make(chan struct{})
					seen              = map[int]bool{}
				)
				for i := range 50 {
					wg.Go(func() {
						<-start
						u, err := qs[i%2].Admit(context.Background(), subject, quota.Free, noon)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							admitted++
							seen[u.Current] = true
						case errs.CodeOf(err) == errs.RateLimited:
							limited++
						default:
							others = append(others, err)
						}
					})
				}
				close(start)
				wg.Wait()
				if admitted != 5 || limited != 45 || len(others) > 0 {
					t.Fatalf("round %d: admitted %d, limited %d, errors %v", round, admitted, limited, others)
				}
				for c := 96; c <= 100; c++ {
					if !seen[c] {
						t.Fatalf("round %d: no prompt was admitted as number %d: %v", round, c, seen)
					}
				}
				if u, err := qs[1].Peek(context.Background(), subject, quota.Free, noon); err != nil || u.Current != 100 {
					t.Fatalf("round %d: peek %+v %v", round, u, err)
				}
			}
		})
	}
}

// TestConcurrentAdmitManyReplicas: four replicas (four stores on one
// database) send 60 prompts at once for users with no count yet (the
// upsert's insert path races too): exactly the anonymous limit of 10 is
// admitted per user in total, every other prompt is RATE_LIMITED, and the
// admitted prompts are numbered 1 to 10.
func TestConcurrentAdmitManyReplicas(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			const replicas, prompts = 4, 60
			var qs []*quota.Quotas
			for _, s := range replicaStores(t, dialect, replicas) {
				s.DB().SetMaxOpenConns(6) // the test server's connections are shared
				qs = append(qs, newQuotas(t, s))
			}
			for round := range 3 {
				subject := fmt.Sprint("fresh-", round)
				var (
					wg                sync.WaitGroup
					mu                sync.Mutex
					admitted, limited int
					others            []error
					seen              = map[int]int{}
					start             = make(chan struct{})
				)
				for i := range prompts {
					wg.Go(func() {
						<-start
						u, err := qs[i%replicas].Admit(context.Background(), subject, quota.Anonymous, noon)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							admitted++
							seen[u.Current]++
						case errs.CodeOf(err) == errs.RateLimited:
							limited++
						default:
							others = append(others, err)
						}
					})
				}
				close(start)
				wg.Wait()
				if admitted != 10 || limited != prompts-10 || len(others) > 0 {
					t.Fatalf("round %d: admitted %d, limited %d, errors %v", round, admitted, limited, others)
				}
				for c := 1; c <= 10; c++ {
					if seen[c] != 1 {
						t.Fatalf("round %d: prompt number %d admitted %d times: %v", round, c, seen[c], seen)
					}
				}
			}
		})
	}
}

func open(tb testing.TB, o store.Options) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAdmit measures one counted prompt, on SQLite and PostgreSQL: one
// subject, the paid limit raised so that every prompt is admitted (the
// upsert's update path, the common case).
func BenchmarkAdmit(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			var s *store.Store
			if d == store.SQLite {
				s = storetest.OpenTestSQLite(b)
			} else {
				s = open(b, store.Options{URL: storetest.PostgresURL(b)})
			}
			q, err := quota.New(s, quota.Limits{Paid: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			ctx, subject := context.Background(), fmt.Sprintf("bench-%d", time.Now().UnixNano())
			for b.Loop() {
				if _, err := q.Admit(ctx, subject, quota.Paid, noon); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
