package quota_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

func newShared(t testing.TB, s *store.Store, o quota.SharedOptions) *quota.SharedLimiter {
	t.Helper()
	l, err := quota.NewSharedLimiter(s, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSharedLimiterBurstThenRate is TestLimiterBurstThenRate against the
// store, on SQLite and PostgreSQL: a burst, then the rate, Retry-After, a
// key of its own per token, and a bucket that never holds more than Burst.
func TestSharedLimiterBurstThenRate(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		l := newShared(t, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 2, Burst: 5, Now: c.Now}})
		if l.Rate() != 2 {
			t.Fatalf("rate %v", l.Rate())
		}
		for i := range 5 {
			if ok, _ := l.Allow(ctx, "tok"); !ok {
				t.Fatalf("request %d of the burst refused", i+1)
			}
		}
		ok, retry := l.Allow(ctx, "tok")
		if ok || retry != 500*time.Millisecond || quota.RetrySeconds(retry) != 1 {
			t.Fatalf("sixth: %v, retry after %v, want false, 500ms", ok, retry)
		}
		c.Advance(250 * time.Millisecond)
		if ok, retry := l.Allow(ctx, "tok"); ok || retry != 250*time.Millisecond {
			t.Fatalf("after 250ms: %v %v", ok, retry)
		}
		c.Advance(250 * time.Millisecond)
		if ok, _ := l.Allow(ctx, "tok"); !ok {
			t.Fatal("after 500ms: refused")
		}
		if ok, _ := l.Allow(ctx, "tok"); ok {
			t.Fatal("a second token appeared")
		}
		if ok, _ := l.Allow(ctx, "other"); !ok {
			t.Fatal("another token was refused")
		}
		c.Advance(time.Hour)
		for i := range 5 {
			if ok, _ := l.Allow(ctx, "tok"); !ok {
				t.Fatalf("after an hour, request %d refused", i+1)
			}
		}
		if ok, _ := l.Allow(ctx, "tok"); ok {
			t.Fatal("the bucket held more than Burst")
		}
	})
}

// TestSharedLimiterSlowRateRetryAfter: one request a minute; 10 s after
// the first, the next waits 50 s.
func TestSharedLimiterSlowRateRetryAfter(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		l := newShared(t, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1.0 / 60, Burst: 1, Now: c.Now}})
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatal("first refused")
		}
		c.Advance(10 * time.Second)
		ok, retry := l.Allow(ctx, "k")
		if ok || retry != 50*time.Second {
			t.Fatalf("%v, retry after %v, want 50 s", ok, retry)
		}
		c.Advance(50 * time.Second)
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatal("refused after the minute")
		}
	})
}

// TestSharedLimiterAdmitsWhatLimiterAdmits: over a pseudo-random schedule
// of requests of three keys, the store's GCRA and the in-memory token
// bucket make the same decisions with the same Retry-After.
func TestSharedLimiterAdmitsWhatLimiterAdmits(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		o := quota.LimiterOptions{Rate: 4, Burst: 3, Now: c.Now}
		mem := newLimiter(t, o)
		shared := newShared(t, s, quota.SharedOptions{LimiterOptions: o})
		rnd := rand.New(rand.NewPCG(13, 22))
		admitted := 0
		for i := range 600 {
			// Steps of 1/64 s: exact in floating point, so the token
			// bucket's sums are exact too.
			c.Advance(time.Duration(rnd.IntN(16)) * 15625 * time.Microsecond)
			key := fmt.Sprint("key-", rnd.IntN(3))
			ok1, w1 := mem.Allow(key)
			ok2, w2 := shared.Allow(ctx, key)
			if ok1 != ok2 || (w1-w2).Abs() > time.Millisecond {
				t.Fatalf("request %d of %s: in memory %v %v, store %v %v", i, key, ok1, w1, ok2, w2)
			}
			if ok2 {
				admitted++
			}
		}
		if admitted == 0 || admitted == 600 {
			t.Fatalf("admitted %d of 600: the schedule tests nothing", admitted)
		}
	})
}

// replicaStores opens n stores on one database, as n replicas do: one
// SQLite file, or one PostgreSQL schema.
func replicaStores(t *testing.T, dialect string, n int) []*store.Store {
	t.Helper()
	o := store.Options{DataDir: t.TempDir()}
	if dialect == "postgres" {
		o = store.Options{URL: storetest.PostgresURL(t)}
	}
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = open(t, o)
	}
	return out
}

