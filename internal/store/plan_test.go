package store_test

import (
	"context"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestPlanEach: a query run with Store.PlanEach's arguments leaves no named
// prepared statement on PostgreSQL (so it is planned with its values each
// time), where the same query run plainly does (and may get a generic plan
// after five runs).
func TestPlanEach(t *testing.T) {
	st := storetest.OpenTestPostgres(t)
	ctx := context.Background()
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	named := func(query string) int {
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_prepared_statements WHERE statement = $1`, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		query     string
		planEach  bool
		wantNamed int
	}{
		{`SELECT COUNT(*) FROM beliefs WHERE tsv @@ to_tsquery('english', $1)`, true, 0},
		{`SELECT COUNT(*) FROM beliefs b WHERE b.tsv @@ to_tsquery('english', $1)`, false, 1},
	} {
		for _, term := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			args := []any{term}
			if tc.planEach {
				args = st.PlanEach(args)
			}
			var n int
			if err := conn.QueryRowContext(ctx, tc.query, args...).Scan(&n); err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
		}
		if got := named(tc.query); got != tc.wantNamed {
			t.Errorf("PlanEach %v: %d named statements for %q, want %d", tc.planEach, got, tc.query, tc.wantNamed)
		}
	}
}
