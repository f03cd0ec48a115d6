package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// The cross-process proxy benchmark (issue 12): the client (this test
// process), "nexus serve" and the downstream echo server
// (testdata/echoserver) are three OS processes. It compares calling the echo
// tool directly, through the passthrough route /mcp/servers/bench/echo and
// through the flat name bench__echo__echo on /mcp, and through a bare
// httputil.ReverseProxy (testdata/revproxy, what any HTTP hop costs; its CPU
// is reported as Nexus's): throughput with 8
// clients, latency with 1, and the CPU time per call of Nexus and of the
// downstream server (from /proc/PID/stat). Variants run interleaved in
// rounds, the order rotated every round, because the machine is small and
// shared. It runs only when asked:
//
//	NEXUS_BENCH_PROXY=1 go test ./cmd/nexus -run TestProxyCrossProcess -v -timeout 30m
//
// NEXUS_BENCH_ROUNDS (default 5) and NEXUS_BENCH_CALLS (calls per client per
// run, default 1500) size it; NEXUS_BENCH_PROTOCOL is the protocol version
// every client asks for (default 2025-11-25, the newest with the initialize
// handshake). With a sessionless one (2026-07-28) the echo server speaks it
// too (its stateless handler), so that "direct" is a sessionless
// connection and the passthrough forwards sessionless POSTs; with
// NEXUS_BENCH_STATEFUL=1 as well, the echo server keeps to sessions, and
// the passthrough serves the sessionless clients on the downstream session
// it keeps (direct then falls back to a session). NEXUS_BENCH_BASELINE names another nexus
// binary (e.g. built from an older commit) whose passthrough and flat name
// run as two more variants, against the same downstream server.

// benchVariant is one way of calling the echo tool.
type benchVariant struct {
	name string
	url  string
	tool string
	pid  int // of the Nexus process in the path; 0 for none
}

// benchStats accumulates one variant's measurements over the rounds.
type benchStats struct {
	rates []float64       // calls/s with 8 clients, per round
	lat   []time.Duration // 1-client latencies, all rounds
	// µs of CPU per call of Nexus, the downstream server and this process
	// (the client), per run: [0] with 8 clients, [1] with 1.
	nexusCPU, downCPU, clientCPU [2][]float64
}

