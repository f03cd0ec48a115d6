package vkb_test

import (
	"context"
	"slices"
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

func TestExchangeSearch(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st).In("search-ws")
		start := func() string {
			return obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		}
		add := func(id, content, at string) string {
			args := map[string]any{"session_id": id, "role": "user", "content": content}
			if at != "" {
				args["created_at"] = at
			}
			return obj(h.Call("exchange_add", args)["exchange"])["id"].(string)
		}
		trip := start()
		hike := add(trip, "We went hiking in the Rockies, up to the glaciers.", "2023-06-10T15:00:00Z")
		weather := add(trip, "How was the weather up there?", "2023-06-10T15:01:00Z")
		sunny := add(trip, "Sunny and warm the whole time; we swam in a lake.", "2023-06-10T15:02:00Z")
		add(trip, "I should go some day.", "2023-06-10T15:03:00Z")
		other := start()
		later := add(other, "Another hiking trip, to the coast this time.", "2023-09-02T10:00:00Z")
		add(other, "Did you bring the dog?", "2023-09-02T10:01:00Z")
		// The same words in another workspace are not found.
		away := newHarness(t, st).In("elsewhere")
		awayID := obj(away.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		away.Call("exchange_add", map[string]any{"session_id": awayID, "role": "user", "content": "hiking the Rockies glaciers"})

		search := func(args map[string]any) []map[string]any {
			t.Helper()
			var out []map[string]any
			for _, hit := range arr(h.Call("exchange_search", args)["hits"]) {
				out = append(out, obj(hit))
			}
			return out
		}
		id := func(hit map[string]any) string { return obj(hit["exchange"])["id"].(string) }

		hits := search(map[string]any{"query": "hiking in the Rockies glaciers"})
		if len(hits) == 0 || id(hits[0]) != hike {
			t.Fatalf("hiking Rockies: %v", hits)
		}
		ctx := arr(hits[0]["context"])
		if len(ctx) != 1 || obj(ctx[0])["id"] != weather {
			t.Errorf("context of the first turn (context_turns 1): %v", ctx)
		}
		for _, hit := range hits {
			if obj(hit["exchange"])["session_id"] == awayID {
				t.Errorf("a hit from another workspace: %v", hit)
			}
		}
		// The answer after a question ranks by the question's words.
		hits = search(map[string]any{"query": "weather", "context_turns": 2})
		if len(hits) < 2 || id(hits[0]) != weather || id(hits[1]) != sunny {
			t.Fatalf("weather: the question, then its answer: %v", hits)
		}
		if len(arr(hits[0]["context"])) != 3 || hits[0]["score"].(float64) <= hits[1]["score"].(float64) {
			t.Errorf("weather: context or scores: %v", hits[0])
		}
		// One session.
		hits = search(map[string]any{"query": "hiking", "session_id": other, "context_turns": 0})
		if len(hits) == 0 || id(hits[0]) != later || len(arr(hits[0]["context"])) != 0 {
			t.Fatalf("hiking in one session: %v", hits)
		}
		for _, hit := range hits {
			if obj(hit["exchange"])["session_id"] != other {
				t.Errorf("a hit from another session: %v", hit)
			}
		}
		// Dates in the query filter by the exchanges' time, and are not
		// searched as words.
		res := h.Call("exchange_search", map[string]any{"query": "hiking in September 2023"})
		hits = nil
		for _, hit := range arr(res["hits"]) {
			hits = append(hits, obj(hit))
		}
		if len(hits) == 0 || id(hits[0]) != later {
			t.Fatalf("hiking in September 2023: %v", res)
		}
		for _, hit := range hits {
			if at := obj(hit["exchange"])["created_at"].(string); at < "2023-09" || at >= "2023-10" {
				t.Errorf("hit outside September 2023: %v", hit)
			}
		}
		if w := obj(res["window"]); w["from_query"] != true || w["from"] != "2023-09-01T00:00:00Z" || w["to"] != "2023-10-01T00:00:00Z" {
			t.Errorf("window: %v", w)
		}
		hits = search(map[string]any{"query": "hiking in June", "now": "2023-12-01T00:00:00Z"})
		if len(hits) == 0 || id(hits[0]) != hike {
			t.Fatalf("hiking in June (now December 2023): %v", hits)
		}
		if hits := search(map[string]any{"query": "hiking", "valid_after": "2023-07-01T00:00:00Z", "valid_before": "2023-08-01T00:00:00Z"}); len(hits) != 0 {
			t.Errorf("hiking in July: %v", hits)
		}
		// The caller's window and the query's do not meet.
		if hits := search(map[string]any{"query": "hiking in June 2023", "valid_after": "2023-08-01T00:00:00Z"}); len(hits) != 0 {
			t.Errorf("June within a window from August: %v", hits)
		}
		// No terms: the newest exchanges under the filters.
		hits = search(map[string]any{"query": "last week", "now": "2023-06-14T00:00:00Z", "limit": 2})
		if len(hits) != 2 || id(hits[0]) == hike {
			t.Errorf("no terms, last week: %v", hits)
		}
		if hits := search(map[string]any{"query": "zeppelin"}); len(hits) != 0 {
			t.Errorf("zeppelin: %v", hits)
		}

		for _, c := range []struct {
			args map[string]any
			code errs.Code
		}{
			{map[string]any{"query": "x", "limit": 101}, errs.BadRequest},
			{map[string]any{"query": "x", "context_turns": 6}, errs.BadRequest},
			{map[string]any{"query": "x", "valid_after": "yesterday"}, errs.BadRequest},
			{map[string]any{"query": "x", "now": "2023-13-01"}, errs.BadRequest},
			{map[string]any{"query": "x", "valid_after": "2023-09-01T00:00:00Z", "valid_before": "2023-08-01T00:00:00Z"}, errs.BadRequest},
			{map[string]any{"query": "x", "session_id": "01NOSUCHSESSION"}, errs.NotFound},
			{map[string]any{"query": "x", "session_id": awayID}, errs.NotFound},
		} {
			if _, err := h.Try("exchange_search", c.args); err == nil || err.Code != c.code {
				t.Errorf("exchange_search %v: %v, want %s", c.args, err, c.code)
			}
		}
		if _, err := h.Try("exchange_add", map[string]any{"session_id": trip, "role": "user", "content": "x", "created_at": "June"}); err == nil || err.Code != errs.BadRequest {
			t.Errorf("exchange_add created_at June: %v", err)
		}
		// A deleted exchange leaves the index.
		if _, err := st.DB().Exec(st.Q(`DELETE FROM exchanges WHERE id = ?`), later); err != nil {
			t.Fatal(err)
		}
		for _, hit := range search(map[string]any{"query": "coast"}) {
			if id(hit) == later {
				t.Errorf("deleted exchange found: %v", hit)
			}
		}
	})
}

