package substrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestScopedCandidatesMatchWalk (PostgreSQL): a tension search read from
// its scope index (fromScope) finds the same candidates, in the same order,
// as the search that walks the beliefs newest first, with superseded
// beliefs, another workspace, excluded ids and the cap.
func TestScopedCandidatesMatchWalk(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenTestPostgres(t)
	s := New(st, nil)
	defer s.Close()
	ws := pipeline.DefaultWorkspace
	for _, w := range []string{"other", ws} {
		var items []BatchInput
		for i := range 400 {
			items = append(items, BatchInput{CreateInput: CreateInput{
				Content:    fmt.Sprintf("Langara CPSC %d transfers to SFU as CMPT %d", 1000+i%60, 100+i%40),
				DomainPath: []string{"transfer", fmt.Sprintf("dest%d", i%7)},
				Entities:   []EntityInput{{Name: fmt.Sprintf("LANG CPSC %d", 1000+i%60)}, {Name: fmt.Sprintf("SFU%d", i%3)}},
			}})
		}
		if _, err := s.CreateBatch(ctx, w, items); err != nil {
			t.Fatal(err)
		}
	}
	// The scope a create writes is the one migration 027 gives a belief
	// already stored.
	var differ int
	if err := st.DB().QueryRowContext(ctx, `WITH m AS (SELECT b.scope, ARRAY(
		SELECT 'd' || chr(31) || b.workspace || chr(31) || b.domain_key WHERE b.domain_key <> ''
		UNION ALL SELECT 'e' || chr(31) || be.entity_id FROM belief_entities be WHERE be.belief_id = b.id) AS want FROM beliefs b)
		SELECT COUNT(*) FROM m WHERE NOT (scope @> want AND scope <@ want)`).Scan(&differ); err != nil {
		t.Fatal(err)
	}
	if differ != 0 {
		t.Fatalf("%d of 800 beliefs have a scope other than the migration's", differ)
	}
	entity := func(name string) string {
		var id string
		if err := st.DB().QueryRowContext(ctx, `SELECT id FROM entities WHERE workspace = $1 AND name_key = $2`, ws, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	sfu1, cpsc := entity("sfu1"), entity("lang cpsc 1001")
	var first string
	if err := st.DB().QueryRowContext(ctx, `SELECT id FROM beliefs WHERE workspace = $1 AND content LIKE '%CPSC 1001 %' ORDER BY seq DESC LIMIT 1`, ws).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE beliefs SET status = 'superseded' WHERE seq % 11 = 0`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		terms []string
		f     searchFilter
	}{
		{"domain (capped)", []string{"cpsc"}, searchFilter{domainExact: "transfer/dest1/"}},
		{"entity", []string{"1001"}, searchFilter{entityIDs: []string{cpsc}}},
		{"domain or entities (capped)", []string{"cmpt", "1001"}, searchFilter{domainExact: "transfer/dest2/", entityIDs: []string{sfu1, cpsc}}},
		{"excluded", []string{"1001"}, searchFilter{entityIDs: []string{cpsc}, excludeIDs: []string{first}}},
	}
	for _, c := range cases {
		// Both shapes of the query (scopedCandidatesSQL): few matches by
		// their document frequencies, and many.
		for _, shape := range []string{"few", "many"} {
			t.Run(c.name+"/"+shape, func(t *testing.T) {
				f := c.f
				f.workspace, f.requireTerms, f.maxCandidates, f.window = ws, true, 30, tensionWindow
				if shape == "few" {
					f.known = map[string]int{}
					for _, term := range c.terms {
						f.known[term] = 1
					}
				}
				if !s.fromScope(f) {
					t.Fatal("a tension search is not read through its scope")
				}
				if _, _, planEach := s.scopedCandidatesSQL(c.terms, f); planEach != (shape == "many") {
					t.Fatalf("planned with the values: %v, want %v", planEach, shape == "many")
				}
				got, err := s.candidates(ctx, st.DB(), c.terms, f)
				if err != nil {
					t.Fatal(err)
				}
				query, args := s.candidatesSQL(c.terms, f) // the walk
				want, err := s.readCandidates(ctx, st.DB(), query, st.PlanEach(args), f.cap())
				if err != nil {
					t.Fatal(err)
				}
				if capped := strings.Contains(c.name, "capped"); want.capped != capped {
					t.Fatalf("walk: capped %v, want %v (%d hits)", want.capped, capped, len(want.hits))
				}
				seqs := func(r *searchResult) []int64 {
					var out []int64
					for _, h := range r.hits {
						out = append(out, h.seq)
					}
					return out
				}
				if len(want.hits) == 0 || got.capped != want.capped || !slices.Equal(seqs(got), seqs(want)) {
					t.Fatalf("from the scope: %v (capped %v); walking: %v (capped %v)", seqs(got), got.capped, seqs(want), want.capped)
				}
			})
		}
	}
	// The few-matches shape has one plan whatever the values: the
	// full-text index alone drives it, scope, workspace and status tested
	// in the rows.
	f := searchFilter{workspace: ws, requireTerms: true, maxCandidates: 30, window: tensionWindow,
		domainExact: "transfer/dest1/", entityIDs: []string{cpsc}, known: map[string]int{"1001": 1}}
	query, args, _ := s.scopedCandidatesSQL([]string{"1001"}, f)
	rows, err := st.DB().QueryContext(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	text := strings.Join(plan, "\n")
	if strings.Count(text, "Index") == 0 || !strings.Contains(text, "on beliefs_tsv") || strings.Contains(text, "beliefs_scope") ||
		strings.Contains(text, "beliefs_ws_") || strings.Contains(text, "beliefs_pkey") {
		t.Fatalf("few matches: want the full-text index alone, got\n%s", text)
	}
}

// TestCommonTermsFromStatistics (PostgreSQL): after ANALYZE, a common
// term's document frequency comes from PostgreSQL's statistics, close to
// the true count; a term they do not list is counted exactly.
func TestCommonTermsFromStatistics(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenTestPostgres(t)
	s := New(st, nil)
	defer s.Close()
	var items []BatchInput
	for i := range 600 {
		items = append(items, BatchInput{CreateInput: CreateInput{
			Content: fmt.Sprintf("Langara CPSC %d transfers to SFU as CMPT %d", 1000+i%60, 100+i%40),
		}})
	}
	if _, err := s.CreateBatch(ctx, pipeline.DefaultWorkspace, items); err != nil {
		t.Fatal(err)
	}
	count := func(term string) int {
		var n int
		if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM beliefs WHERE tsv @@ to_tsquery('english', $1)`, term).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := st.DB().ExecContext(ctx, `ANALYZE beliefs`); err != nil {
		t.Fatal(err)
	}
	s.common = commonTerms{} // read the statistics again
	for _, term := range []string{"langara", "transfers", "cmpt"} {
		if _, ok, err := s.commonTermFreq(ctx, term); err != nil || !ok {
			t.Fatalf("%s: not among the common terms after ANALYZE (%v)", term, err)
		}
		got, err := s.docFreq(ctx, st.DB(), term)
		if err != nil {
			t.Fatal(err)
		}
		if want := count(term); got < want*9/10 || got > want*11/10 {
			t.Errorf("%s: estimated %d, counted %d", term, got, want)
		}
	}
	if _, ok, _ := s.commonTermFreq(ctx, "nowhere"); ok {
		t.Fatal("a term no belief holds is listed")
	}
	if got, err := s.docFreq(ctx, st.DB(), "nowhere"); err != nil || got != 0 {
		t.Fatalf("nowhere: %d, %v", got, err)
	}
}
