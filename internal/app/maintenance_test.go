package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/trace"
)

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true}, {"720h", 720 * time.Hour, true}, {"0", 0, true}, {"forever", 0, true},
		{"", 0, false}, {"-1d", 0, false}, {"thirty", 0, false}, {"5x", 0, false}, {"-3h", 0, false},
	} {
		got, err := app.ParseRetention(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRetention(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestMaintainDeletesOldTraces: maintenance keeps the traces within the
// retention and deletes the older ones.
func TestMaintainDeletesOldTraces(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	now := time.Now()
	for i, age := range []time.Duration{40 * 24 * time.Hour, 31 * 24 * time.Hour, 29 * 24 * time.Hour, time.Hour} {
		a.Traces.Record(trace.Record{RequestID: string(rune('a' + i)), Surface: "t", Toolbox: "nexus", Server: "s", Tool: "t", Source: "local",
			Workspace: "default", StartedAt: now.Add(-age), Outcome: trace.OK})
	}
	n, err := a.Maintain(ctx, 30*24*time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("Maintain: deleted %d, %v; want 2", n, err)
	}
	var left int
	a.Store.DB().QueryRow(`SELECT COUNT(*) FROM traces WHERE started_at >= ?`, store.Micros(now.Add(-30*24*time.Hour))).Scan(&left)
	var all int
	a.Store.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&all)
	if left != 2 || all != 2 {
		t.Fatalf("%d traces left (%d within the retention), want 2", all, left)
	}
}

// TestMaintainPrunesRateLimits: maintenance deletes the request rate limits
// of users idle long enough for their bucket to be full again, and keeps
// those still limited.
func TestMaintainPrunesRateLimits(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	limiter := func(now time.Time) *quota.SharedLimiter {
		l, err := quota.NewSharedLimiter(a.Store, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1, Burst: 10,
			Now: func() time.Time { return now }}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	limiter(time.Now().Add(-2*time.Hour)).Allow(ctx, "idle")
	limiter(time.Now()).Allow(ctx, "busy")
	if _, err := a.Maintain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := a.Store.DB().Query(`SELECT subject FROM rate_limits`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		left = append(left, s)
	}
	if len(left) != 1 || left[0] != "busy" {
		t.Fatalf("rate limits left: %v, want [busy]", left)
	}
}
