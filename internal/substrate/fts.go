package substrate

import (
	"context"
	"fmt"
	"strings"

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

// add widens p to hold o's range too.
func (p *ftsPending) add(o ftsPending) {
	if o.first == 0 {
		return
	}
	if p.first == 0 || o.first < p.first {
		p.first = o.first
	}
	p.last = max(p.last, o.last)
}

// note records a belief inserted with sequence number seq, for
// indexPending.
func (p *ftsPending) note(seq int64) {
	if p.first == 0 || seq < p.first {
		p.first = seq
	}
	p.last = max(p.last, seq)
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

// txWrites is what one write transaction shares across the beliefs it
// inserts, or defers to its end: the full-text index's pending range
// (SQLite), the entities it resolved, and the entity links, inserted
// together ([Server.flushWrites]). A bulk load's items name the same few
// entities thousands of times and link two or three each: looked up and
// linked item by item, they were a round trip each on PostgreSQL.
type txWrites struct {
	fts ftsPending
	// entities are the entities upserted in this transaction, by name key.
	entities map[string]*Entity
	links    []linkRow
}

// linkRow is one belief_entities row to insert.
type linkRow struct{ belief, entity, role string }

func newTxWrites() *txWrites { return &txWrites{entities: map[string]*Entity{}} }

// linkChunk bounds the rows of one multi-row insert of links (three
// parameters each: well under SQLite's and PostgreSQL's limits).
const linkChunk = 300

// flushWrites inserts w's links, then indexes its pending beliefs; it must
// be the transaction's last write (see indexPending).
func (s *Server) flushWrites(ctx context.Context, q querier, w *txWrites) error {
	for len(w.links) > 0 {
		chunk := w.links[:min(len(w.links), linkChunk)]
		w.links = w.links[len(chunk):]
		args := make([]any, 0, 3*len(chunk))
		for _, l := range chunk {
			args = append(args, l.belief, l.entity, l.role)
		}
		if _, err := q.ExecContext(ctx, s.st.Q(`INSERT INTO belief_entities (belief_id, entity_id, role) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?),", len(chunk)), ",")), args...); err != nil {
			return fmt.Errorf("link entities: %w", err)
		}
	}
	return s.indexPending(ctx, q, &w.fts)
}
