package substrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// newHarness calls substrate tools through the real pipeline on st.
func newHarness(t *testing.T, st *store.Store) pipelinetest.Valence {
	reg := registry.New()
	if err := substrate.New(st, nil).Register(reg); err != nil {
		t.Fatal(err)
	}
	return pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}
}

var (
	obj = pipelinetest.Obj
	arr = pipelinetest.Arr
)

func TestBeliefLifecycle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		created := h.Call("belief_create", map[string]any{
			"content":     "PostgreSQL is the production database for Nexus",
			"confidence":  map[string]any{"source_reliability": 0.9, "corroboration": 0.7},
			"domain_path": []string{"tech", "database"},
			"source_type": "document", "source_ref": "https://example.com/adr-7",
			"entities": []map[string]any{
				{"name": "PostgreSQL", "type": "tool", "role": "subject", "aliases": []string{"Postgres"}},
				{"name": "Nexus", "type": "project", "role": "context"},
			},
		})
		b := obj(created["belief"])
		id := b["id"].(string)
		if c := obj(b["confidence"]); c["overall"] != 0.8 || c["source_reliability"] != 0.9 {
			t.Fatalf("overall must be the mean of given dimensions: %v", c)
		}
		if got := len(arr(b["entities"])); got != 2 {
			t.Fatalf("entities linked: %d", got)
		}
		if b["status"] != "active" || b["workspace"] != "default" || obj(b["source"])["type"] != "document" {
			t.Fatalf("belief not returned in full: %v", b)
		}

		// Entities are found by name and alias, and reused, not duplicated.
		es := h.Call("entity_search", map[string]any{"query": "postgres"})
		ents := arr(es["entities"])
		if len(ents) != 1 || obj(ents[0])["name"] != "PostgreSQL" {
			t.Fatalf("entity_search by alias: %v", es)
		}
		pgID := obj(ents[0])["id"].(string)
		h.Call("belief_create", map[string]any{"content": "Postgres backups run nightly at 02:00 UTC",
			"entities": []map[string]any{{"name": "postgres", "role": "subject"}}})
		if n := h.Count("entities"); n != 2 {
			t.Fatalf("entities after reuse by alias: %d, want 2", n)
		}
		eg := h.Call("entity_get", map[string]any{"entity_id": pgID, "include_beliefs": true})
		if obj(eg["entity"])["belief_count"] != 2.0 || len(arr(eg["beliefs"])) != 2 {
			t.Fatalf("entity_get: %v", eg)
		}

		// Query by content, with domain and entity filters.
		q := h.Call("belief_query", map[string]any{"query": "which database runs production?"})
		bs := arr(q["beliefs"])
		if len(bs) == 0 || obj(bs[0])["id"] != id || obj(bs[0])["relevance_score"] == nil {
			t.Fatalf("belief_query: %v", q)
		}
		for _, tc := range []struct {
			args map[string]any
			want int
		}{
			{map[string]any{"query": "database", "domain_filter": []string{"tech"}}, 1},
			{map[string]any{"query": "database", "domain_filter": []string{"TECH", "database"}}, 1},
			{map[string]any{"query": "database", "domain_filter": []string{"tech", "data"}}, 0},
			{map[string]any{"query": "database", "domain_filter": []string{"people"}}, 0},
			{map[string]any{"query": "postgres backups nightly", "entity_id": pgID}, 1},
			{map[string]any{"query": "postgresql", "entity_id": pgID}, 1},
		} {
			got := h.Call("belief_query", tc.args)
			if n := len(arr(got["beliefs"])); n != tc.want || int(got["total_count"].(float64)) != tc.want {
				t.Errorf("belief_query %v: %d results (total %v), want %d", tc.args, n, got["total_count"], tc.want)
			}
		}

		// Supersession chain.
		s1 := h.Call("belief_supersede", map[string]any{"old_belief_id": id, "new_content": "PostgreSQL 16 is the production database for Nexus", "reason": "version pinned"})
		id2 := obj(s1["new_belief"])["id"].(string)
		if obj(s1["old_belief"])["status"] != "superseded" || obj(s1["old_belief"])["superseded_by"] != id2 {
			t.Fatalf("old belief after supersede: %v", s1["old_belief"])
		}
		if nb := obj(s1["new_belief"]); nb["supersedes"] != id || len(arr(nb["entities"])) != 2 || len(arr(nb["domain_path"])) != 2 {
			t.Fatalf("new belief must inherit entities and domain: %v", nb)
		}
		s2 := h.Call("belief_supersede", map[string]any{"old_belief_id": id2, "new_content": "PostgreSQL 17 is the production database for Nexus", "reason": "upgrade"})
		id3 := obj(s2["new_belief"])["id"].(string)
		for _, from := range []string{id, id2, id3} {
			g := h.Call("belief_get", map[string]any{"belief_id": from, "include_history": true})
			hist := arr(g["history"])
			if len(hist) != 3 || obj(hist[0])["id"] != id || obj(hist[1])["id"] != id2 || obj(hist[2])["id"] != id3 {
				t.Fatalf("history from %s: %v", from, hist)
			}
		}
		// Superseded beliefs leave queries unless asked for.
		q1 := h.Call("belief_query", map[string]any{"query": "production database nexus"})
		q2 := h.Call("belief_query", map[string]any{"query": "production database nexus", "include_superseded": true})
		if len(arr(q1["beliefs"])) != 1 || len(arr(q2["beliefs"])) != 3 {
			t.Fatalf("include_superseded: %d vs %d", len(arr(q1["beliefs"])), len(arr(q2["beliefs"])))
		}
		// Superseding a superseded belief is a conflict and writes nothing.
		before := h.Count("beliefs")
		if _, err := h.Try("belief_supersede", map[string]any{"old_belief_id": id, "new_content": "x", "reason": "y"}); err == nil || err.Code != errs.Conflict {
			t.Fatalf("supersede of superseded: %v", err)
		}
		if h.Count("beliefs") != before {
			t.Fatal("failed supersede wrote a belief")
		}
	})
}

