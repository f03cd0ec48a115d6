package substrate

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/store"
)

// SQLite's full-text index (FTS5) keeps the terms of the rows a transaction
// writes in memory and flushes them as a new segment of the index whenever a
// statement of the transaction opens a statement savepoint, which almost
// every insert does. Indexed row by row, a batch of 1,000 beliefs made about
// a dozen segments, and every search seeks each of its terms in every
// segment (two thirds of a bulk load's CPU went there). A batch therefore
// indexes its beliefs in one statement at the end of its transaction: one
// segment per batch. PostgreSQL's index (the tsv column) needs none of this.

// ftsPending is the range of belief sequence numbers a transaction inserted
// and has not yet indexed.
type ftsPending struct {
	first, last int64
}

// indexBelief notes the belief just inserted (res) in pending, for
// [Server.indexPending] to index, and returns its sequence number (SQLite;
// 0 on PostgreSQL, which indexes in the row).
func (s *Server) indexBelief(res sql.Result, pending *ftsPending) (int64, error) {
	if s.st.Dialect() != store.SQLite {
		return 0, nil
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("index belief: %w", err)
	}
	if pending.first == 0 || seq < pending.first {
		pending.first = seq
	}
	pending.last = max(pending.last, seq)
	return seq, nil
}

// indexPending indexes the beliefs in pending; it must be the transaction's
// last statement. SQLite has one writer, so the range holds only the
// transaction's own beliefs (and gaps where an item was rolled back).
func (s *Server) indexPending(ctx context.Context, q querier, pending *ftsPending) error {
	if pending.first == 0 {
		return nil
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO beliefs_fts(rowid, content)
		SELECT seq, content FROM beliefs WHERE seq BETWEEN ? AND ?`, pending.first, pending.last); err != nil {
		return fmt.Errorf("index beliefs: %w", err)
	}
	s.ftsIndexed.Add(pending.last - pending.first + 1)
	*pending = ftsPending{}
	return nil
}

// ftsCompactShare: the full-text index is rewritten as one segment once this
// server has indexed at least 1/ftsCompactShare of the beliefs since it last
// did (see compactIndex).
const ftsCompactShare = 8

// compactIndex rewrites SQLite's full-text index as one segment (FTS5's
// 'optimize') when this server has indexed enough beliefs since it last did;
// size is the number of beliefs in the store. FTS5 merges its segments
// itself, a few at a time, but under a bulk load it still holds about ten at
// 100,000 beliefs, and a search seeks each of its terms in every segment
// (re-preparing FTS5's own lookup statement each time): a search on one
// segment costs a third. Rewriting the index costs in proportion to its
// size, so it is done when it has grown by a share since: about
// ftsCompactShare times the cost of writing the index once over a load.
func (s *Server) compactIndex(ctx context.Context, q querier, size int64) error {
	if s.st.Dialect() != store.SQLite || s.ftsIndexed.Load()*ftsCompactShare < size {
		return nil
	}
	s.ftsIndexed.Store(0)
	if _, err := q.ExecContext(ctx, `INSERT INTO beliefs_fts(beliefs_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("compact full-text index: %w", err)
	}
	return nil
}
