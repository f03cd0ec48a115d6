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

// TestWindowCandidatesMatchSQL: a tension search through the call's memo
// (the filters applied in Go) finds the candidates the query with the
// filters in SQL finds, in the same order, for searches by domain, by
// entity, by both and by neither, with superseded beliefs and another
// workspace among the matches, and with more related matches than the cap;
// also when the server's cache read the matches before they were
// superseded.
func TestWindowCandidatesMatchSQL(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenTestSQLite(t)
	s := New(st, nil)
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
	var first string
	if err := st.DB().QueryRowContext(ctx, `SELECT id FROM beliefs WHERE workspace = ? ORDER BY seq DESC LIMIT 1`, ws).Scan(&first); err != nil {
		t.Fatal(err)
	}
	var sfu1, cpsc []string
	for _, q := range []struct {
		name string
		dst  *[]string
	}{{"sfu1", &sfu1}, {"lang cpsc 1001", &cpsc}} {
		var id string
		if err := st.DB().QueryRowContext(ctx, `SELECT id FROM entities WHERE workspace = ? AND name_key = ?`, ws, q.name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		*q.dst = append(*q.dst, id)
	}
	cases := []struct {
		name  string
		terms []string
		f     searchFilter
	}{
		{"domain", []string{"cpsc"}, searchFilter{domainExact: "transfer/dest1/"}},
		{"entity", []string{"1001"}, searchFilter{entityIDs: cpsc}},
		{"domain or entities (capped)", []string{"cmpt", "1001"}, searchFilter{domainExact: "transfer/dest2/", entityIDs: append(slices.Clone(sfu1), cpsc...)}},
		{"neither (capped)", []string{"langara"}, searchFilter{}},
		{"excluded", []string{"1059"}, searchFilter{excludeIDs: []string{first}}},
	}
	// The server's cache holds every match's row, read while all were
	// active: the statuses changed below must be read again.
	for _, c := range cases {
		f := c.f
		f.workspace, f.requireTerms, f.maxCandidates, f.window, f.memo = ws, true, 100, 300, newMemo(s.cache)
		if _, err := s.candidates(ctx, st.Prepared(), c.terms, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE beliefs SET status = 'superseded' WHERE id = ? OR seq % 11 = 0`, first); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			// The sizes the cases were written for (the capped ones need more
			// related matches than the cap within the window).
			f.workspace, f.requireTerms, f.maxCandidates, f.window = ws, true, 100, 300
			want, err := s.candidates(ctx, st.Prepared(), c.terms, f)
			if err != nil {
				t.Fatal(err)
			}
			if capped := strings.Contains(c.name, "capped"); want.capped != capped {
				t.Fatalf("SQL: capped %v, want %v (%d hits)", want.capped, capped, len(want.hits))
			}
			f.memo = newMemo(s.cache)
			for range 2 { // the second time from the memo
				got, err := s.candidates(ctx, st.Prepared(), c.terms, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(want.hits) == 0 || got.capped != want.capped || got.total != want.total {
					t.Fatalf("memo: %d hits (capped %v), SQL: %d (capped %v)", len(got.hits), got.capped, len(want.hits), want.capped)
				}
				for i := range want.hits {
					if got.hits[i].seq != want.hits[i].seq || got.hits[i].content != want.hits[i].content {
						t.Fatalf("hit %d: memo seq %d, SQL seq %d", i, got.hits[i].seq, want.hits[i].seq)
					}
				}
			}
		})
	}
}

// TestBulkLoadCompactsIndex: batches that add a share of the store leave
// SQLite's full-text index as one segment (three batches made three
// without compactIndex), and its searches still find every batch.
func TestBulkLoadCompactsIndex(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenTestSQLite(t)
	s := New(st, nil)
	for b := range 3 {
		var items []BatchInput
		for i := range 200 {
			items = append(items, BatchInput{CreateInput: CreateInput{
				Content: fmt.Sprintf("Batch%d course %d transfers", b, i)}})
		}
		if _, err := s.CreateBatch(ctx, pipeline.DefaultWorkspace, items); err != nil {
			t.Fatal(err)
		}
	}
	var segments int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM beliefs_fts_idx`).Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if segments != 1 {
		t.Errorf("%d segments, want 1", segments)
	}
	for b := range 3 {
		var n int
		if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM beliefs_fts WHERE beliefs_fts MATCH ?`,
			fmt.Sprintf("batch%d", b)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 200 {
			t.Errorf("batch %d: %d beliefs found, want 200", b, n)
		}
	}
}
