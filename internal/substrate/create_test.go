package substrate_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// TestConcurrentCreatesFindEachOther: two creates that judge their
// candidates at the same moment (neither sees the other in the store) still
// find their tension, once: the second to write compares itself with what
// was committed since it looked.
func TestConcurrentCreatesFindEachOther(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		sub := substrate.New(st, nil)
		reg := registry.New()
		if err := sub.Register(reg); err != nil {
			t.Fatal(err)
		}
		h := pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}
		const pairs = 6
		// Both creates of a pair wait for each other after judging, so
		// neither can have seen the other's belief.
		var judged sync.WaitGroup
		judged.Add(2 * pairs)
		substrate.SetJudgedHook(sub, func() { judged.Done(); judged.Wait() })
		// The first group waits until every create has queued, so that the
		// others are written together whatever the scheduling.
		var first sync.Once
		substrate.SetGroupWriteHook(sub, func() {
			first.Do(func() {
				deadline := time.Now().Add(10 * time.Second)
				for substrate.QueuedWrites(sub) < 2*pairs && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			})
		})
		var wg sync.WaitGroup
		errc := make(chan error, 2*pairs)
		for k := range pairs {
			for _, port := range []int{7777, 8080} {
				wg.Go(func() {
					raw, _ := json.Marshal(map[string]any{
						"content":  fmt.Sprintf("The default port of Service %c is %d", 'A'+k, port),
						"entities": []map[string]any{{"name": fmt.Sprintf("Service %c", 'A'+k), "type": "service"}},
					})
					if o := h.P.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: raw}); o.Err != nil {
						errc <- o.Err
					}
				})
			}
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		if n := h.Count("tensions"); n != pairs {
			t.Fatalf("%d tensions among %d concurrent contradicting pairs, want %d", n, pairs, pairs)
		}
		var cross int
		st.DB().QueryRow(`SELECT COUNT(*) FROM tensions t JOIN beliefs a ON a.id = t.belief_a JOIN beliefs b ON b.id = t.belief_b
			WHERE substr(a.content, 1, 32) <> substr(b.content, 1, 32)`).Scan(&cross)
		if cross != 0 {
			t.Fatalf("%d tensions between beliefs of different services", cross)
		}
		// On SQLite creates waiting to write are written together (group.go),
		// and the pairs still find each other within a group.
		if n := substrate.LargestWriteGroup(sub); st.Dialect() == store.SQLite && n != 2*pairs {
			t.Fatalf("the largest write group held %d of the %d creates that queued together", n, 2*pairs)
		}
	})
}

// TestGroupWriteFailureIsOwn: on SQLite, when one create of a group cannot
// be written, the group's transaction is rolled back and each create is
// written alone: the failing one fails, the others are stored, with the
// tension between them and none with the failed one (whose sequence number
// the next belief takes: nothing of it stays in the caches).
func TestGroupWriteFailureIsOwn(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	sub := substrate.New(st, nil)
	reg := registry.New()
	if err := sub.Register(reg); err != nil {
		t.Fatal(err)
	}
	h := pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}
	if _, err := st.DB().Exec(`CREATE TRIGGER poison BEFORE INSERT ON beliefs WHEN NEW.content LIKE '%poison%'
		BEGIN SELECT RAISE(ABORT, 'poisoned belief'); END`); err != nil {
		t.Fatal(err)
	}
	contents := []string{"The default port of Service Q is 7777", "The default port of Service Q is 8080 poison",
		"The default port of Service Q is 9090"}
	var judged sync.WaitGroup
	judged.Add(len(contents))
	substrate.SetJudgedHook(sub, func() { judged.Done(); judged.Wait() })
	var wg sync.WaitGroup
	errs := make([]*errs.Error, len(contents))
	for i, c := range contents {
		wg.Go(func() {
			raw, _ := json.Marshal(map[string]any{"content": c,
				"entities": []map[string]any{{"name": "Service Q", "type": "service"}}})
			errs[i] = h.P.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: raw}).Err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if poisoned := strings.Contains(contents[i], "poison"); poisoned != (err != nil) || poisoned && !strings.Contains(err.Error(), "poisoned belief") {
			t.Fatalf("create %q: err %v", contents[i], err)
		}
	}
	if substrate.LargestWriteGroup(sub) < 2 {
		t.Skip("the creates were not grouped; nothing to test")
	}
	if n := h.Count("beliefs"); n != 2 {
		t.Fatalf("%d beliefs stored, want 2", n)
	}
	var ts []string
	rows, err := st.DB().Query(`SELECT a.content || ' / ' || b.content FROM tensions t JOIN beliefs a ON a.id = t.belief_a
		JOIN beliefs b ON b.id = t.belief_b`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		ts = append(ts, s)
	}
	rows.Close()
	if len(ts) != 1 || strings.Contains(ts[0], "poison") {
		t.Fatalf("tensions %q, want the one between 7777 and 9090", ts)
	}
	// A later create takes the failed one's sequence number: it must be
	// judged as itself, against the two stored.
	substrate.SetJudgedHook(sub, nil)
	o := h.Call("belief_create", map[string]any{"content": "The default port of Service Q is 6060",
		"entities": []map[string]any{{"name": "Service Q", "type": "service"}}})
	if got := arr(o["tensions"]); len(got) != 2 {
		t.Fatalf("the next create found %d tensions, want 2: %v", len(got), o)
	}
}

