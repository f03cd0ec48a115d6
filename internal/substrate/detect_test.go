package substrate

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tnTestBelief is one belief of the labelled set.
type tnTestBelief struct {
	Content    string     `json:"content"`
	DomainPath []string   `json:"domain_path"`
	Entities   []string   `json:"entities"`
	ValidFrom  *time.Time `json:"valid_from"`
	ValidUntil *time.Time `json:"valid_until"`
	Confidence float64    `json:"confidence"`
}

func (b tnTestBelief) input() TensionInput {
	return TensionInput{Content: b.Content, DomainPath: b.DomainPath, Entities: b.Entities,
		ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil, Confidence: b.Confidence}
}

// tnTestPair is one labelled pair of testdata/tension_pairs.json.
type tnTestPair struct {
	ID      string       `json:"id"`
	A       tnTestBelief `json:"a"`
	B       tnTestBelief `json:"b"`
	Tension bool         `json:"tension"`
	Type    string       `json:"type"`
	Note    string       `json:"note"`
}

// tnMinPairs is the smallest labelled set the measurement accepts.
const tnMinPairs = 60

func tnLoadPairs(t testing.TB) []tnTestPair {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tension_pairs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []tnTestPair
	if err := json.Unmarshal(data, &pairs); err != nil {
		t.Fatalf("tension_pairs.json: %v", err)
	}
	return pairs
}

var tnValidTypes = map[string]bool{
	TensionTypeContradiction: true, TensionTypeTemporalConflict: true,
	TensionTypeScopeConflict: true, TensionTypePartialOverlap: true,
}

var tnValidSeverities = map[string]bool{
	TensionSeverityLow: true, TensionSeverityMedium: true,
	TensionSeverityHigh: true, TensionSeverityCritical: true,
}

func tnTime(s string) *time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return &t
}

func tnIn(content string) TensionInput {
	return TensionInput{Content: content, DomainPath: []string{"tech", "nexus"}, Confidence: 0.7}
}

