// Package storetest opens real test databases: SQLite in a temporary directory
// and PostgreSQL in a throwaway schema.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// TestPostgresEnv names the environment variable through which tests find
// PostgreSQL. When it is set, PostgreSQL tests must reach the database or fail.
const TestPostgresEnv = "NEXUS_TEST_POSTGRES_URL"

// ForEachDialect runs fn as a subtest against a fresh SQLite database and,
// when NEXUS_TEST_POSTGRES_URL is set, against a fresh PostgreSQL schema that
// is dropped afterwards. Without the variable the PostgreSQL subtest is
// skipped with a message saying so; CI always sets it.
func ForEachDialect(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, OpenTestSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, OpenTestPostgres(t))
	})
}

// OpenTestSQLite opens a migrated SQLite store in a temporary directory.
func OpenTestSQLite(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), store.Options{DataDir: tb.TempDir()})
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// OpenTestPostgres opens a migrated store in a new schema of the database at
// NEXUS_TEST_POSTGRES_URL and drops the schema when the test ends.
func OpenTestPostgres(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), store.Options{URL: PostgresURL(tb)})
	if err != nil {
		tb.Fatalf("open postgres schema: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL creates an empty schema in the database at
// NEXUS_TEST_POSTGRES_URL, returns a URL whose search_path selects it, and
// drops the schema when the test ends. Without the variable the test is
// skipped, or fails when CI is set.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(TestPostgresEnv)
	if base == "" && os.Getenv("CI") != "" {
		tb.Fatalf("%s is not set; in CI the PostgreSQL tests must run (scripts/test sets it)", TestPostgresEnv)
	}
	if base == "" {
		tb.Skipf("%s is not set; PostgreSQL tests skipped (CI sets it)", TestPostgresEnv)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "nexus_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("connect postgres at %s: %v", TestPostgresEnv, err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		tb.Fatalf("create schema in the database at %s: %v", TestPostgresEnv, err)
	}
	tb.Cleanup(func() {
		admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	return schemaURL(tb, base, schema)
}

// schemaURL is base with a search_path selecting schema.
func schemaURL(tb testing.TB, base, schema string) string {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse %s: %v", TestPostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// OpenBench opens the benchmark database called name, which is kept between
// runs so that a large data set is loaded once: SQLite in
// $NEXUS_BENCH_DIR/name (default under the temporary directory), or
// PostgreSQL schema nexus_bench_<name> at NEXUS_TEST_POSTGRES_URL (the
// benchmark is skipped without it).
func OpenBench(b *testing.B, d store.Dialect, name string) *store.Store {
	b.Helper()
	ctx := context.Background()
	opts := store.Options{}
	switch d {
	case store.Postgres:
		base := os.Getenv(TestPostgresEnv)
		if base == "" {
			b.Skipf("%s not set", TestPostgresEnv)
		}
		schema := "nexus_bench_" + strings.NewReplacer("-", "_").Replace(name)
		admin, err := sql.Open("pgx", base)
		if err != nil {
			b.Fatal(err)
		}
		_, err = admin.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema)
		admin.Close()
		if err != nil {
			b.Fatalf("create schema %s: %v", schema, err)
		}
		opts.URL = schemaURL(b, base, schema)
	default:
		dir := os.Getenv("NEXUS_BENCH_DIR")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "nexus-bench")
		}
		opts.DataDir = filepath.Join(dir, name)
	}
	st, err := store.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// ReportLatencies reports the median and 99th percentile of ds in
// milliseconds (metrics p50-ms and p99-ms).
func ReportLatencies(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}
