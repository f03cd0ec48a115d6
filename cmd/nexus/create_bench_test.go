package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate/substratetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// BenchmarkCreateOverMCP: NEXUS_BENCH_SESSIONS (default 8) MCP sessions
// (the SDK's client over Streamable HTTP, in this process) call
// belief_create on `nexus serve` (its own process) for NEXUS_BENCH_SECONDS
// (default 30) into the substrate benchmark's store of 100,000 beliefs made
// from the shared data (`go test ./internal/substrate -bench BeliefQuery`
// builds it: $NEXUS_BENCH_DIR/beliefs-100000 for SQLite, a copy of which is
// used; schema nexus_bench_beliefs_100000 for PostgreSQL, from which the
// beliefs created are deleted afterwards). New beliefs restate corpus
// records with a changed detail, so tension detection has real candidates.
// It reports creates/s, p50/p99, the server's CPU per create (and, on
// PostgreSQL, the local database server's) and the calls that failed
// (there must be none). NEXUS_BENCH_BINARY runs another nexus
// binary (an older build, to compare).
func BenchmarkCreateOverMCP(b *testing.B) {
	sessions, seconds := envInt("NEXUS_BENCH_SESSIONS", 8), envInt("NEXUS_BENCH_SECONDS", 30)
	src := substratetest.Corpus(b, substratetest.SharedData("../.."), 50_000)
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			var dbArg string
			switch db {
			case "sqlite":
				dir := os.Getenv("NEXUS_BENCH_DIR")
				if dir == "" {
					dir = filepath.Join(os.TempDir(), "nexus-bench")
				}
				orig := filepath.Join(dir, "beliefs-100000", "nexus.db")
				if _, err := os.Stat(orig); err != nil {
					b.Fatalf("no benchmark store at %s: run go test ./internal/substrate -run '^$' -bench BeliefQuery/sqlite -benchtime 1x first", orig)
				}
				// A checkpointed copy, so the original stays as it was.
				src, err := sql.Open("sqlite", orig)
				if err != nil {
					b.Fatal(err)
				}
				src.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
				src.Close()
				dbArg = filepath.Join(b.TempDir(), "nexus.db")
				copyFile(b, orig, dbArg)
			case "postgres":
				base := os.Getenv(storetest.TestPostgresEnv)
				if base == "" {
					b.Skip("NEXUS_TEST_POSTGRES_URL not set")
				}
				sep := "?"
				if strings.Contains(base, "?") {
					sep = "&"
				}
				dbArg = base + sep + "search_path=nexus_bench_beliefs_100000"
			}
			srv := startBenchServe(b, dbArg)
			base := srv.base
			cpu0 := processCPU(b, srv.cmd.Process.Pid)
			pg0 := postgresCPU()
			start := time.Now()
			if db == "postgres" {
				b.Cleanup(func() { deleteCreatedSince(b, dbArg, start) })
			}
			ctx := context.Background()
			var (
				mu      sync.Mutex
				lat     []time.Duration
				failed  atomic.Int64
				calls   atomic.Int64
				wg      sync.WaitGroup
				firstEr atomic.Value
			)
			b.ResetTimer()
			deadline := time.Now().Add(time.Duration(seconds) * time.Second)
			for s := range sessions {
				client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, testtools.WithSession())
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(s), 7))
					var mine []time.Duration
					for time.Now().Before(deadline) {
						in := src[rng.IntN(len(src))]
						args := map[string]any{"content": strings.Replace(in.Content, "3", "4", 1), "domain_path": in.DomainPath,
							"source_type": in.SourceType, "entities": in.Entities}
						t0 := time.Now()
						res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "belief_create", Arguments: args})
						mine = append(mine, time.Since(t0))
						calls.Add(1)
						if err != nil || res.IsError {
							failed.Add(1)
							if err == nil {
								err = fmt.Errorf("%v", res.Content)
							}
							firstEr.CompareAndSwap(nil, err.Error())
						}
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			took := time.Since(deadline.Add(-time.Duration(seconds) * time.Second))
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(calls.Load())/took.Seconds(), "creates/s")
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
			b.ReportMetric(float64(failed.Load()), "errors")
			b.ReportMetric(float64((processCPU(b, srv.cmd.Process.Pid)-cpu0).Microseconds())/float64(calls.Load()), "server-cpu-µs/create")
			if db == "postgres" {
				b.ReportMetric(float64((postgresCPU()-pg0).Microseconds())/float64(calls.Load()), "postgres-cpu-µs/create")
			}
			if failed.Load() > 0 {
				b.Errorf("%d of %d calls failed; first: %v", failed.Load(), calls.Load(), firstEr.Load())
			}
		})
	}
}

// startBenchServe starts "nexus serve" (NEXUS_BENCH_BINARY, or the binary
// under test) on the store db, without demo data, stopped when b ends, and
// returns it once healthy.
func startBenchServe(b *testing.B, db string) *serveProcess {
	b.Helper()
	addr := testtools.FreeAddr(b)
	srv := &serveProcess{
		cmd:    exec.Command(cmp.Or(os.Getenv("NEXUS_BENCH_BINARY"), binary), "serve", "--addr", addr, "--data-dir", b.TempDir(), "--db", db, "--no-demo"),
		base:   "http://" + addr,
		stderr: &lockedBuffer{},
	}
	srv.cmd.Stderr = srv.stderr
	if err := srv.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.stop() })
	testtools.EventuallyErr(b, 60*time.Second, "nexus serve to become healthy", func() error { return healthy(srv.base) })
	return srv
}

// processCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat (Linux).
func processCPU(tb testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is the 1st,
	// utime the 12th and stime the 13th; the kernel counts in 1/100 s
	// (USER_HZ on Linux).
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// postgresCPU is the CPU time used so far by the processes of this machine
// named postgres (a local database server: its backends, which the server
// under test keeps open for the run, and its background processes).
func postgresCPU() time.Duration {
	var total time.Duration
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, name := range dirs {
		raw, err := os.ReadFile(name)
		if err != nil || !strings.Contains(string(raw), "(postgres)") {
			continue
		}
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		var ut, st int64
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		total += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return total
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	in, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// deleteCreatedSince removes from the PostgreSQL benchmark store the
// beliefs (with their links, tensions and new entities) created since t.
func deleteCreatedSince(tb testing.TB, url string, t time.Time) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		tb.Error(err)
		return
	}
	defer db.Close()
	us := t.UnixMicro()
	for _, q := range []string{
		`DELETE FROM tensions WHERE created_at >= $1`,
		`DELETE FROM belief_entities WHERE belief_id IN (SELECT id FROM beliefs WHERE created_at >= $1)`,
		`DELETE FROM beliefs WHERE created_at >= $1`,
		`DELETE FROM entity_aliases WHERE entity_id IN (SELECT id FROM entities WHERE created_at >= $1)`,
		`DELETE FROM entities WHERE created_at >= $1`,
	} {
		if _, err := db.Exec(q, us); err != nil {
			tb.Errorf("clean up the benchmark store: %s: %v", q, err)
		}
	}
}
