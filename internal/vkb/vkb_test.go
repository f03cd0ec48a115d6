package vkb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// newHarness calls vkb (and substrate) tools through the real pipeline, with
// the real conversation store as its sessions.
func newHarness(t *testing.T, st *store.Store) pipelinetest.Valence {
	reg := registry.New()
	sub := substrate.New(st, nil)
	conv := conversation.New(st)
	if err := sub.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := vkb.New(st, conv, sub, nil).Register(reg); err != nil {
		t.Fatal(err)
	}
	return pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg, Sessions: conv}), Transport: "test"}
}

var (
	obj = pipelinetest.Obj
	arr = pipelinetest.Arr
)

func TestSessionLifecycle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		s := obj(h.Call("session_start", map[string]any{"platform": "matrix", "project_context": "transfer advising",
			"external_room_id": "!room:example.com", "metadata": map[string]any{"student": "s1"}})["session"])
		id := s["id"].(string)
		if len(id) != 26 || s["status"] != "active" || s["platform"] != "matrix" || obj(s["metadata"])["student"] != "s1" {
			t.Fatalf("session_start: %v", s)
		}
		for i, role := range []string{"user", "assistant", "user"} {
			ex := obj(h.Call("exchange_add", map[string]any{"session_id": id, "role": role, "content": fmt.Sprintf("turn %d", i+1),
				"tool_uses": []any{map[string]any{"tool": "belief_query"}}})["exchange"])
			if ex["seq"] != float64(i+1) {
				t.Fatalf("exchange %d seq %v", i, ex["seq"])
			}
		}
		g := h.Call("session_get", map[string]any{"session_id": id, "include_exchanges": true, "exchange_limit": 2})
		exs := arr(g["exchanges"])
		if len(exs) != 2 || obj(exs[0])["content"] != "turn 2" || obj(exs[1])["content"] != "turn 3" || obj(g["session"])["exchange_count"] != 3.0 {
			t.Fatalf("session_get recent exchanges: %v", g)
		}
		l := h.Call("exchange_list", map[string]any{"session_id": id, "limit": 2, "offset": 1})
		if exs := arr(l["exchanges"]); len(exs) != 2 || obj(exs[0])["seq"] != 2.0 || l["total_count"] != 3.0 {
			t.Fatalf("exchange_list page: %v", l)
		}
		f := h.Call("session_find_by_room", map[string]any{"external_room_id": "!room:example.com", "platform": "matrix"})
		if obj(f["session"])["id"] != id {
			t.Fatalf("find_by_room: %v", f)
		}
		if ls := h.Call("session_list", map[string]any{"platform": "matrix", "status": "active"}); len(arr(ls["sessions"])) != 1 {
			t.Fatalf("session_list: %v", ls)
		}
		e := obj(h.Call("session_end", map[string]any{"session_id": id, "summary": "Advised on CPSC transfers", "themes": []string{"transfer"}})["session"])
		if e["status"] != "completed" || e["summary"] != "Advised on CPSC transfers" || e["ended_at"] == nil {
			t.Fatalf("session_end: %v", e)
		}
		// Ended sessions refuse exchanges and a second end, and write nothing.
		before := h.Count("exchanges")
		if _, err := h.Try("exchange_add", map[string]any{"session_id": id, "role": "user", "content": "late"}); err == nil || err.Code != errs.Conflict {
			t.Fatalf("exchange_add to ended session: %v", err)
		}
		if _, err := h.Try("session_end", map[string]any{"session_id": id}); err == nil || err.Code != errs.Conflict {
			t.Fatalf("second session_end: %v", err)
		}
		if h.Count("exchanges") != before {
			t.Fatal("a refused exchange was written")
		}
		// The room's newest session is found even when it is completed.
		if f := h.Call("session_find_by_room", map[string]any{"external_room_id": "!room:example.com"}); obj(f["session"])["status"] != "completed" {
			t.Fatalf("find_by_room after end: %v", f)
		}
		if _, err := h.Try("session_find_by_room", map[string]any{"external_room_id": "!other:example.com"}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("unknown room: %v", err)
		}
	})
}