func TestTensionDetectionAndResolution(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		ents := []map[string]any{{"name": "Nexus", "type": "project"}}
		a := h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 7777", "entities": ents, "confidence": map[string]any{"overall": 0.9}})
		if n := len(arr(a["tensions"])); n != 0 {
			t.Fatalf("first belief has %d tensions", n)
		}
		b := h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 8080", "entities": ents, "confidence": map[string]any{"overall": 0.9}})
		ts := arr(b["tensions"])
		if len(ts) != 1 {
			t.Fatalf("want one tension, got %v", b["tensions"])
		}
		tn := obj(ts[0])
		if tn["belief_a_id"] != obj(a["belief"])["id"] || tn["belief_b_id"] != obj(b["belief"])["id"] || tn["status"] != "detected" {
			t.Fatalf("tension: %v", tn)
		}
		// Unrelated beliefs raise nothing.
		c := h.Call("belief_create", map[string]any{"content": "Nexus is written in Go", "entities": ents})
		if n := len(arr(c["tensions"])); n != 0 {
			t.Fatalf("unrelated belief raised %d tensions: %v", n, c["tensions"])
		}

		entityID := obj(arr(obj(a["belief"])["entities"])[0])["id"].(string)
		list := h.Call("tension_list", map[string]any{"entity_id": entityID, "status": "detected"})
		if len(arr(list["tensions"])) != 1 {
			t.Fatalf("tension_list by entity: %v", list)
		}
		if got := h.Call("tension_list", map[string]any{"severity": "critical"}); len(arr(got["tensions"])) != 0 && obj(arr(got["tensions"])[0])["severity"] != "critical" {
			t.Fatalf("severity filter: %v", got)
		}
		g := h.Call("belief_get", map[string]any{"belief_id": obj(b["belief"])["id"], "include_tensions": true})
		if len(arr(g["tensions"])) != 1 {
			t.Fatalf("belief_get include_tensions: %v", g)
		}

		tid := tn["id"].(string)
		res := h.Call("tension_resolve", map[string]any{"tension_id": tid, "resolution": "8080 was the old default", "action": "supersede_b"})
		rt := obj(res["tension"])
		if rt["status"] != "resolved" || obj(rt["belief_b"])["status"] != "superseded" || obj(rt["belief_a"])["status"] != "active" {
			t.Fatalf("resolved tension: %v", rt)
		}
		// Resolving twice is a conflict.
		if _, err := h.Try("tension_resolve", map[string]any{"tension_id": tid, "resolution": "again", "action": "keep_both"}); err == nil || err.Code != errs.Conflict {
			t.Fatalf("second resolve: %v", err)
		}
	})
}

