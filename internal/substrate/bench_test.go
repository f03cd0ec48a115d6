package substrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate/substratetest"
)

// Benchmarks of belief_query and belief_create on a knowledge base built from
// the real BC course data in ../shared/data (see docs/benchmarks.md).
//
//	NEXUS_BENCH_BELIEFS   beliefs in the store (default 100000)
//	NEXUS_BENCH_DIR       where SQLite benchmark databases are kept and reused
//	NEXUS_TEST_POSTGRES_URL  enables the PostgreSQL variants
//	NEXUS_SHARED_DATA     the shared data directory (default ../../../shared/data)

func sharedData() string { return substratetest.SharedData("../..") }

// corpus returns belief inputs made from the shared data
// (substratetest.Corpus).
func corpus(tb testing.TB, n int) []CreateInput {
	items := substratetest.Corpus(tb, sharedData(), n)
	out := make([]CreateInput, len(items))
	for i, it := range items {
		in := CreateInput{Content: it.Content, DomainPath: it.DomainPath, SourceType: it.SourceType, SourceRef: it.SourceRef}
		for _, e := range it.Entities {
			in.Entities = append(in.Entities, EntityInput{Name: e.Name, Type: e.Type, Role: e.Role})
		}
		out[i] = in
	}
	return out
}

func benchSize() int {
	if v, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_BELIEFS")); err == nil && v > 0 {
		return v
	}
	return 100_000
}

// benchStore opens (and on first use fills) the benchmark store of the
// dialect holding n beliefs in workspace "default".
func benchStore(b *testing.B, dialect store.Dialect, n int) *store.Store {
	b.Helper()
	ctx := context.Background()
	st := storetest.OpenBench(b, dialect, fmt.Sprintf("beliefs-%d", n))
	var have int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM beliefs`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have >= n {
		return st
	}
	start := time.Now()
	s := New(st, nil)
	// Spread creation times over two years so that recency matters.
	base := time.Now().Add(-2 * 365 * 24 * time.Hour)
	items := corpus(b, n)[have:]
	const batch = 2000
	for i := 0; i < len(items); i += batch {
		end := min(i+batch, len(items))
		err := st.Tx(ctx, func(tx *sql.Tx) error {
			w := newTxWrites()
			for j, in := range items[i:end] {
				k := have + i + j
				s.now = func() time.Time { return base.Add(time.Duration(k) * 2 * 365 * 24 * time.Hour / time.Duration(n)) }
				if _, err := s.insertBelief(ctx, tx, pipeline.DefaultWorkspace, newBelief{
					content: in.Content, confidence: Confidence{Overall: 0.5 + 0.5*float64(k%10)/10}, domainPath: in.DomainPath,
					source: Source{Type: in.SourceType, Ref: in.SourceRef}, entities: in.Entities,
				}, w); err != nil {
					return err
				}
			}
			return s.flushWrites(ctx, tx, w)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if st.Dialect() == store.Postgres {
		st.DB().Exec(`VACUUM ANALYZE`)
	}
	b.Logf("loaded %d beliefs into %s in %v", len(items), dialect, time.Since(start).Round(time.Second))
	return st
}

func benchPipeline(b *testing.B, st *store.Store) *pipeline.Pipeline {
	reg := registry.New()
	if err := New(st, nil).Register(reg); err != nil {
		b.Fatal(err)
	}
	return pipeline.New(pipeline.Options{Registry: reg})
}

func BenchmarkBeliefQuery(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			st := benchStore(b, d, benchSize())
			p := benchPipeline(b, st)
			ctx := context.Background()
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				raw, _ := json.Marshal(map[string]any{"query": substratetest.Queries[i%len(substratetest.Queries)]})
				t0 := time.Now()
				o := p.Call(ctx, pipeline.Request{Tool: "belief_query", Args: raw})
				ds = append(ds, time.Since(t0))
				if o.Err != nil {
					b.Fatal(o.Err)
				}
			}
			b.StopTimer()
			storetest.ReportLatencies(b, ds)
		})
	}
}

func BenchmarkBeliefCreate(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			n := benchSize()
			st := benchStore(b, d, n)
			p := benchPipeline(b, st)
			ctx := context.Background()
			// New beliefs restate corpus records with changed details, so
			// tension detection has real candidates to examine.
			src := corpus(b, min(n, 50_000))
			rng := rand.New(rand.NewPCG(1, 2))
			ds := make([]time.Duration, 0, b.N)
			tensions := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				in := src[rng.IntN(len(src))]
				in.Content = strings.Replace(in.Content, "3", "4", 1)
				raw, _ := json.Marshal(in)
				t0 := time.Now()
				o := p.Call(ctx, pipeline.Request{Tool: "belief_create", Args: raw})
				ds = append(ds, time.Since(t0))
				if o.Err != nil {
					b.Fatal(o.Err)
				}
				var res struct{ Tensions []json.RawMessage }
				json.Unmarshal(o.Result, &res)
				tensions += len(res.Tensions)
			}
			b.StopTimer()
			storetest.ReportLatencies(b, ds)
			b.ReportMetric(float64(tensions)/float64(b.N), "tensions/op")
		})
	}
}

// BenchmarkCreateBatch loads NEXUS_BENCH_BATCH_BELIEFS (default 20,000)
// corpus beliefs into an empty store through CreateBatch, 1,000 a call, with
// tension detection (the path of nexus import beliefs, in process).
func BenchmarkCreateBatch(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_BATCH_BELIEFS")); err == nil && v > 0 {
		n = v
	}
	items := corpus(b, n)
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				var st *store.Store
				if d == store.Postgres {
					st = storetest.OpenTestPostgres(b)
				} else {
					st = storetest.OpenTestSQLite(b)
				}
				s := New(st, nil)
				b.StartTimer()
				start, tensions := time.Now(), 0
				for i := 0; i < len(items); i += MaxBatch {
					batch := make([]BatchInput, 0, MaxBatch)
					for _, in := range items[i:min(i+MaxBatch, len(items))] {
						batch = append(batch, BatchInput{CreateInput: in})
					}
					res, err := s.CreateBatch(context.Background(), pipeline.DefaultWorkspace, batch)
					if err != nil {
						b.Fatal(err)
					}
					tensions += res.TensionsFound
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "beliefs/s")
				b.ReportMetric(float64(tensions), "tensions")
			}
		})
	}
}

// BenchmarkBeliefCreateParallel is BenchmarkBeliefCreate from 8 goroutines
// (4 per core) through the pipeline, the writers queued on SQLite.
func BenchmarkBeliefCreateParallel(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			n := benchSize()
			st := benchStore(b, d, n)
			p := benchPipeline(b, st)
			src := corpus(b, min(n, 50_000))
			var seed atomic.Uint64
			b.SetParallelism(8 / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seed.Add(1), 2))
				for pb.Next() {
					in := src[rng.IntN(len(src))]
					in.Content = strings.Replace(in.Content, "3", "4", 1)
					raw, _ := json.Marshal(in)
					if o := p.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: raw}); o.Err != nil {
						b.Error(o.Err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
	}
}
