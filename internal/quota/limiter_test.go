package quota_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/quota"
)

// clock is a fake clock, safe for concurrent use.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(noon.UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func newLimiter(t testing.TB, o quota.LimiterOptions) *quota.Limiter {
	t.Helper()
	l, err := quota.NewLimiter(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLimiterBurstThenRate(t *testing.T) {
	c := newClock()
	l := newLimiter(t, quota.LimiterOptions{Rate: 2, Burst: 5, Now: c.Now}) // 2 requests per second
	for i := range 5 {
		if ok, _ := l.Allow("tok"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, retry := l.Allow("tok")
	if ok || retry != 500*time.Millisecond {
		t.Fatalf("sixth: %v, retry after %v, want false, 500ms", ok, retry)
	}
	if got := quota.RetrySeconds(retry); got != 1 {
		t.Fatalf("Retry-After %d, want 1", got)
	}
	c.Advance(250 * time.Millisecond)
	if ok, retry := l.Allow("tok"); ok || retry != 250*time.Millisecond {
		t.Fatalf("after 250ms: %v %v", ok, retry)
	}
	c.Advance(250 * time.Millisecond)
	if ok, _ := l.Allow("tok"); !ok {
		t.Fatal("after 500ms: refused")
	}
	if ok, _ := l.Allow("tok"); ok {
		t.Fatal("a second token appeared")
	}
	// Another key has its own bucket.
	if ok, _ := l.Allow("other"); !ok {
		t.Fatal("another token was refused")
	}
	// Idle for long, the bucket holds Burst tokens, not more.
	c.Advance(time.Hour)
	for i := range 5 {
		if ok, _ := l.Allow("tok"); !ok {
			t.Fatalf("after an hour, request %d refused", i+1)
		}
	}
	if ok, _ := l.Allow("tok"); ok {
		t.Fatal("the bucket held more than Burst")
	}
}

func TestLimiterSlowRateRetryAfter(t *testing.T) {
	c := newClock()
	l := newLimiter(t, quota.LimiterOptions{Rate: 1.0 / 60, Burst: 1, Now: c.Now}) // one a minute
	l.Allow("k")
	c.Advance(10 * time.Second)
	ok, retry := l.Allow("k")
	if ok || quota.RetrySeconds(retry) != 50 {
		t.Fatalf("%v, retry after %v (%d s), want 50 s", ok, retry, quota.RetrySeconds(retry))
	}
}

func TestLimiterForgetsIdleKeys(t *testing.T) {
	c := newClock()
	l := newLimiter(t, quota.LimiterOptions{Rate: 10, Burst: 10, Idle: time.Minute, Now: c.Now})
	for i := range 1000 {
		l.Allow(fmt.Sprint("key-", i))
	}
	if l.Len() != 1000 {
		t.Fatalf("tracking %d keys", l.Len())
	}
	c.Advance(30 * time.Second)
	l.Allow("key-7") // seen again: kept
	c.Advance(31 * time.Second)
	l.Allow("fresh")
	if l.Len() != 2 {
		t.Fatalf("after a minute idle, tracking %d keys, want 2 (key-7 and fresh)", l.Len())
	}
	// A forgotten key starts with a full bucket, as it would have had anyway.
	for i := range 10 {
		if ok, _ := l.Allow("key-1"); !ok {
			t.Fatalf("forgotten key: request %d refused", i+1)
		}
	}
}

func TestLimiterBoundsKeys(t *testing.T) {
	c := newClock()
	l := newLimiter(t, quota.LimiterOptions{Rate: 1, Burst: 1, MaxKeys: 100, Now: c.Now})
	l.Allow("busy")
	for i := range 10_000 {
		l.Allow(fmt.Sprint("attacker-", i))
		if i%50 == 0 {
			l.Allow("busy") // recently seen keys survive
		}
		if l.Len() > 100 {
			t.Fatalf("tracking %d keys, bound 100", l.Len())
		}
	}
	if ok, _ := l.Allow("busy"); ok {
		t.Fatal("the busy key was forgotten and got a fresh bucket")
	}
}

func TestLimiterConcurrent(t *testing.T) {
	c := newClock()
	l := newLimiter(t, quota.LimiterOptions{Rate: 1, Burst: 20, Now: c.Now})
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if ok, _ := l.Allow("shared"); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 20 {
		t.Fatalf("allowed %d of 100 at once, want the burst of 20", allowed.Load())
	}
}

func TestNewLimiterRejectsBadOptions(t *testing.T) {
	for _, o := range []quota.LimiterOptions{{Rate: 0, Burst: 1}, {Rate: -1, Burst: 1}, {Rate: 1, Burst: 0}, {Rate: 1, Burst: 1, MaxKeys: -1}} {
		if _, err := quota.NewLimiter(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
