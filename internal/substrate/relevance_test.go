package substrate_test

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
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

// TestQueryDates: belief_query reads the dates its query names relative to
// now (the argument, else the server's time) and ranks the beliefs that
// became valid within them first, without searching the date words; the
// caller's validity arguments narrow that window, and when the two do not
// meet nothing ranks first (query_window.empty) and the filter still
// applies.
func TestQueryDates(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		// Created June first: without dates, ties go to the newer belief.
		for _, b := range []map[string]any{
			{"content": "harbour ferry note june", "valid_from": "2023-06-15T09:00:00Z"},
			{"content": "harbour ferry note may", "valid_from": "2023-05-10T09:00:00Z"},
			{"content": "harbour ferry note undated"},
			{"content": "harbour ferry note july", "valid_from": "2023-07-20T09:00:00Z"},
		} {
			h.Call("belief_create", b)
		}
		type result struct {
			order  []string
			window map[string]any
		}
		ask := func(args map[string]any) result {
			t.Helper()
			res := h.Call("belief_query", args)
			var r result
			for _, b := range arr(res["beliefs"]) {
				r.order = append(r.order, strings.TrimPrefix(obj(b)["content"].(string), "harbour ferry note "))
			}
			if w, ok := res["query_window"]; ok {
				r.window = obj(w)
			}
			return r
		}
		for _, tt := range []struct {
			name  string
			args  map[string]any
			first string
			n     int
			// from and to of query_window ("" when absent); empty its flag.
			from, to string
			empty    bool
		}{
			{"no date", map[string]any{"query": "harbour ferry note"}, "july", 4, "", "", false},
			{"a month", map[string]any{"query": "harbour ferry note in June 2023"}, "june", 4,
				"2023-06-01T00:00:00Z", "2023-07-01T00:00:00Z", false},
			{"a month, no other term", map[string]any{"query": "in May 2023"}, "may", 4,
				"2023-05-01T00:00:00Z", "2023-06-01T00:00:00Z", false},
			{"relative to now", map[string]any{"query": "harbour ferry note last month", "now": "2023-06-03T12:00:00Z"}, "may", 4,
				"2023-05-01T00:00:00Z", "2023-06-01T00:00:00Z", false},
			{"relative to the server's time", map[string]any{"query": "harbour ferry note last month"}, "july", 4,
				"", "", false}, // window checked below: not in 2023
			{"narrowed by valid_before", map[string]any{"query": "harbour ferry note in 2023", "valid_before": "2023-06-01T00:00:00Z"}, "may", 2,
				"2023-01-01T00:00:00Z", "2023-06-01T00:00:00Z", false},
			{"narrowed by valid_at", map[string]any{"query": "harbour ferry note in 2023", "valid_at": "2023-07-01T00:00:00Z"}, "may", 3,
				"2023-01-01T00:00:00Z", "2023-07-01T00:00:00.000001Z", false},
			{"disjoint from valid_after", map[string]any{"query": "harbour ferry note in June 2023", "valid_after": "2023-08-01T00:00:00Z"}, "july", 4,
				"2023-06-01T00:00:00Z", "2023-07-01T00:00:00Z", true},
		} {
			r := ask(tt.args)
			if len(r.order) != tt.n || r.order[0] != tt.first {
				t.Errorf("%s: beliefs %v, want %d with %q first", tt.name, r.order, tt.n, tt.first)
			}
			if tt.name == "relative to the server's time" {
				if r.window == nil || strings.HasPrefix(r.window["from"].(string), "2023") {
					t.Errorf("%s: query_window %v, want last month of today", tt.name, r.window)
				}
				continue
			}
			if tt.from == "" {
				if r.window != nil {
					t.Errorf("%s: query_window %v, want none", tt.name, r.window)
				}
				continue
			}
			if r.window == nil || r.window["from"] != tt.from || r.window["to"] != tt.to || (r.window["empty"] == true) != tt.empty {
				t.Errorf("%s: query_window %v, want %s to %s, empty %v", tt.name, r.window, tt.from, tt.to, tt.empty)
			}
		}
		// The date words are not search terms: "June" alone names a month
		// and finds nothing as a word.
		if r := ask(map[string]any{"query": "harbour ferry note june 2023"}); r.order[0] != "june" || r.window == nil {
			t.Errorf("june 2023: %v, window %v", r.order, r.window)
		}
		if _, err := h.Try("belief_query", map[string]any{"query": "ferry", "now": "yesterday"}); err == nil || err.Code != errs.BadRequest || !strings.Contains(err.Message, "now") {
			t.Errorf("bad now: %v, want BAD_REQUEST naming now", err)
		}
	})
}
