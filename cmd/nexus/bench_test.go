package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// BenchmarkStdioFirstToolsList measures "nexus stdio" from process start to
// the answer of the first tools/list (initialize included) on a data
// directory whose database already exists. The issue asks for ≤ 100 ms.
func BenchmarkStdioFirstToolsList(b *testing.B) {
	dir := b.TempDir()
	// Create the database (migrations, demo data) before the clock starts.
	if _, err := stdioFirstToolsList(dir); err != nil {
		b.Fatalf("prepare data directory: %v", err)
	}
	benchStdioStartup(b, func() string { return dir })
}

// BenchmarkStdioFirstToolsListFreshDB is BenchmarkStdioFirstToolsList with a
// new, empty data directory every time, so each start also creates the
// database, migrates it and loads the demo knowledge base.
func BenchmarkStdioFirstToolsListFreshDB(b *testing.B) {
	benchStdioStartup(b, b.TempDir)
}

// benchStdioStartup runs b.N stdio starts, each on the data directory dataDir
// returns (called with the timer stopped), and reports the p50 and p99 time
// from process start to the first tools/list answer. ns/op also counts the
// shutdown of each process; the percentiles do not.
func benchStdioStartup(b *testing.B, dataDir func() string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := dataDir()
		b.StartTimer()
		d, err := stdioFirstToolsList(dir)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(millis(testtools.Percentile(lat, 50)), "p50-ms")
	b.ReportMetric(millis(testtools.Percentile(lat, 99)), "p99-ms")
}

// stdioFirstToolsList starts "nexus stdio --data-dir dir", connects an SDK
// client, lists the tools and closes the session (stopping the process). It
// returns the time from just before the process started to the tools/list
// answer; closing is not included.
func stdioFirstToolsList(dir string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr lockedBuffer
	cmd := exec.Command(binary, "stdio", "--data-dir", dir)
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)

	start := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, fmt.Errorf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	lt, err := cs.ListTools(ctx, nil)
	elapsed := time.Since(start)
	if cerr := cs.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return 0, fmt.Errorf("tools/list: %v\nstderr:\n%s", err, stderr.String())
	}
	if len(lt.Tools) == 0 {
		return 0, fmt.Errorf("tools/list returned no tools\nstderr:\n%s", stderr.String())
	}
	return elapsed, nil
}

// BenchmarkIdleRSS reports the resident set size of "nexus serve" after one
// client has initialized and listed the tools and the process has then been
// idle for idleWait. The issue asks for ≤ 50 MB. It is a benchmark rather
// than a test because memory figures on a shared machine are reports, not
// pass/fail criteria. Besides the mean and maximum VmRSS it reports the
// mean VmHWM (peak RSS during startup).
//
// fresh-db starts each process on a new data directory (creating the
// database and loading the demo data, as a first run does); existing-db
// reuses one directory prepared beforehand.
//
// bare-sdk is the yardstick of issue 25: a bare SDK server with one tool
// (testdata/echoserver), after the same initialize and tools/list, in the
// same run.
func BenchmarkIdleRSS(b *testing.B) {
	nexus := func(dataDir func() string) func() (int, string, func()) {
		return func() (int, string, func()) {
			p := startNexusServe(b, dataDir())
			return p.cmd.Process.Pid, p.base + "/mcp", func() {
				if err := p.stop(); err != nil {
					b.Logf("stop nexus serve: %v", err)
				}
			}
		}
	}
	b.Run("fresh-db", func(b *testing.B) { benchIdleRSS(b, nexus(b.TempDir)) })
	b.Run("existing-db", func(b *testing.B) {
		dir := b.TempDir()
		startNexusServe(b, dir).stop() // creates the database
		benchIdleRSS(b, nexus(func() string { return dir }))
	})
	b.Run("bare-sdk", func(b *testing.B) {
		bin := buildEchoServer(b)
		benchIdleRSS(b, func() (int, string, func()) {
			pid, url := startBareSDK(b, bin)
			return pid, url, func() {} // stopped when the benchmark ends
		})
	})
}

// idleWait is how long "nexus serve" sits idle before its RSS is read.
const idleWait = 2 * time.Second

// benchIdleRSS runs b.N server processes one after another (start returns
// one's process id, MCP endpoint and how to stop it) and reports their
// VmRSS after a tools/list and idleWait idle, and their VmHWM, in MB.
func benchIdleRSS(b *testing.B, start func() (pid int, endpoint string, stop func())) {
	b.Helper()
	var sumRSS, maxRSS, sumHWM float64
	for range b.N {
		pid, endpoint, stop := start()
		if err := listToolsHTTP(endpoint); err != nil {
			b.Fatal(err)
		}
		time.Sleep(idleWait) // not synchronisation: the idle period is what is measured
		rss, hwm, err := procMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		stop()
		sumRSS += rss
		sumHWM += hwm
		maxRSS = max(maxRSS, rss)
	}
	b.ReportMetric(sumRSS/float64(b.N), "rss-MB")
	b.ReportMetric(maxRSS, "max-rss-MB")
	b.ReportMetric(sumHWM/float64(b.N), "hwm-MB")
}

// listToolsHTTP connects an SDK client to the Streamable HTTP endpoint,
// initializes, lists the tools and closes the session.
func listToolsHTTP(endpoint string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, testtools.WithSession())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if len(lt.Tools) == 0 {
		return fmt.Errorf("tools/list returned no tools")
	}
	return nil
}

// serveProcess is a running "nexus serve" started by [startNexusServe].
type serveProcess struct {
	cmd    *exec.Cmd
	base   string // http://host:port
	stderr *lockedBuffer
	once   sync.Once
	err    error
}

// startNexusServe is [startServe] for benchmarks that need the process: it
// runs "nexus serve" on a free port with dataDir and returns once /healthz
// answers. The process is stopped by [serveProcess.stop] or, at the latest,
// when tb ends.
func startNexusServe(tb testing.TB, dataDir string) *serveProcess {
	tb.Helper()
	addr := testtools.FreeAddr(tb)
	p := &serveProcess{
		cmd:    exec.Command(binary, "serve", "--addr", addr, "--data-dir", dataDir),
		base:   "http://" + addr,
		stderr: &lockedBuffer{},
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.stop() })
	testtools.EventuallyErr(tb, 20*time.Second, "nexus serve to become healthy at "+p.base, func() error {
		if err := healthy(p.base); err != nil {
			return fmt.Errorf("%v\nstderr:\n%s", err, p.stderr.String())
		}
		return nil
	})
	return p
}

// stop interrupts the process and waits for it to exit, killing it after
// 10 s. Only the first call acts; later ones return its result.
func (p *serveProcess) stop() error {
	p.once.Do(func() {
		p.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case p.err = <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
			p.err = fmt.Errorf("nexus serve did not exit within 10 s of an interrupt")
		}
	})
	return p.err
}

// procMemory reads the resident set size (VmRSS) and its high-water mark
// (VmHWM) of process pid from /proc, in MB (2^20 bytes).
func procMemory(pid int) (rss, hwm float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s %q: %w", key, val, err)
		}
		if key == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("/proc/%d/status lacks VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent use, for a child
// process's stderr that is read while the process may still be writing.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// millis converts d to milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
