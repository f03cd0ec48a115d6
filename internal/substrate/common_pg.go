package substrate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Counting the beliefs that match a common term costs PostgreSQL a visit of
// each matching row (COUNT(*) over the full-text index checks every row's
// visibility): at 100,000 beliefs, the term statistics of belief_create's
// terms were a third of the database's time, almost all of it in the common
// terms. PostgreSQL's own statistics of the tsv column (pg_stats, kept by
// ANALYZE, which analyzeGrown runs as the store grows) already hold the
// frequency of the most common lexemes; a term among them is estimated from
// that frequency and the store's size, and only the others (rare, cheap to
// count) are counted.

// commonTerms is PostgreSQL's most common lexemes of beliefs.tsv with
// their frequencies (the share of beliefs holding them), read again after
// statsTTL.
type commonTerms struct {
	mu   sync.Mutex
	at   time.Time
	freq map[string]float64
}

// commonTermFreq returns the frequency PostgreSQL's statistics give the
// lexeme of term (false when it is not among the most common).
func (s *Server) commonTermFreq(ctx context.Context, term string) (float64, bool, error) {
	c := &s.common
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freq == nil || time.Since(c.at) > statsTTL {
		freq, err := s.readCommonTerms(ctx)
		if err != nil {
			return 0, false, err
		}
		c.freq, c.at = freq, time.Now()
	}
	f, ok := c.freq[textsearch.Stem(term)]
	return f, ok, nil
}

// readCommonTerms reads pg_stats for beliefs.tsv (empty before the first
// ANALYZE). most_common_elem_freqs has three more values than there are
// elements (the lowest and highest frequency, and the null share): unnest
// pairs each element with its own.
func (s *Server) readCommonTerms(ctx context.Context) (map[string]float64, error) {
	rows, err := s.st.DB().QueryContext(ctx, `SELECT u.e, u.f FROM pg_stats p,
		unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS u(e, f)
		WHERE p.schemaname = current_schema() AND p.tablename = 'beliefs' AND p.attname = 'tsv' AND u.e IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("full-text statistics: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var e string
		var f float64
		if err := rows.Scan(&e, &f); err != nil {
			return nil, fmt.Errorf("full-text statistics: %w", err)
		}
		out[e] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("full-text statistics: %w", err)
	}
	return out, nil
}
