package transfer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// rules parses made-up rows (credit text, destination, range) for the
// resolution tests.
func rules(t *testing.T, rows ...Row) []Rule {
	t.Helper()
	out := Parser{Dir: catalog.NewDirectory()}.ParseAll(rows)
	for _, r := range out {
		if !r.Parsed {
			t.Fatalf("test row %q not parsed: %s", r.Raw, r.ParseProblem)
		}
	}
	return out
}

func row(subject string, code int, dest, credit, start, end string) Row {
	return Row{Subject: subject, CourseCode: code, Source: "LANG", Destination: dest, Credit: credit, EffectiveStart: start, EffectiveEnd: end}
}

func lang(subject, number string) catalog.Ref { return ref("langara", subject, number) }

var at2024 = day(2024, 6, 1)

func TestResolveExactSetSemantics(t *testing.T) {
	rs := rules(t,
		row("MATH", 2362, "TRU", "LANG MATH 2362 (3) & LANG MATH 2382 (1) = TRU MATH 2120 (3)", "Sep/10", "present"),
		row("CPSC", 1150, "SFU", "SFU CMPT 120 (3), Q/B-Sci", "May/03", "present"),
	)
	for _, have := range [][]catalog.Ref{
		{lang("MATH", "2362"), lang("MATH", "2382")},
		{lang("MATH", "2382"), lang("MATH", "2362"), lang("MATH", "2382")},
	} {
		res := Resolve(rs, have, at2024)
		if len(res.ExactMatches) != 1 || len(res.PartialMatches) != 0 || len(res.Unmatched) != 0 {
			t.Fatalf("Resolve(%v) = %d exact, %d partial, unmatched %v; want 1, 0, none", have, len(res.ExactMatches), len(res.PartialMatches), res.Unmatched)
		}
		m := res.ExactMatches[0]
		if m.Rule.Raw != rs[0].Raw || m.Outcome != OutcomeCredit {
			t.Errorf("match %q %s, want the MATH rule with credit", m.Rule.Raw, m.Outcome)
		}
		if m.SourceCredits == nil || *m.SourceCredits != 4 || !reflect.DeepEqual(m.TargetCredits, []float64{3}) {
			t.Errorf("credits: source %v target %v, want 4 -> [3]", m.SourceCredits, m.TargetCredits)
		}
		if !reflect.DeepEqual(m.Used, []catalog.Ref{lang("MATH", "2362"), lang("MATH", "2382")}) {
			t.Errorf("used %v", m.Used)
		}
		if m.Evidence.Source != "BC Transfer Guide" || m.Confidence != 1 || !m.EffectiveStart.Equal(day(2010, 9, 1)) || !m.EffectiveEnd.IsZero() {
			t.Errorf("evidence %+v confidence %v range %v-%v", m.Evidence, m.Confidence, m.EffectiveStart, m.EffectiveEnd)
		}
	}
}

func TestResolvePartialNamesMissing(t *testing.T) {
	rs := rules(t,
		row("MATH", 2362, "TRU", "LANG MATH 2362 (3) & LANG MATH 2382 (1) = TRU MATH 2120 (3)", "Sep/10", "present"),
		row("ENGL", 1100, "EC", "Any 2 of LANG ENGL 1100 (3) or LANG ENGL 1127 (3) or LANG ENGL 1128 (3) = EC ENGL 100 (3) & EC ENGL 101 (3)", "Sep/12", "present"),
		row("FINA", 1120, "UBCV", "LANG FINA 1120 (3) & one of LANG FINA 1140 (3), LANG FINA 1130 (3) = UBCV VISA 180 (3) & UBCV VISA 183 (3)", "May/99", "present"),
	)
	res := Resolve(rs, []catalog.Ref{lang("MATH", "2362"), lang("ENGL", "1127"), lang("FINA", "1130")}, at2024)
	if len(res.ExactMatches) != 0 || len(res.PartialMatches) != 3 {
		t.Fatalf("%d exact, %d partial; want 0 and 3", len(res.ExactMatches), len(res.PartialMatches))
	}
	want := [][]GroupProgress{
		{{Group: 0, Kind: GroupRequired, Need: 2, Have: 1, Missing: []catalog.Ref{lang("MATH", "2382")}, Summary: "group 0: have 1 of 2 required"}},
		{{Group: 0, Kind: GroupNOf, Need: 2, Have: 1, Missing: []catalog.Ref{lang("ENGL", "1100"), lang("ENGL", "1128")}, Summary: "group 0: have 1 of 2 needed (any)"}},
		{
			{Group: 0, Kind: GroupRequired, Need: 1, Have: 0, Missing: []catalog.Ref{lang("FINA", "1120")}, Summary: "group 0: have 0 of 1 required"},
			{Group: 1, Kind: GroupOr, Need: 1, Have: 1, Satisfied: true, Summary: "group 1: have 1 of 1 needed (any one)"},
		},
	}
	for i, m := range res.PartialMatches {
		if !reflect.DeepEqual(m.Progress, want[i]) {
			t.Errorf("partial %q progress\n got %+v\nwant %+v", m.Rule.Raw, m.Progress, want[i])
		}
	}
	// Completing each rule makes it exact.
	res = Resolve(rs, []catalog.Ref{lang("MATH", "2362"), lang("MATH", "2382"), lang("ENGL", "1127"), lang("ENGL", "1128"), lang("FINA", "1130"), lang("FINA", "1120")}, at2024)
	if len(res.ExactMatches) != 3 || len(res.PartialMatches) != 0 {
		t.Fatalf("complete: %d exact, %d partial; want 3 and 0", len(res.ExactMatches), len(res.PartialMatches))
	}
}

