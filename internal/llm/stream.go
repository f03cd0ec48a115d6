package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultStall is how long a stream may go without a chunk.
const DefaultStall = 60 * time.Second

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// watchdog cancels a stream that stalls: no chunk within its timeout.
type watchdog struct {
	ctx    context.Context
	parent context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	d      time.Duration

	mu      sync.Mutex
	stalled bool
}

func watch(parent context.Context, d time.Duration) *watchdog {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{ctx: ctx, parent: parent, cancel: cancel, d: d}
	w.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		w.stalled = true
		w.mu.Unlock()
		cancel()
	})
	return w
}

// alive records a chunk: the stall timeout starts again.
func (w *watchdog) alive() { w.timer.Reset(w.d) }

func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel()
}

// err is the stream's end when the watchdog or the caller ended it.
func (w *watchdog) err() error {
	if err := w.parent.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled {
		return errStalled
	}
	return nil
}

var errStalled = errors.New("stalled")

// fail turns a stream's failure into an *Error of its kind (the caller's
// own cancellation stays what it is).
func (w *watchdog) fail(provider string, err error) error {
	if perr := w.parent.Err(); perr != nil {
		return perr
	}
	w.mu.Lock()
	stalled := w.stalled
	w.mu.Unlock()
	if stalled || errors.Is(err, errStalled) {
		return &Error{Kind: Timeout, Provider: provider, Message: fmt.Sprintf("no answer for %s: the stream stalled", w.d), Err: err}
	}
	status, resp, msg, ok := openaiStatus(err)
	if !ok {
		status, resp, msg, ok = anthropicStatus(err)
	}
	if ok {
		return statusError(provider, status, resp, msg, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: Timeout, Provider: provider, Message: "the provider did not answer in time", Err: err}
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return &Error{Kind: Unavailable, Provider: provider, Message: "the provider cannot be reached: " + oe.Op + " failed", Err: err}
	}
	return &Error{Kind: BadStream, Provider: provider, Message: "the stream broke: " + err.Error(), Err: err}
}

// statusError is the *Error of an HTTP status the provider answered.
func statusError(provider string, status int, resp *http.Response, msg string, err error) *Error {
	e := &Error{Provider: provider, Message: fmt.Sprintf("HTTP %d", status), Err: err}
	if msg != "" {
		e.Message += ": " + msg
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind, e.Message = Auth, fmt.Sprintf("HTTP %d: the provider refused the key (check the API key)", status)
	case status == http.StatusTooManyRequests:
		e.Kind = RateLimited
		if resp != nil {
			e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
		}
	case status >= 500:
		e.Kind = Unavailable
	default:
		e.Kind = BadRequest
	}
	return e
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
