package tutor

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// Retention of tutoring transcripts (Tutor Nexus ADR-011): the messages of
// tutoring sessions are anonymized after TranscriptRetention, and the
// sessions of anonymous users are deleted after AnonymousRetention. Other
// conversations (vkb memory) are not touched.
const (
	TranscriptRetention = 90 * 24 * time.Hour
	AnonymousRetention  = 365 * 24 * time.Hour
	// Anonymized is what an anonymized message's content becomes.
	Anonymized = "[removed: tutoring transcripts are kept 90 days]"
)

// Retained says what Retain did.
type Retained struct {
	// Anonymized is how many messages were anonymized, Deleted how many
	// sessions of anonymous users were deleted.
	Anonymized, Deleted int64
}

// Retain applies the retention rules at now: messages of tutoring sessions
// older than TranscriptRetention lose their content and tool uses; tutoring
// sessions of anonymous users (tier anonymous when they started it) whose
// last activity is older than AnonymousRetention are deleted with their
// messages and pending messages. The embedding vectors of the messages
// anonymized or deleted go with them. Running it twice changes nothing
// more.
func (s *Server) Retain(ctx context.Context, now time.Time) (Retained, error) {
	var r Retained
	// An anonymized message loses its embedding vector (hybrid search) in
	// the same transaction: the vector still carries the meaning of the
	// erased text. The embedding job embeds the new content later.
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.st.Q(`UPDATE exchanges SET content = ?, tool_uses = '[]'
			WHERE created_at < ? AND content <> ? AND conversation_id IN (SELECT id FROM conversations WHERE platform = ?)`),
			Anonymized, store.Micros(now.Add(-TranscriptRetention)), Anonymized, Platform)
		if err != nil {
			return err
		}
		r.Anonymized, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, s.st.Q(`DELETE FROM embeddings WHERE kind = 'exchange' AND id IN (SELECT id FROM exchanges
			WHERE content = ? AND conversation_id IN (SELECT id FROM conversations WHERE platform = ?))`), Anonymized, Platform)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("anonymize transcripts: %w", err)
	}
	cutoff := store.Micros(now.Add(-AnonymousRetention))
	var deleted []string
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		sel := `SELECT id FROM conversations WHERE platform = ? AND owner_tier = 'anonymous' AND updated_at < ?`
		for _, q := range []string{
			`DELETE FROM tn_pending WHERE conversation_id IN (` + sel + `)`,
			`DELETE FROM insights WHERE session_id IN (` + sel + `)`,
			`DELETE FROM embeddings WHERE kind = 'exchange' AND id IN (SELECT id FROM exchanges WHERE conversation_id IN (` + sel + `))`,
			`DELETE FROM exchanges WHERE conversation_id IN (` + sel + `)`,
		} {
			if _, err := tx.ExecContext(ctx, s.st.Q(q), Platform, cutoff); err != nil {
				return fmt.Errorf("delete anonymous sessions: %w", err)
			}
		}
		rows, err := tx.QueryContext(ctx, s.st.Q(`DELETE FROM conversations WHERE platform = ? AND owner_tier = 'anonymous' AND updated_at < ? RETURNING id`), Platform, cutoff)
		if err != nil {
			return fmt.Errorf("delete anonymous sessions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("delete anonymous sessions: %w", err)
			}
			deleted = append(deleted, id)
		}
		r.Deleted = int64(len(deleted))
		return rows.Err()
	})
	// The conversation store remembers sessions' workspaces and owners: a
	// deleted session must be made anew when it is named again.
	s.conv.Forget(deleted...)
	return r, err
}
