package tutor_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/tutor"
	"github.com/nexus-mcp/nexus/internal/vkb"
)

// harness calls the tutor (and vkb) tools through the real pipeline.
type harness struct {
	pipelinetest.Valence
	tut *tutor.Server
}

func newHarness(t *testing.T, st *store.Store) harness {
	reg := registry.New()
	conv := conversation.New(st)
	tut := tutor.New(st, conv, tutor.Options{CursorKey: []byte("test-key")})
	if err := tut.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := vkb.New(st, conv, nil, nil).Register(reg); err != nil {
		t.Fatal(err)
	}
	return harness{pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg, Sessions: conv}), Transport: "test"}, tut}
}

var (
	obj = pipelinetest.Obj
	arr = pipelinetest.Arr
)

func TestSessionTools(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		start := h.Call("tn_session_start", map[string]any{"context": map[string]any{"program": "CPSC"}})
		id, _ := start["sessionId"].(string)
		if len(id) != 26 || start["expiresAt"] == nil {
			t.Fatalf("tn_session_start: %v", start)
		}
		// The session is a conversation: the vkb tools see it.
		if g := obj(h.Call("session_get", map[string]any{"session_id": id})["session"]); g["platform"] != "tutor" {
			t.Fatalf("session_get of a tutoring session: %v", g)
		}
		for _, m := range []struct{ role, content string }{{"user", "Does CPSC 1150 transfer to SFU?"}, {"assistant", "Yes: SFU CMPT 120."}, {"user", "And MATH 1271?"}} {
			h.Call("exchange_add", map[string]any{"session_id": id, "role": m.role, "content": m.content})
		}
		// Asking without a model is UNPROCESSABLE_ENTITY saying so; a draft is pending.
		if _, e := h.Try("tn_session_ask", map[string]any{"sessionId": id, "message": "hello"}); e == nil || e.Code != errs.UnprocessableEntity || !strings.Contains(e.Message, "language model") {
			t.Fatalf("tn_session_ask without a model: %v", e)
		}
		d1 := h.Call("tn_session_ask", map[string]any{"sessionId": id, "message": "draft one", "draft": true})
		d2 := h.Call("tn_session_ask", map[string]any{"sessionId": id, "message": "draft two", "draft": true})
		if arr(d1["eventsEmitted"])[0] != "message.pending" || d1["eventId"] == d2["eventId"] {
			t.Fatalf("drafts: %v %v", d1, d2)
		}
		ss := h.Call("tn_session_sync_status", map[string]any{"sessionId": id})
		if ss["pendingCount"] != 2.0 || ss["synced"] != false || ss["lastSeq"] != 3.0 {
			t.Fatalf("sync status: %v", ss)
		}
		// History: paginated, in order, cursors bound to the session.
		p1 := h.Call("tn_session_history", map[string]any{"sessionId": id, "limit": 2})
		items := arr(p1["items"])
		if len(items) != 2 || obj(items[0])["seq"] != 1.0 || p1["hasMore"] != true || p1["totalCount"] != 3.0 || len(obj(items[0])["eventId"].(string)) != 26 {
			t.Fatalf("history page 1: %v", p1)
		}
		p2 := h.Call("tn_session_history", map[string]any{"sessionId": id, "limit": 2, "cursor": p1["nextCursor"]})
		if items := arr(p2["items"]); len(items) != 1 || obj(items[0])["content"] != "And MATH 1271?" || p2["hasMore"] != false || p2["nextCursor"] != nil {
			t.Fatalf("history page 2: %v", p2)
		}
		cur := p1["nextCursor"].(string)
		altered := cur[:len(cur)-2] + map[bool]string{true: "AA", false: "AB"}[strings.HasSuffix(cur, "AB")]
		if _, e := h.Try("tn_session_history", map[string]any{"sessionId": id, "cursor": altered}); e == nil || e.Code != errs.BadRequest || e.Field != "cursor" {
			t.Fatalf("altered cursor: %v", e)
		}
		if _, e := h.Try("tn_session_history", map[string]any{"sessionId": id, "limit": 101}); e == nil || e.Code != errs.BadRequest || !strings.Contains(e.Field+e.Message, "limit") {
			t.Fatalf("limit 101: %v", e)
		}
		// Resume: recent messages and the pending ones.
		r := h.Call("tn_session_resume", map[string]any{"sessionId": id})
		if r["canContinue"] != true || len(arr(r["recent"])) != 3 || len(arr(r["pending"])) != 2 {
			t.Fatalf("resume: %v", r)
		}
		// Export, then import into another store: the same snapshot.
		snap := h.Call("tn_session_export", map[string]any{"sessionId": id})
		if len(arr(snap["events"])) != 3 || len(arr(snap["pending"])) != 2 {
			t.Fatalf("export: %v", snap)
		}
		raw, _ := json.Marshal(snap)
		parsed, err := tutor.ReadSnapshot(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		other := newHarness(t, storetest.OpenTestSQLite(t))
		if err := other.tut.ImportSession(t.Context(), pipeline.DefaultWorkspace, parsed); err != nil {
			t.Fatal(err)
		}
		again := other.Call("tn_session_export", map[string]any{"sessionId": id})
		delete(snap, "exportedAt")
		delete(again, "exportedAt")
		a, _ := json.Marshal(snap)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip differs:\n%s\n%s", a, b)
		}
		if err := other.tut.ImportSession(t.Context(), pipeline.DefaultWorkspace, parsed); err == nil {
			t.Fatal("importing a session twice succeeded")
		}
		// A snapshot that fails part way (a pending message twice) writes nothing.
		broken := parsed
		broken.Session.SessionID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
		broken.Pending = append(broken.Pending, broken.Pending[0])
		if err := other.tut.ImportSession(t.Context(), pipeline.DefaultWorkspace, broken); err == nil {
			t.Fatal("a snapshot with a pending message twice imported")
		}
		if _, e := other.Try("tn_session_resume", map[string]any{"sessionId": broken.Session.SessionID}); e == nil || e.Code != errs.NotFound {
			t.Fatalf("a failed import left its session: %v", e)
		}
		// Cancel one pending message by id, then the rest; sent messages stay.
		pend := arr(r["pending"])
		first := obj(pend[0])["eventId"].(string)
		sent := obj(items[0])["eventId"].(string)
		c := h.Call("tn_session_cancel_pending", map[string]any{"sessionId": id, "eventIds": []string{first, sent}})
		if len(arr(c["cancelled"])) != 1 || arr(c["notPending"])[0] != sent || c["pendingCount"] != 1.0 {
			t.Fatalf("cancel one: %v", c)
		}
		c = h.Call("tn_session_cancel_pending", map[string]any{"sessionId": id})
		if len(arr(c["cancelled"])) != 1 || c["pendingCount"] != 0.0 {
			t.Fatalf("cancel the rest: %v", c)
		}
		if hs := h.Call("tn_session_history", map[string]any{"sessionId": id}); hs["totalCount"] != 3.0 {
			t.Fatalf("sent messages after cancelling: %v", hs)
		}
		// End; a second end is a conflict; resume says it cannot go on.
		e := h.Call("tn_session_end", map[string]any{"sessionId": id, "summary": "transfer questions"})
		if e["status"] != "completed" || e["endedAt"] == nil {
			t.Fatalf("end: %v", e)
		}
		if r := h.Call("tn_session_resume", map[string]any{"sessionId": id}); r["canContinue"] != false || r["reason"] == nil {
			t.Fatalf("resume of an ended session: %v", r)
		}
		// Bad input names the field.
		for _, tc := range []struct {
			tool  string
			args  map[string]any
			field string
			code  errs.Code
		}{
			{"tn_session_resume", map[string]any{"sessionId": "not-a-ulid"}, "sessionId", errs.BadRequest},
			{"tn_session_resume", map[string]any{}, "sessionId", errs.BadRequest},
			{"tn_session_resume", map[string]any{"sessionId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "", errs.NotFound},
			{"tn_session_ask", map[string]any{"sessionId": id, "message": ""}, "message", errs.BadRequest},
		} {
			_, e := h.Try(tc.tool, tc.args)
			if e == nil || e.Code != tc.code || (tc.field != "" && !strings.Contains(e.Field+" "+e.Message, tc.field)) {
				t.Errorf("%s %v: %v, want %s naming %q", tc.tool, tc.args, e, tc.code, tc.field)
			}
		}
	})
}