func TestPipelineSessionsAreConversations(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		// A read naming a session that does not exist does not create it.
		h.Call("belief_query", map[string]any{"query": "x", "context": map[string]any{"sessionId": "chat-42", "workspaceId": "team"}})
		if _, err := h.Try("session_get", map[string]any{"session_id": "chat-42", "workspaceContext": map[string]any{"workspaceId": "team"}}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("a read created its session: %v", err)
		}
		// The first call that writes creates it, in the call's workspace;
		// the vkb sees the same record.
		h.Call("belief_create", map[string]any{"content": "x", "context": map[string]any{"sessionId": "chat-42", "workspaceId": "team"}})
		g := h.Call("session_get", map[string]any{"session_id": "chat-42", "workspaceContext": map[string]any{"workspaceId": "team"}})
		if s := obj(g["session"]); s["workspace"] != "team" || s["status"] != "active" {
			t.Fatalf("implicit session: %v", s)
		}
		// Later calls naming it without a workspace land in its workspace.
		h.Call("exchange_add", map[string]any{"session_id": "chat-42", "role": "user", "content": "hi", "context": map[string]any{"sessionId": "chat-42"}})
		if _, err := h.Try("session_get", map[string]any{"session_id": "chat-42", "workspaceContext": map[string]any{"workspaceId": "default"}}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("session visible from the default workspace: %v", err)
		}
	})
}

func TestConcurrentAppendsAreGapFree(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		id := obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		const writers, each = 50, 4
		var wg sync.WaitGroup
		errc := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					raw, _ := json.Marshal(map[string]any{"session_id": id, "role": "user", "content": fmt.Sprintf("w%d-%d", w, i)})
					if o := h.P.Call(context.Background(), pipeline.Request{Tool: "exchange_add", Args: raw, Transport: "t"}); o.Err != nil {
						errc <- o.Err
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		rows, err := st.DB().Query(st.Q(`SELECT seq, content FROM exchanges WHERE conversation_id = ? ORDER BY seq`), id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var seqs []int
		seen := map[string]bool{}
		for rows.Next() {
			var seq int
			var content string
			rows.Scan(&seq, &content)
			seqs = append(seqs, seq)
			if seen[content] {
				t.Fatalf("exchange %q stored twice", content)
			}
			seen[content] = true
		}
		if len(seqs) != writers*each {
			t.Fatalf("%d exchanges stored, want %d", len(seqs), writers*each)
		}
		for i, s := range seqs {
			if s != i+1 {
				t.Fatalf("seq %d at position %d: gap or duplicate", s, i)
			}
		}
	})
}