// TestFreshTermIsFound: a term that no belief had when it was first searched
// for is found once a belief has it (a cached zero document frequency hid it
// for the statistics' lifetime).
func TestFreshTermIsFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		if got := arr(h.Call("belief_query", map[string]any{"query": "zanzibar"})["beliefs"]); len(got) != 0 {
			t.Fatalf("empty store: %v", got)
		}
		h.Call("belief_create", map[string]any{"content": "The Zanzibar service stores access rules"})
		if got := arr(h.Call("belief_query", map[string]any{"query": "zanzibar"})["beliefs"]); len(got) != 1 {
			t.Fatalf("after the create: %d beliefs, want 1", len(got))
		}
	})
}

// TestBatchExternalIDs: an item whose external_id the workspace holds, or
// that an earlier item of the call carries, is reported existing with the
// stored belief's id and not created again.
func TestBatchExternalIDs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		items := []any{
			map[string]any{"content": "Langara CPSC 1150 transfers to SFU as CMPT 120", "external_id": "t-1"},
			map[string]any{"content": "Langara CPSC 1160 transfers to SFU as CMPT 125", "external_id": "t-2"},
			map[string]any{"content": "Langara CPSC 1150 transfers to SFU as CMPT 120", "external_id": "t-1"},
		}
		first := h.Call("belief_create_batch", map[string]any{"beliefs": items})
		if first["created"] != float64(2) || first["existing"] != float64(1) {
			t.Fatalf("first call: %v", first)
		}
		r := arr(first["results"])
		if obj(r[2])["existing"] != true || obj(r[2])["belief_id"] != obj(r[0])["belief_id"] {
			t.Fatalf("a repeated external_id in one call: %v", r[2])
		}
		again := h.Call("belief_create_batch", map[string]any{"beliefs": items})
		if again["created"] != float64(0) || again["existing"] != float64(3) {
			t.Fatalf("second call: %v", again)
		}
		if id := obj(arr(again["results"])[1])["belief_id"]; id != obj(r[1])["belief_id"] {
			t.Fatalf("existing item's id %v, want %v", id, obj(r[1])["belief_id"])
		}
		if n := h.Count("beliefs"); n != 2 {
			t.Fatalf("%d beliefs stored, want 2", n)
		}
		// The same external id in another workspace is another belief.
		other := h.In("elsewhere").Call("belief_create_batch", map[string]any{"beliefs": items[:1]})
		if other["created"] != float64(1) {
			t.Fatalf("another workspace: %v", other)
		}
	})
}

// TestManyConcurrentWriters: 32 writers creating beliefs at once (single
// creates and batches, sharing entities and domains so their scopes
// collide) all succeed: no caller sees SQLITE_BUSY or a lock error, and
// every belief is stored.
func TestManyConcurrentWriters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newHarness(t, st)
		const writers, each = 32, 5
		var wg sync.WaitGroup
		errc := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					ents := []map[string]any{{"name": fmt.Sprintf("Service %d", (w+i)%4)}}
					var o *pipeline.Outcome
					if w%4 == 0 {
						raw, _ := json.Marshal(map[string]any{"beliefs": []any{
							map[string]any{"content": fmt.Sprintf("Writer %d batch %d first listens on port %d", w, i, 7000+i), "entities": ents, "domain_path": []string{"ops"}},
							map[string]any{"content": fmt.Sprintf("Writer %d batch %d second listens on port %d", w, i, 8000+i), "entities": ents},
						}})
						o = h.P.Call(context.Background(), pipeline.Request{Tool: "belief_create_batch", Args: raw})
					} else {
						raw, _ := json.Marshal(map[string]any{"content": fmt.Sprintf("Writer %d says service %d listens on port %d", w, (w+i)%4, 7000+w), "entities": ents, "domain_path": []string{"ops"}})
						o = h.P.Call(context.Background(), pipeline.Request{Tool: "belief_create", Args: raw})
					}
					if o.Err != nil {
						errc <- o.Err
					}
				}
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
		want := (writers/4)*each*2 + (writers-writers/4)*each
		if n := h.Count("beliefs"); n != want {
			t.Fatalf("%d beliefs stored, want %d", n, want)
		}
	})
}

// TestBulkLoadAnalyzes: on PostgreSQL a batch that doubles the belief table
// (from at least 1,000 beliefs) has the planner's statistics refreshed, so
// that tension searches keep their full-text plan whether or not autovacuum
// runs.
func TestBulkLoadAnalyzes(t *testing.T) {
	st := storetest.OpenTestPostgres(t)
	ctx := context.Background()
	s := substrate.New(st, nil)
	analyzed := func() bool {
		var at sql.NullTime
		if err := st.DB().QueryRowContext(ctx, `SELECT last_analyze FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'beliefs'`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.Valid
	}
	batch := func(from, n int) {
		items := make([]substrate.BatchInput, n)
		for i := range items {
			items[i].Content = fmt.Sprintf("Course %d of the bulk test transfers with %d credits", from+i, i%4+1)
		}
		if _, err := s.CreateBatch(ctx, pipeline.DefaultWorkspace, items); err != nil {
			t.Fatal(err)
		}
	}
	batch(0, 600)
	if analyzed() {
		t.Fatal("analyzed at 600 beliefs")
	}
	batch(600, 1000)
	deadline := time.Now().Add(5 * time.Second)
	for !analyzed() {
		if time.Now().After(deadline) {
			t.Fatal("1,600 beliefs loaded and the table was never analyzed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
