package testtools

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records failures instead of failing the
// test; Fatal ends the goroutine, as testing's does.
type recorder struct {
	testing.TB
	fatal, errors, skips []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) {
	r.fatal = append(r.fatal, fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.skips = append(r.skips, fmt.Sprint(args...))
	runtime.Goexit()
}

// run runs f with a recorder on a goroutine of its own, so that a Fatal
// ends only that goroutine, and returns the recorder once f has ended.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestEventually(t *testing.T) {
	var calls atomic.Int32
	r := run(t, func(tb testing.TB) {
		Eventually(tb, 10*time.Second, "the third call", func() bool { return calls.Add(1) == 3 })
	})
	if len(r.fatal) != 0 || calls.Load() != 3 {
		t.Errorf("a condition true at the third check: %d checks, failures %q", calls.Load(), r.fatal)
	}

	calls.Store(0)
	start := time.Now()
	r = run(t, func(tb testing.TB) {
		Eventually(tb, 50*time.Millisecond, "the session to close", func() bool { calls.Add(1); return false })
	})
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %s, want the timeout (50ms)", d)
	}
	if want := []string{"timed out after 50ms waiting for the session to close"}; fmt.Sprint(r.fatal) != fmt.Sprint(want) {
		t.Errorf("failures %q, want %q", r.fatal, want)
	}
	if n := calls.Load(); n < 2 {
		t.Errorf("the condition was checked %d times in 50ms", n)
	}
}

func TestEventuallyErr(t *testing.T) {
	n := 0
	r := run(t, func(tb testing.TB) {
		EventuallyErr(tb, 10*time.Second, "the server", func() error {
			if n++; n < 3 {
				return errors.New("connection refused")
			}
			return nil
		})
	})
	if len(r.fatal) != 0 || n != 3 {
		t.Errorf("a check nil at the third call: %d calls, failures %q", n, r.fatal)
	}
	r = run(t, func(tb testing.TB) {
		EventuallyErr(tb, 20*time.Millisecond, "the server to listen", func() error { return errors.New("connection refused") })
	})
	if want := []string{"timed out after 20ms waiting for the server to listen: connection refused"}; fmt.Sprint(r.fatal) != fmt.Sprint(want) {
		t.Errorf("failures %q, want %q", r.fatal, want)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nb\n"), false) }); len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "-update to create it") {
		t.Errorf("a missing golden file: failures %q", r.fatal)
	}
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nb\n"), true) }); len(r.fatal)+len(r.errors) != 0 {
		t.Errorf("update: failures %q %q", r.fatal, r.errors)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nb\n"), false) }); len(r.fatal)+len(r.errors) != 0 {
		t.Errorf("the same text: failures %q %q", r.fatal, r.errors)
	}
	r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nc\n"), false) })
	if len(r.fatal) != 0 || len(r.errors) != 1 ||
		!strings.Contains(r.errors[0], path+" is stale: got:\na\nc\n\nwant:\na\nb\n") ||
		!strings.Contains(r.errors[0], "run go test ./internal/testtools -update") {
		t.Errorf("a different text: failures %q %q", r.fatal, r.errors)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Errorf("a comparison rewrote the file: %q", b)
	}
}

func TestDifference(t *testing.T) {
	long := strings.Repeat("x\n", goldenShown)
	for _, tt := range []struct{ got, want, diff string }{
		{"a\n", "b\n", "got:\na\n\nwant:\nb\n"},
		{long + "y\n", long + "z\n", fmt.Sprintf("line %d:\n got \"y\"\nwant \"z\"", goldenShown+1)},
		{long, long + "z\n", fmt.Sprintf("got %d lines, want %d (it lacks line %d: %q)", goldenShown, goldenShown+1, goldenShown+1, "z")},
		{long + "z\n", long, fmt.Sprintf("got %d lines, want %d (extra line %d: %q)", goldenShown+1, goldenShown, goldenShown+1, "z")},
		{long, strings.TrimSuffix(long, "\n"), "they differ in the newline at the end"},
	} {
		if got := difference([]byte(tt.got), []byte(tt.want)); got != tt.diff {
			t.Errorf("difference(%.20q..., %.20q...) = %q, want %q", tt.got, tt.want, got, tt.diff)
		}
	}
}

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("FreeAddr = %q (%v)", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the free address: %v", err)
	}
	ln.Close()
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tt := range []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 0, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{ms(1, 2, 3, 4), 100, 4 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(hundred...), 0, 1 * time.Millisecond},
		{ms(1, 2), 150, 2 * time.Millisecond},
	} {
		if got := Percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %d) = %s, want %s", tt.sorted, tt.p, got, tt.want)
		}
	}
}

// TestSharedData: without the shared data a test that needs it is skipped
// with a notice on a user's machine and failed in CI; with it, it gets the
// directory. The excerpt is in the repository, in the same layout.
func TestSharedData(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	t.Setenv(SharedDataEnv, missing)
	t.Setenv("CI", "")
	r := run(t, func(tb testing.TB) { SharedData(tb) })
	if len(r.skips) != 1 || len(r.fatal) != 0 || !strings.Contains(r.skips[0], "SKIPPED") || !strings.Contains(r.skips[0], SharedDataEnv) {
		t.Fatalf("without the data and CI: skips %q, fatal %q", r.skips, r.fatal)
	}
	t.Setenv("CI", "1")
	r = run(t, func(tb testing.TB) { SharedData(tb) })
	if len(r.fatal) != 1 || len(r.skips) != 0 || !strings.Contains(r.fatal[0], "CI must have it") {
		t.Fatalf("without the data in CI: skips %q, fatal %q", r.skips, r.fatal)
	}
	excerpt := Excerpt(t)
	t.Setenv(SharedDataEnv, excerpt)
	var got string
	r = run(t, func(tb testing.TB) { got = SharedData(tb) })
	if got != excerpt || len(r.fatal)+len(r.skips) != 0 {
		t.Fatalf("with data: %q, skips %q, fatal %q", got, r.skips, r.fatal)
	}
	for _, f := range []string{"README.md", "langara/transfers.json", "langara/catalogue.json", "langara/attributes.json",
		"langara/202310.json", "langara/202320.json", "langara/202330.json", "sfu/outlines.json"} {
		if _, err := os.Stat(filepath.Join(excerpt, f)); err != nil {
			t.Errorf("the excerpt lacks %s: %v", f, err)
		}
	}
}
