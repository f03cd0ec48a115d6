// Package conversation is Nexus's one conversation model (SPEC section 3,
// "One conversation model"): a vkb session, a tutoring session, a chat
// conversation and a context.sessionId are the same record, with an ordered,
// gap-free list of exchanges. The vkb tools, the pipeline's session
// resolution and (later) the tutor and chat are APIs over this package.
package conversation

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/ids"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Statuses of a conversation.
const (
	Active    = "active"
	Completed = "completed"
	Abandoned = "abandoned"
)

// DefaultPlatform is the platform of conversations Nexus opens implicitly.
const DefaultPlatform = "api"

// Conversation is a conversation in full.
type Conversation struct {
	ID        string `json:"id"`
	Workspace string `json:"workspace"`
	Platform  string `json:"platform"`
	// Title is the conversation's own title (session_rename); empty until
	// it is named, when clients derive one.
	Title          string         `json:"title,omitempty"`
	ProjectContext string         `json:"project_context,omitempty"`
	ExternalRoomID string         `json:"external_room_id,omitempty"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	Summary        string         `json:"summary,omitempty"`
	Themes         []string       `json:"themes"`
	ExchangeCount  int            `json:"exchange_count"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	EndedAt        *time.Time     `json:"ended_at,omitempty"`
}

// Exchange is one turn of a conversation.
type Exchange struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"session_id"`
	Seq            int       `json:"seq"`
	Role           string    `json:"role"`
	Content        string    `json:"content"`
	ToolUses       []any     `json:"tool_uses"`
	CreatedAt      time.Time `json:"created_at"`
}

// NewID returns the id of a new conversation (a ULID), which a caller may
// give out before the conversation is stored (see [Draft.ID]).
func NewID() string { return ulid.Make().String() }

// ValidID reports whether id can name a conversation (the one id rule,
// [ids.Valid]).
func ValidID(id string) bool { return ids.Valid(id) }

// Store keeps conversations. It is safe for concurrent use.
type Store struct {
	st  *store.Store
	now func() time.Time

	mu    sync.Mutex
	known map[string]Ref // conversation id -> its workspace and owner, for Ensure and Lookup

	stats searchStats // per-workspace term statistics of Search

	// vectors, when set (UseVectors), makes Search hybrid and is told of
	// each append.
	vectors *embed.Index
}

// Ref is where a conversation lives and whose it is: what a session id
// resolves to. A conversation's workspace and owner never change.
type Ref struct {
	Workspace string
	// Owner is the id of the user who started the conversation; empty for
	// conversations stored before owners were recorded.
	Owner string
}

// maxKnown bounds the cache of existing conversation ids.
const maxKnown = 100000

// New returns a conversation store over st.
func New(st *store.Store) *Store {
	return &Store{st: st, now: store.Now, known: map[string]Ref{}}
}

func (s *Store) remember(id string, r Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.known) >= maxKnown {
		clear(s.known)
	}
	s.known[id] = r
}

// Draft is a conversation to create.
type Draft struct {
	ID             string // empty for a new ULID
	Workspace      string
	Platform       string
	ProjectContext string
	ExternalRoomID string
	Metadata       map[string]any
	// OwnerID and OwnerTier record who started the conversation and their
	// tier then (tutoring sessions: retention and, next, authorization).
	OwnerID, OwnerTier string
}

// Create stores a new active conversation.
func (s *Store) Create(ctx context.Context, n Draft) (*Conversation, error) {
	if n.ID == "" {
		n.ID = NewID()
	} else if !ValidID(n.ID) {
		return nil, errs.Invalid("session_id", "%q is not a valid session id (1-128 letters, digits and . _ : @ -)", n.ID)
	}
	if n.Platform == "" {
		n.Platform = DefaultPlatform
	}
	if n.Metadata == nil {
		n.Metadata = map[string]any{}
	}
	meta, err := json.Marshal(n.Metadata)
	if err != nil {
		return nil, errs.Invalid("metadata", "cannot be encoded: %v", err)
	}
	now := s.now()
	c := &Conversation{
		ID: n.ID, Workspace: n.Workspace, Platform: n.Platform, ProjectContext: n.ProjectContext,
		ExternalRoomID: n.ExternalRoomID, Metadata: n.Metadata, Status: Active, Themes: []string{},
		CreatedAt: now, UpdatedAt: now,
	}
	res, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO conversations (id, workspace, platform, project_context,
		external_room_id, metadata, status, themes, created_at, updated_at, exchange_count, owner_id, owner_tier)
		VALUES (?, ?, ?, ?, ?, ?, ?, '[]', ?, ?, 0, ?, ?) ON CONFLICT (id) DO NOTHING`),
		c.ID, c.Workspace, c.Platform, nullStr(c.ProjectContext), nullStr(c.ExternalRoomID), string(meta), c.Status,
		store.Micros(now), store.Micros(now), nullStr(n.OwnerID), nullStr(n.OwnerTier))
	if err != nil {
		return nil, fmt.Errorf("create conversation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, errs.E(errs.Conflict, "session %q already exists", c.ID)
	}
	s.remember(c.ID, Ref{Workspace: c.Workspace, Owner: n.OwnerID})
	return c, nil
}