// TestSharedLimiterAcrossReplicas: four replicas (four stores on one
// database, each with its own limiter) get 200 requests of one token at
// the same moment: exactly the burst is admitted in total, not four times
// it; after five intervals, exactly five more, whichever replica asks.
func TestSharedLimiterAcrossReplicas(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			const replicas, burst = 4, 20
			c, logs := newClock(), &logtest.Capture{}
			var ls []*quota.SharedLimiter
			for _, s := range replicaStores(t, dialect, replicas) {
				// Six connections a replica: the test's PostgreSQL server
				// is shared, and past its max_connections the store fails
				// and the limiter falls back to memory (which the logs
				// would say).
				s.DB().SetMaxOpenConns(6)
				ls = append(ls, newShared(t, s, quota.SharedOptions{
					LimiterOptions: quota.LimiterOptions{Rate: 10, Burst: burst, Now: c.Now}, Timeout: time.Minute, Logger: slog.New(logs)}))
			}
			t.Cleanup(func() {
				for _, r := range logs.Records() {
					t.Errorf("logged: %s", r.Message)
				}
			})
			at := func(n int) int {
				var (
					wg       sync.WaitGroup
					mu       sync.Mutex
					admitted int
					start    = make(chan struct{})
				)
				for i := range n {
					wg.Go(func() {
						<-start
						ok, retry := ls[i%replicas].Allow(context.Background(), "shared")
						mu.Lock()
						defer mu.Unlock()
						if ok {
							admitted++
						} else if retry <= 0 || retry > time.Second/10 {
							t.Errorf("Retry-After %v, want (0, 100ms]", retry)
						}
					})
				}
				close(start)
				wg.Wait()
				return admitted
			}
			if got := at(200); got != burst {
				t.Fatalf("admitted %d of 200 at once over %d replicas, want the burst of %d", got, replicas, burst)
			}
			c.Advance(500 * time.Millisecond) // five intervals of 100 ms
			if got := at(100); got != 5 {
				t.Fatalf("admitted %d after five intervals, want 5", got)
			}
			if got := at(50); got != 0 {
				t.Fatalf("admitted %d with nothing refilled, want 0", got)
			}
		})
	}
}

// TestPruneRateLimits: rows of keys whose bucket is full again are
// deleted; those of keys still limited are kept, and keep limiting.
func TestPruneRateLimits(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		l := newShared(t, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 10, Now: c.Now}})
		for i := range 100 {
			l.Allow(ctx, fmt.Sprint("idle-", i))
		}
		c.Advance(5 * time.Second)
		for range 10 {
			l.Allow(ctx, "busy") // its bucket is full in 10 s
		}
		if n := rows(t, s); n != 101 {
			t.Fatalf("%d rows, want 101", n)
		}
		c.Advance(time.Second) // the idle keys' TATs (now - 5 s) are past
		if n, err := quota.PruneRateLimits(ctx, s, c.Now()); err != nil || n != 100 {
			t.Fatalf("prune: %d %v, want 100", n, err)
		}
		if n := rows(t, s); n != 1 {
			t.Fatalf("%d rows after the prune, want 1", n)
		}
		if ok, _ := l.Allow(ctx, "busy"); !ok { // one token refilled in the last second
			t.Fatal("busy refused after 6 s")
		}
		if ok, _ := l.Allow(ctx, "idle-1"); !ok {
			t.Fatal("a pruned key was refused")
		}
	})
}

