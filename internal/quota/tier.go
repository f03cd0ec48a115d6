// Package quota holds Nexus's usage limits: the prompts a user may send per
// UTC day by tier (SPEC section 3, Tutor Nexus ADR-018), counted in the store
// so that every replica sharing a database sees one counter, and the
// per-user request rate limit of the HTTP front, kept in the store too so
// that it holds across replicas.
//
// A prompt is admitted by [Quotas.Admit], which counts it and answers
// RATE_LIMITED (ADR-012's shape: details.retryAfter and details.limit) once
// the day's limit is reached; [Quotas.Peek] reads the usage without counting
// (tn_user_quota). Prompts run on the user's own provider key (BYOK) are not
// counted: their caller does not call Admit, or calls [Quotas.AdmitPrompt]
// with byok set. HTTP requests are limited per user by a [SharedLimiter]
// (one decision in the store per request), which falls back to an in-memory
// [Limiter] while the store does not answer.
package quota

import (
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// Tier is a user's subscription tier, which sets their daily prompt limit.
type Tier string

// The tiers of SPEC section 3.
const (
	Anonymous Tier = "anonymous"
	Free      Tier = "free"
	Paid      Tier = "paid"
)

// Tiers returns every tier, from the lowest limit to the highest.
func Tiers() []Tier { return []Tier{Anonymous, Free, Paid} }

// ParseTier parses a tier name, ignoring case and surrounding white space. An
// unknown name is a BAD_REQUEST on the field "tier" naming the valid tiers.
func ParseTier(s string) (Tier, error) {
	t := Tier(strings.ToLower(strings.TrimSpace(s)))
	if !t.Valid() {
		return "", errs.Invalid("tier", "unknown tier %q: want anonymous, free or paid", s)
	}
	return t, nil
}

// Valid reports whether t is one of [Tiers].
func (t Tier) Valid() bool { return t == Anonymous || t == Free || t == Paid }

// String returns the tier's name.
func (t Tier) String() string { return string(t) }

// Limits are the prompts per UTC day of each tier. The zero value admits
// nothing; [DefaultLimits] are SPEC's.
type Limits struct {
	Anonymous int `json:"anonymous" yaml:"anonymous"`
	Free      int `json:"free" yaml:"free"`
	Paid      int `json:"paid" yaml:"paid"`
}

// DefaultLimits returns SPEC section 3's limits: anonymous 10, free 100,
// paid 500 prompts per UTC day.
func DefaultLimits() Limits { return Limits{Anonymous: 10, Free: 100, Paid: 500} }

// Max returns the daily prompt limit of tier t.
func (l Limits) Max(t Tier) (int, error) {
	switch t {
	case Anonymous:
		return l.Anonymous, nil
	case Free:
		return l.Free, nil
	case Paid:
		return l.Paid, nil
	}
	return 0, errs.Invalid("tier", "unknown tier %q: want anonymous, free or paid", string(t))
}

// Validate reports a negative limit.
func (l Limits) Validate() error {
	for _, t := range Tiers() {
		if n, _ := l.Max(t); n < 0 {
			return fmt.Errorf("quota: the %s limit is %d; it must be 0 or more", t, n)
		}
	}
	return nil
}
