package tutor

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// demoFiles are the tutor's demo data (internal/tutor/demo): a small
// catalogue and transfer set of the project's own, not taken from the
// shared real data, in the formats of the real files: 8 Langara courses
// (catalogue, attributes, five sections of Fall 2025), 6 SFU outlines, and
// 17 BC Transfer Guide rows from Langara to SFU and UBC Vancouver (single
// courses, "A & B = X" and "A & B = X & Y" sets, generic credit, a
// designation, an exemption, a no-credit row, and a rule superseded by a
// later one for the same course).
//
//go:embed demo/*.json
var demoFiles embed.FS

// DemoSource is the source of the records the demo data stores.
const DemoSource = "demo"

// DemoEvidence is the evidence source of the demo transfer rules: made up
// for trying the tools, not agreements of the BC Transfer Guide.
const DemoEvidence = "Nexus demo data (made up for trying the tools; not a BC Transfer Guide agreement)"

// LoadDemo imports the demo data through the importers (auto), its records
// marked with the source "demo". Like any import it is idempotent.
func (s *Server) LoadDemo(ctx context.Context) (Summary, error) {
	names, err := fs.Glob(demoFiles, "demo/*.json")
	if err != nil {
		return Summary{}, err
	}
	ins := make([]*input, 0, len(names))
	for _, n := range names {
		b, err := demoFiles.ReadFile(n)
		if err != nil {
			return Summary{}, err
		}
		ins = append(ins, &input{name: "demo/" + path.Base(n), data: b})
	}
	return s.importInputs(ctx, KindAuto, ins, nil, func(c *importConfig) { c.source = DemoSource })
}

// demoInstitutions are the institutions whose demo records an import of
// real data replaces: those its file names. A catalogue, attributes or a
// term file is Langara's, outlines are SFU's, and transfer rows name their
// source and destination institutions. Course materials and grade
// distributions replace nothing (the demo has none; they describe courses,
// the demo's too, rather than define them), nor does a session snapshot.
func (s *Server) demoInstitutions(in *input) []string {
	set := map[string]bool{}
	switch d := in.decoded.(type) {
	case *catalogueFile, *attributesFile, *termFile:
		set["langara"] = true
	case *outlinesFile:
		set["sfu"] = true
	case *transfersFile:
		for _, raw := range d.Courses {
			var r struct{ Source, Destination string }
			if json.Unmarshal(raw, &r) != nil {
				continue
			}
			for _, code := range []string{r.Source, r.Destination} {
				if code = strings.TrimSpace(code); code != "" {
					set[institutionKey(s.dir, code)] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// purgeDemo deletes, in the import's transaction tx, the demo's tutor
// records of institutions: their courses, sections, materials and grade
// distributions, and the transfer rules from or to them, so that real data
// never sits beside made-up records (tn_transfer_resolve would otherwise
// answer the demo's invented credit beside the BC Transfer Guide's). It
// returns how many records it deleted.
func (s *Server) purgeDemo(ctx context.Context, tx *sql.Tx, institutions []string) (int, error) {
	if len(institutions) == 0 {
		return 0, nil
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(institutions)), ", ") + ")"
	args := func(times int) []any {
		a := []any{DemoSource}
		for range times {
			for _, k := range institutions {
				a = append(a, k)
			}
		}
		return a
	}
	rules := `SELECT id FROM tn_transfer_rules WHERE source = ? AND (source_institution IN ` + in + ` OR target_institution IN ` + in + `)`
	total := 0
	for _, q := range []struct {
		query  string
		times  int
		counts bool // the rule's course links are part of the rule
	}{
		{`DELETE FROM tn_transfer_rule_courses WHERE rule_id IN (` + rules + `)`, 2, false},
		{`DELETE FROM tn_transfer_rules WHERE source = ? AND (source_institution IN ` + in + ` OR target_institution IN ` + in + `)`, 2, true},
		{`DELETE FROM tn_sections WHERE source = ? AND institution IN ` + in, 1, true},
		{`DELETE FROM tn_courses WHERE source = ? AND institution IN ` + in, 1, true},
		{`DELETE FROM tn_materials WHERE source = ? AND institution IN ` + in, 1, true},
		{`DELETE FROM tn_grades WHERE source = ? AND institution IN ` + in, 1, true},
	} {
		res, err := tx.ExecContext(ctx, s.st.Q(q.query), args(q.times)...)
		if err != nil {
			return total, fmt.Errorf("delete the demo records of %s: %w", strings.Join(institutions, ", "), err)
		}
		if n, err := res.RowsAffected(); err == nil && q.counts {
			total += int(n)
		}
	}
	return total, nil
}
