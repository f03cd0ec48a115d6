package vkb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/vkb"
)

// ownersHarness calls the vkb tools through the real pipeline as *who,
// which the test changes between calls.
func ownersHarness(t *testing.T, st *store.Store, who *principal.Principal) pipelinetest.Valence {
	reg := registry.New()
	sub := substrate.New(st, nil)
	conv := conversation.New(st)
	if err := sub.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := vkb.New(st, conv, sub, nil).Register(reg); err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv,
		Principal: func(context.Context) (principal.Principal, bool) { return *who, true }})
	return pipelinetest.Valence{T: t, St: st, P: p, Transport: "test"}.In("manage-ws")
}

// TestSessionRename: the stored title is trimmed, returned by session_get
// and session_list, and only the owner (or an admin) may set it; bad titles
// are refused naming the field and change nothing.
func TestSessionRename(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		who := principal.Principal{ID: "alice", Role: principal.Member}
		h := ownersHarness(t, st, &who)
		id := obj(h.Call("session_start", map[string]any{"platform": "slack"})["session"])["id"].(string)
		if s := obj(h.Call("session_get", map[string]any{"session_id": id})["session"]); s["title"] != nil {
			t.Fatalf("a new session has a title: %v", s)
		}
		s := obj(h.Call("session_rename", map[string]any{"session_id": id, "title": "  Transfer plan  "})["session"])
		if s["title"] != "Transfer plan" || s["id"] != id {
			t.Fatalf("session_rename: %v", s)
		}
		if g := obj(h.Call("session_get", map[string]any{"session_id": id})["session"]); g["title"] != "Transfer plan" {
			t.Fatalf("session_get after rename: %v", g)
		}
		if l := arr(h.Call("session_list", map[string]any{"platform": "slack"})["sessions"]); len(l) != 1 || obj(l[0])["title"] != "Transfer plan" {
			t.Fatalf("session_list after rename: %v", l)
		}
		long := strings.Repeat("é", 200)
		if s := obj(h.Call("session_rename", map[string]any{"session_id": id, "title": long})["session"]); s["title"] != long {
			t.Fatalf("a 200-character title: %v", s["title"])
		}

		for _, tt := range []struct {
			args map[string]any
			code errs.Code
			msg  string
		}{
			{map[string]any{"session_id": id, "title": "   "}, errs.BadRequest, "title: must not be empty"},
			{map[string]any{"session_id": id, "title": strings.Repeat("x", 201)}, errs.BadRequest, "title: must be at most 200 characters"},
			{map[string]any{"session_id": id}, errs.BadRequest, `missing properties: ["title"]`},
			{map[string]any{"session_id": "nope", "title": "x"}, errs.NotFound, `session "nope" not found`},
			{map[string]any{"session_id": "bad id!", "title": "x"}, errs.BadRequest, "session_id"},
		} {
			if _, err := h.Try("session_rename", tt.args); err == nil || err.Code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("session_rename %v: got %v, want %s containing %q", tt.args, err, tt.code, tt.msg)
			}
		}

		// Bob may not rename Alice's session: to him it does not exist.
		who = principal.Principal{ID: "bob", Role: principal.Member}
		if _, err := h.Try("session_rename", map[string]any{"session_id": id, "title": "Bob's now"}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("bob renamed alice's session: %v", err)
		}
		who = principal.Principal{ID: "root", Role: principal.Admin}
		if g := obj(h.Call("session_get", map[string]any{"session_id": id})["session"]); g["title"] != long {
			t.Fatalf("the title after refused renames: %v", g["title"])
		}
		if s := obj(h.Call("session_rename", map[string]any{"session_id": id, "title": "Admin's"})["session"]); s["title"] != "Admin's" {
			t.Fatalf("an admin's rename: %v", s)
		}
	})
}

// TestSessionDelete: deleting a session removes it with its exchanges (and
// their insights) in one go; only the owner (or an admin) may, and a
// session that is gone is NOT_FOUND.
func TestSessionDelete(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		who := principal.Principal{ID: "alice", Role: principal.Member}
		h := ownersHarness(t, st, &who)
		start := func() string {
			id := obj(h.Call("session_start", map[string]any{"platform": "slack"})["session"])["id"].(string)
			for i := range 3 {
				h.Call("exchange_add", map[string]any{"session_id": id, "role": "user", "content": fmt.Sprintf("turn %d of %s", i, id)})
			}
			h.Call("insight_extract", map[string]any{"session_id": id, "content": "An insight of " + id})
			return id
		}
		gone, kept := start(), start()
		exchangesOf := func(id string) int {
			var n int
			if err := st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM exchanges WHERE conversation_id = ?`), id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		// Bob may not delete Alice's session, nor learn that it exists.
		who = principal.Principal{ID: "bob", Role: principal.Member}
		if _, err := h.Try("session_delete", map[string]any{"session_id": gone}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("bob deleted alice's session: %v", err)
		}
		if n := exchangesOf(gone); n != 3 {
			t.Fatalf("a refused delete left %d exchanges, want 3", n)
		}

		who = principal.Principal{ID: "alice", Role: principal.Member}
		for _, tt := range []struct {
			args map[string]any
			code errs.Code
			msg  string
		}{
			{map[string]any{}, errs.BadRequest, `missing properties: ["session_id"]`},
			{map[string]any{"session_id": "nope"}, errs.NotFound, `session "nope" not found`},
			{map[string]any{"session_id": "bad id!"}, errs.BadRequest, "session_id"},
		} {
			if _, err := h.Try("session_delete", tt.args); err == nil || err.Code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("session_delete %v: got %v, want %s containing %q", tt.args, err, tt.code, tt.msg)
			}
		}

		res := h.Call("session_delete", map[string]any{"session_id": gone})
		if res["success"] != true || res["session_id"] != gone || res["deleted_exchanges"] != 3.0 {
			t.Fatalf("session_delete: %v", res)
		}
		if n := exchangesOf(gone); n != 0 {
			t.Fatalf("%d exchanges of the deleted session remain", n)
		}
		var insights int
		st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM insights WHERE session_id = ?`), gone).Scan(&insights)
		if insights != 0 {
			t.Fatalf("%d insights of the deleted session remain", insights)
		}
		if _, err := h.Try("session_get", map[string]any{"session_id": gone}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("session_get of a deleted session: %v", err)
		}
		if l := arr(h.Call("session_list", map[string]any{"platform": "slack"})["sessions"]); len(l) != 1 || obj(l[0])["id"] != kept {
			t.Fatalf("session_list after delete: %v", l)
		}
		if n := exchangesOf(kept); n != 3 {
			t.Fatalf("the other session has %d exchanges, want 3", n)
		}
		// The search index followed: only the other session's turns are found.
		hits := arr(h.Call("exchange_search", map[string]any{"query": "turn"})["hits"])
		if len(hits) == 0 {
			t.Fatal("exchange_search finds nothing of the kept session")
		}
		for _, x := range hits {
			if sid := obj(obj(x)["exchange"])["session_id"]; sid != kept {
				t.Fatalf("exchange_search finds an exchange of %v after its session was deleted", sid)
			}
		}
		if _, err := h.Try("session_delete", map[string]any{"session_id": gone}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("deleting twice: %v", err)
		}

		// An admin may delete anyone's session.
		who = principal.Principal{ID: "root", Role: principal.Admin}
		if res := h.Call("session_delete", map[string]any{"session_id": kept}); res["deleted_exchanges"] != 3.0 {
			t.Fatalf("an admin's delete: %v", res)
		}
		if n := h.Count("exchanges"); n != 0 {
			t.Fatalf("%d exchanges remain", n)
		}
	})
}
