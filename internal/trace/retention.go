package trace

import (
	"context"
	"fmt"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// DefaultRetention is how long traces are kept unless configured otherwise.
const DefaultRetention = 30 * 24 * time.Hour

// pruneBatch bounds the rows one delete statement removes, so that pruning
// a large backlog never holds a long lock.
const pruneBatch = 5000

// Prune deletes the traces that started before cutoff, in batches, and
// returns how many it deleted.
func Prune(ctx context.Context, st *store.Store, cutoff time.Time) (int64, error) {
	var total int64
	for {
		res, err := st.DB().ExecContext(ctx, st.Q(`DELETE FROM traces WHERE seq IN
			(SELECT seq FROM traces WHERE started_at < ? ORDER BY started_at LIMIT ?)`), store.Micros(cutoff), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune traces: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("prune traces: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}
