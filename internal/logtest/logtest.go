// Package logtest captures log records in tests, so that a test can check
// what was logged and at which level.
package logtest

import (
	"context"
	"log/slog"
	"sync"
)

// Capture is a slog.Handler that records every record, at every level. It
// is safe for concurrent use.
type Capture struct {
	mu      sync.Mutex
	records []slog.Record
}

// Enabled implements slog.Handler: every level is recorded.
func (c *Capture) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (c *Capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}

// WithAttrs implements slog.Handler (attributes are not kept).
func (c *Capture) WithAttrs([]slog.Attr) slog.Handler { return c }

// WithGroup implements slog.Handler (groups are not kept).
func (c *Capture) WithGroup(string) slog.Handler { return c }

// Records returns the records so far.
func (c *Capture) Records() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]slog.Record(nil), c.records...)
}
