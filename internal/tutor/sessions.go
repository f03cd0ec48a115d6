package tutor

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Platform is the platform of the conversations tn_session_start opens.
const Platform = "tutor"

// SessionTTL is how long a tutoring session stays resumable after its last
// activity: its expiresAt.
const SessionTTL = 30 * 24 * time.Hour

func (s *Server) sessionTools() []registry.Def {
	d := func(name, desc string, readOnly bool, h registry.Typed) registry.Def {
		return registry.Def{Name: name, Description: desc, ReadOnly: readOnly, Family: registry.Tutor, Schema: schema(name), Handler: h}
	}
	return []registry.Def{
		d("tn_session_start", "Create a new tutoring session; returns its sessionId (a ULID) for the other tn_session_* tools, and when it expires without activity.", false, registry.Handle(s.sessionStart)),
		d("tn_session_ask", "Send a student's message within a session. With draft: true the message is saved as pending (not sent; tn_session_cancel_pending removes it). The answer comes from the tutor's model (the user's own key from tn_user_byok_add, else the server's), which looks courses and transfer rules up with the tn_course_* and tn_transfer_* tools and cites them; one prompt against the daily quota (none on the user's own key). A retried clientEventId gets the first answer again. Without any model configured the answer is UNPROCESSABLE_ENTITY saying how to configure one.", false, registry.Handle(s.sessionAsk)),
		d("tn_session_end", "Close a session gracefully, with an optional summary.", false, registry.Handle(s.sessionEnd)),
		d("tn_session_history", "Retrieve a session's transcript in order, paginated (limit, cursor).", true, registry.Handle(s.sessionHistory)),
		d("tn_session_resume", "Reconnect to an existing session: its status, the most recent messages and the pending ones, to continue where it left off.", true, registry.Handle(s.sessionResume)),
		d("tn_session_export", "Generate a portable snapshot of a session (all messages, pending ones included), which `nexus import tutor-session FILE` restores exactly.", true, registry.Handle(s.sessionExport)),
		d("tn_session_sync_status", "Check whether a session has pending (unsent) messages, and its last synced message.", true, registry.Handle(s.sessionSyncStatus)),
		d("tn_session_cancel_pending", "Cancel pending (draft) messages of a session before they are sent: the ones named by eventIds, or all of them. Sent messages are never removed.", false, registry.Handle(s.sessionCancelPending)),
	}
}

// eventID is an exchange's id as a ULID (exchanges have UUIDv7 ids, whose
// 16 bytes a ULID encodes alike: both are time-ordered).
func eventID(exchangeID string) string {
	u, err := uuid.Parse(exchangeID)
	if err != nil {
		return exchangeID
	}
	return ulid.ULID(u).String()
}

// exchangeID is the inverse of eventID.
func exchangeID(event string) (string, bool) {
	id, err := ulid.ParseStrict(event)
	if err != nil {
		return "", false
	}
	return uuid.UUID(id).String(), true
}

// session returns the conversation of a tn_session_* call.
func (s *Server) session(ctx context.Context, c *registry.Call, id string) (*conversation.Conversation, error) {
	conv, err := s.conv.Get(ctx, c.Workspace, id)
	if err != nil {
		return nil, err
	}
	return conv, nil
}

func expiresAt(c *conversation.Conversation) time.Time { return c.UpdatedAt.Add(SessionTTL) }

type sessionStartIn struct {
	UserID  string         `json:"userId,omitempty"`
	Context map[string]any `json:"context,omitempty"`
}

