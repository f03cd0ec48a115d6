package tutor

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// storeRealRules stores the real transfers.json rows of the given source
// courses (subject and code) as rules, as the importer does. They are read
// from the excerpt of the shared data the repository keeps, which holds
// every row of the courses the tests name (testdata/excerpt/README.md).
func storeRealRules(t *testing.T, s *Server, courses ...string) int {
	t.Helper()
	rows, err := transfer.LoadRows(filepath.Join(testtools.Excerpt(t), "langara", "transfers.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := transfer.Parser{Dir: s.dir}
	n := 0
	for _, row := range rows {
		if !slices.Contains(courses, row.Subject+" "+strings.TrimSpace(jsonInt(row.CourseCode))) {
			continue
		}
		r := p.Parse(row)
		raw, _ := json.Marshal(r)
		id := ulid.Make().String()
		var end any
		if !r.EffectiveEnd.IsZero() {
			end = date(r.EffectiveEnd)
		}
		key := strings.Join([]string{row.Source, row.Destination, row.Subject, jsonInt(row.CourseCode), row.EffectiveStart, row.Credit}, "|")
		_, err := s.st.DB().Exec(s.st.Q(`INSERT INTO tn_transfer_rules (id, row_key, source_institution, target_institution, subject, number,
			effective_start, effective_end, outcome, parsed, rule, source, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			id, key, r.Course.Institution, r.Destination, r.Course.Subject, r.Course.Number, date(r.EffectiveStart), end, string(r.Outcome),
			testBoolInt(r.Parsed), string(raw), "test", store.Micros(s.now()))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, g := range r.Source {
			for _, c := range g.Courses {
				if k := c.Course.String(); !seen[k] {
					seen[k] = true
					if _, err := s.st.DB().Exec(s.st.Q(`INSERT INTO tn_transfer_rule_courses (course, rule_id, side) VALUES (?, ?, 'source')`), k, id); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		n++
	}
	s.rulesChanged()
	return n
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func testBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newTransferHarness(t *testing.T, st *store.Store) (pipelinetest.Valence, *Server) {
	reg := registry.New()
	conv := conversation.New(st)
	s := New(st, conv, Options{CursorKey: []byte("k")})
	if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.transferTools()...); err != nil {
		t.Fatal(err)
	}
	return pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg, Sessions: conv}), Transport: "test"}, s
}

func matchCredits(ms []any) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.(map[string]any)["credit"].(string))
	}
	slices.Sort(out)
	return out
}

// TestTransferResolveOnRealRules: the expected answers were written by
// reading the rows of transfers.json, not by running the code.
func TestTransferResolveOnRealRules(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h, s := newTransferHarness(t, st)
		if n := storeRealRules(t, s, "CPSC 1150", "CPSC 1160", "CPSC 1181", "DSGN 1253", "MATH 2362", "MATH 2382"); n < 20 {
			t.Fatalf("only %d rows stored", n)
		}
		resolve := func(courses []string, target, asOf string) map[string]any {
			args := map[string]any{"sourceInstitution": "Langara College", "sourceCourses": courses, "asOfDate": asOf}
			if target != "" {
				args["targetInstitution"] = target
			}
			out := h.Call("tn_transfer_resolve", args)
			if !strings.Contains(out["attribution"].(string), "BC Transfer Guide") {
				t.Fatalf("no attribution: %v", out)
			}
			return out
		}
		// CPSC 1150 at SFU: CMPT 120 since Sep/04; CMPT 101 (May/03-Aug/04) before.
		r := resolve([]string{"CPSC 1150"}, "SFU", "2024-09-01")
		if got := matchCredits(r["exactMatches"].([]any)); !slices.Equal(got, []string{"SFU CMPT 120 (3), Q/B-Sci"}) {
			t.Fatalf("CPSC 1150 -> SFU in 2024: %v", got)
		}
		m := r["exactMatches"].([]any)[0].(map[string]any)
		if m["effectiveStart"] != "2004-09-01" || m["effectiveEnd"] != nil || len(m["ruleId"].(string)) != 26 || m["outcome"] != "credit" ||
			m["evidence"].(map[string]any)["source"] != "BC Transfer Guide" {
			t.Fatalf("match details: %v", m)
		}
		r = resolve([]string{"langara:CPSC 1150"}, "sfu", "2003-06-01")
		if got := matchCredits(r["exactMatches"].([]any)); len(got) != 1 || !strings.HasPrefix(got[0], "SFU CMPT 101 (3), If credit already received for SFU CMPT 102, credit") {
			t.Fatalf("CPSC 1150 -> SFU in June 2003 (the superseded rule): %v", got)
		}
		// CPSC 1160 alone: the pair rule (1160 & 1181 = CMPT 125 & CMPT 1XX) is partial, missing CPSC 1181.
		r = resolve([]string{"CPSC 1160"}, "SFU", "2024-09-01")
		if len(r["exactMatches"].([]any)) != 0 || len(r["partialMatches"].([]any)) != 1 {
			t.Fatalf("CPSC 1160 -> SFU: %v", r)
		}
		p := r["partialMatches"].([]any)[0].(map[string]any)
		if !slices.Equal(p["missing"].([]any), []any{"langara:CPSC 1181"}) || !strings.HasPrefix(p["credit"].(string), "LANG CPSC 1160 (3) & LANG CPSC 1181 (3) = SFU CMPT 125 (3)") {
			t.Fatalf("partial match: %v", p)
		}
		// Both (in either order, repeated): the pair rule, and CPSC 1181's own rule.
		r = resolve([]string{"CPSC 1181", "CPSC 1160", "cpsc 1181"}, "SFU", "2024-09-01")
		want := []string{"LANG CPSC 1160 (3) & LANG CPSC 1181 (3) = SFU CMPT 125 (3) & SFU CMPT 1XX (3), Q, Exemption SFU CMPT 127 (0)",
			"SFU CMPT 125 (3), Q & Exemption SFU CMPT 127 (0)"}
		if got := matchCredits(r["exactMatches"].([]any)); !slices.Equal(got, want) || len(r["partialMatches"].([]any)) != 0 {
			t.Fatalf("CPSC 1160 + 1181 -> SFU: %v, partial %v", got, r["partialMatches"])
		}
		// No credit is an answer, said so; a course no rule names is unmatched.
		r = resolve([]string{"DSGN 1253", "ZZZZ 1999"}, "SFU", "2024-09-01")
		if !slices.Equal(r["noCredit"].([]any), []any{"langara:DSGN 1253"}) || !slices.Equal(r["unmatched"].([]any), []any{"langara:ZZZZ 1999"}) {
			t.Fatalf("no credit and unmatched: %v", r)
		}
		// MATH 2362 and 2382 at TRU: together MATH 2120 (since Sep/10); MATH 2362 alone also has its own rule since May/15.
		r = resolve([]string{"MATH 2362"}, "TRU", "2024-09-01")
		if got := matchCredits(r["exactMatches"].([]any)); !slices.Equal(got, []string{"TRU MATH 2120 (3)"}) || len(r["partialMatches"].([]any)) != 1 {
			t.Fatalf("MATH 2362 -> TRU: %v %v", got, r["partialMatches"])
		}
		r = resolve([]string{"MATH 2362", "MATH 2382"}, "TRU", "2005-01-10")
		if got := matchCredits(r["exactMatches"].([]any)); !slices.Equal(got, []string{"LANG MATH 2362 (3) & LANG MATH 2382 (1) = TRU MATH 212 (3)"}) {
			t.Fatalf("MATH 2362 + 2382 -> TRU in 2005: %v", got)
		}
		// A stored rule that does not decode is left out, not a failure of every resolution.
		if _, err := st.DB().Exec(st.Q(`INSERT INTO tn_transfer_rules (id, row_key, source_institution, target_institution, subject, number,
			effective_start, outcome, parsed, rule, source, updated_at) VALUES (?, 'bad', 'langara', 'sfu', 'CPSC', '1150', '2000-01-01', 'credit', 1, '{"course": 7}', 'test', 1)`),
			ulid.Make().String()); err != nil {
			t.Fatal(err)
		}
		s.rulesChanged()
		if got := matchCredits(resolve([]string{"CPSC 1150"}, "SFU", "2024-09-01")["exactMatches"].([]any)); !slices.Equal(got, []string{"SFU CMPT 120 (3), Q/B-Sci"}) {
			t.Fatalf("with an undecodable rule stored: %v", got)
		}
		// Bad input names the field.
		for _, tc := range []struct {
			args  map[string]any
			field string
		}{
			{map[string]any{"sourceCourses": []string{"CPSC 1150"}, "targetInstitution": "Hogwarts"}, "targetInstitution"},
			{map[string]any{"sourceCourses": []string{"nowhere:CPSC 1150"}}, "sourceCourses[0]"},
			{map[string]any{"sourceInstitution": "langara", "sourceCourses": []string{"sfu:CMPT 120"}}, "sourceCourses[0]"},
			{map[string]any{"sourceInstitution": "langara", "sourceCourses": []string{"CPSC 1150"}, "asOfDate": "next week"}, "asOfDate"},
			{map[string]any{"sourceCourses": []string{}}, "sourceCourses"},
		} {
			if _, e := h.Try("tn_transfer_resolve", tc.args); e == nil || e.Code != errs.BadRequest || !strings.Contains(e.Field+" "+e.Message, tc.field) {
				t.Errorf("resolve %v: %v, want BAD_REQUEST naming %s", tc.args, e, tc.field)
			}
		}
	})
}

func TestTransferSearchAndDetails(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h, s := newTransferHarness(t, st)
		storeRealRules(t, s, "CPSC 1150", "CPSC 1160", "CPSC 1181")
		// In force today at SFU, listed under CPSC 1150: one; with expired: three versions.
		p := h.Call("tn_transfer_search", map[string]any{"sourceInstitution": "langara", "targetInstitution": "SFU", "course": "CPSC 1150", "asOfDate": "2024-09-01"})
		if p["totalCount"] != 1.0 || !strings.Contains(p["attribution"].(string), "BC Transfer Guide") {
			t.Fatalf("search in force: %v", p)
		}
		all := h.Call("tn_transfer_search", map[string]any{"sourceInstitution": "langara", "targetInstitution": "SFU", "course": "CPSC 1150", "includeExpired": true})
		if all["totalCount"] != 3.0 {
			t.Fatalf("search with expired: %v", all)
		}
		// Pages walk every rule once.
		seen := map[string]bool{}
		args := map[string]any{"includeExpired": true, "limit": 4}
		total := 0
		for {
			pg := h.Call("tn_transfer_search", args)
			total = int(pg["totalCount"].(float64))
			for _, it := range pg["items"].([]any) {
				id := it.(map[string]any)["ruleId"].(string)
				if seen[id] {
					t.Fatalf("rule %s on two pages", id)
				}
				seen[id] = true
			}
			if pg["hasMore"] != true {
				break
			}
			args["cursor"] = pg["nextCursor"]
		}
		if len(seen) != total || total < 10 {
			t.Fatalf("walked %d of %d rules", len(seen), total)
		}
		if _, e := h.Try("tn_transfer_search", map[string]any{"includeExpired": false, "limit": 4, "cursor": args["cursor"]}); e == nil || e.Field != "cursor" {
			t.Fatalf("a cursor of another query: %v", e)
		}
		// Details: the rule and its versions over time.
		id := p["items"].([]any)[0].(map[string]any)["ruleId"].(string)
		d := h.Call("tn_transfer_details", map[string]any{"ruleId": id})
		if d["credit"] != "SFU CMPT 120 (3), Q/B-Sci" || len(d["versions"].([]any)) != 3 || d["inForce"] != true {
			t.Fatalf("details: %v", d)
		}
		if _, e := h.Try("tn_transfer_details", map[string]any{"ruleId": ulid.Make().String()}); e == nil || e.Code != errs.NotFound {
			t.Fatalf("details of an unknown rule: %v", e)
		}
	})
}
