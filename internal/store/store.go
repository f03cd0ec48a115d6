// Package store is Nexus's database: embedded SQLite by default, PostgreSQL
// for scale-out. Both run the same schema (embedded migrations, one dialect
// each) and the same test suite.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names a database engine.
type Dialect string

// Supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// FileName is the SQLite database file inside the data directory.
const FileName = "nexus.db"

//go:embed migrations
var migrations embed.FS

// Store is an open database with its schema migrated.
type Store struct {
	db      *sql.DB
	dialect Dialect
	// Created reports whether this Open created the schema from nothing.
	Created bool
	// writer queues SQLite's write transactions in process (a token of
	// capacity one): SQLite runs one writer at a time, and its busy handler
	// retries unfairly, so under enough concurrency a writer could wait past
	// busy_timeout and fail with SQLITE_BUSY. Queued here, writers take
	// turns in arrival order and wait as long as their context allows. Nil
	// for PostgreSQL, whose row locks need no queue.
	writer chan struct{}
	// prepared caches the statements of hot read paths (Prepared).
	prepared *Prepared
}

// Options say which database to open.
type Options struct {
	// URL is a postgres:// (or postgresql://) URL, a sqlite: path, or empty
	// for the SQLite file in DataDir.
	URL string
	// DataDir holds the SQLite file when URL is empty; it is created if needed.
	DataDir string
	// Logger receives migration messages; nil discards them.
	Logger *slog.Logger
}

// Open opens the database named by opts and applies pending migrations.
func Open(ctx context.Context, opts Options) (*Store, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var s *Store
	var sqlitePath string // the SQLite file, for the error that cannot open it
	switch u := opts.URL; {
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		db, err := sql.Open("pgx", u)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(32)
		db.SetConnMaxIdleTime(5 * time.Minute)
		s = &Store{db: db, dialect: Postgres}
	default:
		path := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite://"), "sqlite:")
		if path == "" {
			if opts.DataDir == "" {
				return nil, errors.New("store: neither a database URL nor a data directory was given")
			}
			if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create data directory: %w", err)
			}
			path = filepath.Join(opts.DataDir, FileName)
		}
		if err := private(path); err != nil {
			if problem := sqlitePathProblem(path); problem != "" {
				return nil, fmt.Errorf("store: open the SQLite database %s: %s: %w", path, problem, err)
			}
			return nil, fmt.Errorf("store: open the SQLite database %s: %w", path, err)
		}
		dsn := "file:" + path + "?_txlock=immediate" +
			"&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
			"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" +
			"&_pragma=mmap_size(1073741824)&_pragma=cache_size(-16000)"
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		s = &Store{db: db, dialect: SQLite, writer: make(chan struct{}, 1)}
		sqlitePath = path
	}
	s.prepared = newPrepared(s.db, s.dialect == Postgres)
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		if s.dialect == SQLite {
			if problem := sqlitePathProblem(sqlitePath); problem != "" {
				return nil, fmt.Errorf("store: open the SQLite database %s: %s: %w", sqlitePath, problem, err)
			}
			return nil, fmt.Errorf("store: open the SQLite database %s: %w", sqlitePath, err)
		}
		return nil, fmt.Errorf("store: connect %s: %w", s.dialect, err)
	}
	if err := s.migrate(ctx, log); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// private makes the SQLite database at path, and its WAL and SHM files
// when they exist, readable and writable by this user alone (0600): they
// hold conversations and token hashes. A new database file is created 0600
// (SQLite then creates its WAL and SHM files with the database file's
// mode); an existing one readable by others is tightened. The directory is
// left as it is: a new data directory is created 0700, but a directory
// that exists, or that holds a database path given in the URL, is the
// user's to choose.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case fi.Mode().Perm()&0o077 == 0 || runtime.GOOS == "windows":
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("make %s private: %w", filepath.Base(p), err)
		}
	}
	return nil
}

// DB returns the underlying pool.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the engine in use.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close closes the pool.
func (s *Store) Close() error {
	s.prepared.close()
	return s.db.Close()
}

// PlanEach returns a query's arguments marked so that PostgreSQL plans the
// query for these values each time it runs. By default pgx runs a query as
// a named prepared statement, and after five runs PostgreSQL may switch to
// a generic plan made without the values: for a full-text search that plan
// cannot tell a rare term from a common one (it scanned every active belief
// of the workspace for a term in three of them: 10 ms at 11,000 beliefs,
// growing with the store). Other dialects get args unchanged.
func (s *Store) PlanEach(args []any) []any {
	if s.dialect != Postgres {
		return args
	}
	// An unnamed statement, its description cached: planned with the values.
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}

// Q rewrites a query written with "?" placeholders for the store's dialect
// (PostgreSQL wants $1, $2, ...). Queries must not contain literal '?'.
func (s *Store) Q(query string) string {
	if s.dialect != Postgres {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Tx runs fn in a transaction, committing when fn returns nil and rolling
// back otherwise, so a failed write leaves nothing behind.
//
// On SQLite write transactions are queued in process (see Store.writer):
// fn must not start another transaction of s, which would wait for itself.
func (s *Store) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.writer != nil {
		select {
		case s.writer <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("store: wait to write: %w", ctx.Err())
		}
		defer func() { <-s.writer }()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// Write runs fn, which makes one write outside a transaction (a single
// statement, autocommitted), in the turn [Store.Tx] takes on SQLite: the
// writers of this process queue in arrival order (see Store.writer) instead
// of retrying on SQLite's busy handler, whose sleeps put milliseconds on the
// tail of a busy write path. On PostgreSQL fn just runs. fn must not start
// a transaction of s, which would wait for itself.
func (s *Store) Write(ctx context.Context, fn func(ctx context.Context) error) error {
	if s.writer != nil {
		select {
		case s.writer <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("store: wait to write: %w", ctx.Err())
		}
		defer func() { <-s.writer }()
	}
	return fn(ctx)
}

// migrate applies the embedded migrations of the dialect that are not yet
// recorded in schema_migrations, each in its own transaction. Replicas
// starting together on one PostgreSQL database take turns: everything,
// from creating schema_migrations on, runs under one lock (see
// [Store.Exclusive]), so exactly one of them creates the schema.
func (s *Store) migrate(ctx context.Context, log *slog.Logger) error {
	return s.Exclusive(ctx, "migrations", func(ctx context.Context) error { return s.migrateLocked(ctx, log) })
}

func (s *Store) migrateLocked(ctx context.Context, log *slog.Logger) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("store: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("store: read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	s.Created = len(applied) == 0

	dir := "migrations/" + string(s.dialect)
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", name)
		}
		if applied[v] {
			continue
		}
		body, err := migrations.ReadFile(dir + "/" + name)
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
		err = s.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, s.Q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
				v, name, time.Now().UTC().Format(time.RFC3339))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
		log.Info("applied migration", "dialect", s.dialect, "migration", name)
	}
	return nil
}

// Micros converts t to the stored representation (Unix microseconds, UTC).
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Now is the current time in UTC at the precision the stores keep
// (microseconds), so that an object returned when it is created carries the
// same timestamps as when it is read back.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// FromMicros converts a stored timestamp to time.Time in UTC.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Secret returns the installation's random secret of the given name (32
// bytes, hex in the settings table), creating it on first use. Every
// replica sharing the database sees the same value.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	if _, err := s.db.ExecContext(ctx, s.Q(`INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`),
		name, hex.EncodeToString(b[:])); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, s.Q(`SELECT value FROM settings WHERE name = ?`), name).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("store: secret %s is corrupt: %w", name, err)
	}
	return key, nil
}
