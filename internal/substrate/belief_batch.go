package substrate

// belief_create_batch: many beliefs in one transaction, each checked for
// tensions with the store and with the beliefs before it in the batch.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// MaxBatch is the most beliefs one belief_create_batch call creates.
const MaxBatch = 1000

type batchIn struct {
	Beliefs []CreateInput `json:"beliefs"`
}

// BatchItem is one belief's outcome: its index in the call, the belief
// created or the error that kept it out, and the tensions found.
type BatchItem struct {
	Index    int        `json:"index"`
	BeliefID string     `json:"belief_id,omitempty"`
	Tensions []Tension  `json:"tensions,omitempty"`
	Error    *BatchFail `json:"error,omitempty"`
}

// BatchFail is why one item was not created.
type BatchFail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// BatchResult is belief_create_batch's response.
type BatchResult struct {
	Success       bool        `json:"success"`
	Created       int         `json:"created"`
	Failed        int         `json:"failed"`
	TensionsFound int         `json:"tensions_found"`
	Results       []BatchItem `json:"results"`
}

// CreateBatch creates beliefs in workspace in one transaction: an item
// whose content or dates are not acceptable is reported and left out, the
// others are created, each checked for tensions with the store and with the
// items before it. An error of the store fails the whole batch and writes
// nothing.
func (s *Server) CreateBatch(ctx context.Context, workspace string, items []CreateInput) (*BatchResult, error) {
	if len(items) > MaxBatch {
		return nil, errs.Invalid("beliefs", "has %d beliefs; at most %d a call", len(items), MaxBatch)
	}
	out := &BatchResult{Success: true, Results: make([]BatchItem, len(items))}
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		out.Created, out.Failed, out.TensionsFound = 0, 0, 0
		for i, in := range items {
			item := BatchItem{Index: i}
			// Each item in a savepoint: one refused after it wrote part of
			// itself (a belief, then a bad entity) leaves nothing behind.
			if _, err := tx.ExecContext(ctx, "SAVEPOINT batch_item"); err != nil {
				return fmt.Errorf("savepoint: %w", err)
			}
			res, err := s.CreateTx(ctx, tx, workspace, in)
			var e *errs.Error
			switch {
			case errors.As(err, &e) && e.Code == errs.BadRequest:
				// This item's own fault: reported, the others go on.
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT batch_item"); err != nil {
					return fmt.Errorf("roll back beliefs[%d]: %w", i, err)
				}
				item.Error = &BatchFail{Code: string(e.Code), Message: fmt.Sprintf("beliefs[%d].%s", i, e.Message)}
				out.Failed++
			case err != nil:
				return fmt.Errorf("beliefs[%d]: %w", i, err)
			default:
				item.BeliefID, item.Tensions = res.Belief.ID, res.Tensions
				out.Created++
				out.TensionsFound += len(res.Tensions)
			}
			if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT batch_item"); err != nil {
				return fmt.Errorf("release savepoint: %w", err)
			}
			out.Results[i] = item
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Server) beliefCreateBatch(ctx context.Context, c *registry.Call, in batchIn) (*BatchResult, error) {
	return s.CreateBatch(ctx, c.Workspace, in.Beliefs)
}
