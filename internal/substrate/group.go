package substrate

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"

	"github.com/nexus-mcp/nexus/internal/store"
)

// Group commit (issue 23). SQLite has one writer, and every create ended
// in a transaction of its own: a commit each (the pages it changed written
// to the log again, however many the previous commit wrote), a new segment
// of the full-text index each (which every later search then seeks its
// terms in), and, for every other connection, a page cache dropped (a
// connection's cache is reset when the database changed: see reading).
// Creates that reach step 3 while another is writing therefore queue, and
// the next transaction writes all that queued: one commit, one segment. A
// later call in the group is judged against the earlier ones' beliefs as if
// they had committed before it (committedSince). If the group's transaction
// fails, each call is written again alone, so that one call's failure is
// its own.

// writeReq is one call's step 3, waiting in a writeGroup.
type writeReq struct {
	ctx       context.Context
	an        *memo
	workspace string
	drafts    []*draft
	mark      string

	taken bool          // in a group being written (under writeGroup.mu)
	lead  chan struct{} // closed when this call is to write the next group
	led   bool          // lead was closed (under writeGroup.mu)
	err   error
	done  chan struct{} // closed when written (err set)
}

// writeGroup queues the calls waiting to write. The call that finds no one
// writing writes the queue, itself included; when done it hands the queue
// that built up meanwhile to its oldest call.
type writeGroup struct {
	mu      sync.Mutex
	queue   []*writeReq
	writing bool
	largest int // the most calls written together so far
}

// txGroup is what the calls written in one transaction share.
type txGroup struct {
	// top is the highest sequence number committed before the
	// transaction: higher ones are the group's.
	top int64
	// earlier are the beliefs the group's earlier calls stored, oldest
	// first.
	earlier []*Belief
	fts     ftsPending
}

// write is step 3 of a create: on PostgreSQL a transaction of its own
// (creates in different scopes write in parallel there), on SQLite in the
// next group.
func (s *Server) write(ctx context.Context, an *memo, workspace string, drafts []*draft, mark string) error {
	if s.st.Dialect() != store.SQLite {
		return s.st.Tx(ctx, func(tx *sql.Tx) error {
			return s.writeDrafts(ctx, tx, an, workspace, drafts, mark, nil)
		})
	}
	r := &writeReq{ctx: ctx, an: an, workspace: workspace, drafts: drafts, mark: mark,
		lead: make(chan struct{}), done: make(chan struct{})}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if !g.writing {
		g.writing = true
		g.mu.Unlock()
		s.writeQueue()
		<-r.done
		return r.err
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-r.lead:
		s.writeQueue()
		<-r.done
		return r.err
	case <-ctx.Done():
		g.mu.Lock()
		if r.taken {
			g.mu.Unlock()
			<-r.done
			return r.err
		}
		g.queue = slices.DeleteFunc(g.queue, func(x *writeReq) bool { return x == r })
		if r.led {
			g.handOff()
		}
		g.mu.Unlock()
		return fmt.Errorf("wait to write: %w", ctx.Err())
	}
}

// handOff gives the queue to its oldest call, or ends the writing; g.mu is
// held.
func (g *writeGroup) handOff() {
	if len(g.queue) == 0 {
		g.writing = false
		return
	}
	next := g.queue[0]
	next.led = true
	close(next.lead)
}

// writeQueue writes the queued calls in one transaction, then hands off.
func (s *Server) writeQueue() {
	if s.groupWrite != nil {
		s.groupWrite()
	}
	g := &s.group
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	for _, r := range batch {
		r.taken = true
	}
	g.largest = max(g.largest, len(batch))
	g.mu.Unlock()
	s.writeBatch(batch)
	g.mu.Lock()
	g.handOff()
	g.mu.Unlock()
}

// writeBatch writes the calls of batch, together when it can, and closes
// their done channels.
func (s *Server) writeBatch(batch []*writeReq) {
	var live []*writeReq
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("wait to write: %w", err)
			close(r.done)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	if len(live) > 1 {
		// What writeDrafts sets on the drafts, to undo if the group fails.
		existing := make([][]string, len(live))
		for i, r := range live {
			for _, d := range r.drafts {
				existing[i] = append(existing[i], d.existing)
			}
		}
		err := s.writeTogether(context.WithoutCancel(live[0].ctx), live)
		if err == nil {
			for _, r := range live {
				close(r.done)
			}
			return
		}
		s.log.Warn("group write failed; writing its creates one by one", "creates", len(live), "err", err)
		for i, r := range live {
			for j, d := range r.drafts {
				d.existing, d.stored, d.tensions = existing[i][j], nil, nil
			}
		}
	}
	for _, r := range live {
		r.err = s.writeTogether(r.ctx, []*writeReq{r})
		close(r.done)
	}
}

// writeTogether writes the calls of reqs in one transaction. If it fails,
// what the caches learnt from the transaction is dropped: the sequence
// numbers it used will be used again.
func (s *Server) writeTogether(ctx context.Context, reqs []*writeReq) error {
	var top int64
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		g := &txGroup{}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM beliefs`).Scan(&g.top); err != nil {
			return fmt.Errorf("belief mark: %w", err)
		}
		top = g.top
		ptx := s.st.Prepared().InTx(tx)
		for _, r := range reqs {
			if err := s.writeDrafts(ctx, tx, r.an, r.workspace, r.drafts, r.mark, g); err != nil {
				return err
			}
		}
		// Last, so that no later statement flushes part of it (see
		// ftsPending).
		last := g.fts.last
		if err := s.indexPending(ctx, ptx, &g.fts); err != nil {
			return err
		}
		return s.compactIndex(ctx, ptx, last)
	})
	if err != nil {
		s.cache.forgetAfter(top)
		s.scopes.forgetAfter(top)
	}
	return err
}