func TestPatterns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		var sessions []string
		for range 6 {
			sessions = append(sessions, obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string))
		}
		p := obj(h.Call("pattern_record", map[string]any{"type": "topic_recurrence", "description": "Student keeps asking about computing science transfer credit",
			"evidence": []string{sessions[0], sessions[0]}})["pattern"])
		id := p["id"].(string)
		if p["confidence"] != 0.5 || p["status"] != "emerging" || len(arr(p["evidence"])) != 1 {
			t.Fatalf("pattern_record: %v", p)
		}
		want := 0.5
		for i := 1; i < 5; i++ {
			p = obj(h.Call("pattern_reinforce", map[string]any{"pattern_id": id, "session_id": sessions[i]})["pattern"])
			want = want + (1-want)*0.1
			if got := p["confidence"].(float64); got < want-1e-6 || got > want+1e-6 {
				t.Fatalf("reinforce %d: confidence %v, want %v", i, got, want)
			}
		}
		if p["status"] != "established" || len(arr(p["evidence"])) != 5 {
			t.Fatalf("five supporting sessions must establish: %v", p)
		}
		// The same session again raises confidence but is not counted twice.
		p = obj(h.Call("pattern_reinforce", map[string]any{"pattern_id": id, "session_id": sessions[4]})["pattern"])
		if len(arr(p["evidence"])) != 5 {
			t.Fatalf("evidence counted twice: %v", p["evidence"])
		}
		for range 60 {
			p = obj(h.Call("pattern_reinforce", map[string]any{"pattern_id": id})["pattern"])
		}
		if p["confidence"] != 0.99 {
			t.Fatalf("confidence cap: %v", p["confidence"])
		}

		h.Call("pattern_record", map[string]any{"type": "preference", "description": "Prefers short answers with links to the BC Transfer Guide", "confidence": 0.3})
		if l := h.Call("pattern_list", map[string]any{"status": "established"}); len(arr(l["patterns"])) != 1 {
			t.Fatalf("pattern_list established: %v", l)
		}
		if l := h.Call("pattern_list", map[string]any{"min_confidence": 0.4}); len(arr(l["patterns"])) != 1 {
			t.Fatalf("pattern_list min_confidence: %v", l)
		}
		if l := h.Call("pattern_list", map[string]any{"type": "preference"}); len(arr(l["patterns"])) != 1 {
			t.Fatalf("pattern_list type: %v", l)
		}
		// Not reinforced for longer than the fading period: reads as fading.
		old := store.Micros(time.Now().Add(-vkb.FadingAfter - time.Hour))
		if _, err := st.DB().Exec(st.Q(`UPDATE patterns SET reinforced_at = ? WHERE id = ?`), old, id); err != nil {
			t.Fatal(err)
		}
		l := h.Call("pattern_list", map[string]any{"status": "fading"})
		if ps := arr(l["patterns"]); len(ps) != 1 || obj(ps[0])["status"] != "fading" {
			t.Fatalf("fading: %v", l)
		}

		s := h.Call("pattern_search", map[string]any{"query": "transfer credit questions"})
		ps := arr(s["patterns"])
		if len(ps) != 2 || obj(ps[0])["id"] != id || obj(ps[0])["relevance_score"].(float64) <= obj(ps[1])["relevance_score"].(float64) {
			t.Fatalf("pattern_search: %v", s)
		}
		if s := h.Call("pattern_search", map[string]any{"query": "transfer", "type": "preference"}); len(arr(s["patterns"])) != 1 {
			t.Fatalf("pattern_search type filter: %v", s)
		}
	})
}

func TestInsights(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		sid := obj(h.Call("session_start", map[string]any{"platform": "slack"})["session"])["id"].(string)
		h.Call("belief_create", map[string]any{"content": "The student plans to transfer to SFU in 2026", "entities": []map[string]any{{"name": "Student A", "type": "person"}}})
		r := h.Call("insight_extract", map[string]any{"session_id": sid, "content": "The student plans to transfer to SFU in 2027",
			"domain_path": []string{"students"}, "entities": []map[string]any{{"name": "Student A", "type": "person"}}})
		b := obj(r["belief"])
		if src := obj(b["source"]); src["type"] != "conversation" || src["ref"] != sid {
			t.Fatalf("insight belief source: %v", b["source"])
		}
		if obj(b["confidence"])["overall"] != 0.8 || len(arr(b["entities"])) != 1 {
			t.Fatalf("insight belief: %v", b)
		}
		if len(arr(r["tensions"])) != 1 {
			t.Fatalf("insight must run tension detection: %v", r["tensions"])
		}
		l := h.Call("insight_list", map[string]any{"session_id": sid})
		ins := arr(l["insights"])
		if len(ins) != 1 || obj(obj(ins[0])["belief"])["id"] != b["id"] {
			t.Fatalf("insight_list: %v", l)
		}
		if l := h.Call("insight_list", map[string]any{}); len(arr(l["insights"])) != 1 {
			t.Fatalf("insight_list of the workspace: %v", l)
		}
	})
}

func TestBadInputWritesNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		sid := obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		pid := obj(h.Call("pattern_record", map[string]any{"type": "t", "description": "d"})["pattern"])["id"].(string)
		tests := []struct {
			tool string
			args map[string]any
			code errs.Code
			msg  string
		}{
			{"session_start", map[string]any{}, errs.BadRequest, `missing properties: ["platform"]`},
			{"session_start", map[string]any{"platform": "discord"}, errs.BadRequest, "platform: enum"},
			{"session_end", map[string]any{"session_id": "nope"}, errs.NotFound, `session "nope" not found`},
			{"session_end", map[string]any{"session_id": sid, "status": "active"}, errs.BadRequest, "status: enum"},
			{"session_get", map[string]any{"session_id": "nope"}, errs.NotFound, "not found"},
			{"session_list", map[string]any{"limit": 0}, errs.BadRequest, "limit: minimum"},
			{"session_list", map[string]any{"offset": -1}, errs.BadRequest, "offset: minimum"},
			{"exchange_add", map[string]any{"session_id": sid, "role": "robot", "content": "x"}, errs.BadRequest, "role: enum"},
			{"exchange_add", map[string]any{"session_id": "nope", "role": "user", "content": "x"}, errs.NotFound, `session "nope" not found`},
			{"exchange_add", map[string]any{"session_id": sid, "role": "user"}, errs.BadRequest, `missing properties: ["content"]`},
			{"exchange_list", map[string]any{"session_id": sid, "offset": -5}, errs.BadRequest, "offset: minimum"},
			{"exchange_list", map[string]any{"session_id": sid, "limit": -1}, errs.BadRequest, "limit: minimum"},
			{"exchange_list", map[string]any{"session_id": "nope"}, errs.NotFound, "not found"},
			{"pattern_record", map[string]any{"type": "t", "description": "d", "confidence": 1.5}, errs.BadRequest, "confidence: maximum"},
			{"pattern_record", map[string]any{"type": "t", "description": "d", "confidence": -0.1}, errs.BadRequest, "confidence: minimum"},
			{"pattern_record", map[string]any{"type": "t", "description": "d", "evidence": []string{sid, "nope"}}, errs.NotFound, `evidence[1]: session "nope" not found`},
			{"pattern_record", map[string]any{"type": " ", "description": "d"}, errs.BadRequest, "type: must not be blank"},
			{"pattern_reinforce", map[string]any{"pattern_id": "nope"}, errs.NotFound, `pattern "nope" not found`},
			{"pattern_reinforce", map[string]any{"pattern_id": pid, "session_id": "nope"}, errs.NotFound, `session "nope" not found`},
			{"pattern_list", map[string]any{"status": "dead"}, errs.BadRequest, "status: enum"},
			{"pattern_list", map[string]any{"min_confidence": 2}, errs.BadRequest, "min_confidence: maximum"},
			{"insight_extract", map[string]any{"session_id": "nope", "content": "x"}, errs.NotFound, "not found"},
			{"insight_extract", map[string]any{"session_id": sid, "content": "x", "confidence": 3}, errs.BadRequest, "confidence: maximum"},
			{"insight_list", map[string]any{"session_id": "nope"}, errs.NotFound, "not found"},
		}
		tables := []string{"conversations", "exchanges", "patterns", "insights", "beliefs"}
		counts := func() []int {
			var out []int
			for _, tb := range tables {
				out = append(out, h.Count(tb))
			}
			return out
		}
		for i, tt := range tests {
			t.Run(fmt.Sprintf("%02d_%s", i, tt.tool), func(t *testing.T) {
				hh := h.With(t)
				before := counts()
				_, err := hh.Try(tt.tool, tt.args)
				if err == nil || err.Code != tt.code || !strings.Contains(err.Message, tt.msg) {
					t.Fatalf("got %v, want %s containing %q", err, tt.code, tt.msg)
				}
				if after := counts(); !slices.Equal(before, after) {
					t.Fatalf("rows changed on bad input: %v -> %v (%v)", before, after, tables)
				}
			})
		}
		var conf float64
		st.DB().QueryRow(st.Q(`SELECT confidence FROM patterns WHERE id = ?`), pid).Scan(&conf)
		if conf != 0.5 {
			t.Fatalf("a failed reinforce changed the pattern: %v", conf)
		}
	})
}