// TestDetectTensionRules exercises each rule with positives and negatives.
func TestDetectTensionRules(t *testing.T) {
	win := func(content, from, until string) TensionInput {
		in := tnIn(content)
		if from != "" {
			in.ValidFrom = tnTime(from)
		}
		if until != "" {
			in.ValidUntil = tnTime(until)
		}
		return in
	}
	dom := func(content string, path ...string) TensionInput {
		in := tnIn(content)
		in.DomainPath = path
		return in
	}
	ents := func(content string, e ...string) TensionInput {
		in := tnIn(content)
		in.Entities = e
		return in
	}
	tests := []struct {
		rule string
		a, b TensionInput
		want string // "" = no tension
		in   string // substring the reason must contain
	}{
		// Gate.
		{"gate", tnIn("Go modules are cached in GOPATH"), tnIn("The Go team meets on Mondays"), "", ""},
		{"gate", tnIn("Redis is enabled"), tnIn("Kafka is disabled"), "", ""},
		{"gate", tnIn(""), tnIn("Nexus is not fast"), "", ""},
		{"gate", tnIn("Nexus is written in Go"), tnIn("Nexus is written in Go"), "", ""},

		// Negation.
		{"negation", tnIn("Nexus supports Windows"), tnIn("Nexus does not support Windows"), TensionTypeContradiction, "negation: b negates"},
		{"negation", tnIn("Nexus doesn't support Windows"), tnIn("Nexus supports Windows and macOS"), TensionTypeContradiction, "negation: a negates"},
		{"negation", tnIn("The API has no rate limit"), tnIn("The API rate limit is 100 requests per minute"), TensionTypeContradiction, "negation"},
		{"negation", tnIn("The backup job can't write to S3"), tnIn("The backup job can write to S3"), TensionTypeContradiction, "negation"},
		{"negation", tnIn("Nexus cannot run without Docker"), tnIn("Nexus can run without Docker"), TensionTypeContradiction, "negation"},
		{"negation", tnIn("Nexus never runs migrations automatically"), tnIn("Nexus runs migrations automatically on startup"), TensionTypeContradiction, "negation"},
		{"negation-other-object", tnIn("Nexus does not support Windows"), tnIn("Nexus supports macOS and Linux"), "", ""},
		{"negation-other-object", tnIn("PostgreSQL 16 is the production database, not MySQL"), tnIn("PostgreSQL 16 is the production database"), "", ""},
		{"negation-other-subject", tnIn("Alice is not a manager at Acme"), tnIn("Bob is a manager at Acme"), "", ""},
		{"negation-both", tnIn("Nexus does not support Windows"), tnIn("Nexus does not support Windows or BSD"), "", ""},
		{"negation-clause", tnIn("Nexus supports Linux, but not Windows"), tnIn("Nexus supports Linux"), "", ""},

		// Opposed terms.
		{"opposed", tnIn("Auto-vacuum is enabled"), tnIn("Auto-vacuum is disabled"), TensionTypeContradiction, `opposed terms: "enabled" vs "disabled"`},
		{"opposed", tnIn("The repository is public"), tnIn("The repository is private"), TensionTypeContradiction, "opposed"},
		{"opposed-prefix", tnIn("The Nexus CLI is stable"), tnIn("The Nexus CLI is unstable"), TensionTypeContradiction, "opposed"},
		{"opposed-hyphen", tnIn("The flag store is read-only"), tnIn("The flag store is writable"), TensionTypeContradiction, "opposed"},
		{"opposed-double-negative", tnIn("Auto-vacuum is not enabled"), tnIn("Auto-vacuum is disabled"), "", ""},
		{"opposed-double-opposition", tnIn("Uploads larger than 10 MB are rejected"), tnIn("Uploads smaller than 10 MB are accepted"), "", ""},
		{"opposed-other-subject", tnIn("The v1 endpoints are deprecated"), tnIn("The v2 endpoints are recommended"), "", ""},

		// Values.
		{"value", tnIn("The rate limit is 100 requests per minute"), tnIn("The rate limit is 500 requests per minute"), TensionTypeContradiction, `"100" vs "500"`},
		{"value-units", tnIn("The container needs 512 MB of memory"), tnIn("The container needs 2 GB of memory"), TensionTypeContradiction, "different values"},
		{"value-version", tnIn("Nexus requires Go 1.26"), tnIn("Nexus requires Go 1.22"), TensionTypeContradiction, "different values"},
		{"value-number-word", tnIn("The team has 6 engineers"), tnIn("The team has nine engineers"), TensionTypeContradiction, "different values"},
		{"value-weekday", tnIn("Deploys happen on Tuesdays"), tnIn("Deploys happen on Thursdays"), TensionTypeContradiction, "different values"},
		{"value-frequency", tnIn("The index is rebuilt every hour"), tnIn("The index is rebuilt every day"), TensionTypeContradiction, "different values"},
		{"value-same", tnIn("The rate limit is 1,000 requests per hour"), tnIn("The rate limit is 1000 requests per hour"), "", ""},
		{"value-equal-units", tnIn("The timeout is 30 seconds"), tnIn("The timeout is 30000 ms"), "", ""},
		{"value-equal-units", tnIn("The cache TTL is 5 minutes"), tnIn("The cache TTL is 300 s"), "", ""},
		{"value-clock", tnIn("Standups happen at 9:30"), tnIn("Standups happen at 09:30 am"), "", ""},
		{"value-version-prefix", tnIn("Python 3.12 is installed"), tnIn("Python 3.12.4 is installed"), "", ""},
		{"value-qualifier", tnIn("Nexus has over 100 users"), tnIn("Nexus has 150 users"), "", ""},
		{"value-other-object", tnIn("Nexus has 3 maintainers"), tnIn("Nexus has 12 contributors"), "", ""},
		{"value-course-code", tnIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), tnIn("Langara CPSC 1181 transfers to SFU as CMPT 120"), "", ""},
		{"value-negated", tnIn("The limit is not 100"), tnIn("The limit is 500"), "", ""},

		// Dates.
		{"date", tnIn("Nexus 1.0 was released in 2019"), tnIn("Nexus 1.0 was released in 2021"), TensionTypeTemporalConflict, `different dates: "2019" vs "2021"`},
		{"date", tnIn("The offsite is on 2025-09-15"), tnIn("The offsite is on 2025-09-22"), TensionTypeTemporalConflict, "different dates"},
		{"date", tnIn("Nexus 1.0 was released in March 2024"), tnIn("Nexus 1.0 was released in June 2024"), TensionTypeTemporalConflict, "different dates"},
		{"date", tnIn("The fall term starts on September 3"), tnIn("The fall term starts on September 8"), TensionTypeTemporalConflict, "different dates"},
		{"date-qualifier", tnIn("In 2019 the production database was MySQL"), tnIn("In 2023 the production database was PostgreSQL"), "", ""},
		{"date-qualifier", tnIn("Nexus had 10 users in 2020"), tnIn("Nexus had 500 users in 2023"), "", ""},
		{"date-range", tnIn("Alice is on vacation from 2024-07-01 to 2024-07-14"), tnIn("Alice is on vacation from 2024-12-20 to 2024-12-31"), "", ""},
		{"date-not-year", tnIn("The API allows 2000 requests per hour"), tnIn("The API allows 3000 requests per hour"), TensionTypeContradiction, "different values"},

		// Validity windows.
		{"window-disjoint", win("Nexus does not support SQLite", "2022-01-01", "2023-06-01"), win("Nexus supports SQLite", "2023-06-01", ""), "", ""},
		{"window-disjoint", win("The on-call lead is Priya", "2024-03-04", "2024-03-11"), win("The on-call lead is Tom", "2024-03-11", "2024-03-18"), "", ""},
		{"window-overlap", win("Nexus supports SQLite", "2023-01-01", "2025-01-01"), win("Nexus does not support SQLite", "2024-06-01", ""), TensionTypeTemporalConflict, "validity windows overlap (2023-01-01..2025-01-01 vs 2024-06-01..open)"},
		{"window-open", win("Nexus supports SQLite", "2023-01-01", ""), win("Nexus does not support SQLite", "2024-06-01", ""), TensionTypeContradiction, "negation"},
		{"window-one-side", win("Nexus supports SQLite", "", "2025-01-01"), tnIn("Nexus does not support SQLite"), TensionTypeContradiction, "negation"},

		// Single-valued slots.
		{"slot-copula", tnIn("The default branch is main"), tnIn("The default branch is master"), TensionTypeContradiction, `single-valued slot: "main" vs "master"`},
		{"slot-is-the", tnIn("Maria Lopez is the CTO of Acme"), tnIn("Daniel Kim is the CTO of Acme"), TensionTypeContradiction, "single-valued slot"},
		{"slot-cue", tnIn("Nexus is written in Go"), tnIn("Nexus is written in Rust"), TensionTypeContradiction, "single-valued slot"},
		{"slot-cue", tnIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), tnIn("Langara CPSC 1150 transfers to SFU as CMPT 125"), TensionTypeContradiction, "single-valued slot"},
		{"slot-subject", tnIn("Alice's favourite editor is Neovim"), tnIn("Bob's favourite editor is Emacs"), "", ""},
		{"slot-two-places", tnIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), tnIn("Langara CPSC 1150 transfers to UBC as CPSC 110"), "", ""},
		{"slot-no-frame", tnIn("Alice likes Python"), tnIn("Alice likes Go"), "", ""},

		// Reversed relations.
		{"reversed", tnIn("Maria reports to Daniel"), tnIn("Daniel reports to Maria"), TensionTypeContradiction, `reversed relation around "reports"`},
		{"reversed", tnIn("Go is faster than Python"), tnIn("Python is faster than Go"), TensionTypeContradiction, "reversed"},
		{"reversed-fronted", tnIn("Migrations run before the server starts"), tnIn("Before the server starts, migrations run"), "", ""},

		// Scope.
		{"scope-env", tnIn("Debug logging is enabled in staging"), tnIn("Debug logging is disabled in production"), TensionTypeScopeConflict, "scope staging vs production"},
		{"scope-unscoped", tnIn("Rate limiting is disabled"), tnIn("Rate limiting is enabled in prod"), TensionTypeScopeConflict, "scope unscoped vs production"},
		{"scope-domain", dom("Alice prefers tabs", "work", "nexus"), dom("Alice prefers spaces", "personal"), TensionTypeScopeConflict, "scope domain work vs domain personal"},
		{"scope-same-domain-root", dom("Alice prefers tabs", "work", "nexus"), dom("Alice prefers spaces", "work", "docs"), TensionTypeContradiction, "opposed"},
		{"scope-no-conflict", tnIn("Debug logging is enabled in staging"), tnIn("Debug logging is enabled in production"), "", ""},

		// Partial overlap.
		{"partial", tnIn("Nexus stores belief embeddings in pgvector"), tnIn("Nexus stores belief embeddings in Qdrant"), TensionTypePartialOverlap, `partial overlap: differing detail "pgvector" vs "qdrant"`},
		{"partial-named", ents("Nexus stores embeddings in pgvector for search", "pgvector"), ents("Nexus stores embeddings in Qdrant for search", "Qdrant"), TensionTypePartialOverlap, "partial"},
		{"partial-mid-unnamed", tnIn("Nexus stores embeddings in pgvector for search"), tnIn("Nexus stores embeddings in Qdrant for search"), "", ""},
		{"partial-too-short", tnIn("Alice likes Python"), tnIn("Alice likes Go"), "", ""},
		{"partial-subject", tnIn("Alice reviews pull requests for the CLI"), tnIn("Bob reviews pull requests for the CLI"), "", ""},
		{"partial-paraphrase", tnIn("Nexus runs on PostgreSQL 16"), tnIn("Nexus uses PostgreSQL 16"), "", ""},

		// Added with the h3 block (see docs/tensions.md).
		{"opposed-new", tnIn("Webhooks are retried with exponential backoff"), tnIn("Webhooks are retried with linear backoff"), TensionTypeContradiction, `opposed terms: "exponential" vs "linear"`},
		{"opposed-particle", tnIn("Email notifications are turned off in staging"), tnIn("Email notifications are turned on in staging"), TensionTypeContradiction, `opposed terms: "off" vs "on"`},
		{"particle-not-preposition", tnIn("The worker runs on Linux"), tnIn("The worker runs on Windows"), "", ""},
		{"freq-nightly", tnIn("The search index is rebuilt nightly"), tnIn("The search index is rebuilt weekly"), TensionTypeContradiction, `"nightly" vs "weekly"`},
		{"freq-biweekly", tnIn("The on-call rotation is weekly"), tnIn("The on-call rotation is biweekly"), TensionTypeContradiction, "different values"},
		{"freq-attributive", tnIn("The nightly backup runs at 02:00 UTC"), tnIn("The weekly backup runs at 04:00 UTC"), "", ""},
		{"prefers-multi-valued", tnIn("Dana prefers short reviews over long meetings"), tnIn("Dana prefers written notes over long meetings"), "", ""},
		{"cue-licensed", tnIn("Nexus is licensed under MIT"), tnIn("Nexus is licensed under GPL"), TensionTypeContradiction, "single-valued slot"},
		{"subject-narrower", tnIn("Nexus logs are kept for 14 days"), tnIn("Nexus audit logs are kept for 1 year"), "", ""},
		{"subject-narrower-negation", tnIn("Nexus logs are encrypted"), tnIn("Nexus logs are not encrypted"), TensionTypeContradiction, "negation"},
		{"polarity-under-values", tnIn("The office is closed on Mondays"), tnIn("The office is open on Tuesdays"), "", ""},
		{"polarity-under-values", tnIn("Nexus 1.0 supports Windows"), tnIn("Nexus 2.0 does not support Windows"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			got, ok := DetectTension(tc.a, tc.b)
			if tc.want == "" {
				if ok {
					t.Fatalf("%q vs %q: unexpected %+v", tc.a.Content, tc.b.Content, got)
				}
				return
			}
			if !ok {
				t.Fatalf("%q vs %q: no tension, want %s", tc.a.Content, tc.b.Content, tc.want)
			}
			if got.Type != tc.want {
				t.Errorf("%q vs %q: type %s, want %s (%s)", tc.a.Content, tc.b.Content, got.Type, tc.want, got.Reason)
			}
			if !strings.Contains(got.Reason, tc.in) {
				t.Errorf("reason %q lacks %q", got.Reason, tc.in)
			}
		})
	}
}

