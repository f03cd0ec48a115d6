package workbench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// Retries. A call that is safe to repeat (a tool annotated readOnlyHint or
// idempotentHint; reading a prompt, a resource or a completion) and that
// the server failed (its session broke, it answered a JSON-RPC error, it
// was unavailable) is tried again, up to the server's Retries (default
// DefaultRetries), after a short pause that doubles. Not retried: a call
// the client cancelled, one that timed out (its time is spent), one the
// server refused as invalid, a tool's own error result, and a call whose
// client was asked for input.
//
// Retries have a budget, so that a failing server is not sent a multiple
// of its load: each call adds a tenth of a token (up to retryBurst) and
// each retry takes one, so that over time at most one call in ten is a
// retry. The retries made are counted ([ServerState.Retries]).

// DefaultRetries is how many times a call safe to repeat is tried again
// when a server's configuration does not say.
const DefaultRetries = 2

const (
	retryPause = 50 * time.Millisecond
	retryBurst = 10.0 // tokens a budget starts with and holds at most
	retryEarn  = 0.1  // tokens each call adds
)

// retryBudget is a server's budget of retries.
type retryBudget struct {
	mu     sync.Mutex
	tokens float64
	made   uint64 // retries made
	seeded bool
}

// earn adds a call's share of a retry.
func (b *retryBudget) earn() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.seeded {
		b.tokens, b.seeded = retryBurst, true
	}
	b.tokens = min(b.tokens+retryEarn, retryBurst)
}

// spend takes a retry from the budget, if it has one.
func (b *retryBudget) spend() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	b.made++
	return true
}

// count is the retries made.
func (b *retryBudget) count() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made
}

// retries is how many times the server's calls safe to repeat are retried.
func (s *server) retryLimit() int {
	if s.cfg.Retries != nil {
		return *s.cfg.Retries
	}
	return DefaultRetries
}

// retrying runs call, and runs it again while it fails in a way worth a
// retry, within the server's retry limit and budget.
func (s *server) retrying(ctx context.Context, call func() (any, error)) (any, error) {
	s.retries.earn()
	pause := retryPause
	for attempt := 0; ; attempt++ {
		res, err := call()
		if err == nil || attempt >= s.retryLimit() || !retryable(ctx, err) || !s.retries.spend() {
			return res, err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-s.ctx.Done():
			t.Stop()
			return res, err
		}
		pause *= 2
	}
}

// retryable reports whether a call that failed with err may be tried
// again: the server's failure ([serverFailure]), not a timeout, not the
// client's cancellation, not a held call or a request for input.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || !serverFailure(err) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *errs.Error
	if errors.As(err, &e) && (e.Reason == "circuit_open" || e.Reason == "timeout" || errors.Is(e.Err, context.DeadlineExceeded)) {
		return false
	}
	return true
}
