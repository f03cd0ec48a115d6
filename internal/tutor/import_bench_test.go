package tutor_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor"
)

// The import benchmarks (docs/benchmarks.md, "Tutor import"): each
// iteration imports into a new, empty database (opened and migrated
// outside the timer), as a first `nexus import` does.
//
//	go test ./internal/tutor -run '^$' -bench 'BenchmarkImport' -benchtime 1x
//
// PostgreSQL runs when NEXUS_TEST_POSTGRES_URL is set.

// BenchmarkImportTransfers imports the full langara/transfers.json
// (11,882 rows; target 3 s on SQLite).
func BenchmarkImportTransfers(b *testing.B) {
	impBench(b, tutor.KindTransfers, []string{"langara/transfers.json"})
}

// BenchmarkImportAll imports all the shared data with auto: the Langara
// catalogue, attributes and three term files, the SFU outlines and the
// transfer rows (20,831 rows; target 10 s on SQLite).
func BenchmarkImportAll(b *testing.B) {
	var rels []string
	for _, f := range impRealFiles {
		rels = append(rels, f.rel)
	}
	impBench(b, tutor.KindAuto, rels)
}

func impBench(b *testing.B, kind string, rels []string) {
	dir := testtools.SharedData(b)
	var files []string
	for _, r := range rels {
		files = append(files, filepath.Join(dir, r))
	}
	for _, d := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.OpenTestSQLite}, {"postgres", storetest.OpenTestPostgres}} {
		b.Run(d.name, func(b *testing.B) {
			rows := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st := d.open(b)
				tut := impTutor(st)
				b.StartTimer()
				sum, err := tut.Import(context.Background(), kind, files, nil)
				if err != nil {
					b.Fatal(err)
				}
				rows = sum.RowsRead
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(rows), "rows/op")
		})
	}
}