// TestDetectTensionSeverity checks the severity table.
func TestDetectTensionSeverity(t *testing.T) {
	with := func(content string, conf float64) TensionInput {
		in := tnIn(content)
		in.Confidence = conf
		return in
	}
	const (
		neg1, neg2   = "Nexus supports Windows", "Nexus does not support Windows"
		slot1, slot2 = "Nexus is written in Go", "Nexus is written in Rust"
		date1, date2 = "Nexus 1.0 was released in 2019", "Nexus 1.0 was released in 2021"
		scp1, scp2   = "Debug logging is enabled in staging", "Debug logging is disabled in production"
		par1, par2   = "Nexus stores belief embeddings in pgvector", "Nexus stores belief embeddings in Qdrant"
	)
	tests := []struct {
		a, b   string
		ca, cb float64
		want   string
	}{
		{neg1, neg2, 0.7, 0.7, TensionSeverityHigh},
		{neg1, neg2, 0.9, 0.8, TensionSeverityCritical},
		{neg1, neg2, 0.9, 0.7, TensionSeverityHigh},
		{neg1, neg2, 0.4, 0.3, TensionSeverityMedium},
		{slot1, slot2, 0.7, 0.7, TensionSeverityMedium},
		{slot1, slot2, 0.95, 0.85, TensionSeverityHigh},
		{date1, date2, 0.6, 0.6, TensionSeverityMedium},
		{date1, date2, 0.1, 0.2, TensionSeverityLow},
		{scp1, scp2, 0.7, 0.7, TensionSeverityMedium},
		{scp1, scp2, 0.9, 0.9, TensionSeverityHigh},
		{par1, par2, 0.99, 0.99, TensionSeverityLow},
		{par1, par2, 0.1, 0.1, TensionSeverityLow},
		{neg1, neg2, math.NaN(), 2, TensionSeverityHigh}, // clamped to 0 and 1
		{neg1, neg2, 5, 2, TensionSeverityCritical},
	}
	for _, tc := range tests {
		got, ok := DetectTension(with(tc.a, tc.ca), with(tc.b, tc.cb))
		if !ok {
			t.Errorf("%q vs %q: no tension", tc.a, tc.b)
			continue
		}
		if got.Severity != tc.want {
			t.Errorf("%q vs %q (%v, %v): severity %s, want %s (%s)", tc.a, tc.b, tc.ca, tc.cb, got.Severity, tc.want, got.Reason)
		}
	}
}

