package testtools

// Helpers that many packages' tests share: waiting for a condition instead of
// sleeping, golden files, free loopback addresses and latency percentiles.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PollInterval is how often Eventually and EventuallyErr check their
// condition.
const PollInterval = 10 * time.Millisecond

// Eventually waits until cond returns true, checking it at once and then
// every PollInterval. When timeout passes first it fails tb (Fatal) with
// "timed out after TIMEOUT waiting for WHAT": what says what is awaited, as
// in "the session to close". Give a generous timeout: it is only reached
// when the test fails, while a test that passes waits no longer than cond
// needs.
//
// cond runs on the calling goroutine, so it may call tb.Fatal itself.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	EventuallyErr(tb, timeout, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// errNotYet is what Eventually's condition gives while it does not hold.
var errNotYet = errors.New("not yet")

// EventuallyErr is Eventually for a check that says why it does not hold
// yet: it waits until check returns nil, and on timeout the failure ends with
// the last error check returned (a readiness probe's "connection refused",
// the state seen so far).
func EventuallyErr(tb testing.TB, timeout time.Duration, what string, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if err == errNotYet {
				tb.Fatalf("timed out after %s waiting for %s", timeout, what)
			}
			tb.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		<-tick.C
	}
}

// Golden compares got with the golden file at path and fails tb (Error) when
// they differ, showing the difference; a missing file fails tb (Fatal).
//
// With update it writes got to path instead, creating its directory. The
// flag that sets update belongs to the caller's test package (a test binary
// can define a flag only once):
//
//	var update = flag.Bool("update", false, "rewrite the golden files")
//	...
//	testtools.Golden(t, filepath.Join("testdata", "x.golden"), got, *update)
func Golden(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	rerun := "go test -update"
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(RepoRoot(tb), wd); err == nil && !strings.HasPrefix(rel, "..") {
			rerun = "go test ./" + filepath.ToSlash(rel) + " -update"
		}
	}
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run %s to create it)", err, rerun)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s is stale: %s\nIf the change is deliberate, run %s, review the diff and commit it.", path, difference(got, want), rerun)
	}
}

// goldenShown is the size up to which Golden shows both texts in full.
const goldenShown = 4 << 10

// difference describes how got differs from want: both in full when they
// are short, else their first differing line.
func difference(got, want []byte) string {
	if len(got) <= goldenShown && len(want) <= goldenShown {
		return fmt.Sprintf("got:\n%s\nwant:\n%s", got, want)
	}
	g := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	w := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		switch {
		case i >= len(g):
			return fmt.Sprintf("got %d lines, want %d (it lacks line %d: %q)", len(g), len(w), i+1, w[i])
		case i >= len(w):
			return fmt.Sprintf("got %d lines, want %d (extra line %d: %q)", len(g), len(w), i+1, g[i])
		case g[i] != w[i]:
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, g[i], w[i])
		}
	}
	return "they differ in the newline at the end"
}

// FreeAddr returns a loopback TCP address ("127.0.0.1:PORT") whose port was
// free a moment ago, for a server the test starts in another process or
// that must be told its address before it listens. Another process may take
// the port meanwhile; a test that can listen itself should listen on
// "127.0.0.1:0" and keep the listener.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// Percentile returns the p-th percentile (nearest rank, p from 0 to 100) of
// durations sorted in ascending order; 0 when there are none.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// SharedDataEnv overrides where the shared data directory is.
const SharedDataEnv = "NEXUS_SHARED_DATA"

// SharedData returns the directory of the whole real BC course data
// (../shared/data beside the repository, or $NEXUS_SHARED_DATA), for the
// tests that need the whole files. A user's clone does not have it: the
// test is then skipped with a notice saying so. CI has it, and there
// (CI set, as .ci/run does) a missing directory fails the test.
func SharedData(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(SharedDataEnv)
	if dir == "" {
		dir = filepath.Join(RepoRoot(tb), "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "langara", "transfers.json")); err != nil {
		msg := fmt.Sprintf("the whole shared data is needed (../shared/data beside the repository; %s overrides its place): %v", SharedDataEnv, err)
		if os.Getenv("CI") != "" {
			tb.Fatal(msg + "; CI must have it")
		}
		tb.Skip("SKIPPED: " + msg + "; the tests on testdata/excerpt still run, CI runs this one")
	}
	return dir
}

// Excerpt returns the directory of the excerpt of the shared data that the
// repository keeps (testdata/excerpt: a few hundred real records of each
// file, in the same layout; its README.md says which and from where).
func Excerpt(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(RepoRoot(tb), "testdata", "excerpt")
}

// Data is a directory of real course data in the shared data's layout:
// the excerpt, or the whole shared data (Whole).
type Data struct {
	Dir   string
	Whole bool
}

// ForEachData runs f on the excerpt (subtest "excerpt"), always, and on
// the whole shared data (subtest "shared"), which is skipped or failed when
// it is missing as [SharedData] says. Checks of whole-file counts and
// shares belong under d.Whole.
func ForEachData(t *testing.T, f func(t *testing.T, d Data)) {
	t.Helper()
	t.Run("excerpt", func(t *testing.T) { f(t, Data{Dir: Excerpt(t)}) })
	t.Run("shared", func(t *testing.T) { f(t, Data{Dir: SharedData(t), Whole: true}) })
}

// SessionProtocol is the latest MCP protocol version with sessions
// (initialize, then Mcp-Session-Id): a test of session behaviour connects
// an SDK client with it ([WithSession]), since the SDK client's default,
// 2026-07-28, is sessionless.
const SessionProtocol = "2025-11-25"

// SessionlessProtocol is the first MCP protocol version without sessions
// (SEP-2567, SEP-2575): server/discover, then each request on its own.
const SessionlessProtocol = "2026-07-28"

// WithSession are the options of an SDK client session that speaks
// [SessionProtocol]; Sessionless those of one that speaks
// [SessionlessProtocol]. (Against a server without it, the SDK client falls
// back to initialize: a test checks what its session negotiated,
// ClientSession.InitializeResult().ProtocolVersion.)
func WithSession() *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: SessionProtocol}
}

// Sessionless: see [WithSession].
func Sessionless() *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: SessionlessProtocol}
}
