package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// DefaultStoreTimeout bounds the store's answer to one rate-limit decision
// of a [SharedLimiter]; past it the request is decided in memory.
const DefaultStoreTimeout = time.Second

// SharedOptions configure a [SharedLimiter]: the rate and burst of
// [LimiterOptions] (whose MaxKeys and Idle bound the in-memory fallback),
// and how it reaches the store.
type SharedOptions struct {
	LimiterOptions
	// Timeout bounds each decision's round trip to the store (default
	// [DefaultStoreTimeout]); past it, or on any store error, the request
	// is decided by the in-memory fallback.
	Timeout time.Duration
	// Logger receives a warning when the store stops answering (the limit
	// is then per replica) and a message when it answers again; nil
	// discards them.
	Logger *slog.Logger
}

// SharedLimiter is a rate limiter per key (a user id, for the HTTP front)
// whose state lives in the store, so that every replica sharing the
// database enforces one limit: N replicas behind a balancer admit the
// configured rate per key in total, not N times it. It admits what
// [Limiter] admits (a bucket of Burst requests refilled at Rate a second),
// computed as the generic cell rate algorithm (GCRA): one row per key holds
// its theoretical arrival time (TAT), the time its bucket would be full
// again. A request at now is admitted when TAT ≤ now + (Burst-1)/Rate, and
// then moves TAT to max(TAT, now) + 1/Rate; a refused request waits until
// TAT - (Burst-1)/Rate. The decision and the update are one upsert, a single
// round trip to the store per request, atomic on PostgreSQL (the row is
// locked by the upsert) and on SQLite (the database's write lock).
//
// When the store does not answer (an error, or no answer within Timeout)
// the request is decided by an in-memory [Limiter] of the same rate: it
// fails open to today's per-replica limit rather than closed, because a
// store outage then degrades the limit (at most N times the rate over N
// replicas, for its duration) instead of refusing every authenticated
// request on top of whatever else the outage breaks; the limit stays
// bounded per replica throughout. Transitions are logged (at most one
// warning a minute).
//
// Replicas decide with their own clocks: a replica whose clock is ahead by
// d admits up to d×Rate requests earlier than the others would, never a
// higher sustained rate. Rows of keys idle for Burst/Rate are worth nothing
// and are deleted by [PruneRateLimits]. It is safe for concurrent use.
type SharedLimiter struct {
	st        *store.Store
	rate      float64
	interval  int64 // the emission interval 1/Rate, in microseconds
	tolerance int64 // (Burst-1) × interval: how far ahead of now TAT may be
	timeout   time.Duration
	now       func() time.Time
	log       *slog.Logger
	take      string // the decision, in the store's dialect
	fallback  *Limiter
	degraded  atomic.Bool  // the last decision was the fallback's
	warned    atomic.Int64 // when the last warning was logged (Unix ns)
	told      atomic.Bool  // a warning of the current outage was logged
}

// warnEvery spaces the warnings of a store that fails on and off.
const warnEvery = time.Minute