func TestProxyCrossProcess(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_PROXY") == "" {
		t.Skip("a benchmark: set NEXUS_BENCH_PROXY=1 to run it")
	}
	rounds := benchEnvInt(t, "NEXUS_BENCH_ROUNDS", 5)
	calls := benchEnvInt(t, "NEXUS_BENCH_CALLS", 1500)
	const clients = 8
	// Every variant speaks the same protocol version.
	protocol := os.Getenv("NEXUS_BENCH_PROTOCOL")
	if protocol == "" {
		protocol = "2025-11-25"
	}
	downArgs := []string{"-addr", testtools.FreeAddr(t)}
	if protocol >= testtools.SessionlessProtocol && os.Getenv("NEXUS_BENCH_STATEFUL") == "" {
		downArgs = append(downArgs, "-stateless")
	}

	echoBin := filepath.Join(t.TempDir(), "echoserver")
	if out, err := exec.Command("go", "build", "-o", echoBin, "./testdata/echoserver").CombinedOutput(); err != nil {
		t.Fatalf("build the echo server: %v\n%s", err, out)
	}
	downAddr := downArgs[1]
	down := startProcess(t, echoBin, downArgs...)
	waitListening(t, downAddr)
	downURL := "http://" + downAddr + "/"

	cfg := filepath.Join(t.TempDir(), "nexus.yaml")
	yaml := "toolboxes:\n  bench:\n    description: the proxy benchmark\n    mcpServers:\n      echo:\n        url: " + downURL + "\n        transport: http\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	variants := []benchVariant{{name: "direct", url: downURL, tool: "echo"}}
	// Any HTTP hop: a bare standard library reverse proxy in its own
	// process (testdata/revproxy), to read the proxies' added latency
	// against.
	rpBin := filepath.Join(t.TempDir(), "revproxy")
	if out, err := exec.Command("go", "build", "-o", rpBin, "./testdata/revproxy").CombinedOutput(); err != nil {
		t.Fatalf("build the reverse proxy: %v\n%s", err, out)
	}
	rpAddr := testtools.FreeAddr(t)
	rp := startProcess(t, rpBin, "-addr", rpAddr, "-to", downURL)
	waitListening(t, rpAddr)
	variants = append(variants, benchVariant{name: "bare reverse proxy", url: "http://" + rpAddr + "/", tool: "echo", pid: rp.Process.Pid})
	nexusAt := func(label, bin string) {
		addr := testtools.FreeAddr(t)
		cmd := startProcess(t, bin, "serve", "--addr", addr, "--data-dir", t.TempDir(), "--config", cfg)
		base := "http://" + addr
		testtools.EventuallyErr(t, 30*time.Second, "nexus serve to become healthy at "+base, func() error { return healthy(base) })
		variants = append(variants,
			benchVariant{name: "passthrough" + label, url: base + "/mcp/servers/bench/echo", tool: "echo", pid: cmd.Process.Pid},
			benchVariant{name: "flat" + label, url: base + "/mcp", tool: "bench__echo__echo", pid: cmd.Process.Pid})
	}
	nexusAt("", binary)
	if base := os.Getenv("NEXUS_BENCH_BASELINE"); base != "" {
		nexusAt(" (baseline)", base)
	}

	// Sessions are made once per variant: the runs time calls only.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients}}
	t.Cleanup(hc.CloseIdleConnections)
	sessions := map[string][]*mcp.ClientSession{}
	negotiated := map[string]string{} // by variant: the protocol its clients got
	for _, v := range variants {
		for range clients {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: v.url, HTTPClient: hc},
				&mcp.ClientSessionOptions{ProtocolVersion: protocol})
			cancel()
			if err != nil {
				t.Fatalf("%s: connect: %v", v.name, err)
			}
			t.Cleanup(func() { cs.Close() })
			benchTools.Store(cs, v.tool)
			sessions[v.name] = append(sessions[v.name], cs)
			negotiated[v.name] = cs.InitializeResult().ProtocolVersion
		}
		// Warm up: connections, the toolbox's downstream session, caches.
		if err := callRun(sessions[v.name], 200, nil); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
	}

	load0 := loadAvg()
	stats := map[string]*benchStats{}
	for _, v := range variants {
		stats[v.name] = &benchStats{}
	}
	measure := func(v benchVariant, css []*mcp.ClientSession, n int, lat *[]time.Duration) (time.Duration, int) {
		k := 0
		if len(css) == 1 {
			k = 1
		}
		nx0, dn0, cl0 := procCPU(t, v.pid), procCPU(t, down.Process.Pid), selfCPU()
		start := time.Now()
		if err := callRun(css, n, lat); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		elapsed := time.Since(start)
		total := float64(n * len(css))
		s := stats[v.name]
		if v.pid != 0 {
			s.nexusCPU[k] = append(s.nexusCPU[k], float64((procCPU(t, v.pid)-nx0).Microseconds())/total)
		}
		s.downCPU[k] = append(s.downCPU[k], float64((procCPU(t, down.Process.Pid)-dn0).Microseconds())/total)
		s.clientCPU[k] = append(s.clientCPU[k], float64((selfCPU()-cl0).Microseconds())/total)
		return elapsed, int(total)
	}
	for r := range rounds {
		order := append(slices.Clone(variants[r%len(variants):]), variants[:r%len(variants)]...)
		for _, v := range order {
			css := sessions[v.name]
			elapsed, total := measure(v, css, calls, nil)
			stats[v.name].rates = append(stats[v.name].rates, float64(total)/elapsed.Seconds())
			measure(v, css[:1], calls, &stats[v.name].lat)
		}
		t.Logf("round %d of %d done (order %v), load average %s", r+1, rounds, names(order), loadAvg())
	}

	var b strings.Builder
	direct := stats["direct"]
	dP50 := pct(direct.lat, 50)
	fmt.Fprintf(&b, "%d rounds, %d calls per client per run, protocol %s (echo server %s); load average before %s, after %s\n", rounds, calls, protocol, strings.Join(downArgs[2:], " "), load0, loadAvg())
	// The ratio to direct is taken in each round (the variants of a round
	// ran within a minute of each other), then its median.
	ratio := func(s *benchStats) float64 {
		var rs []float64
		for r := range s.rates {
			rs = append(rs, s.rates[r]/direct.rates[r])
		}
		return median(rs)
	}
	fmt.Fprintf(&b, "%-24s %10s %6s %9s %9s %9s %14s %14s %14s\n", "variant", "calls/s(8)", "x", "p50(1)µs", "p99(1)µs", "+p50 µs",
		"nexus µs/call", "down µs/call", "client µs/call")
	cpu := func(runs [2][]float64) string {
		if len(runs[0]) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f / %.0f", median(runs[0]), median(runs[1]))
	}
	for _, v := range variants {
		s := stats[v.name]
		rate, p50 := median(s.rates), pct(s.lat, 50)
		fmt.Fprintf(&b, "%-24s %10.0f %6.2f %9d %9d %9d %14s %14s %14s\n", v.name, rate, ratio(s),
			p50.Microseconds(), pct(s.lat, 99).Microseconds(), (p50 - dP50).Microseconds(), cpu(s.nexusCPU), cpu(s.downCPU), cpu(s.clientCPU))
	}
	for _, v := range variants {
		fmt.Fprintf(&b, "%s calls/s by round: %s\n", v.name, fmtFloats(stats[v.name].rates))
	}
	for _, v := range variants {
		fmt.Fprintf(&b, "%s negotiated %s\n", v.name, negotiated[v.name])
	}
	t.Logf("cross-process proxy benchmark (calls/s: median of rounds; x: median of the rounds' ratios to direct; CPU µs per call: median of the runs with 8 clients / with 1):\n%s", b.String())
}