// Ensure returns conversation id, creating it (active, platform "api") in
// workspace, owned by ownerID (of tier ownerTier), when it does not exist
// yet.
func (s *Store) Ensure(ctx context.Context, id, workspace, ownerID, ownerTier string) (ws, owner string, err error) {
	s.mu.Lock()
	r, ok := s.known[id]
	s.mu.Unlock()
	if ok {
		return r.Workspace, r.Owner, nil
	}
	if !ValidID(id) {
		return "", "", errs.Invalid("context.sessionId", "%q is not a valid session id (1-128 letters, digits and . _ : @ -)", id)
	}
	now := store.Micros(s.now())
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO conversations (id, workspace, platform, metadata, status,
		themes, created_at, updated_at, exchange_count, owner_id, owner_tier) VALUES (?, ?, ?, '{}', ?, '[]', ?, ?, 0, ?, ?) ON CONFLICT (id) DO NOTHING`),
		id, workspace, DefaultPlatform, Active, now, now, nullStr(ownerID), nullStr(ownerTier)); err != nil {
		return "", "", fmt.Errorf("ensure conversation: %w", err)
	}
	r, ok, err = s.read(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("ensure conversation %s: deleted as it was made", id)
	}
	if err != nil {
		return "", "", fmt.Errorf("ensure conversation: %w", err)
	}
	return r.Workspace, r.Owner, nil
}

// Lookup returns the workspace and owner of conversation id, if it exists.
// An id that is not a valid session id is a BAD_REQUEST.
func (s *Store) Lookup(ctx context.Context, id string) (workspace, owner string, ok bool, err error) {
	if !ValidID(id) {
		return "", "", false, errs.Invalid("context.sessionId", "%q is not a valid session id (1-128 letters, digits and . _ : @ -)", id)
	}
	s.mu.Lock()
	r, ok := s.known[id]
	s.mu.Unlock()
	if !ok {
		if r, ok, err = s.read(ctx, id); err != nil {
			return "", "", false, err
		}
	}
	return r.Workspace, r.Owner, ok, nil
}

// read reads and remembers conversation id's workspace and owner.
func (s *Store) read(ctx context.Context, id string) (Ref, bool, error) {
	var r Ref
	var owner sql.NullString
	err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT workspace, owner_id FROM conversations WHERE id = ?`), id).Scan(&r.Workspace, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return Ref{}, false, nil
	}
	if err != nil {
		return Ref{}, false, fmt.Errorf("conversation workspace: %w", err)
	}
	r.Owner = owner.String
	s.remember(id, r)
	return r, true, nil
}

// Workspace returns the workspace of conversation id, if it exists.
// An id that is not a valid session id is a BAD_REQUEST.
func (s *Store) Workspace(ctx context.Context, id string) (string, bool, error) {
	ws, _, ok, err := s.Lookup(ctx, id)
	return ws, ok, err
}

// Forget drops what the store remembers of conversation ids (after they
// were deleted).
func (s *Store) Forget(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.known, id)
	}
}

const cols = `c.id, c.workspace, c.platform, c.project_context, c.external_room_id, c.metadata, c.status, c.summary,
	c.themes, c.exchange_count, c.created_at, c.updated_at, c.ended_at, c.title`

