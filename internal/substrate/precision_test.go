package substrate

// Tension precision on realistic loads (issue 23): the LoCoMo conversations
// loaded as beliefs, and beliefs that share a template but are about
// different subjects.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/locomo"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// templateBeliefs returns n beliefs made from templates that name their
// subject with a number ("Course SUBJ 74 ...", "Room 12 ...", "ticket
// #4471 ..."): every belief is about another subject, so none is in tension
// with another, however alike their words and however their other numbers
// differ.
func templateBeliefs(n int) []BatchInput {
	templates := []func(i int) string{
		func(i int) string {
			return fmt.Sprintf("Course SUBJ %d transfers to institution %d as course %d", i, i%7, i)
		},
		func(i int) string { return fmt.Sprintf("Room %d in building %d has %d seats", i, i%5, 20+i%40) },
		func(i int) string {
			return fmt.Sprintf("Ticket #%d was opened by user %d and is assigned to team %d", i, i%50, i%9)
		},
		func(i int) string {
			return fmt.Sprintf("Student %d is enrolled in section %d of course %d", i, i%12, 100+i%30)
		},
		func(i int) string { return fmt.Sprintf("Order %d shipped %d items to customer %d", i, 1+i%6, i%300) },
		func(i int) string {
			return fmt.Sprintf("Flight %d departs from gate %d at %d:%02d", i, i%40, 6+i%14, i%4*15)
		},
		func(i int) string { return fmt.Sprintf("Employee %d works in building %d on floor %d", i, i%5, 1+i%8) },
		func(i int) string { return fmt.Sprintf("Node %d of cluster %d has %d GB of memory", i, i%3, 16<<(i%3)) },
	}
	out := make([]BatchInput, n)
	for i := range n {
		// The subject's number grows with i, so no two beliefs share one.
		out[i] = BatchInput{CreateInput: CreateInput{Content: templates[i%len(templates)](i)}}
	}
	return out
}

// loadTemplates creates n template beliefs in an empty store of dialect d
// through the bulk path and returns the tensions found.
func loadTemplates(t *testing.T, d store.Dialect, n int) []Tension {
	t.Helper()
	ctx := context.Background()
	st := storetest.OpenTestSQLite(t)
	if d == store.Postgres {
		st = storetest.OpenTestPostgres(t)
	}
	s := New(st, nil)
	items := templateBeliefs(n)
	var found []Tension
	for i := 0; i < len(items); i += MaxBatch {
		res, err := s.CreateBatch(ctx, "templates", items[i:min(i+MaxBatch, len(items))])
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Results {
			found = append(found, it.Tensions...)
		}
	}
	return found
}

// TestTemplateBeliefsNoTension: beliefs that share a template and differ
// in the numbers that name their subjects are never in tension (issue 23).
// NEXUS_TEMPLATES=1 runs the 20,000; by default 2,000.
func TestTemplateBeliefsNoTension(t *testing.T) {
	n := 2000
	if os.Getenv("NEXUS_TEMPLATES") != "" {
		n = 20_000
	}
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			if d == store.Postgres && os.Getenv(storetest.TestPostgresEnv) == "" {
				t.Skip(storetest.TestPostgresEnv + " not set")
			}
			found := loadTemplates(t, d, n)
			high := 0
			for _, tn := range found {
				if severityRank[tn.Severity] >= severityRank[TensionSeverityHigh] {
					high++
				}
			}
			t.Logf("%d template beliefs: %d tensions (%.1f per 1,000), %d high or critical", n, len(found), 1000*float64(len(found))/float64(n), high)
			for i, tn := range found {
				if i == 10 {
					break
				}
				t.Errorf("tension %s/%s: %s", tn.Type, tn.Severity, tn.Description)
			}
		})
	}
}

// TestLoCoMoTensions loads each LoCoMo conversation into its own workspace
// through the bulk path, each turn one belief ("Speaker: text [shares
// caption]", valid from the session's date), a session a batch, and lists
// the tensions found. The data is CC BY-NC and not in the repository:
// NEXUS_LOCOMO=1 runs it on /work/shared/data/locomo/locomo10.json (or
// NEXUS_LOCOMO=<path>). NEXUS_LOCOMO_MAX is the most tensions allowed
// (default 2, the target).
func TestLoCoMoTensions(t *testing.T) {
	path := os.Getenv("NEXUS_LOCOMO")
	if path == "" {
		t.Skip("NEXUS_LOCOMO not set")
	}
	if path == "1" {
		path = "/work/shared/data/locomo/locomo10.json"
	}
	convs, err := locomo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := store.Dialect(os.Getenv("NEXUS_LOCOMO_STORE"))
	st := storetest.OpenTestSQLite(t)
	if d == store.Postgres {
		st = storetest.OpenTestPostgres(t)
	}
	s := New(st, nil)
	turns, total := 0, 0
	start := time.Now()
	byID := map[string]string{}
	for _, c := range convs {
		ws := "locomo-" + c.ID
		for _, sess := range c.Sessions {
			var items []BatchInput
			for _, tr := range sess.Turns {
				items = append(items, BatchInput{CreateInput: CreateInput{Content: tr.Content(), ValidFrom: sess.At.UTC().Format(time.RFC3339)}})
			}
			turns += len(items)
			for i := 0; i < len(items); i += MaxBatch {
				res, err := s.CreateBatch(ctx, ws, items[i:min(i+MaxBatch, len(items))])
				if err != nil {
					t.Fatal(err)
				}
				for k, it := range res.Results {
					if it.BeliefID != "" {
						byID[it.BeliefID] = items[i+k].Content
					}
					for _, tn := range it.Tensions {
						total++
						t.Logf("%s %s/%s: %q vs %q: %s", ws, tn.Type, tn.Severity, clip(byID[tn.BeliefAID]), clip(byID[tn.BeliefBID]), tn.Description)
					}
				}
			}
		}
	}
	t.Logf("%d conversations, %d turns, %d tensions, %v", len(convs), turns, total, time.Since(start).Round(time.Millisecond))
	limit := 2
	if v := os.Getenv("NEXUS_LOCOMO_MAX"); v != "" {
		fmt.Sscan(v, &limit)
	}
	if total > limit {
		t.Errorf("%d tensions, want at most %d", total, limit)
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return strings.TrimSpace(s[:400]) + "…"
	}
	return s
}
