package vkb_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/locomo"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestLoCoMoExchangeSearch measures exchange_search on LoCoMo (issue 23):
// each conversation in a workspace of its own, one session per LoCoMo
// session, each turn an exchange at its session's time; every question is
// asked through exchange_search (limit 25), and a hit counts for its own
// turn only. It prints recall@1/5/10/25 overall and by category. It runs
// only with NEXUS_LOCOMO=1 (not in CI's go test: the data is CC BY-NC and
// the run takes a while); NEXUS_LOCOMO_DB=postgres runs it on PostgreSQL.
//
//	NEXUS_LOCOMO=1 go test ./internal/vkb -run TestLoCoMoExchangeSearch -v
func TestLoCoMoExchangeSearch(t *testing.T) {
	if os.Getenv("NEXUS_LOCOMO") == "" {
		t.Skip("the LoCoMo measurement runs with NEXUS_LOCOMO=1")
	}
	convs, err := locomo.Load(filepath.Join(testtools.SharedData(t), locomo.File))
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenTestSQLite(t)
	if os.Getenv("NEXUS_LOCOMO_DB") == "postgres" {
		st = storetest.OpenTestPostgres(t)
	}
	h := newHarness(t, st)
	r := locomo.NewRecall(1, 5, 10, 25)
	var asked int
	var spent time.Duration
	for _, c := range convs {
		ws := h.In("locomo-" + c.ID)
		turnOf := map[string]string{} // exchange id -> DiaID
		var last time.Time
		for _, s := range c.Sessions {
			id := obj(ws.Call("session_start", map[string]any{"platform": "api", "project_context": c.ID})["session"])["id"].(string)
			for _, turn := range s.Turns {
				ex := obj(ws.Call("exchange_add", map[string]any{"session_id": id, "role": "user", "content": turn.Content(),
					"created_at": s.At.Format(time.RFC3339)})["exchange"])
				turnOf[ex["id"].(string)] = turn.DiaID
			}
			last = s.At
		}
		now := last.Add(24 * time.Hour).Format(time.RFC3339)
		for _, q := range c.Questions {
			start := time.Now()
			res := ws.Call("exchange_search", map[string]any{"query": q.Text, "limit": 25, "context_turns": 0, "now": now})
			spent += time.Since(start)
			asked++
			var ranked []string
			for _, hit := range arr(res["hits"]) {
				ranked = append(ranked, turnOf[obj(obj(hit)["exchange"])["id"].(string)])
			}
			r.Add(q, ranked)
		}
	}
	fmt.Printf("exchange_search on LoCoMo (%s, %d questions, %v per question through the pipeline):\n%s", st.Dialect(), asked, spent/time.Duration(asked), r.Table())
}