// TestDetectTensionStemAndLex pins tokenizer behaviour the rules rely on.
func TestDetectTensionStemAndLex(t *testing.T) {
	for _, g := range [][]string{
		{"enabled", "enable", "enables"},
		{"databases", "database"},
		{"policies", "policy"},
		{"running", "runs", "run"},
		{"embeddings", "embedding", "embedded"},
		{"stores", "stored", "store"},
	} {
		for _, w := range g[1:] {
			if tnStem(w) != tnStem(g[0]) {
				t.Errorf("stem(%q)=%q, stem(%q)=%q", g[0], tnStem(g[0]), w, tnStem(w))
			}
		}
	}
	var keys []string
	for _, tm := range tnTerms(tnLexText("Langara CPSC 1150 doesn't transfer; v1.2.3 costs 1,000 on 2024-03-01 at 9:30pm, 16GB")) {
		switch tm.kind {
		case tnNeg:
			keys = append(keys, "!")
		case tnBreak:
			keys = append(keys, "|")
		case tnStop:
		default:
			keys = append(keys, tm.key)
		}
	}
	want := "langara cpsc1150 ! transfer | v1.2.3 cost 1000 2024-03-01 1290 | 1.7179869184e+10"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("terms = %q\nwant    %q", got, want)
	}
}