// TestExchangeSearchInsights: the beliefs insight_extract created from a
// workspace's conversations come back with exchange_search, in an insights
// list ranked by the same BM25, under its session filter.
func TestExchangeSearchInsights(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st).In("insight-ws")
		start := func() string {
			return obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		}
		s1, s2 := start(), start()
		h.Call("exchange_add", map[string]any{"session_id": s1, "role": "user", "content": "I think I will go to SFU after Langara."})
		extract := func(sid, content string) string {
			return obj(h.Call("insight_extract", map[string]any{"session_id": sid, "content": content})["insight"])["id"].(string)
		}
		plan := extract(s1, "The student plans to transfer to SFU in 2027")
		extract(s1, "The student prefers evening classes")
		other := extract(s2, "The student asked about transfer credit for MATH 1171")
		// A belief that is not an insight is not listed.
		h.Call("belief_create", map[string]any{"content": "SFU transfer deadlines are in February"})

		insights := func(args map[string]any) []map[string]any {
			t.Helper()
			res := h.Call("exchange_search", args)
			var out []map[string]any
			for _, x := range arr(res["insights"]) {
				out = append(out, obj(x))
			}
			return out
		}
		got := insights(map[string]any{"query": "transfer to SFU"})
		if len(got) != 2 || got[0]["id"] != plan || got[1]["id"] != other {
			t.Fatalf("transfer to SFU: %v, want the SFU plan, then the transfer credit question", got)
		}
		if got[0]["content"] != "The student plans to transfer to SFU in 2027" || got[0]["session_id"] != s1 ||
			got[0]["belief_id"] == "" || got[0]["score"].(float64) <= got[1]["score"].(float64) {
			t.Errorf("first insight: %v", got[0])
		}
		if got := insights(map[string]any{"query": "transfer", "session_id": s2}); len(got) != 1 || got[0]["id"] != other {
			t.Errorf("transfer in session 2: %v", got)
		}
		if got := insights(map[string]any{"query": "zeppelin"}); len(got) != 0 {
			t.Errorf("zeppelin: %v", got)
		}
		if got := insights(map[string]any{"query": "transfer", "valid_before": "2001-01-01T00:00:00Z"}); len(got) != 0 {
			t.Errorf("transfer before 2001: %v", got)
		}
		// Another workspace's insights are not found.
		away := newHarness(t, st).In("insight-away")
		if got := arr(away.Call("exchange_search", map[string]any{"query": "transfer to SFU"})["insights"]); len(got) != 0 {
			t.Errorf("another workspace: %v", got)
		}
	})
}