func rows(t *testing.T, s *store.Store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM rate_limits`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSharedLimiterFallsBack: while the store fails, requests are decided
// in memory (the limit holds per replica; one warning is logged); when it
// answers again, the store decides again (one message). Outages a minute
// apart are told of; those closer, not.
func TestSharedLimiterFallsBack(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		c, ctx := newClock(), context.Background()
		logs := &logtest.Capture{}
		l := newShared(t, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 3, Now: c.Now}, Logger: slog.New(logs)})
		if _, err := s.DB().Exec(`ALTER TABLE rate_limits RENAME TO rate_limits_away`); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if ok, _ := l.Allow(ctx, "k"); !ok {
				t.Fatalf("fallback: request %d refused", i+1)
			}
		}
		if ok, retry := l.Allow(ctx, "k"); ok || retry != time.Second {
			t.Fatalf("fallback: fourth %v %v, want refused for 1 s", ok, retry)
		}
		if _, err := s.DB().Exec(`ALTER TABLE rate_limits_away RENAME TO rate_limits`); err != nil {
			t.Fatal(err)
		}
		for i := range 3 { // the store's bucket is untouched
			if ok, _ := l.Allow(ctx, "k"); !ok {
				t.Fatalf("store again: request %d refused", i+1)
			}
		}
		if ok, _ := l.Allow(ctx, "k"); ok {
			t.Fatal("store again: fourth admitted")
		}
		// A store failing on and off is told of once a minute.
		outage := func() {
			t.Helper()
			for _, q := range []string{`ALTER TABLE rate_limits RENAME TO rate_limits_away`, `ALTER TABLE rate_limits_away RENAME TO rate_limits`} {
				l.Allow(ctx, "k")
				if _, err := s.DB().Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			l.Allow(ctx, "k")
		}
		outage()
		c.Advance(59 * time.Second)
		outage()
		c.Advance(time.Second)
		outage()
		var levels []slog.Level
		for _, r := range logs.Records() {
			levels = append(levels, r.Level)
		}
		if want := []slog.Level{slog.LevelWarn, slog.LevelInfo, slog.LevelWarn, slog.LevelInfo}; !slices.Equal(levels, want) {
			t.Fatalf("logged %v, want %v", levels, want)
		}
	})
}

func TestNewSharedLimiterRejectsBadOptions(t *testing.T) {
	s := storetest.OpenTestSQLite(t)
	for _, o := range []quota.SharedOptions{
		{LimiterOptions: quota.LimiterOptions{Rate: 0, Burst: 1}},
		{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 0}},
		{LimiterOptions: quota.LimiterOptions{Rate: 1e9, Burst: 1}},
		{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 1}, Timeout: -1},
	} {
		if _, err := quota.NewSharedLimiter(s, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := quota.NewSharedLimiter(nil, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 1}}); err == nil {
		t.Error("no store accepted")
	}
}

// benchStore is a new store of dialect d for a benchmark.
func benchStore(b *testing.B, d store.Dialect) *store.Store {
	if d == store.SQLite {
		return storetest.OpenTestSQLite(b)
	}
	return open(b, store.Options{URL: storetest.PostgresURL(b)})
}

// BenchmarkSharedLimiter measures one decision of the shared limiter (one
// upsert, one round trip), on SQLite and PostgreSQL: one key admitted every
// time (the update path, the common case), and, for comparison, the
// in-memory limiter.
func BenchmarkSharedLimiter(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s := benchStore(b, d)
			l := newShared(b, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1e6, Burst: 1 << 20}})
			ctx := context.Background()
			var ds []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if ok, _ := l.Allow(ctx, "bench"); !ok {
					b.Fatal("refused")
				}
				ds = append(ds, time.Since(t0))
			}
			storetest.ReportLatencies(b, ds)
		})
	}
	b.Run("memory", func(b *testing.B) {
		l := newLimiter(b, quota.LimiterOptions{Rate: 1e6, Burst: 1 << 20})
		for b.Loop() {
			l.Allow("bench")
		}
	})
}

// BenchmarkSharedLimiterParallel is BenchmarkSharedLimiter with 16
// goroutines at once (16 users), as concurrent requests of a busy replica
// decide: on SQLite they take turns on the database's write lock.
func BenchmarkSharedLimiterParallel(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s := benchStore(b, d)
			if d == store.Postgres {
				s.DB().SetMaxOpenConns(16)
			}
			l := newShared(b, s, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1e6, Burst: 1 << 20}})
			var (
				mu  sync.Mutex
				ds  []time.Duration
				key atomic.Int64
			)
			b.SetParallelism(8) // 16 goroutines on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				k := fmt.Sprint("user-", key.Add(1))
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					if ok, _ := l.Allow(context.Background(), k); !ok {
						b.Error("refused")
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				ds = append(ds, mine...)
				mu.Unlock()
			})
			storetest.ReportLatencies(b, ds)
		})
	}
}
