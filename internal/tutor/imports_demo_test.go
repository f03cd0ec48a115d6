package tutor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/tutor"
)

// demoExcerpt is a small excerpt of real BC Transfer Guide rows (source
// named in the file): Langara to SFU and UBC Vancouver for courses the demo
// data names too.
const demoExcerpt = "testdata/bctg_langara_excerpt.json"

// TestRealImportReplacesDemo: real data never mixes with the demo's made-up
// records. Importing real rows deletes, in the import's transaction, the
// demo's tutor records of every institution the rows name (courses,
// sections, transfer rules from or to it), and only those; loading the demo
// again deletes nothing.
func TestRealImportReplacesDemo(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		if _, err := tut.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		demoRules := `SELECT COUNT(*) FROM tn_transfer_rules WHERE source = 'demo'`
		if n := impCount(t, st, demoRules); n != 17 {
			t.Fatalf("%d demo rules before the import, want 17", n)
		}
		// Real SFU outlines: the demo's SFU courses go, and the demo's rules
		// to SFU; its Langara courses and its rules to UBC Vancouver stay.
		outlines := filepath.Join(t.TempDir(), "outlines.json")
		if err := os.WriteFile(outlines, []byte(`{"data": [{"dept": "CMPT", "number": "120", "title": "Introduction to Computing Science and Programming I", "units": "3", "description": "An elementary introduction to computing science and computer programming.", "offerings": [{"instructors": ["Diana Cukierman"], "term": "Fall 2025"}]}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		sum, err := tut.Import(ctx, tutor.KindSFU, []string{outlines}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'sfu' AND source = 'demo'`); n != 0 {
			t.Errorf("%d demo SFU courses beside real SFU outlines", n)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE target_institution = 'sfu' AND source = 'demo'`); n != 0 {
			t.Errorf("%d demo rules to SFU beside real SFU outlines", n)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'langara' AND source = 'demo'`); n == 0 {
			t.Error("the demo's Langara courses went with real SFU outlines")
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE target_institution = 'ubcv' AND source = 'demo'`); n == 0 {
			t.Error("the demo's rules to UBC Vancouver went with real SFU outlines")
		}
		if sum.DemoRemoved == 0 {
			t.Errorf("the summary does not count the demo records removed: %+v", sum)
		}
		// Real transfer rows from Langara to SFU and UBC Vancouver: every
		// demo record of those institutions goes.
		sum, err = tut.Import(ctx, tutor.KindTransfers, []string{demoExcerpt}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 15 || sum.DemoRemoved == 0 {
			t.Errorf("summary: %+v", sum)
		}
		for _, q := range []string{
			demoRules,
			`SELECT COUNT(*) FROM tn_transfer_rule_courses WHERE rule_id NOT IN (SELECT id FROM tn_transfer_rules)`,
			`SELECT COUNT(*) FROM tn_courses WHERE source = 'demo'`,
			`SELECT COUNT(*) FROM tn_sections WHERE source = 'demo'`,
		} {
			if n := impCount(t, st, q); n != 0 {
				t.Errorf("%s: %d after importing real rows", q, n)
			}
		}
		// The demo loaded again (idempotent as every import) removes
		// nothing real.
		before := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE source <> 'demo'`)
		if _, err := tut.LoadDemo(ctx); err != nil {
			t.Fatal(err)
		}
		if after := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE source <> 'demo'`); after != before {
			t.Errorf("loading the demo changed the real rules: %d -> %d", before, after)
		}
	})
}
