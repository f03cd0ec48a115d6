package substrate

// belief_create_batch: many beliefs in one transaction, each checked for
// tensions with the store and with the beliefs before it in the batch.

import (
	"context"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// MaxBatch is the most beliefs one belief_create_batch call creates.
const MaxBatch = 1000

type batchIn struct {
	Beliefs []BatchInput `json:"beliefs"`
}

// BatchItem is one belief's outcome: its index in the call, the belief
// created (or, with Existing, the one already holding its external_id) or
// the error that kept it out, and the tensions found.
type BatchItem struct {
	Index    int        `json:"index"`
	BeliefID string     `json:"belief_id,omitempty"`
	Existing bool       `json:"existing,omitempty"`
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
	Success bool `json:"success"`
	Created int  `json:"created"`
	// Existing counts the items whose external_id the workspace already
	// held (or an earlier item of the call carried): not created again.
	Existing      int         `json:"existing"`
	Failed        int         `json:"failed"`
	TensionsFound int         `json:"tensions_found"`
	Results       []BatchItem `json:"results"`
}

// CreateBatch creates beliefs in workspace in one transaction, along the
// path of belief_create (create.go): an item whose content or dates are not
// acceptable is reported and left out, an item whose external_id the
// workspace holds is reported as existing, the others are created, each
// checked for tensions with the store and with the items before it. An error
// of the store fails the whole batch and writes nothing.
func (s *Server) CreateBatch(ctx context.Context, workspace string, items []BatchInput) (*BatchResult, error) {
	if len(items) > MaxBatch {
		return nil, errs.Invalid("beliefs", "has %d beliefs; at most %d a call", len(items), MaxBatch)
	}
	drafts, err := s.createMany(ctx, workspace, items, true)
	if err != nil {
		return nil, err
	}
	out := &BatchResult{Success: true, Results: make([]BatchItem, len(items))}
	for i, d := range drafts {
		item := BatchItem{Index: i}
		switch {
		case d.fail != nil:
			item.Error = &BatchFail{Code: string(d.fail.Code), Message: fmt.Sprintf("beliefs[%d].%s", i, d.fail.Message)}
			out.Failed++
		case d.existing != "":
			item.BeliefID, item.Existing = d.existing, true
			out.Existing++
		default:
			item.BeliefID, item.Tensions = d.stored.ID, d.tensions
			out.Created++
			out.TensionsFound += len(d.tensions)
		}
		out.Results[i] = item
	}
	return out, nil
}

func (s *Server) beliefCreateBatch(ctx context.Context, c *registry.Call, in batchIn) (*BatchResult, error) {
	return s.CreateBatch(ctx, c.Workspace, in.Beliefs)
}
