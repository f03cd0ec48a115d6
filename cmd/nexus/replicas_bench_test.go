package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestReplicaScaling measures throughput with 1, 2 and 3 replicas on one
// PostgreSQL database behind the round-robin balancer, on a read-heavy mix
// (9 belief_query to 1 belief_create) and a write-heavy one (belief_create
// only), over the flat surface: calls/s, the replicas' CPU per call and how
// busy the machine's CPUs were. It is a benchmark, run by hand
// (docs/benchmarks.md):
//
//	NEXUS_BENCH_REPLICAS=1 NEXUS_BENCH_SECONDS=15 NEXUS_BENCH_CLIENTS=16 \
//	  go test ./cmd/nexus -run TestReplicaScaling -v -count 1 -timeout 30m
func TestReplicaScaling(t *testing.T) {
	if os.Getenv("NEXUS_BENCH_REPLICAS") == "" {
		t.Skip("a benchmark: set NEXUS_BENCH_REPLICAS=1 to run it")
	}
	seconds, clients := 15, 16
	if n, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_SECONDS")); err == nil && n > 0 {
		seconds = n
	}
	if n, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	for _, mix := range []string{"read-heavy", "write-heavy"} {
		for n := 1; n <= 3; n++ {
			t.Run(fmt.Sprintf("%s/%d", mix, n), func(t *testing.T) {
				reps, _ := startReplicas(t, n)
				front, _ := roundRobin(t, bases(reps))
				sessions := make([]*mcp.ClientSession, clients)
				for i := range sessions {
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "scale", Version: "1"}, nil).Connect(context.Background(),
						&mcp.StreamableClientTransport{Endpoint: front + "/mcp"}, testtools.WithSession())
					if err != nil {
						t.Fatal(err)
					}
					defer cs.Close()
					sessions[i] = cs
				}
				cpu0 := replicasCPU(t, reps)
				busy0, total0 := machineCPU(t)
				var ok, failed atomic.Int64
				var wg sync.WaitGroup
				deadline := time.Now().Add(time.Duration(seconds) * time.Second)
				start := time.Now()
				for i, cs := range sessions {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := 0; time.Now().Before(deadline); k++ {
							name, args := "belief_query", map[string]any{"query": "transfer credit"}
							if mix == "write-heavy" || k%10 == 9 {
								name, args = "belief_create", map[string]any{"content": fmt.Sprintf("Client %d notes that course %d transfers with credit", i, k)}
							}
							res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
							if err != nil || res.IsError {
								failed.Add(1)
								continue
							}
							ok.Add(1)
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				cpu := replicasCPU(t, reps) - cpu0
				busy1, total1 := machineCPU(t)
				n := ok.Load()
				t.Logf("%s, %d replica(s), %d clients, %v: %d calls (%.0f/s), %d failed; replicas' CPU %.0f µs per call; machine CPUs %.0f%% busy",
					mix, len(reps), clients, elapsed.Round(time.Millisecond), n, float64(n)/elapsed.Seconds(), failed.Load(),
					float64(cpu.Microseconds())/float64(max(n, 1)), 100*float64(busy1-busy0)/float64(max(total1-total0, 1)))
			})
		}
	}
}

// replicasCPU is the CPU time the replicas' processes used so far.
func replicasCPU(t *testing.T, reps []*replica) time.Duration {
	var d time.Duration
	for _, r := range reps {
		r.mu.Lock()
		d += procCPU(t, r.cmd.Process.Pid)
		r.mu.Unlock()
	}
	return d
}

// machineCPU is the busy and total time of every CPU so far, in ticks
// (/proc/stat).
func machineCPU(t *testing.T) (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