func TestTensionResolveIsAtomic(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		ents := []map[string]any{{"name": "Nexus"}}
		a := h.Call("belief_create", map[string]any{"content": "Nexus supports OAuth login", "entities": ents})
		b := h.Call("belief_create", map[string]any{"content": "Nexus does not support OAuth login", "entities": ents})
		ts := arr(b["tensions"])
		if len(ts) != 1 {
			t.Fatalf("tensions: %v", ts)
		}
		tid := obj(ts[0])["id"].(string)
		// Make belief b inactive behind the tension's back: archive_both must
		// then fail as a whole and leave belief a active.
		h.Call("belief_supersede", map[string]any{"old_belief_id": obj(b["belief"])["id"], "new_content": "Nexus supports OAuth login since 0.2", "reason": "shipped"})
		if _, err := h.Try("tension_resolve", map[string]any{"tension_id": tid, "resolution": "both stale", "action": "archive_both"}); err == nil || err.Code != errs.Conflict {
			t.Fatalf("archive_both with an inactive belief: %v", err)
		}
		g := h.Call("belief_get", map[string]any{"belief_id": obj(a["belief"])["id"]})
		if obj(g["belief"])["status"] != "active" {
			t.Fatal("failed archive_both archived belief a")
		}
		l := h.Call("tension_list", map[string]any{"status": "detected"})
		if len(arr(l["tensions"])) == 0 {
			t.Fatal("failed resolve changed the tension")
		}
		r := h.Call("tension_resolve", map[string]any{"tension_id": tid, "resolution": "both fine in context", "action": "keep_both"})
		if obj(r["tension"])["status"] != "accepted" {
			t.Fatalf("keep_both: %v", r)
		}
	})
}

func TestWorkspacesAreIsolated(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		a := h.In("team-a").Call("belief_create", map[string]any{"content": "The deploy window is Friday afternoon", "entities": []map[string]any{{"name": "Deploys"}}})
		id := obj(a["belief"])["id"].(string)
		eid := obj(arr(obj(a["belief"])["entities"])[0])["id"].(string)
		if _, err := h.In("team-b").Try("belief_get", map[string]any{"belief_id": id}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("belief visible across workspaces: %v", err)
		}
		if q := h.In("team-b").Call("belief_query", map[string]any{"query": "deploy window"}); len(arr(q["beliefs"])) != 0 {
			t.Fatalf("query crosses workspaces: %v", q)
		}
		if _, err := h.In("team-b").Try("entity_get", map[string]any{"entity_id": eid}); err == nil || err.Code != errs.NotFound {
			t.Fatalf("entity visible across workspaces: %v", err)
		}
		if e := h.In("team-b").Call("entity_search", map[string]any{"query": "deploys"}); len(arr(e["entities"])) != 0 {
			t.Fatalf("entity_search crosses workspaces: %v", e)
		}
		// The same content in B does not raise a tension with A's belief.
		b := h.In("team-b").Call("belief_create", map[string]any{"content": "The deploy window is not Friday afternoon", "entities": []map[string]any{{"name": "Deploys"}}})
		if n := len(arr(b["tensions"])); n != 0 {
			t.Fatalf("tension across workspaces: %v", b["tensions"])
		}
		if q := h.In("team-a").Call("belief_query", map[string]any{"query": "deploy window"}); len(arr(q["beliefs"])) != 1 {
			t.Fatalf("team-a sees %d beliefs", len(arr(q["beliefs"])))
		}
		if n := h.Count("entities"); n != 2 {
			t.Fatalf("entities are per workspace: %d, want 2", n)
		}
	})
}

func TestBadInputWritesNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		tests := []struct {
			tool string
			args map[string]any
			code errs.Code
			msg  string
		}{
			{"belief_create", map[string]any{}, errs.BadRequest, `missing properties: ["content"]`},
			{"belief_create", map[string]any{"content": "  "}, errs.BadRequest, "content: must not be blank"},
			{"belief_create", map[string]any{"content": 5}, errs.BadRequest, "content: type"},
			{"belief_create", map[string]any{"content": "x", "confidence": map[string]any{"overall": 1.5}}, errs.BadRequest, "confidence.overall: maximum"},
			{"belief_create", map[string]any{"content": "x", "confidence": map[string]any{"certainty": 0.5}}, errs.BadRequest, `unexpected additional properties ["certainty"]`},
			{"belief_create", map[string]any{"content": "x", "source_type": "rumour"}, errs.BadRequest, "source_type: enum"},
			{"belief_create", map[string]any{"content": "x", "entities": []map[string]any{{"name": "A", "role": "boss"}}}, errs.BadRequest, "entities[].role: enum"},
			{"belief_create", map[string]any{"content": "x", "entities": []map[string]any{{"name": "A"}, {"name": " "}}}, errs.BadRequest, "entities[1].name: must not be blank"},
			{"belief_create", map[string]any{"content": "x", "valid_from": "yesterday"}, errs.BadRequest, "valid_from: \"yesterday\" is not an RFC 3339"},
			{"belief_create", map[string]any{"content": "x", "valid_from": "2025-02-01T00:00:00Z", "valid_until": "2025-01-01T00:00:00Z"}, errs.BadRequest, "valid_until: must be after valid_from"},
			{"belief_create", map[string]any{"content": "x", "domain_path": []string{"a/b"}}, errs.BadRequest, "must not contain '/'"},
			{"belief_create", map[string]any{"content": "x", "extra": 1}, errs.BadRequest, `unexpected additional properties ["extra"]`},
			{"belief_get", map[string]any{"belief_id": "0197a5c0-0000-7000-8000-000000000000"}, errs.NotFound, "not found"},
			{"belief_get", map[string]any{"belief_id": "not-a-uuid"}, errs.NotFound, `belief "not-a-uuid" not found`},
			{"belief_supersede", map[string]any{"old_belief_id": "nope", "new_content": "x", "reason": "y"}, errs.NotFound, "not found"},
			{"belief_supersede", map[string]any{"old_belief_id": "nope", "new_content": "x"}, errs.BadRequest, `missing properties: ["reason"]`},
			{"belief_query", map[string]any{"query": "x", "limit": 0}, errs.BadRequest, "limit: minimum"},
			{"belief_query", map[string]any{"query": "x", "limit": 1000}, errs.BadRequest, "limit: maximum"},
			{"belief_query", map[string]any{"query": "x", "entity_id": "nope"}, errs.NotFound, `entity "nope" not found`},
			{"belief_query", map[string]any{"query": "x", "valid_at": "yesterday"}, errs.BadRequest, "valid_at"},
			{"belief_query", map[string]any{"query": "x", "valid_after": "2025-02-01T00:00:00Z", "valid_before": "2025-01-01T00:00:00Z"}, errs.BadRequest, "valid_before: must be after valid_after"},
			{"entity_get", map[string]any{"entity_id": "nope"}, errs.NotFound, "not found"},
			{"entity_search", map[string]any{"query": "x", "type": "animal"}, errs.BadRequest, "type: enum"},
			{"tension_list", map[string]any{"severity": "huge"}, errs.BadRequest, "severity: enum"},
			{"tension_resolve", map[string]any{"tension_id": "nope", "resolution": "r", "action": "keep_both"}, errs.NotFound, "not found"},
			{"tension_resolve", map[string]any{"tension_id": "nope", "resolution": "r", "action": "delete"}, errs.BadRequest, "action: enum"},
		}
		for i, tt := range tests {
			t.Run(fmt.Sprintf("%02d_%s", i, tt.tool), func(t *testing.T) {
				hh := h.With(t)
				before := [3]int{hh.Count("beliefs"), hh.Count("entities"), hh.Count("tensions")}
				_, err := hh.Try(tt.tool, tt.args)
				if err == nil || err.Code != tt.code || !strings.Contains(err.Message, tt.msg) {
					t.Fatalf("got %v, want %s containing %q", err, tt.code, tt.msg)
				}
				if after := [3]int{hh.Count("beliefs"), hh.Count("entities"), hh.Count("tensions")}; after != before {
					t.Fatalf("rows changed on bad input: %v -> %v", before, after)
				}
			})
		}
	})
}

func TestConcurrentCreatesShareEntities(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		var wg sync.WaitGroup
		errc := make(chan error, 16)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				raw, _ := json.Marshal(map[string]any{"content": fmt.Sprintf("Fact number %d about the shared service", i), "entities": []map[string]any{{"name": "Shared Service", "type": "service"}}})
				o := h.P.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: raw})
				if o.Err != nil {
					errc <- o.Err
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
		if n := h.Count("entities"); n != 1 {
			t.Fatalf("concurrent creators made %d entities, want 1", n)
		}
		if n := h.Count("belief_entities"); n != 16 {
			t.Fatalf("links: %d, want 16", n)
		}
	})
}

func FuzzQueryTerms(f *testing.F) {
	for _, s := range []string{"", "which database?", `"quoted" OR NOT x*`, "CMPT 120 → SFU", "a AND (b", "ünïcödé 3.12", strings.Repeat("word ", 100)} {
		f.Add(s)
	}
	st := storetest.OpenTestSQLite(f)
	reg := registry.New()
	substrate.New(st, nil).Register(reg)
	p := pipeline.New(pipeline.Options{Registry: reg})
	p.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: json.RawMessage(`{"content":"seed belief about databases and SFU CMPT 120"}`)})
	f.Fuzz(func(t *testing.T, q string) {
		raw, _ := json.Marshal(map[string]any{"query": q})
		o := p.Call(context.Background(), pipeline.Request{Tool: "belief_query", Args: raw})
		if o.Err != nil && o.Err.Code != errs.BadRequest {
			t.Fatalf("query %q: %v", q, o.Err)
		}
	})
}
