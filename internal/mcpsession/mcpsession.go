// Package mcpsession keeps MCP sessions over Streamable HTTP in the store, so
// that any replica serves any session (SPEC section 7). A session's row holds
// what a replica needs to re-create it when a request for it arrives and the
// replica does not hold it: the client's initialize parameters, its log
// level and, on the bounded surface, the tools it discovered. The
// conversations a session's calls are bound to are kept here too
// ([Store.Bound], [Store.Bind], for the pipeline).
package mcpsession

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Session is the stored state of one MCP session.
type Session struct {
	ID, Surface, User string
	// Params are the client's initialize parameters, as it sent them.
	Params json.RawMessage
	// LogLevel is the level the client set with logging/setLevel ("" when
	// it set none).
	LogLevel string
	// Discovered maps the names the session calls its discovered tools by
	// (bounded surface) to the tools' flat names.
	Discovered map[string]string
	// Opened are the toolboxes the session opened (bounded surface:
	// open_toolbox), by name.
	Opened []string
}

// openedPrefix starts the key under which an opened toolbox is kept beside
// the discovered tools: a tool's name never holds ":" (the MCP name rules),
// so no discovered tool's key can be one.
const openedPrefix = "toolbox:"

// Store reads and writes sessions.
type Store struct {
	st *store.Store
	// ttl is how long a session may go unseen before it cannot be
	// re-created: its client must initialize again, as after the SDK's
	// idle timeout.
	ttl time.Duration

	mu   sync.Mutex
	seen map[string]time.Time // when each session's seen_at was last written
	// bus tells the other replicas what changed in a session (nil: none
	// to tell), and changed are the functions told of their changes.
	bus     *events.Bus
	changed []func(Change)
}

// touchEvery is how often a live session's seen_at is written, at most.
const touchEvery = time.Minute

// New returns the sessions of st; a session unseen for ttl is gone.
func New(st *store.Store, ttl time.Duration) *Store {
	return &Store{st: st, ttl: ttl, seen: map[string]time.Time{}}
}

// Save stores a session that has just initialized. A session re-created
// from its row (see package httpapi) initializes again: its row is kept as
// it is, only seen again.
func (s *Store) Save(ctx context.Context, sess Session) error {
	stored := maps.Clone(orEmpty(sess.Discovered))
	for _, tb := range sess.Opened {
		stored[openedPrefix+tb] = tb
	}
	disc, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("mcpsession: save %s: %w", sess.ID, err)
	}
	now := store.Micros(time.Now())
	_, err = s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO mcp_sessions (id, surface, user_id, params, log_level, discovered, created_at, seen_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`),
		sess.ID, sess.Surface, sess.User, string(sess.Params), sess.LogLevel, string(disc), now, now)
	if err != nil {
		return fmt.Errorf("mcpsession: save %s: %w", sess.ID, err)
	}
	s.mu.Lock()
	s.seen[sess.ID] = time.Now()
	s.mu.Unlock()
	return nil
}

// Load returns session id; ok is false when there is none, or it went
// unseen longer than the store's ttl.
func (s *Store) Load(ctx context.Context, id string) (sess Session, ok bool, err error) {
	var params, disc string
	var seen int64
	err = s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT surface, user_id, params, log_level, discovered, seen_at FROM mcp_sessions WHERE id = ?`), id).
		Scan(&sess.Surface, &sess.User, &params, &sess.LogLevel, &disc, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("mcpsession: load %s: %w", id, err)
	}
	if s.ttl > 0 && time.Since(store.FromMicros(seen)) > s.ttl {
		return Session{}, false, nil
	}
	sess.ID, sess.Params = id, json.RawMessage(params)
	if err := json.Unmarshal([]byte(disc), &sess.Discovered); err != nil {
		return Session{}, false, fmt.Errorf("mcpsession: load %s: discovered tools: %w", id, err)
	}
	for key, tb := range sess.Discovered {
		if strings.HasPrefix(key, openedPrefix) {
			delete(sess.Discovered, key)
			sess.Opened = append(sess.Opened, tb)
		}
	}
	slices.Sort(sess.Opened)
	return sess, true, nil
}

// Touch records that session id is in use, writing at most once a minute
// per session and process.
func (s *Store) Touch(ctx context.Context, id string) error {
	now := time.Now()
	s.mu.Lock()
	last, ok := s.seen[id]
	if ok && now.Sub(last) < touchEvery {
		s.mu.Unlock()
		return nil
	}
	s.seen[id] = now
	s.mu.Unlock()
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE mcp_sessions SET seen_at = ? WHERE id = ?`), store.Micros(now), id); err != nil {
		return fmt.Errorf("mcpsession: touch %s: %w", id, err)
	}
	return nil
}

// Delete removes session id and its conversation bindings: its client
// ended it.
func (s *Store) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	delete(s.seen, id)
	s.mu.Unlock()
	return s.st.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM mcp_sessions WHERE id = ?`), id); err != nil {
			return fmt.Errorf("mcpsession: delete %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM mcp_transport_sessions WHERE transport = ?`), TransportKey(id)); err != nil {
			return fmt.Errorf("mcpsession: delete %s: %w", id, err)
		}
		return nil
	})
}

