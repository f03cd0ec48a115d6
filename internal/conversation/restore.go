package conversation

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Restore stores conversation c and its exchanges exactly as given (ids,
// sequence numbers, times, status), in one transaction: the inverse of
// reading them, for a session snapshot's import. The exchanges must be
// numbered 1..N in order; a conversation of that id that exists already is
// a CONFLICT, and nothing is written. also, when not nil, writes what else
// belongs to the conversation in the same transaction (a failure of it
// writes nothing).
func (s *Store) Restore(ctx context.Context, c *Conversation, exchanges []Exchange, also func(tx *sql.Tx) error) error {
	if !ValidID(c.ID) {
		return errs.Invalid("session.id", "%q is not a valid session id (1-128 letters, digits and . _ : @ -)", c.ID)
	}
	for i, e := range exchanges {
		if e.Seq != i+1 {
			return errs.Invalid("events", "exchange %d has seq %d; a session's exchanges are numbered 1..N in order", i, e.Seq)
		}
	}
	meta, err := json.Marshal(orEmpty(c.Metadata))
	if err != nil {
		return errs.Invalid("session.metadata", "cannot be encoded: %v", err)
	}
	themes, err := json.Marshal(orNone(c.Themes))
	if err != nil {
		return errs.Invalid("session.themes", "cannot be encoded: %v", err)
	}
	var ended any
	if c.EndedAt != nil {
		ended = store.Micros(*c.EndedAt)
	}
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO conversations (id, workspace, platform, project_context,
			external_room_id, metadata, status, summary, themes, created_at, updated_at, ended_at, exchange_count)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
			c.ID, c.Workspace, c.Platform, nullStr(c.ProjectContext), nullStr(c.ExternalRoomID), string(meta), c.Status,
			nullStr(c.Summary), string(themes), store.Micros(c.CreatedAt), store.Micros(c.UpdatedAt), ended, len(exchanges))
		if err != nil {
			return fmt.Errorf("restore conversation: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errs.E(errs.Conflict, "session %q already exists; nothing was imported", c.ID)
		}
		for _, e := range exchanges {
			tu, err := json.Marshal(orNone(e.ToolUses))
			if err != nil {
				return errs.Invalid("events", "exchange %d tool uses cannot be encoded: %v", e.Seq, err)
			}
			if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO exchanges (id, conversation_id, workspace, seq, role, content, tool_uses, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), e.ID, c.ID, c.Workspace, e.Seq, e.Role, e.Content, string(tu), store.Micros(e.CreatedAt)); err != nil {
				return fmt.Errorf("restore exchange %d: %w", e.Seq, err)
			}
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.Forget(c.ID) // its owner is read again when it is next named
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
