package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nexus-mcp/nexus/internal/telemetry"
)

// closers undo what [Open] started, in the reverse of the order it started
// them: Open adds each one as soon as the thing it closes is running, runs
// them all when a later step fails, and hands them to the App, whose Close
// runs them. Every closer can rely on what was started before it (the
// store) being still open.
type closers struct {
	list []closer
}

// closer is one named shutdown function.
type closer struct {
	name string
	fn   func() error
}

// add registers fn, which shuts down name.
func (c *closers) add(name string, fn func() error) {
	c.list = append(c.list, closer{name: name, fn: fn})
}

// addFunc registers fn, a shutdown that cannot fail.
func (c *closers) addFunc(name string, fn func()) {
	c.add(name, func() error { fn(); return nil })
}

// close runs every closer, the last added first, once: a second close does
// nothing. The errors, each naming its closer, are joined.
func (c *closers) close() error {
	var errs []error
	for i := len(c.list) - 1; i >= 0; i-- {
		if err := c.list[i].fn(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", c.list[i].name, err))
		}
	}
	c.list = nil
	return errors.Join(errs...)
}

// closeOnError runs the closers when *err is set (Open's deferred call),
// joining their errors to it.
func (c *closers) closeOnError(err *error) {
	if *err == nil {
		return
	}
	if cerr := c.close(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
}

// shutdownTelemetry is the closer of tel: it flushes the spans not yet
// exported, for 5 s at most.
func shutdownTelemetry(ctx context.Context, tel *telemetry.Provider) func() error {
	ctx = context.WithoutCancel(ctx)
	return func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(ctx); err != nil {
			return fmt.Errorf("flush tracing spans: %w", err)
		}
		return nil
	}
}

// background starts fn on a goroutine of the App's own, with a context
// that Close cancels, and which Close waits for. Once Close has begun, fn
// is not started at all.
func (a *App) background(fn func(context.Context)) {
	a.bgMu.Lock()
	defer a.bgMu.Unlock()
	if a.bgCtx.Err() != nil {
		return // closing
	}
	a.bg.Go(func() { fn(a.bgCtx) })
}

// stopBackground cancels the App's goroutines and waits for them to end.
func (a *App) stopBackground() {
	a.bgMu.Lock()
	a.bgStop()
	a.bgMu.Unlock()
	a.bg.Wait()
}
