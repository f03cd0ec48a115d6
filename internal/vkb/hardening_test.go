package vkb_test

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestNULIsRefusedOnBothStores: a NUL character in any string argument is a
// BAD_REQUEST naming the field on SQLite and PostgreSQL alike (PostgreSQL
// cannot store it in text), and the failed call writes nothing, not even
// its session.
func TestNULIsRefusedOnBothStores(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		beliefs, sessions := h.Count("beliefs"), h.Count("conversations")
		cases := []struct {
			tool  string
			args  map[string]any
			field string
		}{
			{"belief_create", map[string]any{"content": "a\x00b"}, "content"},
			{"belief_create", map[string]any{"content": "ok", "domain_path": []any{"x", "y\x00"}}, "domain_path[1]"},
			{"belief_create", map[string]any{"content": "ok", "entities": []any{map[string]any{"name": "N\x00", "type": "concept"}}}, "entities[0].name"},
			{"session_start", map[string]any{"platform": "api", "metadata": map[string]any{"k\x00": "v"}}, "metadata.k\x00"},
			{"belief_query", map[string]any{"query": "\x00", "context": map[string]any{"sessionId": "named-nul"}}, "query"},
		}
		for _, c := range cases {
			_, err := h.Try(c.tool, c.args)
			if err == nil || err.Code != errs.BadRequest || err.Field != c.field || !strings.Contains(err.Message, "NUL") {
				t.Fatalf("%s %v: %v (field %q), want BAD_REQUEST naming %q", c.tool, c.args, err, fieldOf(err), c.field)
			}
		}
		if h.Count("beliefs") != beliefs || h.Count("conversations") != sessions {
			t.Fatal("a refused call wrote a belief or a session")
		}
	})
}

func fieldOf(e *errs.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

// TestReadsAndFailuresStoreNoSession: a session is stored by the first call
// that writes to it; reads, NOT_FOUNDs, schema failures and handler failures
// store none, whether the session is named, bound to the connection or new.
func TestReadsAndFailuresStoreNoSession(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		conn := newHarness(t, st) // calls of one MCP connection
		rest := conn
		rest.Transport = "" // calls without a connection, like REST and the CLI
		for _, h := range []struct {
			name string
			call func(string, map[string]any) (map[string]any, *errs.Error)
		}{{"connection", conn.Try}, {"no connection", rest.Try}} {
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"belief_query", map[string]any{"query": "anything"}},
				{"belief_get", map[string]any{"belief_id": "01J00000000000000000000000"}},
				{"belief_create", map[string]any{"content": ""}},
				{"belief_create", map[string]any{"nope": 1}},
				{"belief_supersede", map[string]any{"old_belief_id": "01J00000000000000000000000", "new_content": "x", "reason": "r"}},
				{"belief_query", map[string]any{"query": "x", "context": map[string]any{"sessionId": "named-read"}}},
				{"belief_create", map[string]any{"content": "", "context": map[string]any{"sessionId": "named-failure"}}},
				{"session_list", map[string]any{}},
			}
			for _, c := range calls {
				h.call(c.tool, c.args)
			}
			if n := conn.Count("conversations"); n != 0 {
				t.Fatalf("%s: %d sessions stored by reads and failures", h.name, n)
			}
		}
		// A write without a connection (REST, CLI) naming no session stores
		// no session either: its session is a one-off id for its trace.
		rest.Call("belief_create", map[string]any{"content": "a REST write"})
		if n := conn.Count("conversations"); n != 0 {
			t.Fatalf("a write without a connection stored %d sessions", n)
		}
		// The first write stores the connection's session, once.
		first := conn.Call("belief_create", map[string]any{"content": "the first write"})
		conn.Call("belief_create", map[string]any{"content": "the second write"})
		if n := conn.Count("conversations"); n != 1 {
			t.Fatalf("%d sessions after two writes on one connection, want 1", n)
		}
		_ = first
		// A named session is stored by its first write.
		conn.Call("belief_create", map[string]any{"content": "named", "context": map[string]any{"sessionId": "named-write"}})
		var ws string
		if err := st.DB().QueryRow(st.Q(`SELECT workspace FROM conversations WHERE id = ?`), "named-write").Scan(&ws); err != nil || ws != "default" {
			t.Fatalf("named session after its first write: %q, %v", ws, err)
		}
	})
}