// SetLogLevel stores the log level session id asked for; a change is told
// to the other replicas.
func (s *Store) SetLogLevel(ctx context.Context, id, level string) error {
	res, err := s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE mcp_sessions SET log_level = ? WHERE id = ? AND log_level <> ?`), level, id, level)
	if err != nil {
		return fmt.Errorf("mcpsession: log level of %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return s.publish(ctx, Change{ID: id, LogLevel: level})
	}
	return nil
}

// Discover stores that session id calls tool flat by name; a change is
// told to the other replicas.
func (s *Store) Discover(ctx context.Context, id, name, flat string) error {
	return s.put(ctx, id, name, flat)
}

// Open stores that session id opened toolbox; a change is told to the
// other replicas (as a discovery: Change.Discovered).
func (s *Store) Open(ctx context.Context, id, toolbox string) error {
	return s.put(ctx, id, openedPrefix+toolbox, toolbox)
}

// put sets key to value in session id's discovered column.
func (s *Store) put(ctx context.Context, id, name, flat string) error {
	changed := false
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		changed = false
		var disc string
		err := tx.QueryRowContext(ctx, s.st.Q(`SELECT discovered FROM mcp_sessions WHERE id = ?`+forUpdate(s.st)), id).Scan(&disc)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // a session without a row (stdio): nothing to keep
		}
		if err != nil {
			return fmt.Errorf("mcpsession: discovered tools of %s: %w", id, err)
		}
		m := map[string]string{}
		if err := json.Unmarshal([]byte(disc), &m); err != nil {
			return fmt.Errorf("mcpsession: discovered tools of %s: %w", id, err)
		}
		if m[name] == flat {
			return nil
		}
		m[name] = flat
		b, _ := json.Marshal(m)
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE mcp_sessions SET discovered = ? WHERE id = ?`), string(b), id); err != nil {
			return fmt.Errorf("mcpsession: discovered tools of %s: %w", id, err)
		}
		changed = true
		return nil
	})
	if err == nil && changed {
		return s.publish(ctx, Change{ID: id, Discovered: true})
	}
	return err
}

// Prune deletes the sessions unseen for longer than the ttl, and their
// bindings; it returns how many sessions it deleted.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	if s.ttl <= 0 {
		return 0, nil
	}
	// This process's record of when it last touched each session goes
	// with the sessions: an entry older than the ttl is of a session gone.
	s.mu.Lock()
	for id, at := range s.seen {
		if time.Since(at) > s.ttl {
			delete(s.seen, id)
		}
	}
	s.mu.Unlock()
	cutoff := store.Micros(time.Now().Add(-s.ttl))
	var n int64
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM mcp_transport_sessions WHERE transport IN (SELECT 'mcp:' || id FROM mcp_sessions WHERE seen_at < ?)`), cutoff); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM mcp_sessions WHERE seen_at < ?`), cutoff)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("mcpsession: prune: %w", err)
	}
	return n, nil
}

// TransportKey is the pipeline's transport key of the MCP session id: the
// same on every replica.
func TransportKey(id string) string { return "mcp:" + id }

// Bound returns the conversations transport is bound to, oldest first.
func (s *Store) Bound(ctx context.Context, transport string) ([]pipeline.Bound, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT session_id, workspace, user_id FROM mcp_transport_sessions WHERE transport = ? ORDER BY bound_at, workspace`), transport)
	if err != nil {
		return nil, fmt.Errorf("mcpsession: bindings of %s: %w", transport, err)
	}
	defer rows.Close()
	var out []pipeline.Bound
	for rows.Next() {
		var b pipeline.Bound
		if err := rows.Scan(&b.SessionID, &b.Workspace, &b.User); err != nil {
			return nil, fmt.Errorf("mcpsession: bindings of %s: %w", transport, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Bind stores b for transport unless the transport has a binding for b's
// user and workspace already, and returns the stored one.
func (s *Store) Bind(ctx context.Context, transport string, b pipeline.Bound) (pipeline.Bound, error) {
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO mcp_transport_sessions (transport, user_id, workspace, session_id, bound_at)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (transport, user_id, workspace) DO NOTHING`),
		transport, b.User, b.Workspace, b.SessionID, store.Micros(time.Now())); err != nil {
		return pipeline.Bound{}, fmt.Errorf("mcpsession: bind %s: %w", transport, err)
	}
	got := pipeline.Bound{Workspace: b.Workspace, User: b.User}
	if err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT session_id FROM mcp_transport_sessions WHERE transport = ? AND user_id = ? AND workspace = ?`),
		transport, b.User, b.Workspace).Scan(&got.SessionID); err != nil {
		return pipeline.Bound{}, fmt.Errorf("mcpsession: bind %s: %w", transport, err)
	}
	return got, nil
}

func forUpdate(st *store.Store) string {
	if st.Dialect() == store.Postgres {
		return " FOR UPDATE"
	}
	return ""
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