// callRun makes n echo calls on each session, concurrently, checking each
// answer; with lat, it records each call's latency there (one session).
func callRun(css []*mcp.ClientSession, n int, lat *[]time.Duration) error {
	errs := make(chan error, len(css))
	var wg sync.WaitGroup
	for i, cs := range css {
		wg.Go(func() {
			ctx := context.Background()
			tool := toolOf(cs)
			for k := range n {
				want := strconv.Itoa(i*n + k)
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": want}})
				if lat != nil {
					*lat = append(*lat, time.Since(t0))
				}
				if err != nil {
					errs <- fmt.Errorf("call %s: %w", tool, err)
					return
				}
				if tc, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || tc.Text != want {
					errs <- fmt.Errorf("call %s: got %+v, want %q", tool, res.Content, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// benchTools maps a session to the tool name of its variant.
var benchTools sync.Map

func toolOf(cs *mcp.ClientSession) string {
	if v, ok := benchTools.Load(cs); ok {
		return v.(string)
	}
	return "echo"
}

// startProcess starts bin with args until the test ends.
func startProcess(t testing.TB, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

func waitListening(t testing.TB, addr string) {
	t.Helper()
	testtools.EventuallyErr(t, 20*time.Second, "a server to listen on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// procCPU is the user and system CPU time of process pid so far (0 for
// pid 0).
func procCPU(t *testing.T, pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU time of process %d: %v", pid, err)
	}
	// The fields after the command name (which is in parentheses and may
	// hold spaces): state is field 3, utime 14 and stime 15.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times
// (100 on Linux for every architecture Go supports).
const clockTicks = 100

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func benchEnvInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

func names(vs []benchVariant) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.name)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

func pct(lat []time.Duration, p int) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(lat))
	return testtools.Percentile(s, p)
}

func fmtFloats(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%.0f", x))
	}
	return strings.Join(parts, " ")
}