// TestSessionAndWorkspaceMustAgree: a call naming an existing session
// together with a different explicit workspace is an error naming both; it
// never switches silently and never makes a second conversation under the
// same id.
func TestSessionAndWorkspaceMustAgree(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		h.Call("belief_create", map[string]any{"content": "in alpha", "context": map[string]any{"sessionId": "s-alpha", "workspaceId": "alpha"}})
		beliefs := h.Count("beliefs")
		for _, args := range []map[string]any{
			{"content": "x", "context": map[string]any{"sessionId": "s-alpha", "workspaceId": "beta"}},
			{"content": "x", "context": map[string]any{"sessionId": "s-alpha"}, "workspaceContext": map[string]any{"workspaceId": "beta"}},
			{"content": "x", "sessionId": "s-alpha", "workspaceContext": map[string]any{"workspaceId": "beta"}},
		} {
			_, err := h.Try("belief_create", args)
			if err == nil || err.Code != errs.Conflict || !strings.Contains(err.Message, `"alpha"`) || !strings.Contains(err.Message, `"beta"`) || !strings.Contains(err.Message, "s-alpha") {
				t.Fatalf("session of alpha with workspace beta: %v", err)
			}
		}
		if h.Count("beliefs") != beliefs {
			t.Fatal("a refused call wrote")
		}
		var n int
		st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM conversations WHERE id = ?`), "s-alpha").Scan(&n)
		if n != 1 {
			t.Fatalf("%d conversations under one id", n)
		}
		// Naming the session's own workspace, or none, is fine.
		h.Call("belief_create", map[string]any{"content": "y", "context": map[string]any{"sessionId": "s-alpha", "workspaceId": "alpha"}})
		got := h.Call("belief_query", map[string]any{"query": "alpha", "context": map[string]any{"sessionId": "s-alpha"}})
		if len(arr(got["beliefs"])) == 0 {
			t.Fatalf("the session's workspace was not used: %v", got)
		}
	})
}

// TestCreateAndReadAgree: an object returned when it is created carries the
// same timestamp strings as when it is read back (one precision
// everywhere), and a belief without a source has no "source" at all.
func TestCreateAndReadAgree(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		created := obj(h.Call("belief_create", map[string]any{"content": "precision", "valid_from": "2026-01-02T03:04:05.123456789Z"})["belief"])
		read := obj(h.Call("belief_get", map[string]any{"belief_id": created["id"]})["belief"])
		for _, k := range []string{"created_at", "updated_at", "valid_from"} {
			if created[k] != read[k] || created[k] == nil {
				t.Fatalf("belief %s: created %v, read %v", k, created[k], read[k])
			}
		}
		if _, ok := created["source"]; ok {
			t.Fatalf("belief without a source returned source: %v", created["source"])
		}
		if _, ok := read["source"]; ok {
			t.Fatalf("belief without a source read back with source: %v", read["source"])
		}
		withSource := obj(h.Call("belief_create", map[string]any{"content": "sourced", "source_type": "document", "source_ref": "r"})["belief"])
		if obj(withSource["source"])["type"] != "document" {
			t.Fatalf("a given source: %v", withSource["source"])
		}

		s := obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])
		g := obj(h.Call("session_get", map[string]any{"session_id": s["id"]})["session"])
		if s["created_at"] != g["created_at"] || s["updated_at"] != g["updated_at"] {
			t.Fatalf("session: created %v/%v, read %v/%v", s["created_at"], s["updated_at"], g["created_at"], g["updated_at"])
		}
		ex := obj(h.Call("exchange_add", map[string]any{"session_id": s["id"], "role": "user", "content": "hi"})["exchange"])
		list := arr(h.Call("exchange_list", map[string]any{"session_id": s["id"]})["exchanges"])
		if ex["created_at"] != obj(list[0])["created_at"] {
			t.Fatalf("exchange: created %v, listed %v", ex["created_at"], obj(list[0])["created_at"])
		}
	})
}
