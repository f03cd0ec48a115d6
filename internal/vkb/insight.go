package vkb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// Insight links a session to the belief extracted from it.
type Insight struct {
	ID        string            `json:"id"`
	SessionID string            `json:"session_id"`
	BeliefID  string            `json:"belief_id"`
	Workspace string            `json:"workspace"`
	CreatedAt time.Time         `json:"created_at"`
	Belief    *substrate.Belief `json:"belief,omitempty"`
}

type insightExtractIn struct {
	SessionID  string                  `json:"session_id"`
	Content    string                  `json:"content"`
	DomainPath []string                `json:"domain_path"`
	Confidence float64                 `json:"confidence"`
	Entities   []substrate.EntityInput `json:"entities"`
}

type insightExtractResult struct {
	Success  bool                `json:"success"`
	Insight  *Insight            `json:"insight"`
	Belief   *substrate.Belief   `json:"belief"`
	Tensions []substrate.Tension `json:"tensions"`
}

// insightExtract creates a substrate belief whose source is the session
// (type conversation, ref the session id), runs tension detection, and
// records the insight, all in one transaction.
func (s *Server) insightExtract(ctx context.Context, c *registry.Call, in insightExtractIn) (*insightExtractResult, error) {
	if _, err := s.conv.Get(ctx, c.Workspace, in.SessionID); err != nil {
		return nil, err
	}
	conf := in.Confidence
	res := &insightExtractResult{Success: true}
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		created, err := s.sub.CreateTx(ctx, tx, c.Workspace, substrate.CreateInput{
			Content: in.Content, Confidence: &substrate.ConfidenceInput{Overall: &conf}, DomainPath: in.DomainPath,
			SourceType: "conversation", SourceRef: in.SessionID, SourceTitle: "insight from session " + in.SessionID,
			Entities: in.Entities,
		})
		if err != nil {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("new insight id: %w", err)
		}
		now := s.now()
		ins := &Insight{ID: id.String(), SessionID: in.SessionID, BeliefID: created.Belief.ID, Workspace: c.Workspace, CreatedAt: now}
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO insights (id, workspace, session_id, belief_id, created_at) VALUES (?, ?, ?, ?, ?)`),
			ins.ID, ins.Workspace, ins.SessionID, ins.BeliefID, store.Micros(now)); err != nil {
			return fmt.Errorf("insert insight: %w", err)
		}
		res.Insight, res.Belief, res.Tensions = ins, created.Belief, created.Tensions
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type insightListIn struct {
	SessionID string `json:"session_id"`
	Limit     int    `json:"limit"`
	Offset    int    `json:"offset"`
}

type insightListResult struct {
	Success  bool       `json:"success"`
	Insights []*Insight `json:"insights"`
}

func (s *Server) insightList(ctx context.Context, c *registry.Call, in insightListIn) (*insightListResult, error) {
	where, args := "i.workspace = ?", []any{c.Workspace}
	if in.SessionID != "" {
		if _, err := s.conv.Get(ctx, c.Workspace, in.SessionID); err != nil {
			return nil, err
		}
		where += " AND i.session_id = ?"
		args = append(args, in.SessionID)
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT i.id, i.session_id, i.belief_id, i.created_at FROM insights i
		WHERE `+where+` ORDER BY i.created_at DESC, i.id DESC LIMIT ? OFFSET ?`), append(args, in.Limit, in.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("list insights: %w", err)
	}
	out := []*Insight{}
	for rows.Next() {
		ins := &Insight{Workspace: c.Workspace}
		var created int64
		if err := rows.Scan(&ins.ID, &ins.SessionID, &ins.BeliefID, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list insights: %w", err)
		}
		ins.CreatedAt = store.FromMicros(created)
		out = append(out, ins)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list insights: %w", err)
	}
	for _, ins := range out {
		if ins.Belief, err = s.sub.Get(ctx, c.Workspace, ins.BeliefID); err != nil && !errors.Is(err, errs.Kind(errs.NotFound)) {
			return nil, err
		}
	}
	return &insightListResult{Success: true, Insights: out}, nil
}