// TestDetectTensionSymmetricDeterministic checks, on the labelled set, that
// swapping the beliefs never changes whether or which tension is found, and
// that repeated calls agree exactly.
func TestDetectTensionSymmetricDeterministic(t *testing.T) {
	for _, p := range tnLoadPairs(t) {
		a, b := p.A.input(), p.B.input()
		f1, ok1 := DetectTension(a, b)
		f2, ok2 := DetectTension(b, a)
		if ok1 != ok2 || f1.Type != f2.Type {
			t.Errorf("%s: asymmetric: (%v %s) vs swapped (%v %s)", p.ID, ok1, f1.Type, ok2, f2.Type)
		}
		if f3, ok3 := DetectTension(a, b); ok3 != ok1 || f3 != f1 {
			t.Errorf("%s: non-deterministic: %+v vs %+v", p.ID, f1, f3)
		}
	}
}

// TestTensionPairsPrecisionRecall measures the detector on the labelled set.
// The bar (precision >= 0.90, recall >= 0.80) is the product's; failures are
// listed so they can be read, never removed to pass.
func TestTensionPairsPrecisionRecall(t *testing.T) {
	pairs := tnLoadPairs(t)
	if len(pairs) < tnMinPairs {
		t.Fatalf("labelled set has %d pairs, want at least %d", len(pairs), tnMinPairs)
	}
	seen := map[string]bool{}
	types := map[string]int{}
	var tp, fp, fn, tn, typeOK int
	// Subsets: "ho-" and "h2-" pairs were written after the rules were
	// first implemented, the rest ("dev") alongside them; docs/tensions.md
	// tells their history. Each is also reported on its own.
	type counts struct{ tp, fp, fn, tn, typeOK int }
	held := map[string]*counts{"dev": {}, "ho-": {}, "h2-": {}, "h3-": {}}
	for _, p := range pairs {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
		if p.Tension && !tnValidTypes[p.Type] {
			t.Errorf("%s: invalid label type %q", p.ID, p.Type)
		}
		if p.Tension {
			types[p.Type]++
		}
		got, ok := DetectTension(p.A.input(), p.B.input())
		c := held["dev"]
		if h := held[p.ID[:min(3, len(p.ID))]]; h != nil && strings.HasPrefix(p.ID, "h") {
			c = h
		}
		switch {
		case ok && p.Tension:
			c.tp++
			if got.Type == p.Type {
				c.typeOK++
			}
		case ok:
			c.fp++
		case p.Tension:
			c.fn++
		default:
			c.tn++
		}
		switch {
		case ok && p.Tension:
			tp++
			if got.Type == p.Type {
				typeOK++
			} else {
				t.Logf("TYPE %s: got %s want %s: %s", p.ID, got.Type, p.Type, got.Reason)
			}
		case ok && !p.Tension:
			fp++
			t.Logf("FP   %s: %s [%s/%s] %q vs %q", p.ID, got.Reason, got.Type, got.Severity, p.A.Content, p.B.Content)
		case !ok && p.Tension:
			fn++
			t.Logf("FN   %s (%s): %q vs %q", p.ID, p.Type, p.A.Content, p.B.Content)
		default:
			tn++
		}
	}
	for ty := range tnValidTypes {
		if types[ty] == 0 {
			t.Errorf("labelled set has no %s positives", ty)
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	precision, recall, typeAcc := ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(typeOK, tp)
	t.Logf("pairs=%d positives=%d (%d contradiction, %d temporal_conflict, %d scope_conflict, %d partial_overlap) negatives=%d",
		len(pairs), tp+fn, types[TensionTypeContradiction], types[TensionTypeTemporalConflict],
		types[TensionTypeScopeConflict], types[TensionTypePartialOverlap], fp+tn)
	t.Logf("TP=%d FP=%d FN=%d TN=%d precision=%.3f recall=%.3f type_accuracy=%.3f (%d/%d)",
		tp, fp, fn, tn, precision, recall, typeAcc, typeOK, tp)
	for _, prefix := range []string{"dev", "ho-", "h2-", "h3-"} {
		c := held[prefix]
		t.Logf("subset %s: pairs=%d TP=%d FP=%d FN=%d TN=%d precision=%.3f recall=%.3f type_accuracy=%.3f",
			prefix, c.tp+c.fp+c.fn+c.tn, c.tp, c.fp, c.fn, c.tn, ratio(c.tp, c.tp+c.fp), ratio(c.tp, c.tp+c.fn), ratio(c.typeOK, c.tp))
	}
	if precision < 0.90 {
		t.Errorf("precision %.3f < 0.90", precision)
	}
	if recall < 0.80 {
		t.Errorf("recall %.3f < 0.80", recall)
	}
}

// FuzzDetectTension checks that arbitrary input never panics, that results
// always come from the enums with a non-empty reason, and that swapping the
// beliefs yields the same verdict and type.
func FuzzDetectTension(f *testing.F) {
	for _, s := range [][2]string{
		{"PostgreSQL 16 is the production database for Nexus", "PostgreSQL 16 is not the production database for Nexus"},
		{"The API rate limit is 1,000 requests per minute", "The API rate limit is 500 req/min"},
		{"Released 2024-03-01 at 9:30pm", "Released 2024-03-02 at 10:30 am"},
		{"Debug logging is enabled in staging", "Debug logging is disabled in prod"},
		{"Alice's favourite editor isn't Vim", "Alice’s favourite editor is Vim"},
		{"v1.2.3 — 16GB, 99.9% uptime; CPSC 1150 → CMPT 120", "no. not never without ~5 s"},
		{"", "x"},
	} {
		f.Add(s[0], s[1], 0.9, 0.4, int64(0), int64(1), true)
	}
	f.Fuzz(func(t *testing.T, ca, cb string, fa, fb float64, ua, ub int64, win bool) {
		a := TensionInput{Content: ca, Confidence: fa, DomainPath: []string{"tech"}, Entities: []string{ca}}
		b := TensionInput{Content: cb, Confidence: fb, DomainPath: []string{"ops"}}
		if win {
			t1, t2 := time.Unix(ua%1e10, 0), time.Unix(ub%1e10, 0)
			a.ValidFrom, b.ValidUntil = &t1, &t2
		}
		f1, ok1 := DetectTension(a, b)
		f2, ok2 := DetectTension(b, a)
		for _, r := range []struct {
			f  TensionFinding
			ok bool
		}{{f1, ok1}, {f2, ok2}} {
			if !r.ok {
				if r.f != (TensionFinding{}) {
					t.Fatalf("no tension but non-zero finding %+v", r.f)
				}
				continue
			}
			if !tnValidTypes[r.f.Type] || !tnValidSeverities[r.f.Severity] || r.f.Reason == "" {
				t.Fatalf("invalid finding %+v", r.f)
			}
		}
		if ok1 != ok2 || f1.Type != f2.Type {
			t.Fatalf("asymmetric: %q / %q: (%v %s) vs (%v %s)", ca, cb, ok1, f1.Type, ok2, f2.Type)
		}
	})
}

// BenchmarkDetectTension measures one call over the labelled pairs.
func BenchmarkDetectTension(b *testing.B) {
	pairs := tnLoadPairs(b)
	ins := make([][2]TensionInput, len(pairs))
	for i, p := range pairs {
		ins[i] = [2]TensionInput{p.A.input(), p.B.input()}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := ins[i%len(ins)]
		DetectTension(p[0], p[1])
	}
}
