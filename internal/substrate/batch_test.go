package substrate_test

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestCreateBatch: one call creates many beliefs in one transaction, finds
// tensions with the store and within the batch, reports an item it leaves
// out without failing the others, and refuses a batch over the limit.
func TestCreateBatch(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		ents := []map[string]any{{"name": "Nexus", "type": "project"}}
		h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 7777", "entities": ents, "confidence": map[string]any{"overall": 0.9}})
		res := h.Call("belief_create_batch", map[string]any{"beliefs": []any{
			map[string]any{"content": "The default port of Nexus is 8080", "entities": ents, "confidence": map[string]any{"overall": 0.9}}, // vs the store
			map[string]any{"content": "   "}, // left out
			map[string]any{"content": "Nexus stores beliefs in SQLite", "entities": ents},
			map[string]any{"content": "Nexus never stores beliefs in SQLite", "entities": ents}, // vs item 2
			map[string]any{"content": "x", "valid_from": "2026-01-02T00:00:00Z", "valid_until": "2026-01-01T00:00:00Z"},
		}})
		if res["created"] != float64(3) || res["failed"] != float64(2) {
			t.Fatalf("batch: %v", res)
		}
		items := arr(res["results"])
		if obj(items[1])["error"] == nil || !strings.Contains(obj(obj(items[1])["error"])["message"].(string), "beliefs[1].content") {
			t.Fatalf("the blank item: %v", items[1])
		}
		if len(arr(obj(items[0])["tensions"])) != 1 {
			t.Fatalf("the batch's first belief against the store: %v", items[0])
		}
		if n := len(arr(obj(items[3])["tensions"])); n != 1 || obj(arr(obj(items[3])["tensions"])[0])["belief_a_id"] != obj(items[2])["belief_id"] {
			t.Fatalf("a belief against an earlier one of the batch: %v", items[3])
		}
		if res["tensions_found"] != float64(2) {
			t.Fatalf("tensions_found: %v", res["tensions_found"])
		}
		var n int
		st.DB().QueryRow(`SELECT COUNT(*) FROM beliefs`).Scan(&n)
		if n != 4 {
			t.Fatalf("%d beliefs stored, want 4", n)
		}
		// The batch's beliefs are in the full-text index (SQLite indexes a
		// batch at the end of its transaction).
		q := h.Call("belief_query", map[string]any{"query": "SQLite stores beliefs"})
		if got := len(arr(q["beliefs"])); got != 2 {
			t.Fatalf("belief_query found %d of the batch's 2 beliefs on SQLite: %v", got, q)
		}
		// Over the limit: refused whole, nothing written.
		many := make([]any, 1001)
		for i := range many {
			many[i] = map[string]any{"content": "b"}
		}
		if _, err := h.Try("belief_create_batch", map[string]any{"beliefs": many}); err == nil || err.Code != errs.BadRequest {
			t.Fatalf("1,001 beliefs: %v", err)
		}
		st.DB().QueryRow(`SELECT COUNT(*) FROM beliefs`).Scan(&n)
		if n != 4 {
			t.Fatalf("a refused batch wrote: %d beliefs", n)
		}
	})
}

// TestBatchSharesEntities: the items of one batch that name the same entity
// link the one entity (looked up once per transaction), an alias an item
// brings is still added, and every link is written.
func TestBatchSharesEntities(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		ubc := map[string]any{"name": "UBC", "type": "institution"}
		withAlias := map[string]any{"name": "UBC", "type": "institution", "aliases": []any{"University of British Columbia"}}
		sfu := map[string]any{"name": "SFU", "type": "institution"}
		res := h.Call("belief_create_batch", map[string]any{"beliefs": []any{
			map[string]any{"content": "MATH 1171 transfers to UBC", "entities": []any{ubc}},
			map[string]any{"content": "MATH 1271 transfers to UBC and SFU", "entities": []any{ubc, sfu}},
			map[string]any{"content": "CPSC 1150 transfers to UBC", "entities": []any{withAlias}},
			map[string]any{"content": "CPSC 1160 transfers to UBC", "entities": []any{ubc, map[string]any{"name": "ubc", "role": "object"}}},
		}})
		if res["created"] != float64(4) {
			t.Fatalf("batch: %v", res)
		}
		var ubcID string
		for _, item := range arr(res["results"]) {
			b := h.Call("belief_get", map[string]any{"belief_id": obj(item)["belief_id"]})
			for _, e := range arr(obj(b["belief"])["entities"]) {
				if obj(e)["name"] == "UBC" {
					if ubcID != "" && obj(e)["id"] != ubcID {
						t.Fatalf("two entities named UBC: %v and %v", ubcID, obj(e)["id"])
					}
					ubcID = obj(e)["id"].(string)
				}
			}
		}
		eg := h.Call("entity_get", map[string]any{"entity_id": ubcID, "include_beliefs": true})
		if got := obj(eg["entity"])["aliases"]; len(arr(got)) != 1 || arr(got)[0] != "University of British Columbia" {
			t.Errorf("UBC's aliases: %v", got)
		}
		if n := len(arr(eg["beliefs"])); n != 4 {
			t.Errorf("UBC links %d beliefs, want 4", n)
		}
		var links int
		if err := st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM belief_entities`)).Scan(&links); err != nil {
			t.Fatal(err)
		}
		if links != 6 { // UBC in all four (the fourth twice: subject and object), SFU once
			t.Errorf("%d links, want 6", links)
		}
	})
}
