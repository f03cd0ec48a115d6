package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate/substratetest"
)

// BenchmarkImportBeliefs runs `nexus import beliefs` (the built binary, its
// own process) on a JSON Lines file of NEXUS_BENCH_BELIEFS (default
// 100,000) beliefs made from the shared data, into an empty store, with
// tension detection; one import per iteration. It reports the wall time,
// the import's CPU time (user and system; not the database server's, whose
// backends end with the import), beliefs a second and the
// tensions found. NEXUS_BENCH_BINARY runs another nexus binary (an older
// build, to compare). See docs/benchmarks.md.
func BenchmarkImportBeliefs(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_BELIEFS")); err == nil && v > 0 {
		n = v
	}
	file := filepath.Join(b.TempDir(), "beliefs.jsonl")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i, it := range substratetest.Corpus(b, substratetest.SharedData("../.."), n) {
		it.ExternalID = fmt.Sprintf("corpus-%d", i)
		line, _ := json.Marshal(it)
		w.Write(append(line, '\n'))
	}
	w.Flush()
	f.Close()
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				args := []string{"import", "beliefs", file, "--data-dir", b.TempDir()}
				if db == "postgres" {
					if os.Getenv(storetest.TestPostgresEnv) == "" {
						b.Skip("NEXUS_TEST_POSTGRES_URL not set")
					}
					args = append(args, "--db", storetest.PostgresURL(b))
				}
				b.StartTimer()
				start := time.Now()
				cmd := exec.Command(cmp.Or(os.Getenv("NEXUS_BENCH_BINARY"), binary), args...)
				out, err := cmd.Output()
				took := time.Since(start)
				if err != nil {
					b.Fatalf("import: %v\n%s", err, out)
				}
				m := regexp.MustCompile(`beliefs: ([\d,]+) created`).FindSubmatch(out)
				t := regexp.MustCompile(`tensions found: ([\d,]+)`).FindSubmatch(out)
				if m == nil || t == nil {
					b.Fatalf("no summary:\n%s", out)
				}
				created, _ := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
				tensions, _ := strconv.Atoi(strings.ReplaceAll(string(t[1]), ",", ""))
				if created != n {
					b.Fatalf("created %d of %d:\n%s", created, n, out)
				}
				b.ReportMetric(took.Seconds(), "s/import")
				b.ReportMetric(float64(n)/took.Seconds(), "beliefs/s")
				b.ReportMetric((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), "cpu-s/import")
				b.ReportMetric(float64(tensions), "tensions")
			}
		})
	}
}
