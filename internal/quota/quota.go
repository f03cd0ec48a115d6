package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Day is the window of prompt quotas, as ADR-012's details.limit.window says it.
const Day = "day"

// periodLayout formats a window's key: its UTC day.
const periodLayout = time.DateOnly

// Usage is a subject's use of its prompt quota in the current window.
type Usage struct {
	// Current is the number of prompts counted in the window.
	Current int `json:"current"`
	// Max is the tier's limit for the window.
	Max int `json:"max"`
	// Window is the window's length: always [Day].
	Window string `json:"window"`
	// ResetAt is when the window ends and the count starts again: the next
	// UTC midnight.
	ResetAt time.Time `json:"resetAt"`
}

// Remaining returns how many more prompts the window admits.
func (u Usage) Remaining() int { return max(u.Max-u.Current, 0) }

// Limit returns u as ADR-012's details.limit.
func (u Usage) Limit() *errs.QuotaLimit {
	return &errs.QuotaLimit{Current: float64(u.Current), Max: float64(u.Max), Window: u.Window}
}

// Quotas counts prompts per subject and UTC day in the store. It holds no
// state of its own, so any number of replicas sharing the database may use
// it at once; it is safe for concurrent use.
type Quotas struct {
	st     *store.Store
	limits Limits
	admit  string // the counting statement, in the store's dialect
	peek   string
	prune  string
}

// New returns the quotas of st with the given limits (usually
// [DefaultLimits], or the configuration's).
func New(st *store.Store, limits Limits) (*Quotas, error) {
	if st == nil {
		return nil, errors.New("quota: no store")
	}
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	return &Quotas{
		st:     st,
		limits: limits,
		// One statement: insert the day's first prompt, or count one more
		// only while the count is under the limit. The row is locked by the
		// upsert (PostgreSQL re-checks the WHERE against the latest row
		// version; SQLite holds the database's write lock), so concurrent
		// callers on any number of replicas never count past the limit. No
		// row comes back when the limit is reached.
		admit: st.Q(`INSERT INTO quota_usage (subject, period, used, updated_at) VALUES (?, ?, 1, ?)
ON CONFLICT (subject, period) DO UPDATE SET used = quota_usage.used + 1, updated_at = excluded.updated_at
WHERE quota_usage.used < ?
RETURNING used`),
		peek:  st.Q(`SELECT used FROM quota_usage WHERE subject = ? AND period = ?`),
		prune: st.Q(`DELETE FROM quota_usage WHERE period < ?`),
	}, nil
}

// Limits returns the limits in force.
func (q *Quotas) Limits() Limits { return q.limits }

// Admit counts one prompt of subject (a user id) of the given tier at time
// now, if the UTC day's limit allows it, and returns the usage including it.
// Once the limit is reached it counts nothing and returns the usage with a
// RATE_LIMITED [*errs.Error] whose details are ADR-012's: the reason, the
// whole seconds until the next UTC midnight (retryAfter) and the limit
// {current, max, window: "day"}. Prompts run on the user's own key (BYOK) are
// not counted: do not call Admit for them (see [Quotas.AdmitPrompt]).
func (q *Quotas) Admit(ctx context.Context, subject string, tier Tier, now time.Time) (Usage, error) {
	u, period, err := q.usage(subject, tier, now)
	if err != nil {
		return u, err
	}
	if u.Max > 0 {
		var used int
		err = q.st.DB().QueryRowContext(ctx, q.admit, subject, period, store.Micros(now), u.Max).Scan(&used)
		if err == nil {
			u.Current = used
			return u, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return u, errs.Wrap("quota_admit", fmt.Errorf("quota: count a prompt of %q: %w", subject, err))
		}
	}
	// The limit is reached (or is zero): report how far.
	if u.Current, err = q.read(ctx, subject, period); err != nil {
		return u, err
	}
	return u, Exceeded(u, now)
}

// AdmitPrompt is [Quotas.Admit] for a prompt that byok says runs on the
// user's own provider credentials or not. A BYOK prompt is not counted and
// never limited: AdmitPrompt returns [Quotas.Peek]'s usage for it.
func (q *Quotas) AdmitPrompt(ctx context.Context, subject string, tier Tier, byok bool, now time.Time) (Usage, error) {
	if byok {
		return q.Peek(ctx, subject, tier, now)
	}
	return q.Admit(ctx, subject, tier, now)
}

// Peek returns subject's usage in the UTC day of now without counting
// anything (tn_user_quota).
func (q *Quotas) Peek(ctx context.Context, subject string, tier Tier, now time.Time) (Usage, error) {
	u, period, err := q.usage(subject, tier, now)
	if err != nil {
		return u, err
	}
	u.Current, err = q.read(ctx, subject, period)
	return u, err
}

// Prune deletes the counts of every UTC day before the day of before, and
// returns how many it deleted: Prune(ctx, now) keeps today's only.
func (q *Quotas) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := q.st.DB().ExecContext(ctx, q.prune, period(before))
	if err != nil {
		return 0, errs.Wrap("quota_prune", fmt.Errorf("quota: prune: %w", err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, errs.Wrap("quota_prune", fmt.Errorf("quota: prune: %w", err))
	}
	return n, nil
}

// Exceeded returns the RATE_LIMITED error of usage u at time now, in
// ADR-012's shape: message "Daily prompt limit exceeded", reason "User has
// used 100/100 prompts today", retryAfter the whole seconds to u.ResetAt
// (at least 1), limit {current, max, window}.
func Exceeded(u Usage, now time.Time) *errs.Error {
	return &errs.Error{
		Code:       errs.RateLimited,
		Message:    "Daily prompt limit exceeded",
		Reason:     fmt.Sprintf("User has used %d/%d prompts today", u.Current, u.Max),
		RetryAfter: RetrySeconds(u.ResetAt.Sub(now)),
		Limit:      u.Limit(),
	}
}

// RetrySeconds rounds d up to whole seconds, at least 1: a Retry-After
// value after which the retry is allowed.
func RetrySeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}

// usage checks the arguments and returns the empty usage of subject's window
// at now, with its limit, and the window's key.
func (q *Quotas) usage(subject string, tier Tier, now time.Time) (Usage, string, error) {
	if subject == "" {
		return Usage{}, "", errs.Invalid("subject", "a quota needs a subject (a user id)")
	}
	m, err := q.limits.Max(tier)
	if err != nil {
		return Usage{}, "", err
	}
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return Usage{Max: m, Window: Day, ResetAt: day.AddDate(0, 0, 1)}, day.Format(periodLayout), nil
}

// read returns the count of subject in period, 0 when there is none.
func (q *Quotas) read(ctx context.Context, subject, period string) (int, error) {
	var used int
	err := q.st.DB().QueryRowContext(ctx, q.peek, subject, period).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, errs.Wrap("quota_peek", fmt.Errorf("quota: read the usage of %q: %w", subject, err))
	}
	return used, nil
}

// period is the key of the window holding t: its UTC day.
func period(t time.Time) string { return t.UTC().Format(periodLayout) }
