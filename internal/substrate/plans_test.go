package substrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestWritePathPlans: every query of belief creation is answered from an
// index on SQLite, through the real driver with its arguments bound
// (EXPLAIN QUERY PLAN): no step scans the beliefs or their links. The
// full-text index shows as "SCAN beliefs_fts VIRTUAL TABLE INDEX", its own
// lookup; the tension candidates are read from a window of its newest
// matches ("SCAN m", bounded), each joined by primary key.
func TestWritePathPlans(t *testing.T) {
	ctx := context.Background()
	st := storetest.OpenTestSQLite(t)
	s := New(st, nil)
	ws := pipeline.DefaultWorkspace
	var items []BatchInput
	for i := range 300 {
		items = append(items, BatchInput{CreateInput: CreateInput{
			Content:    fmt.Sprintf("Langara CPSC %d transfers to SFU as CMPT %d", 1000+i, 100+i%40),
			DomainPath: []string{"transfer", fmt.Sprintf("dest%d", i%7)},
			Entities:   []EntityInput{{Name: fmt.Sprintf("LANG CPSC %d", 1000+i)}, {Name: "SFU"}},
		}, ExternalID: fmt.Sprintf("x-%d", i)})
	}
	if _, err := s.CreateBatch(ctx, ws, items); err != nil {
		t.Fatal(err)
	}
	tension, _ := s.candidatesSQL([]string{"cpsc", "1150"}, searchFilter{workspace: ws, requireTerms: true,
		maxCandidates: tensionSearchCap, window: tensionWindow, domainExact: "transfer/dest1/", entityIDs: []string{"a", "b"}})
	_, targs := s.candidatesSQL([]string{"cpsc", "1150"}, searchFilter{workspace: ws, requireTerms: true,
		maxCandidates: tensionSearchCap, window: tensionWindow, domainExact: "transfer/dest1/", entityIDs: []string{"a", "b"}})
	for _, c := range []struct {
		name  string
		query string
		args  []any
		want  string // the step that must drive the query
	}{
		{"tension candidates", tension, targs, "SEARCH b USING INTEGER PRIMARY KEY (rowid=?)"},
		// One seek per candidate into its links, not one per entity id.
		{"tension candidates' entity probe", tension, targs, "be USING COVERING INDEX sqlite_autoindex_belief_entities_1 (belief_id=?)"},
		{"committed since the mark", sinceSQLite, []any{int64(150), int64(math.MaxInt64), ws, StatusActive}, "SEARCH b USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{"re-check candidates", inactiveQuery(3), []any{"a", "b", "c"}, "(id=?)"},
		{"external ids", externalQuery(2), []any{ws, "x-1", "x-2"}, "(workspace=? AND external_id=?)"},
		{"entity by name", `SELECT ` + entityCols + ` FROM entities e WHERE e.workspace = ? AND e.name_key = ?`, []any{ws, "sfu"}, "(workspace=? AND name_key=?)"},
		{"beliefs by seq", `SELECT ` + beliefCols + ` FROM beliefs b WHERE b.seq IN (?,?)`, []any{int64(1), int64(2)}, "(rowid=?)"},
		{"entities of beliefs", `SELECT be.belief_id, e.id, e.name, e.type, be.role FROM belief_entities be JOIN entities e ON e.id = be.entity_id
			WHERE be.belief_id IN (?,?) ORDER BY e.name, be.role`, []any{"a", "b"}, "(belief_id=?)"},
	} {
		rows, err := st.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !slices.ContainsFunc(plan, func(step string) bool { return strings.Contains(step, c.want) }) {
			t.Errorf("%s: plan %q has no step %q", c.name, plan, c.want)
		}
		for _, step := range plan {
			// Allowed scans: the full-text index's own lookup, and "m", the
			// window of its newest matches (bounded by its LIMIT).
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "VIRTUAL TABLE INDEX") && step != "SCAN m" ||
				strings.Contains(step, "USE TEMP B-TREE") && c.name != "entities of beliefs" {
				t.Errorf("%s scans: %s\nplan: %q", c.name, step, plan)
			}
		}
		t.Logf("%s: %q", c.name, plan)
	}
}