type sessionStartOut struct {
	SessionID string    `json:"sessionId"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func (s *Server) sessionStart(ctx context.Context, c *registry.Call, in sessionStartIn) (sessionStartOut, error) {
	meta := map[string]any{}
	if in.UserID != "" {
		meta["userId"] = in.UserID
	}
	if len(in.Context) > 0 {
		meta["context"] = in.Context
	}
	conv, err := s.conv.Create(ctx, conversation.Draft{Workspace: c.Workspace, Platform: Platform, Metadata: meta,
		OwnerID: c.User.ID, OwnerTier: c.User.Tier})
	if err != nil {
		return sessionStartOut{}, err
	}
	return sessionStartOut{SessionID: conv.ID, ExpiresAt: expiresAt(conv)}, nil
}

type sessionAskIn struct {
	SessionID     string `json:"sessionId"`
	Message       string `json:"message"`
	Draft         bool   `json:"draft,omitempty"`
	ClientEventID string `json:"clientEventId,omitempty"`
}

type sessionAskOut struct {
	Response      string   `json:"response"`
	EventsEmitted []string `json:"eventsEmitted"`
	EventID       string   `json:"eventId,omitempty"`
}

func (s *Server) sessionAsk(ctx context.Context, c *registry.Call, in sessionAskIn) (sessionAskOut, error) {
	conv, err := s.session(ctx, c, in.SessionID)
	if err != nil {
		return sessionAskOut{}, err
	}
	if conv.Status != conversation.Active {
		return sessionAskOut{}, errs.E(errs.Conflict, "session %s is %s; start a new session to ask", conv.ID, conv.Status)
	}
	if in.Draft {
		id := ulid.Make().String()
		_, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO tn_pending (id, conversation_id, workspace, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
			id, conv.ID, c.Workspace, "user", in.Message, store.Micros(s.now()))
		if err != nil {
			return sessionAskOut{}, fmt.Errorf("save pending message: %w", err)
		}
		return sessionAskOut{Response: "", EventsEmitted: []string{"message.pending"}, EventID: id}, nil
	}
	return s.ask(ctx, conv.ID, in)
}

type sessionIDIn struct {
	SessionID string `json:"sessionId"`
}

type sessionEndIn struct {
	SessionID string `json:"sessionId"`
	Summary   string `json:"summary,omitempty"`
}

type sessionEndOut struct {
	SessionID string    `json:"sessionId"`
	Status    string    `json:"status"`
	EndedAt   time.Time `json:"endedAt"`
}

func (s *Server) sessionEnd(ctx context.Context, c *registry.Call, in sessionEndIn) (sessionEndOut, error) {
	conv, err := s.conv.End(ctx, c.Workspace, in.SessionID, in.Summary, nil, conversation.Completed)
	if err != nil {
		return sessionEndOut{}, err
	}
	out := sessionEndOut{SessionID: conv.ID, Status: conv.Status}
	if conv.EndedAt != nil {
		out.EndedAt = *conv.EndedAt
	}
	return out, nil
}

// Event is one message of a session's transcript.
type Event struct {
	EventID   string    `json:"eventId"`
	Seq       int       `json:"seq"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	ToolUses  []any     `json:"toolUses,omitempty"`
}

func event(e conversation.Exchange) Event {
	return Event{EventID: eventID(e.ID), Seq: e.Seq, Type: "message", CreatedAt: e.CreatedAt, Role: e.Role, Content: e.Content, ToolUses: e.ToolUses}
}