type rowScanner interface{ Scan(dest ...any) error }

func scan(r rowScanner) (*Conversation, error) {
	var c Conversation
	var project, room, summary, title sql.NullString
	var meta, themes string
	var created, updated int64
	var ended sql.NullInt64
	if err := r.Scan(&c.ID, &c.Workspace, &c.Platform, &project, &room, &meta, &c.Status, &summary, &themes,
		&c.ExchangeCount, &created, &updated, &ended, &title); err != nil {
		return nil, err
	}
	c.ProjectContext, c.ExternalRoomID, c.Summary, c.Title = project.String, room.String, summary.String, title.String
	if err := json.Unmarshal([]byte(meta), &c.Metadata); err != nil {
		return nil, fmt.Errorf("conversation %s metadata: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(themes), &c.Themes); err != nil {
		return nil, fmt.Errorf("conversation %s themes: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	if ended.Valid {
		t := store.FromMicros(ended.Int64)
		c.EndedAt = &t
	}
	return &c, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) get(ctx context.Context, q querier, workspace, id string) (*Conversation, error) {
	c, err := scan(q.QueryRowContext(ctx, s.st.Q(`SELECT `+cols+` FROM conversations c WHERE c.id = ? AND c.workspace = ?`), id, workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.Missing("session", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load conversation: %w", err)
	}
	return c, nil
}

// Get returns conversation id of the workspace.
func (s *Store) Get(ctx context.Context, workspace, id string) (*Conversation, error) {
	return s.get(ctx, s.st.DB(), workspace, id)
}

// End closes an active conversation with a summary, themes and a final
// status (completed or abandoned). Ending one that is not active is a
// CONFLICT.
func (s *Store) End(ctx context.Context, workspace, id, summary string, themes []string, status string) (*Conversation, error) {
	if status == "" {
		status = Completed
	}
	if status != Completed && status != Abandoned {
		return nil, errs.Invalid("status", "must be %q or %q", Completed, Abandoned)
	}
	if themes == nil {
		themes = []string{}
	}
	th, _ := json.Marshal(themes)
	var out *Conversation
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		c, err := s.get(ctx, tx, workspace, id)
		if err != nil {
			return err
		}
		if c.Status != Active {
			return errs.E(errs.Conflict, "session %q is already %s", id, c.Status)
		}
		now := s.now()
		r, err := tx.ExecContext(ctx, s.st.Q(`UPDATE conversations SET status = ?, summary = ?, themes = ?, updated_at = ?, ended_at = ?
			WHERE id = ? AND workspace = ? AND status = ?`), status, nullStr(summary), string(th), store.Micros(now), store.Micros(now), id, workspace, Active)
		if err != nil {
			return fmt.Errorf("end conversation: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errs.E(errs.Conflict, "session %q was ended concurrently", id)
		}
		c.Status, c.Summary, c.Themes, c.UpdatedAt, c.EndedAt = status, summary, themes, now, &now
		out = c
		return nil
	})
	return out, err
}

// Filter selects conversations for [Store.List].
type Filter struct {
	Platform, ProjectContext, Status, ExternalRoomID string
	// Owner, when set, selects the conversations of that user only (what a
	// user who is not an admin sees).
	Owner         string
	Limit, Offset int
}

// List returns the conversations of the workspace under f, newest first.
func (s *Store) List(ctx context.Context, workspace string, f Filter) ([]*Conversation, error) {
	where := []string{"c.workspace = ?"}
	args := []any{workspace}
	for _, c := range []struct{ col, v string }{{"platform", f.Platform}, {"project_context", f.ProjectContext}, {"status", f.Status},
		{"external_room_id", f.ExternalRoomID}, {"owner_id", f.Owner}} {
		if c.v != "" {
			where = append(where, "c."+c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if f.Limit <= 0 {
		f.Limit = 20
	}
	args = append(args, f.Limit, f.Offset)
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT `+cols+` FROM conversations c WHERE `+strings.Join(where, " AND ")+
		` ORDER BY c.created_at DESC, c.id DESC LIMIT ? OFFSET ?`), args...)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	defer rows.Close()
	out := []*Conversation{}
	for rows.Next() {
		c, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list conversations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Append adds an exchange to an active conversation. Sequence numbers are
// allocated in the same transaction as the insert by incrementing the
// conversation's exchange count, which serializes appenders on the
// conversation's row: they stay 1..N with no gap or duplicate under any
// concurrency, and a failed append leaves no trace.
func (s *Store) Append(ctx context.Context, workspace, id, role, content string, toolUses []any) (*Exchange, error) {
	return s.AppendAt(ctx, workspace, id, role, content, toolUses, time.Time{})
}

// AppendAt is [Store.Append] with the exchange's time: at, when it is not
// zero, instead of now (importing a history: the time is what
// exchange_search's validity window reads). Sequence numbers still follow
// the order of appending.
func (s *Store) AppendAt(ctx context.Context, workspace, id, role, content string, toolUses []any, at time.Time) (*Exchange, error) {
	if toolUses == nil {
		toolUses = []any{}
	}
	tu, err := json.Marshal(toolUses)
	if err != nil {
		return nil, errs.Invalid("tool_uses", "cannot be encoded: %v", err)
	}
	eid, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("new exchange id: %w", err)
	}
	now := s.now()
	created := now
	if !at.IsZero() {
		created = at.UTC().Truncate(time.Microsecond)
	}
	ex := &Exchange{ID: eid.String(), ConversationID: id, Role: role, Content: content, ToolUses: toolUses, CreatedAt: created}
	err = s.st.Tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, s.st.Q(`UPDATE conversations SET exchange_count = exchange_count + 1, updated_at = ?
			WHERE id = ? AND workspace = ? AND status = ? RETURNING exchange_count`), store.Micros(now), id, workspace, Active).Scan(&ex.Seq)
		if errors.Is(err, sql.ErrNoRows) {
			c, gerr := s.get(ctx, tx, workspace, id)
			if gerr != nil {
				return gerr
			}
			return errs.E(errs.Conflict, "session %q is %s; exchanges can only be added to an active session", id, c.Status)
		}
		if err != nil {
			return fmt.Errorf("allocate exchange seq: %w", err)
		}
		_, err = tx.ExecContext(ctx, s.st.Q(`INSERT INTO exchanges (id, conversation_id, workspace, seq, role, content, tool_uses, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), ex.ID, id, workspace, ex.Seq, role, content, string(tu), store.Micros(created))
		if err != nil {
			return fmt.Errorf("insert exchange: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.vectors != nil {
		s.vectors.Notify() // the embedding job embeds the new exchange
	}
	return ex, nil
}

// Exchanges returns up to limit exchanges of the conversation from offset
// (in sequence order) and the conversation's exchange count. A negative
// offset counts from the end (-10 is the last ten).
func (s *Store) Exchanges(ctx context.Context, workspace, id string, limit, offset int) ([]Exchange, int, error) {
	c, err := s.Get(ctx, workspace, id)
	if err != nil {
		return nil, 0, err
	}
	if offset < 0 {
		offset = max(0, c.ExchangeCount+offset)
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, seq, role, content, tool_uses, created_at FROM exchanges
		WHERE conversation_id = ? AND seq > ? AND seq <= ? ORDER BY seq`), id, offset, offset+limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list exchanges: %w", err)
	}
	defer rows.Close()
	out := []Exchange{}
	for rows.Next() {
		var e Exchange
		var tu string
		var created int64
		if err := rows.Scan(&e.ID, &e.Seq, &e.Role, &e.Content, &tu, &created); err != nil {
			return nil, 0, fmt.Errorf("list exchanges: %w", err)
		}
		if err := json.Unmarshal([]byte(tu), &e.ToolUses); err != nil {
			return nil, 0, fmt.Errorf("exchange %s tool_uses: %w", e.ID, err)
		}
		e.ConversationID, e.CreatedAt = id, store.FromMicros(created)
		out = append(out, e)
	}
	return out, c.ExchangeCount, rows.Err()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NewSession starts an active conversation (platform "api") in workspace
// and returns its id; the pipeline uses it for calls that name no session.
func (s *Store) NewSession(ctx context.Context, workspace string) (string, error) {
	c, err := s.Create(ctx, Draft{Workspace: workspace})
	if err != nil {
		return "", err
	}
	return c.ID, nil
}
