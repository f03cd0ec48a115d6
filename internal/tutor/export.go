package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// SnapshotFormat names the format of a session snapshot.
const SnapshotFormat = "nexus.tutor-session/v1"

// Snapshot is a portable session: tn_session_export writes it and
// [Server.ImportSession] restores it exactly (same ids, sequence numbers
// and times).
type Snapshot struct {
	Format     string           `json:"format"`
	ExportedAt time.Time        `json:"exportedAt"`
	Session    SessionRecord    `json:"session"`
	Events     []Event          `json:"events"`
	Pending    []PendingMessage `json:"pending"`
}

// SessionRecord is the session itself in a snapshot.
type SessionRecord struct {
	SessionID      string         `json:"sessionId"`
	Platform       string         `json:"platform"`
	ProjectContext string         `json:"projectContext,omitempty"`
	ExternalRoomID string         `json:"externalRoomId,omitempty"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	Summary        string         `json:"summary,omitempty"`
	Themes         []string       `json:"themes"`
	CreatedAt      time.Time      `json:"createdAt"`
	UpdatedAt      time.Time      `json:"updatedAt"`
	EndedAt        *time.Time     `json:"endedAt,omitempty"`
}

// exportPage is how many exchanges an export reads at a time.
const exportPage = 500

func (s *Server) sessionExport(ctx context.Context, c *registry.Call, in sessionIDIn) (Snapshot, error) {
	return s.Export(ctx, c.Workspace, in.SessionID)
}

// Export returns the snapshot of session id of workspace.
func (s *Server) Export(ctx context.Context, workspace, id string) (Snapshot, error) {
	conv, err := s.conv.Get(ctx, workspace, id)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Format: SnapshotFormat, ExportedAt: s.now(), Events: []Event{}, Session: SessionRecord{
		SessionID: conv.ID, Platform: conv.Platform, ProjectContext: conv.ProjectContext, ExternalRoomID: conv.ExternalRoomID,
		Metadata: conv.Metadata, Status: conv.Status, Summary: conv.Summary, Themes: conv.Themes,
		CreatedAt: conv.CreatedAt, UpdatedAt: conv.UpdatedAt, EndedAt: conv.EndedAt,
	}}
	for offset := 0; offset < conv.ExchangeCount; offset += exportPage {
		ex, _, err := s.conv.Exchanges(ctx, workspace, id, exportPage, offset)
		if err != nil {
			return Snapshot{}, err
		}
		for _, e := range ex {
			snap.Events = append(snap.Events, event(e))
		}
	}
	if snap.Pending, err = s.pending(ctx, id); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// ReadSnapshot decodes a snapshot, refusing one of another format.
func ReadSnapshot(r io.Reader) (Snapshot, error) {
	var snap Snapshot
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&snap); err != nil {
		return Snapshot{}, fmt.Errorf("session snapshot: %w", err)
	}
	if snap.Format != SnapshotFormat {
		return Snapshot{}, fmt.Errorf("session snapshot: format %q, want %q (written by tn_session_export)", snap.Format, SnapshotFormat)
	}
	return snap, nil
}

// ImportSession restores a snapshot into workspace, in one transaction (the
// session, its messages and its pending messages): ids, sequence numbers
// and times are the snapshot's. A session of that id that exists already is
// a CONFLICT, and nothing is written.
func (s *Server) ImportSession(ctx context.Context, workspace string, snap Snapshot) error {
	r := snap.Session
	conv := &conversation.Conversation{ID: r.SessionID, Workspace: workspace, Platform: r.Platform, ProjectContext: r.ProjectContext,
		ExternalRoomID: r.ExternalRoomID, Metadata: r.Metadata, Status: r.Status, Summary: r.Summary, Themes: r.Themes,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, EndedAt: r.EndedAt}
	ex := make([]conversation.Exchange, len(snap.Events))
	for i, e := range snap.Events {
		id, ok := exchangeID(e.EventID)
		if !ok {
			return errs.Invalid(fmt.Sprintf("events[%d].eventId", i), "%q is not a ULID", e.EventID)
		}
		ex[i] = conversation.Exchange{ID: id, ConversationID: r.SessionID, Seq: e.Seq, Role: e.Role, Content: e.Content, ToolUses: e.ToolUses, CreatedAt: e.CreatedAt}
	}
	return s.conv.Restore(ctx, conv, ex, func(tx *sql.Tx) error {
		for _, p := range snap.Pending {
			if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_pending (id, conversation_id, workspace, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
				p.EventID, r.SessionID, workspace, p.Role, p.Content, store.Micros(p.CreatedAt)); err != nil {
				return fmt.Errorf("restore pending message %s: %w", p.EventID, err)
			}
		}
		return nil
	})
}
