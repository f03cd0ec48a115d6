package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestBreakerStates: the breaker opens after its count of server failures
// in a row, refuses calls until its cooldown ends, lets one call probe then,
// closes when the probe succeeds and opens again when it fails; answers
// (a refusal of the caller's arguments) reset the count, and a call its
// caller cancelled counts neither way.
func TestBreakerStates(t *testing.T) {
	b := newBreaker(3, time.Minute)
	now := time.Unix(1000, 0)
	fail := &errs.Error{Code: errs.Unavailable, Message: "down"}
	call := func(err error, cancelled bool) bool {
		ok, _, _ := b.allow(now)
		if ok {
			b.done(now, err, cancelled)
		}
		return ok
	}
	for range 2 {
		call(fail, false)
	}
	call(&errs.Error{Code: errs.BadRequest}, false) // an answer: the count starts again
	call(fail, true)                                // cancelled: not counted
	for i := range 3 {
		if !call(fail, false) {
			t.Fatalf("call %d refused before 3 failures in a row", i)
		}
	}
	if st, opens := b.state(now); st != BreakerOpen || opens != 1 {
		t.Fatalf("after 3 failures: %s, %d opens", st, opens)
	}
	if ok, wait, last := b.allow(now.Add(30 * time.Second)); ok || wait != 30*time.Second || !errors.Is(last, fail) {
		t.Fatalf("during the cooldown: allowed %v, wait %v, last %v", ok, wait, last)
	}
	now = now.Add(time.Minute)
	if st, _ := b.state(now); st != BreakerHalfOpen {
		t.Fatalf("after the cooldown: %s", st)
	}
	if ok, _, _ := b.allow(now); !ok {
		t.Fatal("the probe was refused")
	}
	if ok, _, _ := b.allow(now); ok {
		t.Fatal("a second call was let through during the probe")
	}
	b.done(now, fail, false) // the probe failed
	if st, opens := b.state(now); st != BreakerOpen || opens != 1 {
		t.Fatalf("after a failed probe: %s, %d opens (still the same opening)", st, opens)
	}
	now = now.Add(time.Minute)
	if !call(nil, false) {
		t.Fatal("the second probe was refused")
	}
	if st, _ := b.state(now); st != BreakerClosed {
		t.Fatalf("after a probe that succeeded: %s", st)
	}
}

// TestBreakerFailsFast: a downstream server whose tool fails on the
// server's side 3 times in a row (the breaker's count here) opens its
// breaker: the next call fails at once with an error that says why and
// when to retry, without reaching the server, and the server's state says
// so; a tool's own error results are answers and never open it; after the
// cooldown a call probes the server and, as it succeeds, closes it.
func TestBreakerFailsFast(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
	var calls atomic.Int32
	var healthy atomic.Bool
	srv.AddTool(&mcp.Tool{Name: "flaky", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			if !healthy.Load() {
				return nil, errors.New("the database is down")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "soft", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such record"}}}, nil
		})
	url := httpPeer(t, config.StreamableHTTP, srv)
	reg := registry.New()
	const cooldown = 300 * time.Millisecond
	m := NewManager(toolboxConfig("tb", named{"f", urlServer(config.StreamableHTTP, url)}), reg, Options{BreakerFailures: 3, BreakerCooldown: cooldown})
	t.Cleanup(func() { m.Close() })
	open(t, m, "tb")
	state := func() string {
		for _, s := range m.Servers() {
			if s.Server == "f" {
				return s.Breaker
			}
		}
		return ""
	}
	for range 5 {
		if res, err := call(t, reg, "tb__f__soft", nil); err != nil || !res.IsError {
			t.Fatalf("soft: %+v %v", res, err)
		}
	}
	if st := state(); st != BreakerClosed {
		t.Fatalf("after tool error results: breaker %s", st)
	}
	for i := range 3 {
		if _, err := call(t, reg, "tb__f__flaky", nil); err == nil || err.Code != errs.Unavailable || strings.Contains(err.Message, "circuit open") {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	start := time.Now()
	_, err := call(t, reg, "tb__f__flaky", nil)
	took := time.Since(start)
	if err == nil || err.Code != errs.Unavailable || !strings.Contains(err.Message, "circuit open") || !strings.Contains(err.Message, "the database is down") || err.RetryAfter < 1 {
		t.Fatalf("the call after 3 failures: %+v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("the server got %d calls, want 3: the open breaker let one through", n)
	}
	if st := state(); st != BreakerOpen {
		t.Fatalf("breaker %s, want open", st)
	}
	t.Logf("a call refused by the open breaker took %v", took)
	healthy.Store(true)
	time.Sleep(cooldown) // the cooldown being tested
	if got := mustCall(t, reg, "tb__f__flaky", nil); got != "fine" {
		t.Fatalf("the probe: %q", got)
	}
	if st := state(); st != BreakerClosed {
		t.Fatalf("after a probe that succeeded: breaker %s", st)
	}
}

// BenchmarkBreakerOpen measures a call refused by an open breaker (issue
// 26: a server that failed 5 times in a row; the next call fails in ≤ 1
// ms), from the registry's handler, as every surface calls it:
//
//	go test ./internal/workbench -run '^$' -bench BreakerOpen -count 3
func BenchmarkBreakerOpen(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "down", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("the database is down")
		})
	url := httpPeer(b, config.StreamableHTTP, srv)
	reg := registry.New()
	m := NewManager(toolboxConfig("tb", named{"f", urlServer(config.StreamableHTTP, url)}), reg, Options{BreakerFailures: 5, BreakerCooldown: time.Hour})
	b.Cleanup(func() { m.Close() })
	open(b, m, "tb")
	for range 5 {
		call(b, reg, "tb__f__fails", nil)
	}
	if _, err := call(b, reg, "tb__f__fails", nil); err == nil || !strings.Contains(err.Message, "circuit open") {
		b.Fatalf("after 5 failures: %v, want the breaker open", err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := call(b, reg, "tb__f__fails", nil); err == nil {
			b.Fatal("the call succeeded")
		}
	}
}
