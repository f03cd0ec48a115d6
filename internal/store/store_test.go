package store_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

func TestMigrationsAreIdempotent(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s1, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !s1.Created {
		t.Error("first open must report the schema as created")
	}
	s1.Close()
	s2, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Created {
		t.Error("second open re-created the schema")
	}
	var n int
	s2.DB().QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	if n == 0 {
		t.Fatal("no migrations recorded")
	}
}

func TestTxRollsBackOnError(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := s.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, s.Q(`INSERT INTO conversations (id, workspace, platform, metadata, status, themes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
				"c1", "default", "api", "{}", "active", "[]", 1, 1); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx returned %v", err)
		}
		var n int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM conversations`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("rolled-back insert is visible: %d %v", n, err)
		}
	})
}

func TestQRebindsForPostgres(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		q := s.Q(`SELECT ? + ?`)
		want := `SELECT ? + ?`
		if s.Dialect() == store.Postgres {
			want = `SELECT $1 + $2`
		}
		if q != want {
			t.Fatalf("Q = %q, want %q", q, want)
		}
		var n int
		if err := s.DB().QueryRow(s.Q(`SELECT CAST(? AS INTEGER) + CAST(? AS INTEGER)`), 2, 3).Scan(&n); err != nil || n != 5 {
			t.Fatalf("rebound query: %d %v", n, err)
		}
	})
}

func TestOpenErrorsNameTheProblem(t *testing.T) {
	ctx := context.Background()
	if _, err := store.Open(ctx, store.Options{}); err == nil {
		t.Error("open without URL or data dir succeeded")
	}
	if _, err := store.Open(ctx, store.Options{URL: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"}); err == nil {
		t.Error("open of an unreachable PostgreSQL succeeded")
	}
}

func TestSecretIsStable(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, err := s.Secret(ctx, "cursor")
		if err != nil || len(a) != 32 {
			t.Fatalf("secret: %x %v", a, err)
		}
		b, _ := s.Secret(ctx, "cursor")
		c, _ := s.Secret(ctx, "other")
		if string(a) != string(b) || string(a) == string(c) {
			t.Fatal("secrets must be stable per name and differ between names")
		}
	})
}

// TestConcurrentWriters: 32 writers at once, each transaction holding the
// write lock 40 ms, on both stores: every write lands, none sees "database is
// locked". On SQLite the writes take 13 s in all, longer than the busy
// timeout (10 s): SQLite's own busy handler, which retries unfairly, left
// some writer waiting past it (SQLITE_BUSY) before writers were queued in
// process.
func TestConcurrentWriters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.DB().ExecContext(ctx, `CREATE TABLE writers_test (id INTEGER PRIMARY KEY, w INTEGER NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var failed atomic.Int32
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					err := st.Tx(ctx, func(tx *sql.Tx) error {
						time.Sleep(40 * time.Millisecond) // work inside the transaction (not synchronisation)
						_, err := tx.ExecContext(ctx, st.Q(`INSERT INTO writers_test (id, w) VALUES (?, ?)`), w*1000+i, w)
						return err
					})
					if err != nil {
						failed.Add(1)
						t.Errorf("writer %d: %v", w, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		var n int
		st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM writers_test`).Scan(&n)
		if failed.Load() > 0 || n != 32*10 {
			t.Fatalf("%d writes landed of %d, %d writers failed", n, 32*10, failed.Load())
		}
	})
}
