package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/trace"
)

// TestMaintenanceDeletesOldTraces: "nexus maintenance" deletes the traces
// older than the retention (30 days unless set) and keeps the others; serve
// runs the same at start.
func TestMaintenanceDeletesOldTraces(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runNexus(t, "", "call", "belief_query", `{"query":"x"}`, "--data-dir", dir); code != 0 {
		t.Fatalf("call: %s", errOut)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(st, slog.New(slog.DiscardHandler))
	for i, age := range []time.Duration{45 * 24 * time.Hour, 31 * 24 * time.Hour, 10 * 24 * time.Hour} {
		w.Record(trace.Record{RequestID: "old" + string(rune('a'+i)), Surface: "t", Toolbox: "nexus", Server: "s", Tool: "t", Source: "local",
			Workspace: "default", StartedAt: time.Now().Add(-age), Outcome: trace.OK})
	}
	w.Close()
	count := func() int {
		var n int
		st.DB().QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&n)
		return n
	}
	before := count() // the call's own trace and the three above
	out, errOut, code := runNexus(t, "", "maintenance", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "deleted 2 traces older than 30d") {
		t.Fatalf("maintenance: %d %q %s", code, out, errOut)
	}
	out, _, _ = runNexus(t, "", "maintenance", "--trace-retention", "5d", "--data-dir", dir)
	if !strings.Contains(out, "deleted 1 traces older than 5d") || count() != before-3 {
		t.Fatalf("maintenance 5d: %q, %d traces left of %d", out, count(), before)
	}
	if _, errOut, code := runNexus(t, "", "maintenance", "--trace-retention", "soon", "--data-dir", dir); code == 0 || !strings.Contains(errOut, "--trace-retention") {
		t.Fatalf("a bad retention: %d %s", code, errOut)
	}
	st.Close()
}

// TestRetentionErrorNamesTheVariable: a bad NEXUS_TRACE_RETENTION (or
// --trace-retention) is reported as the other flags are, naming both, by
// serve and maintenance alike, before anything is created.
func TestRetentionErrorNamesTheVariable(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	t.Setenv("NEXUS_ADDR", "127.0.0.1:0")
	for _, tt := range []struct {
		cmd     string
		env     string
		flag    []string
		quoting string
	}{
		{"maintenance", "bogus", nil, `"bogus"`},
		{"serve", "bogus", nil, `"bogus"`},
		{"maintenance", "", []string{"--trace-retention", "-3d"}, `"-3d"`},
		{"serve", "", []string{"--trace-retention", "soon"}, `"soon"`},
	} {
		t.Setenv("NEXUS_TRACE_RETENTION", tt.env)
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stdout, stderr strings.Builder
		code := run(ctx, append([]string{tt.cmd, "--data-dir", dir}, tt.flag...), strings.NewReader(""), &stdout, &stderr)
		cancel()
		want := "--trace-retention (env NEXUS_TRACE_RETENTION): " + tt.quoting + " is not a retention"
		if code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s %v with NEXUS_TRACE_RETENTION=%q: exit %d, stderr %q; want exit 1 and %q", tt.cmd, tt.flag, tt.env, code, stderr.String(), want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("%s: created %s", tt.cmd, entries[0].Name())
		}
	}
}

// TestServeRunsMaintenance: "nexus serve" deletes traces older than the
// retention when it starts (and every hour after).
func TestServeRunsMaintenance(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(st, slog.New(slog.DiscardHandler))
	w.Record(trace.Record{RequestID: "ancient", Surface: "t", Toolbox: "nexus", Server: "s", Tool: "t", Source: "local",
		Workspace: "default", StartedAt: time.Now().Add(-60 * 24 * time.Hour), Outcome: trace.OK})
	w.Record(trace.Record{RequestID: "recent", Surface: "t", Toolbox: "nexus", Server: "s", Tool: "t", Source: "local",
		Workspace: "default", StartedAt: time.Now().Add(-time.Hour), Outcome: trace.OK})
	w.Close()
	st.Close()

	startServeIn(t, dir, "--trace-retention", "30d")
	st, err = store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	testtools.EventuallyErr(t, 10*time.Second, "serve to delete the ancient trace", func() error {
		var ancient, recent int
		st.DB().QueryRow(`SELECT COUNT(*) FROM traces WHERE request_id = 'ancient'`).Scan(&ancient)
		st.DB().QueryRow(`SELECT COUNT(*) FROM traces WHERE request_id = 'recent'`).Scan(&recent)
		if ancient != 0 || recent != 1 {
			return fmt.Errorf("after serve started: %d ancient and %d recent traces, want 0 and 1", ancient, recent)
		}
		return nil
	})
}
