package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"
)

// lockKey is the PostgreSQL advisory lock key of a named lock: a hash of
// its name, so that every replica computes the same key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("nexus:" + name))
	return int64(h.Sum64())
}

// Exclusive runs fn while holding the database-wide lock called name, so
// that replicas sharing one PostgreSQL database run it one at a time (the
// start-up steps that write: migrations). On PostgreSQL the lock is a
// session advisory lock held on a connection of its own, released when fn
// returns (or when the connection dies with its replica). SQLite has one
// process per database file, whose write transactions already take turns;
// fn just runs.
func (s *Store) Exclusive(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	if s.dialect != Postgres {
		return fn(ctx)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", name, err)
	}
	// The connection is closed, not returned to the pool: were the unlock
	// to fail, closing it still releases the lock.
	defer conn.Close()
	key := lockKey(name)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("store: lock %s: %w", name, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
	return fn(ctx)
}

// Claim reports whether the caller may run the periodic job called name
// now: it claims the job's run for holder when no replica has run it within
// every, and reports false when one has (or claims it at the same moment).
// A job claimed this way runs once per period across all replicas sharing
// the database, whichever replica's timer fires first.
func (s *Store) Claim(ctx context.Context, name, holder string, every time.Duration) (bool, error) {
	now := time.Now()
	res, err := s.db.ExecContext(ctx, s.Q(`INSERT INTO job_runs (name, holder, ran_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, ran_at = excluded.ran_at
WHERE job_runs.ran_at <= ?`), name, holder, Micros(now), Micros(now.Add(-every)))
	if err != nil {
		return false, fmt.Errorf("store: claim job %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claim job %s: %w", name, err)
	}
	return n == 1, nil
}
