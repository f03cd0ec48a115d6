package transfer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseMonth(t *testing.T) {
	for _, c := range []struct {
		in         string
		start, end time.Time
	}{
		{"May/03", day(2003, 5, 1), day(2003, 5, 31)},
		{"Apr/99", day(1999, 4, 1), day(1999, 4, 30)},
		{"Jan/50", day(1950, 1, 1), day(1950, 1, 31)},
		{"Dec/49", day(2049, 12, 1), day(2049, 12, 31)},
		{"Feb/24", day(2024, 2, 1), day(2024, 2, 29)},
		{"sep/10", day(2010, 9, 1), day(2010, 9, 30)},
		{"present", time.Time{}, time.Time{}},
	} {
		s, err := ParseMonth(c.in)
		e, err2 := ParseEndMonth(c.in)
		if err != nil || err2 != nil || !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("%q: start %v %v, end %v %v; want %v, %v", c.in, s, err, e, err2, c.start, c.end)
		}
	}
	for _, bad := range []string{"", "May", "May/2003", "Mai/03", "May/x3", "13/03"} {
		if _, err := ParseMonth(bad); err == nil {
			t.Errorf("ParseMonth(%q) = nil error", bad)
		}
	}
}

// TestUnparsedKeptVerbatim: a row the parser cannot structure is kept,
// with its text and the reason.
func TestUnparsedKeptVerbatim(t *testing.T) {
	for _, c := range []struct{ credit, start, problem string }{
		{"See the department", "May/03", "no target course"},
		{"XYZ CMPT 120 (3)", "May/03", "no target course"},
		{"SFU CMPT 120 (3)", "Maybe", "effective start"},
		{"", "May/03", "empty credit text"},
	} {
		r := Parse(Row{Subject: "CPSC", CourseCode: 1150, Source: "LANG", Destination: "SFU", Credit: c.credit, EffectiveStart: c.start, EffectiveEnd: "present"}, nil)
		if r.Parsed || r.Raw != c.credit || !strings.Contains(r.ParseProblem, c.problem) || r.Confidence != 0 {
			t.Errorf("%q: parsed %v raw %q problem %q confidence %v; want unparsed with %q", c.credit, r.Parsed, r.Raw, r.ParseProblem, r.Confidence, c.problem)
		}
		if r.Evidence.Source != EvidenceSource || r.Course != ref("langara", "CPSC", "1150") {
			t.Errorf("%q: evidence %+v course %v", c.credit, r.Evidence, r.Course)
		}
	}
	if r := Parse(Row{Subject: "CPSC", CourseCode: 1150, Source: "NOPE", Destination: "SFU", Credit: "SFU CMPT 120 (3)", EffectiveStart: "May/03", EffectiveEnd: "present"}, nil); r.Parsed || !strings.Contains(r.ParseProblem, "source institution") {
		t.Errorf("unknown source: %+v", r)
	}
}

// TestRuleJSONNames: the model's JSON names are camelCase.
func TestRuleJSONNames(t *testing.T) {
	r := Parse(Row{Subject: "MATH", CourseCode: 2485, Source: "LANG", Destination: "TWU", Credit: "TWU MATH 2XX (3), Waive TWU MATH 330 (3)", EffectiveStart: "Jan/19", EffectiveEnd: "Dec/20"}, nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"course", "destination", "source", "targets", "outcome", "waives", "conditions", "effectiveStart", "effectiveEnd", "evidence", "confidence", "raw", "parsed"} {
		if _, ok := m[k]; !ok {
			t.Errorf("rule JSON has no %q: %s", k, b)
		}
	}
	if !strings.Contains(string(b), `"effectiveEnd":"2020-12-31T00:00:00Z"`) || !strings.Contains(string(b), `"url":"https://www.bctransferguide.ca/"`) {
		t.Errorf("rule JSON: %s", b)
	}
}