// PendingMessage is a message saved but not sent.
type PendingMessage struct {
	EventID   string    `json:"eventId"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
}

type historyIn struct {
	SessionID string `json:"sessionId"`
	Limit     int    `json:"limit"`
	Cursor    string `json:"cursor,omitempty"`
}

func (s *Server) sessionHistory(ctx context.Context, c *registry.Call, in historyIn) (Page[Event], error) {
	offset, size, err := s.window("tn_session_history", in.Limit, in.Cursor, in.SessionID)
	if err != nil {
		return Page[Event]{}, err
	}
	ex, total, err := s.conv.Exchanges(ctx, c.Workspace, in.SessionID, size, offset)
	if err != nil {
		return Page[Event]{}, err
	}
	items := make([]Event, len(ex))
	for i, e := range ex {
		items[i] = event(e)
	}
	return counted(s, items, total, offset, size, "tn_session_history", in.SessionID), nil
}

// pending reads the pending messages of a session, oldest first.
func (s *Server) pending(ctx context.Context, id string) ([]PendingMessage, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, role, content, created_at FROM tn_pending WHERE conversation_id = ? ORDER BY created_at, id`), id)
	if err != nil {
		return nil, fmt.Errorf("read pending messages: %w", err)
	}
	defer rows.Close()
	out := []PendingMessage{}
	for rows.Next() {
		var p PendingMessage
		var created int64
		if err := rows.Scan(&p.EventID, &p.Role, &p.Content, &created); err != nil {
			return nil, fmt.Errorf("read pending messages: %w", err)
		}
		p.Type, p.CreatedAt = "message.pending", store.FromMicros(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// ResumeCount is how many of the latest messages tn_session_resume returns.
const ResumeCount = 10

type resumeOut struct {
	SessionID     string           `json:"sessionId"`
	Status        string           `json:"status"`
	Platform      string           `json:"platform"`
	CanContinue   bool             `json:"canContinue"`
	Reason        string           `json:"reason,omitempty"`
	CreatedAt     time.Time        `json:"createdAt"`
	UpdatedAt     time.Time        `json:"updatedAt"`
	ExpiresAt     time.Time        `json:"expiresAt"`
	Summary       string           `json:"summary,omitempty"`
	ExchangeCount int              `json:"exchangeCount"`
	Recent        []Event          `json:"recent"`
	Pending       []PendingMessage `json:"pending"`
}

func (s *Server) sessionResume(ctx context.Context, c *registry.Call, in sessionIDIn) (resumeOut, error) {
	conv, err := s.session(ctx, c, in.SessionID)
	if err != nil {
		return resumeOut{}, err
	}
	ex, _, err := s.conv.Exchanges(ctx, c.Workspace, conv.ID, ResumeCount, -ResumeCount)
	if err != nil {
		return resumeOut{}, err
	}
	pend, err := s.pending(ctx, conv.ID)
	if err != nil {
		return resumeOut{}, err
	}
	out := resumeOut{SessionID: conv.ID, Status: conv.Status, Platform: conv.Platform, CreatedAt: conv.CreatedAt, UpdatedAt: conv.UpdatedAt,
		ExpiresAt: expiresAt(conv), Summary: conv.Summary, ExchangeCount: conv.ExchangeCount, Recent: []Event{}, Pending: pend}
	for _, e := range ex {
		out.Recent = append(out.Recent, event(e))
	}
	switch {
	case conv.Status != conversation.Active:
		out.Reason = fmt.Sprintf("the session is %s; start a new session to go on", conv.Status)
	case s.now().After(out.ExpiresAt):
		out.Reason = fmt.Sprintf("the session expired at %s, %s after its last activity; start a new session to go on",
			out.ExpiresAt.Format(time.RFC3339), SessionTTL)
	default:
		out.CanContinue = true
	}
	return out, nil
}

type syncStatusOut struct {
	SessionID    string           `json:"sessionId"`
	Status       string           `json:"status"`
	Synced       bool             `json:"synced"`
	PendingCount int              `json:"pendingCount"`
	Pending      []PendingMessage `json:"pending"`
	LastSeq      int              `json:"lastSeq"`
	LastEventID  string           `json:"lastEventId,omitempty"`
	UpdatedAt    time.Time        `json:"updatedAt"`
}

func (s *Server) sessionSyncStatus(ctx context.Context, c *registry.Call, in sessionIDIn) (syncStatusOut, error) {
	conv, err := s.session(ctx, c, in.SessionID)
	if err != nil {
		return syncStatusOut{}, err
	}
	pend, err := s.pending(ctx, conv.ID)
	if err != nil {
		return syncStatusOut{}, err
	}
	out := syncStatusOut{SessionID: conv.ID, Status: conv.Status, Synced: len(pend) == 0, PendingCount: len(pend), Pending: pend,
		LastSeq: conv.ExchangeCount, UpdatedAt: conv.UpdatedAt}
	if conv.ExchangeCount > 0 {
		ex, _, err := s.conv.Exchanges(ctx, c.Workspace, conv.ID, 1, -1)
		if err != nil {
			return syncStatusOut{}, err
		}
		if len(ex) == 1 {
			out.LastEventID = eventID(ex[0].ID)
		}
	}
	return out, nil
}

type cancelPendingIn struct {
	SessionID string   `json:"sessionId"`
	EventIDs  []string `json:"eventIds,omitempty"`
}

type cancelPendingOut struct {
	SessionID    string   `json:"sessionId"`
	Cancelled    []string `json:"cancelled"`
	NotPending   []string `json:"notPending"`
	PendingCount int      `json:"pendingCount"`
}

func (s *Server) sessionCancelPending(ctx context.Context, c *registry.Call, in cancelPendingIn) (cancelPendingOut, error) {
	conv, err := s.session(ctx, c, in.SessionID)
	if err != nil {
		return cancelPendingOut{}, err
	}
	pend, err := s.pending(ctx, conv.ID)
	if err != nil {
		return cancelPendingOut{}, err
	}
	out := cancelPendingOut{SessionID: conv.ID, Cancelled: []string{}, NotPending: []string{}}
	isPending := map[string]bool{}
	for _, p := range pend {
		isPending[p.EventID] = true
	}
	var cancel []string
	if in.EventIDs == nil {
		for _, p := range pend {
			cancel = append(cancel, p.EventID)
		}
	} else {
		seen := map[string]bool{}
		for _, id := range in.EventIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			if isPending[id] {
				cancel = append(cancel, id)
			} else {
				out.NotPending = append(out.NotPending, id)
			}
		}
	}
	for _, id := range cancel {
		res, err := s.st.DB().ExecContext(ctx, s.st.Q(`DELETE FROM tn_pending WHERE id = ? AND conversation_id = ?`), id, conv.ID)
		if err != nil {
			return cancelPendingOut{}, fmt.Errorf("cancel pending message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out.Cancelled = append(out.Cancelled, id)
		}
	}
	out.PendingCount = len(pend) - len(out.Cancelled)
	return out, nil
}
