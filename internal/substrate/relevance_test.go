package substrate_test

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestQueryValidity: valid_at keeps the beliefs valid at an instant,
// valid_after and valid_before those whose validity overlaps the window; a
// belief without dates is valid at any time.
func TestQueryValidity(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		for _, b := range []map[string]any{
			{"content": "the harbour ferry runs hourly (2023)", "valid_from": "2023-01-01T00:00:00Z", "valid_until": "2024-01-01T00:00:00Z"},
			{"content": "the harbour ferry runs every 30 minutes (2024)", "valid_from": "2024-01-01T00:00:00Z"},
			{"content": "the harbour ferry carries bicycles"},
		} {
			h.Call("belief_create", b)
		}
		got := func(args map[string]any) map[string]bool {
			t.Helper()
			args["query"] = "harbour ferry"
			out := map[string]bool{}
			for _, b := range arr(h.Call("belief_query", args)["beliefs"]) {
				out[obj(b)["content"].(string)[len("the harbour ferry "):][:5]] = true
			}
			return out
		}
		for _, tt := range []struct {
			args map[string]any
			want []string
		}{
			{map[string]any{}, []string{"runs ", "carri"}},
			{map[string]any{"valid_at": "2023-06-01T00:00:00Z"}, []string{"runs ", "carri"}},
			{map[string]any{"valid_at": "2024-01-01T00:00:00Z"}, []string{"runs ", "carri"}},
			{map[string]any{"valid_at": "2022-06-01T00:00:00Z"}, []string{"carri"}},
			{map[string]any{"valid_after": "2023-12-31T00:00:00Z", "valid_before": "2024-01-02T00:00:00Z"}, []string{"runs ", "carri"}},
			{map[string]any{"valid_before": "2023-06-01T00:00:00Z"}, []string{"runs ", "carri"}},
			{map[string]any{"valid_after": "2024-06-01T00:00:00Z"}, []string{"runs ", "carri"}},
		} {
			g := got(tt.args)
			if len(g) != len(tt.want) {
				t.Errorf("%v: got %v, want %v", tt.args, g, tt.want)
			}
		}
		// Exact counts: the 2023 belief is out at 2024-06, the 2024 one in 2022.
		count := func(args map[string]any) int {
			args["query"] = "harbour ferry"
			return len(arr(h.Call("belief_query", args)["beliefs"]))
		}
		if n := count(map[string]any{"valid_at": "2024-06-01T00:00:00Z"}); n != 2 {
			t.Errorf("valid_at 2024-06: %d beliefs, want 2 (2024's and the undated)", n)
		}
		if n := count(map[string]any{"valid_at": "2022-06-01T00:00:00Z"}); n != 1 {
			t.Errorf("valid_at 2022-06: %d beliefs, want 1 (the undated)", n)
		}
		if n := count(map[string]any{"valid_after": "2023-02-01T00:00:00Z", "valid_before": "2023-03-01T00:00:00Z"}); n != 2 {
			t.Errorf("window in 2023: %d beliefs, want 2 (2023's and the undated)", n)
		}
		if n := count(map[string]any{"valid_after": "2024-01-01T00:00:00Z"}); n != 2 {
			t.Errorf("after 2024-01-01: %d beliefs, want 2 (2023's ends then)", n)
		}
	})
}

// TestQueryWorkspaceStatistics: belief_query weighs a term by its workspace's
// statistics. "Gina" is in every belief of the workspace and "store" in one,
// so the belief about her store ranks first, although in the whole store
// "Gina" is rare and "store" common (the other workspace says it 200 times).
func TestQueryWorkspaceStatistics(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		// Another workspace holds most of the store, none of it about Gina.
		var other []map[string]any
		for i := range 200 {
			other = append(other, map[string]any{"content": "the store sells course record number " + string(rune('a'+i%26))})
		}
		hw := h.In("other-ws")
		hw.Call("belief_create_batch", map[string]any{"beliefs": other})
		h.Call("belief_create_batch", map[string]any{"beliefs": []map[string]any{
			{"content": "Gina: my online clothing store is doing well"},
			{"content": "Gina: Gina loves her dance team, Gina says"},
			{"content": "Gina: the weather was lovely"},
			{"content": "Gina: Gina went to the park"},
		}})
		res := arr(h.Call("belief_query", map[string]any{"query": "Which store does Gina have?", "limit": 4})["beliefs"])
		if len(res) == 0 || obj(res[0])["content"] != "Gina: my online clothing store is doing well" {
			t.Fatalf("first result %v, want the store belief", res)
		}
	})
}
