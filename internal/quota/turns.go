package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// DefaultMaxTurns is how many chat turns one user may run at once, across
// every replica, by default (serve's --max-turns).
const DefaultMaxTurns = 2

// DefaultTurnLease is how long a running turn's slot is held without its
// replica renewing it: a replica killed during a turn frees its slots
// within this time.
const DefaultTurnLease = 30 * time.Second

// TurnRetry is the retry_after of a turn refused because its user's turns
// are all running: a turn ends in seconds to minutes, and there is no
// telling which, so the client is told to try again shortly.
const TurnRetry = 2 * time.Second

// TurnOptions configure [TurnSlots].
type TurnOptions struct {
	// Max is the turns a user may run at once (default [DefaultMaxTurns]).
	Max int
	// Lease is how long a slot is held without a renewal (default
	// [DefaultTurnLease]); it is renewed every third of it.
	Lease time.Duration
	// Now is the clock (default store.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// TurnSlots caps the chat turns a user runs at once, over every replica
// sharing the store (issue 21: one socket's 500 messages opened 432
// requests to the user's model). Each user has Max slots, rows of the
// turn_slots table keyed (user, slot number); a turn takes a free slot with
// one upsert that succeeds only when the row is missing or its lease has
// passed (atomic on PostgreSQL, where the upsert locks the row, and on
// SQLite, under the database's write lock), renews the lease while it runs
// and deletes the row when it ends. A replica killed during a turn leaves
// its row, which is free again once its lease passes. It is safe for
// concurrent use.
type TurnSlots struct {
	st    *store.Store
	max   int
	lease time.Duration
	now   func() time.Time
	log   *slog.Logger
	take  string
	renew string
	free  string
}

// NewTurnSlots returns the turn slots of st.
func NewTurnSlots(st *store.Store, o TurnOptions) (*TurnSlots, error) {
	if st == nil {
		return nil, errors.New("quota: turn slots need a store")
	}
	if o.Max < 0 || o.Lease < 0 {
		return nil, errors.New("quota: the turns at once and their lease must not be negative")
	}
	if o.Max == 0 {
		o.Max = DefaultMaxTurns
	}
	if o.Lease == 0 {
		o.Lease = DefaultTurnLease
	}
	if o.Now == nil {
		o.Now = store.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &TurnSlots{st: st, max: o.Max, lease: o.Lease, now: o.Now, log: o.Logger,
		// ?1 user, ?2 slot, ?3 holder, ?4 the lease's end, ?5 now: the row
		// is written when it is missing or its lease has passed.
		take: param(st, `INSERT INTO turn_slots (user_id, slot, holder, expires_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (user_id, slot) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE turn_slots.expires_at <= ?5`),
		renew: st.Q(`UPDATE turn_slots SET expires_at = ? WHERE user_id = ? AND slot = ? AND holder = ?`),
		free:  st.Q(`DELETE FROM turn_slots WHERE user_id = ? AND slot = ? AND holder = ?`),
	}, nil
}

// Max is the turns a user may run at once.
func (t *TurnSlots) Max() int { return t.max }

// Begin takes one of user's slots for a turn and returns end, which frees
// it (call it once the turn has ended). When every slot is held the error
// is RATE_LIMITED with a retry-after; a store that does not answer is
// SERVICE_UNAVAILABLE.
func (t *TurnSlots) Begin(ctx context.Context, user string) (end func(), err error) {
	holder := ulid.Make().String()
	for slot := range t.max {
		var n int64
		err := t.st.Write(ctx, func(ctx context.Context) error {
			now := t.now()
			res, err := t.st.DB().ExecContext(ctx, t.take, user, slot, holder, store.Micros(now.Add(t.lease)), store.Micros(now))
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			t.log.Warn("take a turn slot", "user", user, "err", err)
			return nil, errs.E(errs.Unavailable, "the running turns could not be counted: try again")
		}
		if n == 1 {
			return t.hold(user, slot, holder), nil
		}
	}
	e := errs.E(errs.RateLimited, "you have %d turns running already (at most %d at once, over all your connections): wait for one to complete, or cancel one", t.max, t.max)
	e.RetryAfter = RetrySeconds(TurnRetry)
	return nil, e
}

// hold renews a taken slot until end is called, then frees it.
func (t *TurnSlots) hold(user string, slot int, holder string) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(t.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), t.lease/3)
			err := t.st.Write(ctx, func(ctx context.Context) error {
				_, err := t.st.DB().ExecContext(ctx, t.renew, store.Micros(t.now().Add(t.lease)), user, slot, holder)
				return err
			})
			cancel()
			if err != nil {
				t.log.Warn("renew a turn slot", "user", user, "err", err)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := t.st.Write(ctx, func(ctx context.Context) error {
				_, err := t.st.DB().ExecContext(ctx, t.free, user, slot, holder)
				return err
			})
			if err != nil {
				// The lease frees it.
				t.log.Warn("free a turn slot", "user", user, "err", err)
			}
		})
	}
}

// PruneTurnSlots deletes the turn slots of st whose lease passed before
// before (free slots: a missing row says the same) and returns how many.
func PruneTurnSlots(ctx context.Context, st *store.Store, before time.Time) (int64, error) {
	res, err := st.DB().ExecContext(ctx, st.Q(`DELETE FROM turn_slots WHERE expires_at < ?`), store.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("quota: prune turn slots: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("quota: prune turn slots: %w", err)
	}
	return n, nil
}