// TestExchangeSearchOwners: a user who is not an admin searches the
// conversations they own (as session_list lists them), an admin every
// conversation of the workspace.
func TestExchangeSearchOwners(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		reg := registry.New()
		sub := substrate.New(st, nil)
		conv := conversation.New(st)
		if err := sub.Register(reg); err != nil {
			t.Fatal(err)
		}
		if err := vkb.New(st, conv, sub, nil).Register(reg); err != nil {
			t.Fatal(err)
		}
		who := principal.Principal{ID: "alice", Role: principal.Member}
		p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv,
			Principal: func(context.Context) (principal.Principal, bool) { return who, true }})
		h := pipelinetest.Valence{T: t, St: st, P: p, Transport: "test"}.In("owners-ws")
		talk := func(content string) string {
			id := obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
			h.Call("exchange_add", map[string]any{"session_id": id, "role": "user", "content": content})
			h.Call("insight_extract", map[string]any{"session_id": id, "content": content})
			return id
		}
		alices := talk("My favourite volcano is Mount Baker")
		who = principal.Principal{ID: "bob", Role: principal.Member}
		bobs := talk("My favourite volcano is Mount Fuji")
		sessions := func() []string {
			res := h.Call("exchange_search", map[string]any{"query": "favourite volcano"})
			var out []string
			for _, x := range arr(res["hits"]) {
				out = append(out, obj(obj(x)["exchange"])["session_id"].(string))
			}
			for _, x := range arr(res["insights"]) {
				out = append(out, obj(x)["session_id"].(string))
			}
			slices.Sort(out)
			return out
		}
		if got := sessions(); !slices.Equal(got, []string{bobs, bobs}) {
			t.Errorf("bob finds %v, want his session only (a hit and an insight)", got)
		}
		who = principal.Principal{ID: "alice", Role: principal.Member}
		if got := sessions(); !slices.Equal(got, []string{alices, alices}) {
			t.Errorf("alice finds %v, want her session only", got)
		}
		who = principal.Principal{ID: "root", Role: principal.Admin}
		if got, want := sessions(), []string{alices, alices, bobs, bobs}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("an admin finds %v, want both sessions", got)
		}
	})
}
