package conversation

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// MaxTitle is the longest title a conversation may have, in characters.
const MaxTitle = 200

// Rename sets the title of conversation id of the workspace: title is
// trimmed and must then be 1 to [MaxTitle] characters (else a BAD_REQUEST
// naming "title"). Who may rename it is the pipeline's to decide (the
// session_id argument of the calling tool).
func (s *Store) Rename(ctx context.Context, workspace, id, title string) (*Conversation, error) {
	title = strings.TrimSpace(title)
	switch n := utf8.RuneCountInString(title); {
	case n == 0:
		return nil, errs.Invalid("title", "must not be empty (after trimming spaces)")
	case n > MaxTitle:
		return nil, errs.Invalid("title", "must be at most %d characters (it has %d)", MaxTitle, n)
	}
	return s.set(ctx, workspace, id, "title", title)
}

// Delete deletes conversation id of the workspace with everything that is
// its own (its exchanges and their vectors, its insight records, the
// tutor's pending and idempotency rows), in one transaction, and returns how
// many exchanges went with it. Beliefs an insight made stay in the
// substrate. Who may delete it is the pipeline's to decide (the session_id
// argument of the calling tool).
func (s *Store) Delete(ctx context.Context, workspace, id string) (exchanges int, err error) {
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		// Writing the row first holds it against concurrent appends (which
		// update it too) until the transaction ends.
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE conversations SET exchange_count = exchange_count WHERE id = ? AND workspace = ?`),
			id, workspace); err != nil {
			return fmt.Errorf("delete conversation: %w", err)
		}
		c, err := s.get(ctx, tx, workspace, id)
		if err != nil {
			return err
		}
		exchanges = c.ExchangeCount
		for _, q := range []string{
			`DELETE FROM embeddings WHERE kind = 'exchange' AND id IN (SELECT id FROM exchanges WHERE conversation_id = ?)`,
			`DELETE FROM exchanges WHERE conversation_id = ?`,
			`DELETE FROM insights WHERE session_id = ?`,
			`DELETE FROM tn_pending WHERE conversation_id = ?`,
			`DELETE FROM tn_asks WHERE conversation_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, s.st.Q(q), id); err != nil {
				return fmt.Errorf("delete conversation: %w", err)
			}
		}
		r, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM conversations WHERE id = ? AND workspace = ?`), id, workspace)
		if err != nil {
			return fmt.Errorf("delete conversation: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errs.Missing("session", id)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// A deleted conversation is made anew when it is named again.
	s.Forget(id)
	return exchanges, nil
}

// RewindLastUser deletes the last user message of conversation id of the
// workspace and every exchange after it (the answer to it, or what a failed
// turn left), in one transaction, and returns how many exchanges went; the
// next exchange appended takes the user message's place. It serves the
// chat's Regenerate and Edit and resend, which replace the last turn. A
// conversation without a user message is a BAD_REQUEST naming
// replace_last.
func (s *Store) RewindLastUser(ctx context.Context, workspace, id string) (exchanges int, err error) {
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		// Writing the row first holds it against concurrent appends.
		r, err := tx.ExecContext(ctx, s.st.Q(`UPDATE conversations SET exchange_count = exchange_count WHERE id = ? AND workspace = ?`), id, workspace)
		if err != nil {
			return fmt.Errorf("rewind conversation: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errs.Missing("session", id)
		}
		var seq sql.NullInt64
		if err := tx.QueryRowContext(ctx, s.st.Q(`SELECT MAX(seq) FROM exchanges WHERE conversation_id = ? AND role = ?`), id, "user").Scan(&seq); err != nil {
			return fmt.Errorf("rewind conversation: %w", err)
		}
		if !seq.Valid {
			return errs.Invalid("replace_last", "conversation %q has no message of yours to replace", id)
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM embeddings WHERE kind = 'exchange'
			AND id IN (SELECT id FROM exchanges WHERE conversation_id = ? AND seq >= ?)`), id, seq.Int64); err != nil {
			return fmt.Errorf("rewind conversation: %w", err)
		}
		r, err = tx.ExecContext(ctx, s.st.Q(`DELETE FROM exchanges WHERE conversation_id = ? AND seq >= ?`), id, seq.Int64)
		if err != nil {
			return fmt.Errorf("rewind conversation: %w", err)
		}
		n, _ := r.RowsAffected()
		exchanges = int(n)
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE conversations SET exchange_count = ?, updated_at = ? WHERE id = ? AND workspace = ?`),
			seq.Int64-1, store.Micros(s.now()), id, workspace); err != nil {
			return fmt.Errorf("rewind conversation: %w", err)
		}
		return nil
	})
	return exchanges, err
}

// Describe sets a conversation's project context (what it is about: a
// memoryManager session's description), "" to clear it.
func (s *Store) Describe(ctx context.Context, workspace, id, projectContext string) (*Conversation, error) {
	return s.set(ctx, workspace, id, "project_context", nullStr(projectContext))
}

// set sets one column of conversation id (a name of this file's, never a
// caller's) and returns the conversation as it is then.
func (s *Store) set(ctx context.Context, workspace, id, column string, value any) (*Conversation, error) {
	var out *Conversation
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, s.st.Q(`UPDATE conversations SET `+column+` = ?, updated_at = ? WHERE id = ? AND workspace = ?`),
			value, store.Micros(s.now()), id, workspace)
		if err != nil {
			return fmt.Errorf("update conversation %s: %w", column, err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errs.Missing("session", id)
		}
		out, err = s.get(ctx, tx, workspace, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
