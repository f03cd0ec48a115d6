package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/cursor"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Page sizes of [Query].
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Filter selects traced calls. Empty fields do not filter.
type Filter struct {
	// Tool is the tool's flat name ("belief_get", "dev__github__search");
	// calls of unknown tools are matched by the name they were called with.
	Tool string
	// Source is "local" or "mcp".
	Source string
	// Session is a session (conversation) id.
	Session string
	// Workspace is a workspace id.
	Workspace string
	// Outcome is "ok" or "error".
	Outcome string
	// User restricts the records to one user's calls (what a user who is
	// not an admin may see).
	User string
	// Limit is the page size: 0 means [DefaultLimit], at most [MaxLimit].
	Limit int
	// Cursor is the next cursor of the previous page, or empty for the first.
	Cursor string
}

// Name is the flat name of the traced tool: the name the tool is served
// under (see [registry.ID.Name]), or for a call of an unknown tool the name
// it was called with.
func (r Record) Name() string {
	if r.Toolbox == "" {
		return r.Tool
	}
	return registry.ID{Toolbox: r.Toolbox, Server: r.Server, Tool: r.Tool}.Name()
}

// Query returns the traced calls that match f, most recently recorded first,
// one page at a time. next is the cursor of the following page, or empty when
// there is none.
//
// Pages follow the traces' sequence numbers (keyset pagination), so records
// written while a client pages never shift a page: each record is returned
// once, and records newer than the first page are not returned by later
// pages. Cursors are opaque and tamper-evident: they carry the last sequence
// number and an HMAC-SHA256 with key over it and the filter, so a cursor that
// was altered, made up, issued with another key or used with another filter
// is rejected. Invalid filters and cursors are BAD_REQUEST [*errs.Error]s
// whose Field names the offending parameter ("limit", "cursor", ...).
func Query(ctx context.Context, st *store.Store, key []byte, f Filter) (records []Record, next string, err error) {
	if len(key) == 0 {
		return nil, "", errors.New("trace: query without a cursor key")
	}
	if e := f.validate(); e != nil {
		return nil, "", e
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	var where []string
	var args []any
	if f.Tool != "" {
		toolbox, server, tool := registry.BuiltinToolbox, "", f.Tool
		if parts := strings.Split(f.Tool, "__"); len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "" {
			toolbox, server, tool = parts[0], parts[1], parts[2]
		}
		if server == "" {
			where = append(where, "((toolbox = ? AND tool = ?) OR (toolbox = '' AND tool = ?))")
			args = append(args, toolbox, tool, f.Tool)
		} else {
			where = append(where, "((toolbox = ? AND server = ? AND tool = ?) OR (toolbox = '' AND tool = ?))")
			args = append(args, toolbox, server, tool, f.Tool)
		}
	}
	for _, c := range []struct{ col, val string }{
		{"source", f.Source}, {"session_id", f.Session}, {"workspace", f.Workspace}, {"outcome", f.Outcome}, {"user_id", f.User},
	} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if f.Cursor != "" {
		after, e := decodeCursor(key, f, f.Cursor)
		if e != nil {
			return nil, "", e
		}
		where = append(where, "seq < ?")
		args = append(args, after)
	}
	q := `SELECT seq, request_id, surface, toolbox, server, tool, source, session_id, workspace,
		started_at, duration_us, outcome, error_code, args_bytes, result_bytes, user_id FROM traces`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY seq DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := st.DB().QueryContext(ctx, st.Q(q), args...)
	if err != nil {
		return nil, "", fmt.Errorf("trace: query: %w", err)
	}
	defer rows.Close()
	var last int64
	for rows.Next() {
		if len(records) == limit {
			next = encodeCursor(key, f, last)
			break
		}
		var r Record
		var session, code, user sql.NullString
		var started, durUS int64
		if err := rows.Scan(&last, &r.RequestID, &r.Surface, &r.Toolbox, &r.Server, &r.Tool, &r.Source, &session,
			&r.Workspace, &started, &durUS, &r.Outcome, &code, &r.ArgsBytes, &r.ResultBytes, &user); err != nil {
			return nil, "", fmt.Errorf("trace: query: %w", err)
		}
		r.SessionID, r.ErrorCode, r.UserID = session.String, code.String, user.String
		r.StartedAt = store.FromMicros(started)
		r.Duration = time.Duration(durUS) * time.Microsecond
		records = append(records, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("trace: query: %w", err)
	}
	return records, next, nil
}

// validate checks the filter's values; errors name the parameter.
func (f *Filter) validate() *errs.Error {
	if f.Source != "" && f.Source != string(registry.Local) && f.Source != string(registry.MCP) {
		return errs.Invalid("source", "must be %q or %q, got %q", registry.Local, registry.MCP, f.Source)
	}
	if f.Outcome != "" && f.Outcome != OK && f.Outcome != Error {
		return errs.Invalid("outcome", "must be %q or %q, got %q", OK, Error, f.Outcome)
	}
	for _, p := range []struct {
		name, val string
		max       int
	}{{"tool", f.Tool, 400}, {"session", f.Session, 200}, {"workspace", f.Workspace, 200}} {
		if len(p.val) > p.max {
			return errs.Invalid(p.name, "is %d bytes; the limit is %d", len(p.val), p.max)
		}
		if !utf8.ValidString(p.val) {
			return errs.Invalid(p.name, "is not valid UTF-8")
		}
	}
	if f.Limit < 0 || f.Limit > MaxLimit {
		return errs.Invalid("limit", "must be between 1 and %d, got %d", MaxLimit, f.Limit)
	}
	if len(f.Cursor) > 200 {
		return errs.Invalid("cursor", "%s", cursor.ErrInvalid)
	}
	return nil
}

// cursorLabel separates trace cursors from other cursors (package cursor).
const cursorLabel = "nexus/trace-cursor"

// scope is a query's identity in its cursor: the filter, Limit aside (a
// client may change the page size).
func (f Filter) scope() []string {
	return []string{f.Tool, f.Source, f.Session, f.Workspace, f.Outcome, f.User}
}

func encodeCursor(key []byte, f Filter, seq int64) string {
	return cursor.Signer{Key: key, Label: cursorLabel}.Encode(seq, f.scope()...)
}

func decodeCursor(key []byte, f Filter, s string) (int64, *errs.Error) {
	seq, err := cursor.Signer{Key: key, Label: cursorLabel}.Decode(s, f.scope()...)
	if err != nil || seq <= 0 {
		return 0, errs.Invalid("cursor", "%s", cursor.ErrInvalid)
	}
	return seq, nil
}
