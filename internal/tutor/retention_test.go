package tutor

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestRetention: with a fake clock, a tutoring session's messages older
// than 90 days are anonymized (vkb conversations are not), and an anonymous
// user's session idle for over a year is deleted; a second run changes
// nothing.
func TestRetention(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		reg := registry.New()
		conv := conversation.New(st)
		s := New(st, conv, Options{CursorKey: []byte("k")})
		if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.sessionTools()...); err != nil {
			t.Fatal(err)
		}
		p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv, Principal: func(ctx context.Context) (principal.Principal, bool) {
			u, ok := ctx.Value(whoKey{}).(principal.Principal)
			return u, ok
		}})
		start := func(who principal.Principal) string {
			o := p.Call(context.WithValue(ctx, whoKey{}, who), pipeline.Request{Tool: "tn_session_start", Args: []byte(`{}`), Surface: "test"})
			body, _ := o.Body()
			var out struct{ SessionID string }
			json.Unmarshal(body, &out)
			if out.SessionID == "" {
				t.Fatalf("start: %s", body)
			}
			return out.SessionID
		}
		anon := start(principal.Principal{ID: "a1", Name: "anon", Tier: "anonymous"})
		free := start(principal.Principal{ID: "f1", Name: "free", Tier: "free"})
		memory, err := conv.Create(ctx, conversation.Draft{Workspace: pipeline.DefaultWorkspace, Platform: "matrix", OwnerTier: "anonymous"})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{anon, free, memory.ID} {
			if _, err := conv.Append(ctx, pipeline.DefaultWorkspace, id, "user", "my student number is 1234", nil); err != nil {
				t.Fatal(err)
			}
		}
		// Each message has an embedding vector (hybrid search).
		vec := func() int {
			var n int
			st.DB().QueryRow(`SELECT COUNT(*) FROM embeddings WHERE kind = 'exchange'`).Scan(&n)
			return n
		}
		if _, err := st.DB().Exec(st.Q(`INSERT INTO embeddings (kind, id, workspace, model, dims, vector, content_hash, created_at)
			SELECT 'exchange', id, ?, 'm', 1, ?, ?, 0 FROM exchanges`), pipeline.DefaultWorkspace, []byte{0, 0, 128, 63}, []byte{1}); err != nil || vec() != 3 {
			t.Fatalf("vectors: %d, %v", vec(), err)
		}
		// Everything happened 100 days ago.
		old := store.Micros(time.Now().Add(-100 * 24 * time.Hour))
		st.DB().Exec(st.Q(`UPDATE exchanges SET created_at = ?`), old)
		st.DB().Exec(st.Q(`UPDATE conversations SET updated_at = ?, created_at = ?`), old, old)
		r, err := s.Retain(ctx, time.Now())
		if err != nil || r.Anonymized != 2 || r.Deleted != 0 {
			t.Fatalf("at 100 days: %+v %v", r, err)
		}
		var content string
		st.DB().QueryRow(st.Q(`SELECT content FROM exchanges WHERE conversation_id = ?`), memory.ID).Scan(&content)
		if content != "my student number is 1234" {
			t.Fatalf("a vkb conversation was anonymized: %q", content)
		}
		st.DB().QueryRow(st.Q(`SELECT content FROM exchanges WHERE conversation_id = ?`), free).Scan(&content)
		if content != Anonymized {
			t.Fatalf("tutoring message after 100 days: %q", content)
		}
		var left string
		if err := st.DB().QueryRow(`SELECT e.conversation_id FROM embeddings v JOIN exchanges e ON e.id = v.id`).Scan(&left); err != nil || vec() != 1 || left != memory.ID {
			t.Fatalf("vectors after anonymizing: %d left (of %q, %v), want only the vkb conversation's", vec(), left, err)
		}
		// A year and more later: the anonymous user's session goes, the free user's stays.
		r, err = s.Retain(ctx, time.Now().Add(300*24*time.Hour))
		if err != nil || r.Anonymized != 0 || r.Deleted != 1 {
			t.Fatalf("at 400 days: %+v %v", r, err)
		}
		for id, want := range map[string]bool{anon: false, free: true, memory.ID: true} {
			var n int
			st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM conversations WHERE id = ?`), id).Scan(&n)
			if (n == 1) != want {
				t.Errorf("session %s exists: %v, want %v", id, n == 1, want)
			}
		}
		// The conversation store forgets the deleted session: named again,
		// it does not exist.
		if _, _, ok, err := conv.Lookup(ctx, anon); ok || err != nil {
			t.Errorf("the deleted session is still known: %v %v", ok, err)
		}
		if r, err := s.Retain(ctx, time.Now().Add(300*24*time.Hour)); err != nil || r != (Retained{}) {
			t.Fatalf("a second run: %+v %v", r, err)
		}
	})
}
