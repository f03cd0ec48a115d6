package workbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// Each downstream server has a circuit breaker (issue 26): after
// BreakerFailures calls in a row failed on the server's side (it could not
// be reached, it timed out, it answered a JSON-RPC error that is not the
// caller's: anything the pipeline names SERVICE_UNAVAILABLE), its calls fail
// at once, without reaching it, for the breaker's cooldown; then one call
// probes it: if it succeeds the breaker closes, else it stays open for
// another cooldown. A tool's own error result (isError) and a refusal of
// the caller's arguments are answers, not failures; a call its caller
// cancelled counts neither way. A new session (the server reconnected or
// restarted) closes the breaker.

// Defaults of the breaker ([Options]).
const (
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
)

// Breaker states, as /metrics and the server's state report them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open" // the cooldown is over: the next call probes
)

// breaker is one server's circuit breaker.
type breaker struct {
	failures int           // calls in a row that failed before it opens
	cooldown time.Duration // how long it stays open

	mu        sync.Mutex
	failed    int       // calls in a row that failed
	openUntil time.Time // zero while closed
	probing   bool      // a probe call is in flight
	opens     uint64    // times it opened
	last      error     // the last failure
}

func newBreaker(failures int, cooldown time.Duration) *breaker {
	if failures <= 0 {
		failures = DefaultBreakerFailures
	}
	if cooldown <= 0 {
		cooldown = DefaultBreakerCooldown
	}
	return &breaker{failures: failures, cooldown: cooldown}
}

// allow reports whether a call may go to the server now; when it may not,
// wait is how long until it may be probed.
func (b *breaker) allow(now time.Time) (ok bool, wait time.Duration, last error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.openUntil.IsZero():
		return true, 0, nil
	case now.Before(b.openUntil):
		return false, b.openUntil.Sub(now), b.last
	case b.probing:
		return false, b.cooldown, b.last // another call probes
	}
	b.probing = true
	return true, 0, nil
}

// done records how a call the breaker allowed ended.
func (b *breaker) done(now time.Time, err error, cancelled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasProbe := b.probing
	b.probing = false
	switch {
	case cancelled:
		return
	case !serverFailure(err):
		b.failed, b.openUntil, b.last = 0, time.Time{}, nil
		return
	}
	b.failed++
	b.last = err
	if wasProbe || b.failed >= b.failures {
		if b.openUntil.IsZero() {
			b.opens++
		}
		b.openUntil = now.Add(b.cooldown)
	}
}

// reset closes the breaker (the server connected again).
func (b *breaker) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed, b.openUntil, b.probing, b.last = 0, time.Time{}, false, nil
}

// state is the breaker's state and how many times it opened.
func (b *breaker) state(now time.Time) (string, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.openUntil.IsZero():
		return BreakerClosed, b.opens
	case now.Before(b.openUntil):
		return BreakerOpen, b.opens
	}
	return BreakerHalfOpen, b.opens
}

// serverFailure reports whether err is the server's failure.
func serverFailure(err error) bool {
	if err == nil {
		return false
	}
	var e *errs.Error
	return !errors.As(err, &e) || e.Code == errs.Unavailable
}

// guarded runs call unless the server's breaker is open, and records how
// it ended.
func (s *server) guarded(ctx context.Context, what string, call func() (any, error)) (any, error) {
	ok, wait, last := s.breaker.allow(time.Now())
	if !ok {
		secs := max(int((wait+time.Second-1)/time.Second), 1)
		msg := fmt.Sprintf("Server '%s' (toolbox '%s') is failing: %d calls in a row failed, so Nexus does not call it for now (circuit open); %s is refused without reaching it; retry in %d s",
			s.name, s.toolbox, s.breaker.failures, what, secs)
		if last != nil {
			var e *errs.Error
			if errors.As(last, &e) && e.Message != "" {
				msg += "; last failure: " + e.Message
			} else {
				msg += "; last failure: " + last.Error()
			}
		}
		return nil, &errs.Error{Code: errs.Unavailable, RetryAfter: secs, Reason: "circuit_open", Message: msg}
	}
	res, err := call()
	s.breaker.done(time.Now(), err, ctx.Err() != nil)
	return res, err
}
