package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// MaintenanceInterval is how often "nexus serve" runs maintenance.
const MaintenanceInterval = time.Hour

// Maintain applies the retention rules: tutoring transcripts
// (tutor.Server.Retain: anonymized after 90 days, anonymous users' sessions
// deleted after a year), expired MCP sessions, the request rate limits of
// users whose bucket is full again (quota.PruneRateLimits), the chat turn
// slots whose lease passed (quota.PruneTurnSlots), then the traces
// older than retention (0 keeps them all); it returns how many traces it
// deleted. A step that fails does not keep the others from running: the
// error names every step that failed.
func (a *App) Maintain(ctx context.Context, retention time.Duration) (int64, error) {
	var errsSeen []error
	if r, err := a.Tutor.Retain(ctx, time.Now()); err != nil {
		errsSeen = append(errsSeen, fmt.Errorf("transcript retention: %w", err))
	} else if r.Anonymized > 0 || r.Deleted > 0 {
		a.log.Info("tutoring transcript retention", "anonymized_messages", r.Anonymized, "deleted_anonymous_sessions", r.Deleted)
	}
	if n, err := a.MCPSessions.Prune(ctx); err != nil {
		errsSeen = append(errsSeen, fmt.Errorf("expired MCP sessions: %w", err))
	} else if n > 0 {
		a.log.Info("deleted expired MCP sessions", "count", n)
	}
	// A minute in the past: a replica whose clock is ahead deletes no row
	// another replica still limits with.
	if n, err := quota.PruneRateLimits(ctx, a.Store, time.Now().Add(-time.Minute)); err != nil {
		errsSeen = append(errsSeen, fmt.Errorf("idle request rate limits: %w", err))
	} else if n > 0 {
		a.log.Debug("deleted idle request rate limits", "count", n)
	}
	if n, err := quota.PruneTurnSlots(ctx, a.Store, time.Now().Add(-time.Minute)); err != nil {
		errsSeen = append(errsSeen, fmt.Errorf("free chat turn slots: %w", err))
	} else if n > 0 {
		a.log.Debug("deleted free chat turn slots", "count", n)
	}
	if retention <= 0 {
		return 0, errors.Join(errsSeen...)
	}
	a.Traces.Flush()
	n, err := trace.Prune(ctx, a.Store, time.Now().Add(-retention))
	if err != nil {
		errsSeen = append(errsSeen, fmt.Errorf("trace retention: %w", err))
	} else if n > 0 {
		a.log.Info("deleted old traces", "count", n, "retention", FormatRetention(retention))
	}
	return n, errors.Join(errsSeen...)
}

// ScheduleMaintenance runs [App.Maintain] now and then every interval until
// ctx ends; failures are logged and retried at the next interval. Replicas
// sharing a database take turns: each period's maintenance runs on the one
// replica that claims it first ([store.Store.Claim]), never twice.
func (a *App) ScheduleMaintenance(ctx context.Context, retention, interval time.Duration) {
	for {
		claimed, err := a.Store.Claim(ctx, "maintenance", a.Instance, interval)
		if err == nil && claimed {
			_, err = a.Maintain(ctx, retention)
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("maintenance", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// ParseRetention reads a retention setting: a number of days ("30d"), a Go
// duration ("720h"), or "0" / "forever" to keep everything.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "0", "forever", "off":
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a retention: give days (30d), a duration (720h) or 0 to keep everything", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a retention: give days (30d), a duration (720h) or 0 to keep everything", s)
	}
	return d, nil
}

// FormatRetention writes a retention the way [ParseRetention] reads it.
func FormatRetention(d time.Duration) string {
	if d <= 0 {
		return "forever"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// instanceName names this process among replicas: host name, process id
// and a random part, since containers on one host network can share both
// (each the PID 1 of a host named alike), and replicas ignore the events of
// their own name.
func instanceName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "nexus"
	}
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), strings.ToLower(ulid.Make().String()[18:]))
}