// NewSharedLimiter returns a limiter with options o that keeps its state in
// st.
func NewSharedLimiter(st *store.Store, o SharedOptions) (*SharedLimiter, error) {
	if st == nil {
		return nil, errors.New("quota: a shared limiter needs a store")
	}
	if o.Timeout < 0 {
		return nil, errors.New("quota: the store timeout must not be negative")
	}
	fallback, err := NewLimiter(o.LimiterOptions) // checks Rate and Burst
	if err != nil {
		return nil, err
	}
	interval := int64(math.Round(1e6 / o.Rate))
	if interval < 1 || float64(interval)*float64(o.Burst) > math.MaxInt64/4 {
		return nil, fmt.Errorf("quota: the request rate %v a second with burst %d is out of range", o.Rate, o.Burst)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultStoreTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &SharedLimiter{
		st:        st,
		rate:      o.Rate,
		interval:  interval,
		tolerance: int64(o.Burst-1) * interval,
		timeout:   o.Timeout,
		now:       fallback.now,
		log:       o.Logger,
		fallback:  fallback,
		// ?1 subject, ?2 now, ?3 the interval, ?4 the latest TAT that
		// admits (now + tolerance), ?5 now + interval. A missing row, or a
		// TAT in the past, is a full bucket: TAT becomes now + interval.
		// Otherwise the request is admitted while TAT ≤ ?4, which moves
		// TAT one interval on; a refused request leaves TAT as it is.
		// Every SET expression reads the row as it was.
		take: param(st, `INSERT INTO rate_limits (subject, tat, admitted) VALUES (?1, ?5, 1)
ON CONFLICT (subject) DO UPDATE SET
  tat = CASE WHEN rate_limits.tat <= ?2 THEN ?5 WHEN rate_limits.tat <= ?4 THEN rate_limits.tat + ?3 ELSE rate_limits.tat END,
  admitted = CASE WHEN rate_limits.tat <= ?4 THEN 1 ELSE 0 END
RETURNING tat, admitted`),
	}, nil
}

// Rate is the sustained requests a second a key may make.
func (l *SharedLimiter) Rate() float64 { return l.rate }

// Allow admits one request of key now, or refuses it and says how long
// until one would be admitted (for a 429 response's Retry-After: see
// [RetrySeconds]). It costs one round trip to the store; when the store does
// not answer, the in-memory fallback decides (see [SharedLimiter]).
func (l *SharedLimiter) Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration) {
	ok, retryAfter, err := l.decide(ctx, key)
	if err == nil {
		if l.degraded.CompareAndSwap(true, false) && l.told.Swap(false) {
			l.log.Info("the shared request rate limit answers again: limiting across replicas")
		}
		return ok, retryAfter
	}
	if ctx.Err() == nil && l.degraded.CompareAndSwap(false, true) {
		// At most one warning a minute, however often the store fails.
		now, last := l.now().UnixNano(), l.warned.Load()
		if (last == 0 || now-last >= int64(warnEvery)) && l.warned.CompareAndSwap(last, now) {
			l.told.Store(true)
			l.log.Warn("the shared request rate limit is unavailable: limiting per replica until the store answers", "err", err)
		}
	}
	return l.fallback.Allow(key)
}

// decide is the store's decision on one request of key.
func (l *SharedLimiter) decide(ctx context.Context, key string) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	var tat, latest int64
	var admitted int
	err := l.st.Write(ctx, func(ctx context.Context) error {
		now := store.Micros(l.now()) // after any wait in the queue
		latest = now + l.tolerance
		return l.st.DB().QueryRowContext(ctx, l.take, key, now, l.interval, latest, now+l.interval).Scan(&tat, &admitted)
	})
	if err != nil {
		return false, 0, fmt.Errorf("quota: rate limit of %q: %w", key, err)
	}
	if admitted == 1 {
		return true, 0, nil
	}
	return false, max(time.Duration(tat-latest)*time.Microsecond, time.Microsecond), nil
}

// PruneRateLimits deletes the rate-limit rows of st whose theoretical
// arrival time is before before (their keys' buckets are full: the rows say
// nothing a missing row does not) and returns how many it deleted. Run it
// with a time a little in the past, so that a replica whose clock is ahead
// deletes nothing another still needs.
func PruneRateLimits(ctx context.Context, st *store.Store, before time.Time) (int64, error) {
	res, err := st.DB().ExecContext(ctx, st.Q(`DELETE FROM rate_limits WHERE tat < ?`), store.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("quota: prune rate limits: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("quota: prune rate limits: %w", err)
	}
	return n, nil
}

// param rewrites a query with numbered placeholders (?1, ?2, ...) for the
// store's dialect: SQLite reads them as they are, PostgreSQL wants $1, $2.
// Queries must not contain a literal '?'.
func param(st *store.Store, query string) string {
	if st.Dialect() != store.Postgres {
		return query
	}
	b := []byte(query)
	for i, c := range b {
		if c == '?' {
			b[i] = '$'
		}
	}
	return string(b)
}
