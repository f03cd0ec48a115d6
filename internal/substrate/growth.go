package substrate

// Statistics during bulk loads: the term statistics of the full-text search
// and PostgreSQL's planner statistics, refreshed as the store grows.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/store"
)

// analyzeGrown has PostgreSQL refresh its planner statistics of the belief
// tables when they have doubled since this server last did (from at least
// 1,000 beliefs). Autovacuum would, but it may be off or behind a bulk load
// (it was off on the development machine), and with statistics taken when
// the table was empty the planner reads every active belief of the
// workspace for each tension search (51 ms at 31,000 beliefs). A failure is
// logged: the beliefs are stored.
func (s *Server) analyzeGrown(ctx context.Context, size int) {
	last := s.analyzed.Load()
	if s.st.Dialect() != store.Postgres || size < 1000 || int64(size) < 2*last || !s.analyzed.CompareAndSwap(last, int64(size)) {
		return
	}
	if _, err := s.st.DB().ExecContext(ctx, `ANALYZE beliefs, belief_entities, entities`); err != nil {
		s.log.Warn("analyze belief tables", "err", err)
	}
}

// observeSize tells the term statistics how large the store is now, so
// that those read when it was much smaller are read again (a bulk load),
// and returns that size. On SQLite the mark is that size; PostgreSQL's
// costs a query, asked only for a batch (a single create returns 0).
func (s *Server) observeSize(ctx context.Context, mark string, batch bool) (int, error) {
	if s.st.Dialect() == store.SQLite {
		n, err := strconv.Atoi(mark)
		if err != nil {
			return 0, fmt.Errorf("belief mark %q: %w", mark, err)
		}
		s.stats.Observe(n)
		return n, nil
	}
	if !batch {
		return 0, nil
	}
	var n int
	if err := s.st.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM beliefs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("corpus size: %w", err)
	}
	s.stats.Observe(n)
	return n, nil
}