func TestResolveNoCreditIsAnAnswer(t *testing.T) {
	rs := rules(t, row("CPSC", 1000, "UBCV", "No credit", "Jan/09", "present"))
	res := Resolve(rs, []catalog.Ref{lang("CPSC", "1000")}, at2024)
	if len(res.ExactMatches) != 1 || res.ExactMatches[0].Outcome != OutcomeNoCredit || len(res.Unmatched) != 0 {
		t.Fatalf("got %+v; want one exact no_credit match", res)
	}
	// In JSON a match carries its rule's fields: outcome, range, evidence, confidence.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"exactMatches":[{`, `"outcome":"no_credit"`, `"effectiveStart":"2009-01-01T00:00:00Z"`,
		`"evidence":{"source":"BC Transfer Guide"`, `"confidence":1`, `"used":[`, `"partialMatches":[]`, `"unmatched":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("result JSON lacks %s: %s", want, b)
		}
	}
}

func TestResolveEffectiveRangeAndUnmatched(t *testing.T) {
	rs := rules(t, row("AHIS", 1111, "KPU", "KPU ARTH 2124 (3)", "Sep/12", "Aug/21"))
	have := []catalog.Ref{lang("AHIS", "1111"), lang("CPSC", "9999")}
	for _, c := range []struct {
		at    time.Time
		exact int
	}{
		{day(2012, 8, 31), 0}, {day(2012, 9, 1), 1}, {time.Date(2021, 8, 31, 23, 59, 0, 0, time.UTC), 1}, {day(2021, 9, 1), 0},
	} {
		res := Resolve(rs, have, c.at)
		if len(res.ExactMatches) != c.exact {
			t.Errorf("at %v: %d exact, want %d", c.at, len(res.ExactMatches), c.exact)
		}
		wantUnmatched := []catalog.Ref{lang("CPSC", "9999")}
		if c.exact == 0 {
			wantUnmatched = have
		}
		if !reflect.DeepEqual(res.Unmatched, wantUnmatched) {
			t.Errorf("at %v: unmatched %v, want %v", c.at, res.Unmatched, wantUnmatched)
		}
	}
}

func TestIndexKeepsAnAgreementOnce(t *testing.T) {
	text := "LANG CHEM 1114 (3) & LANG CHEM 1118 (3) = SFU CHEM 101 (3) & SFU CHEM 106 (2)"
	rs := rules(t, row("CHEM", 1114, "SFU", text, "May/99", "present"), row("CHEM", 1118, "SFU", text, "May/99", "present"))
	ix := NewIndex(rs)
	if ix.Len() != 1 {
		t.Fatalf("index holds %d rules, want 1", ix.Len())
	}
	res := ix.Resolve([]catalog.Ref{lang("CHEM", "1114"), lang("CHEM", "1118")}, at2024)
	if len(res.ExactMatches) != 1 {
		t.Fatalf("%d exact matches, want 1", len(res.ExactMatches))
	}
}

func TestResolveToOneDestination(t *testing.T) {
	rs := rules(t,
		row("CPSC", 1150, "SFU", "SFU CMPT 120 (3)", "May/03", "present"),
		row("CPSC", 1150, "UBCV", "UBCV CPSC 1st (3)", "May/03", "present"),
	)
	res := NewIndex(rs).ResolveTo("ubcv", []catalog.Ref{lang("CPSC", "1150")}, at2024)
	if len(res.ExactMatches) != 1 || res.ExactMatches[0].Rule.Destination != "ubcv" {
		t.Fatalf("got %+v, want the UBCV rule only", res.ExactMatches)
	}
}

// TestResolveSupersededRealRule resolves LANG AHIS 1111 against the real
// rules: KPU gave ARTH 2124 (3) from Sep/12 to Aug/21, and no credit from
// Sep/21.
func TestResolveSupersededRealRule(t *testing.T) {
	testtools.ForEachData(t, testResolveSupersededRealRule)
}

func testResolveSupersededRealRule(t *testing.T, d testtools.Data) {
	_, real := loadReal(t, d.Dir)
	ix := NewIndex(real)
	kpu := func(at time.Time) []Match {
		var out []Match
		out = append(out, ix.ResolveTo("kpu", []catalog.Ref{lang("AHIS", "1111")}, at).ExactMatches...)
		return out
	}
	before := kpu(day(2015, 1, 1))
	if len(before) != 1 || before[0].Outcome != OutcomeCredit || before[0].Rule.Targets[0].Targets[0].Course != ref("kpu", "ARTH", "2124") {
		t.Fatalf("2015: %+v; want KPU ARTH 2124", before)
	}
	after := kpu(day(2022, 1, 1))
	if len(after) != 1 || after[0].Outcome != OutcomeNoCredit {
		t.Fatalf("2022: %+v; want no credit", after)
	}
}

// TestIndexConcurrentUse resolves from several goroutines at once (run
// with -race): the index is read only.
func TestIndexConcurrentUse(t *testing.T) {
	testtools.ForEachData(t, testIndexConcurrentUse)
}

func testIndexConcurrentUse(t *testing.T, d testtools.Data) {
	_, real := loadReal(t, d.Dir)
	ix := NewIndex(real)
	have := []catalog.Ref{lang("CPSC", "1150"), lang("MATH", "1171"), lang("ENGL", "1127"), lang("CHEM", "1114")}
	want := ix.Resolve(have, at2024)
	if len(want.ExactMatches) == 0 {
		t.Fatal("no exact match for common courses")
	}
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			got := ix.Resolve(have, at2024)
			if len(got.ExactMatches) != len(want.ExactMatches) || len(got.PartialMatches) != len(want.PartialMatches) {
				errs <- "different result"
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
