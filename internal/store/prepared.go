package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// maxPrepared bounds the statements a Prepared keeps; past it, queries run
// unprepared.
const maxPrepared = 512

// Prepared runs queries on the pool through statements prepared once and
// reused (database/sql prepares each on a connection the first time it runs
// there). Parsing a query costs about as much as running a small one on
// SQLite, so hot read paths use this instead of the pool. It is safe for
// concurrent use and lives as long as the Store.
type Prepared struct {
	db *sql.DB
	// off: on PostgreSQL, pgx already keeps a prepared statement per query
	// and connection, and one prepared here would be planned generically
	// (see Store.PlanEach); queries run on the pool.
	off   bool
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// later are the queries being prepared in the background for
	// transactions (see TxPrepared); closing cancels and waits for them.
	later   map[string]bool
	pending sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

func newPrepared(db *sql.DB, off bool) *Prepared {
	ctx, cancel := context.WithCancel(context.Background())
	return &Prepared{db: db, off: off, stmts: map[string]*sql.Stmt{}, later: map[string]bool{}, ctx: ctx, cancel: cancel}
}

// Prepared returns the store's statement cache.
func (s *Store) Prepared() *Prepared { return s.prepared }

func (p *Prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if p.off {
		return nil, nil
	}
	p.mu.Lock()
	st, ok := p.stmts[query]
	full := len(p.stmts) >= maxPrepared
	p.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.stmts[query]; ok {
		st.Close()
		return prev, nil
	}
	p.stmts[query] = st
	return st, nil
}

// QueryContext is [sql.DB.QueryContext] through a prepared statement.
func (p *Prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.db.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is [sql.DB.QueryRowContext] through a prepared statement.
func (p *Prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil || st == nil {
		// The pool reports the same error (or runs the query unprepared).
		return p.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// ExecContext is [sql.DB.ExecContext] through a prepared statement.
func (p *Prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// cached returns query's statement if it is prepared (nil and true past
// maxPrepared or on PostgreSQL: the query runs unprepared).
func (p *Prepared) cached(query string) (*sql.Stmt, bool) {
	if p.off {
		return nil, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.stmts[query]
	return st, ok || len(p.stmts) >= maxPrepared
}

// prepareLater prepares query on the pool in the background, once at a
// time. A transaction cannot prepare on the pool itself: it holds a
// connection, and when every connection is held by a transaction waiting to
// prepare, none would be free (read transactions run side by side).
func (p *Prepared) prepareLater(query string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.later[query] || p.ctx.Err() != nil {
		return
	}
	p.later[query] = true
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		_, _ = p.stmt(p.ctx, query) // on failure the query runs unprepared, and is tried again later
		p.mu.Lock()
		delete(p.later, query)
		p.mu.Unlock()
	}()
}

func (p *Prepared) close() {
	p.cancel()
	p.pending.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.stmts {
		st.Close()
	}
	clear(p.stmts)
}

// InTx returns p's statements bound to tx: each runs in the transaction on a
// statement prepared once per connection (database/sql re-prepares a
// statement on the transaction's connection only the first time). A query
// not yet prepared runs unprepared and is prepared in the background.
func (p *Prepared) InTx(tx *sql.Tx) *TxPrepared { return &TxPrepared{p: p, tx: tx} }

// TxPrepared runs prepared statements in one transaction. It has the
// methods of [sql.Tx] that run a query, so it stands in for one.
type TxPrepared struct {
	p  *Prepared
	tx *sql.Tx
}

// stmt returns query's statement bound to t's transaction, or nil to run
// the query unprepared (a statement not yet prepared is prepared in the
// background, for the next time).
func (t *TxPrepared) stmt(ctx context.Context, query string) *sql.Stmt {
	st, ok := t.p.cached(query)
	if !ok {
		t.p.prepareLater(query)
		return nil
	}
	if st == nil {
		return nil
	}
	return t.tx.StmtContext(ctx, st)
}

// ExecContext is [sql.Tx.ExecContext] through a prepared statement.
func (t *TxPrepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	// The transaction reports the same error (or runs the query unprepared).
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryContext is [sql.Tx.QueryContext] through a prepared statement.
func (t *TxPrepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext is [sql.Tx.QueryRowContext] through a prepared statement.
func (t *TxPrepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}
