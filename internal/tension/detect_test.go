package tension

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// labelledBelief is one belief of the labelled set.
type labelledBelief struct {
	Content    string     `json:"content"`
	DomainPath []string   `json:"domain_path"`
	Entities   []string   `json:"entities"`
	ValidFrom  *time.Time `json:"valid_from"`
	ValidUntil *time.Time `json:"valid_until"`
	Confidence float64    `json:"confidence"`
}

func (b labelledBelief) input() Input {
	return Input(b)
}

// labelledPair is one labelled pair of a block in testdata.
type labelledPair struct {
	ID      string         `json:"id"`
	A       labelledBelief `json:"a"`
	B       labelledBelief `json:"b"`
	Tension bool           `json:"tension"`
	Type    string         `json:"type"`
	Kind    string         `json:"kind"` // the paraphrase block's kind of pair
	Note    string         `json:"note"`
}

// minPairs is the smallest labelled set the measurement accepts.
const minPairs = 60

// labelledSet is the labelled set the detector was built on.
const labelledSet = "tension_pairs.json"

// loadPairs reads the labelled block testdata/name.
func loadPairs(t testing.TB, name string) []labelledPair {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []labelledPair
	if err := json.Unmarshal(data, &pairs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pairs
}

var validTypes = map[string]bool{
	TypeContradiction: true, TypeTemporalConflict: true,
	TypeScopeConflict: true, TypePartialOverlap: true,
}

var validSeverities = map[string]bool{
	SeverityLow: true, SeverityMedium: true,
	SeverityHigh: true, SeverityCritical: true,
}

func day(s string) *time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return &t
}

func nexusIn(content string) Input {
	return Input{Content: content, DomainPath: []string{"tech", "nexus"}, Confidence: 0.7}
}

// ruleCase is one synthetic case of a rule.
type ruleCase struct {
	rule string
	a, b Input
	want string // "" = no tension
	in   string // substring the reason must contain
}

// ruleCases are the synthetic cases exercising each rule.
func ruleCases() []ruleCase {
	win := func(content, from, until string) Input {
		in := nexusIn(content)
		if from != "" {
			in.ValidFrom = day(from)
		}
		if until != "" {
			in.ValidUntil = day(until)
		}
		return in
	}
	dom := func(content string, path ...string) Input {
		in := nexusIn(content)
		in.DomainPath = path
		return in
	}
	ents := func(content string, e ...string) Input {
		in := nexusIn(content)
		in.Entities = e
		return in
	}
	return []ruleCase{
		// Gate.
		{"gate", nexusIn("Go modules are cached in GOPATH"), nexusIn("The Go team meets on Mondays"), "", ""},
		{"gate", nexusIn("Redis is enabled"), nexusIn("Kafka is disabled"), "", ""},
		{"gate", nexusIn(""), nexusIn("Nexus is not fast"), "", ""},
		{"gate", nexusIn("Nexus is written in Go"), nexusIn("Nexus is written in Go"), "", ""},

		// Negation.
		{"negation", nexusIn("Nexus supports Windows"), nexusIn("Nexus does not support Windows"), TypeContradiction, "negation: b negates"},
		{"negation", nexusIn("Nexus doesn't support Windows"), nexusIn("Nexus supports Windows and macOS"), TypeContradiction, "negation: a negates"},
		{"negation", nexusIn("The API has no rate limit"), nexusIn("The API rate limit is 100 requests per minute"), TypeContradiction, "negation"},
		{"negation", nexusIn("The backup job can't write to S3"), nexusIn("The backup job can write to S3"), TypeContradiction, "negation"},
		{"negation", nexusIn("Nexus cannot run without Docker"), nexusIn("Nexus can run without Docker"), TypeContradiction, "negation"},
		{"negation", nexusIn("Nexus never runs migrations automatically"), nexusIn("Nexus runs migrations automatically on startup"), TypeContradiction, "negation"},
		{"negation-other-object", nexusIn("Nexus does not support Windows"), nexusIn("Nexus supports macOS and Linux"), "", ""},
		{"negation-other-object", nexusIn("PostgreSQL 16 is the production database, not MySQL"), nexusIn("PostgreSQL 16 is the production database"), "", ""},
		{"negation-other-subject", nexusIn("Alice is not a manager at Acme"), nexusIn("Bob is a manager at Acme"), "", ""},
		{"negation-both", nexusIn("Nexus does not support Windows"), nexusIn("Nexus does not support Windows or BSD"), "", ""},
		{"negation-clause", nexusIn("Nexus supports Linux, but not Windows"), nexusIn("Nexus supports Linux"), "", ""},

		// Opposed terms.
		{"opposed", nexusIn("Auto-vacuum is enabled"), nexusIn("Auto-vacuum is disabled"), TypeContradiction, `opposed terms: "enabled" vs "disabled"`},
		{"opposed", nexusIn("The repository is public"), nexusIn("The repository is private"), TypeContradiction, "opposed"},
		{"opposed-prefix", nexusIn("The Nexus CLI is stable"), nexusIn("The Nexus CLI is unstable"), TypeContradiction, "opposed"},
		{"opposed-hyphen", nexusIn("The flag store is read-only"), nexusIn("The flag store is writable"), TypeContradiction, "opposed"},
		{"opposed-double-negative", nexusIn("Auto-vacuum is not enabled"), nexusIn("Auto-vacuum is disabled"), "", ""},
		{"opposed-double-opposition", nexusIn("Uploads larger than 10 MB are rejected"), nexusIn("Uploads smaller than 10 MB are accepted"), "", ""},
		{"opposed-other-subject", nexusIn("The v1 endpoints are deprecated"), nexusIn("The v2 endpoints are recommended"), "", ""},

		// Values.
		{"value", nexusIn("The rate limit is 100 requests per minute"), nexusIn("The rate limit is 500 requests per minute"), TypeContradiction, `"100" vs "500"`},
		{"value-units", nexusIn("The container needs 512 MB of memory"), nexusIn("The container needs 2 GB of memory"), TypeContradiction, "different values"},
		{"value-version", nexusIn("Nexus requires Go 1.26"), nexusIn("Nexus requires Go 1.22"), TypeContradiction, "different values"},
		{"value-number-word", nexusIn("The team has 6 engineers"), nexusIn("The team has nine engineers"), TypeContradiction, "different values"},
		{"value-weekday", nexusIn("Deploys happen on Tuesdays"), nexusIn("Deploys happen on Thursdays"), TypeContradiction, "different values"},
		{"value-frequency", nexusIn("The index is rebuilt every hour"), nexusIn("The index is rebuilt every day"), TypeContradiction, "different values"},
		{"value-same", nexusIn("The rate limit is 1,000 requests per hour"), nexusIn("The rate limit is 1000 requests per hour"), "", ""},
		{"value-equal-units", nexusIn("The timeout is 30 seconds"), nexusIn("The timeout is 30000 ms"), "", ""},
		{"value-equal-units", nexusIn("The cache TTL is 5 minutes"), nexusIn("The cache TTL is 300 s"), "", ""},
		{"value-clock", nexusIn("Standups happen at 9:30"), nexusIn("Standups happen at 09:30 am"), "", ""},
		{"value-version-prefix", nexusIn("Python 3.12 is installed"), nexusIn("Python 3.12.4 is installed"), "", ""},
		{"value-qualifier", nexusIn("Nexus has over 100 users"), nexusIn("Nexus has 150 users"), "", ""},
		{"value-other-object", nexusIn("Nexus has 3 maintainers"), nexusIn("Nexus has 12 contributors"), "", ""},
		{"value-course-code", nexusIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), nexusIn("Langara CPSC 1181 transfers to SFU as CMPT 120"), "", ""},
		{"value-negated", nexusIn("The limit is not 100"), nexusIn("The limit is 500"), "", ""},

		// Dates.
		{"date", nexusIn("Nexus 1.0 was released in 2019"), nexusIn("Nexus 1.0 was released in 2021"), TypeTemporalConflict, `different dates: "2019" vs "2021"`},
		{"date", nexusIn("The offsite is on 2025-09-15"), nexusIn("The offsite is on 2025-09-22"), TypeTemporalConflict, "different dates"},
		{"date", nexusIn("Nexus 1.0 was released in March 2024"), nexusIn("Nexus 1.0 was released in June 2024"), TypeTemporalConflict, "different dates"},
		{"date", nexusIn("The fall term starts on September 3"), nexusIn("The fall term starts on September 8"), TypeTemporalConflict, "different dates"},
		{"date-qualifier", nexusIn("In 2019 the production database was MySQL"), nexusIn("In 2023 the production database was PostgreSQL"), "", ""},
		{"date-qualifier", nexusIn("Nexus had 10 users in 2020"), nexusIn("Nexus had 500 users in 2023"), "", ""},
		{"date-range", nexusIn("Alice is on vacation from 2024-07-01 to 2024-07-14"), nexusIn("Alice is on vacation from 2024-12-20 to 2024-12-31"), "", ""},
		{"date-not-year", nexusIn("The API allows 2000 requests per hour"), nexusIn("The API allows 3000 requests per hour"), TypeContradiction, "different values"},

		// Validity windows.
		{"window-disjoint", win("Nexus does not support SQLite", "2022-01-01", "2023-06-01"), win("Nexus supports SQLite", "2023-06-01", ""), "", ""},
		{"window-disjoint", win("The on-call lead is Priya", "2024-03-04", "2024-03-11"), win("The on-call lead is Tom", "2024-03-11", "2024-03-18"), "", ""},
		{"window-overlap", win("Nexus supports SQLite", "2023-01-01", "2025-01-01"), win("Nexus does not support SQLite", "2024-06-01", ""), TypeTemporalConflict, "validity windows overlap (2023-01-01..2025-01-01 vs 2024-06-01..open)"},
		{"window-open", win("Nexus supports SQLite", "2023-01-01", ""), win("Nexus does not support SQLite", "2024-06-01", ""), TypeContradiction, "negation"},
		{"window-one-side", win("Nexus supports SQLite", "", "2025-01-01"), nexusIn("Nexus does not support SQLite"), TypeContradiction, "negation"},

		// Single-valued slots.
		{"slot-copula", nexusIn("The default branch is main"), nexusIn("The default branch is master"), TypeContradiction, `single-valued slot: "main" vs "master"`},
		{"slot-is-the", nexusIn("Maria Lopez is the CTO of Acme"), nexusIn("Daniel Kim is the CTO of Acme"), TypeContradiction, "single-valued slot"},
		{"slot-cue", nexusIn("Nexus is written in Go"), nexusIn("Nexus is written in Rust"), TypeContradiction, "single-valued slot"},
		{"slot-cue", nexusIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), nexusIn("Langara CPSC 1150 transfers to SFU as CMPT 125"), TypeContradiction, "single-valued slot"},
		{"slot-subject", nexusIn("Alice's favourite editor is Neovim"), nexusIn("Bob's favourite editor is Emacs"), "", ""},
		{"slot-two-places", nexusIn("Langara CPSC 1150 transfers to SFU as CMPT 120"), nexusIn("Langara CPSC 1150 transfers to UBC as CPSC 110"), "", ""},
		{"slot-no-frame", nexusIn("Alice likes Python"), nexusIn("Alice likes Go"), "", ""},

		// Reversed relations.
		{"reversed", nexusIn("Maria reports to Daniel"), nexusIn("Daniel reports to Maria"), TypeContradiction, `reversed relation around "reports"`},
		{"reversed", nexusIn("Go is faster than Python"), nexusIn("Python is faster than Go"), TypeContradiction, "reversed"},
		{"reversed-fronted", nexusIn("Migrations run before the server starts"), nexusIn("Before the server starts, migrations run"), "", ""},

		// Scope.
		{"scope-env", nexusIn("Debug logging is enabled in staging"), nexusIn("Debug logging is disabled in production"), TypeScopeConflict, "scope staging vs production"},
		{"scope-unscoped", nexusIn("Rate limiting is disabled"), nexusIn("Rate limiting is enabled in prod"), TypeScopeConflict, "scope unscoped vs production"},
		{"scope-domain", dom("Alice prefers tabs", "work", "nexus"), dom("Alice prefers spaces", "personal"), TypeScopeConflict, "scope domain work vs domain personal"},
		{"scope-same-domain-root", dom("Alice prefers tabs", "work", "nexus"), dom("Alice prefers spaces", "work", "docs"), TypeContradiction, "opposed"},
		{"scope-no-conflict", nexusIn("Debug logging is enabled in staging"), nexusIn("Debug logging is enabled in production"), "", ""},

		// Partial overlap.
		{"partial", nexusIn("Nexus stores belief embeddings in pgvector"), nexusIn("Nexus stores belief embeddings in Qdrant"), TypePartialOverlap, `partial overlap: differing detail "pgvector" vs "qdrant"`},
		{"partial-named", ents("Nexus stores embeddings in pgvector for search", "pgvector"), ents("Nexus stores embeddings in Qdrant for search", "Qdrant"), TypePartialOverlap, "partial"},
		{"partial-mid-unnamed", nexusIn("Nexus stores embeddings in pgvector for search"), nexusIn("Nexus stores embeddings in Qdrant for search"), "", ""},
		{"partial-too-short", nexusIn("Alice likes Python"), nexusIn("Alice likes Go"), "", ""},
		{"partial-subject", nexusIn("Alice reviews pull requests for the CLI"), nexusIn("Bob reviews pull requests for the CLI"), "", ""},
		{"partial-paraphrase", nexusIn("Nexus runs on PostgreSQL 16"), nexusIn("Nexus uses PostgreSQL 16"), "", ""},

		// Added with the h3 block (see docs/tensions.md).
		{"opposed-new", nexusIn("Webhooks are retried with exponential backoff"), nexusIn("Webhooks are retried with linear backoff"), TypeContradiction, `opposed terms: "exponential" vs "linear"`},
		{"opposed-particle", nexusIn("Email notifications are turned off in staging"), nexusIn("Email notifications are turned on in staging"), TypeContradiction, `opposed terms: "off" vs "on"`},
		{"particle-not-preposition", nexusIn("The worker runs on Linux"), nexusIn("The worker runs on Windows"), "", ""},
		{"freq-nightly", nexusIn("The search index is rebuilt nightly"), nexusIn("The search index is rebuilt weekly"), TypeContradiction, `"nightly" vs "weekly"`},
		{"freq-biweekly", nexusIn("The on-call rotation is weekly"), nexusIn("The on-call rotation is biweekly"), TypeContradiction, "different values"},
		{"freq-attributive", nexusIn("The nightly backup runs at 02:00 UTC"), nexusIn("The weekly backup runs at 04:00 UTC"), "", ""},
		{"prefers-multi-valued", nexusIn("Dana prefers short reviews over long meetings"), nexusIn("Dana prefers written notes over long meetings"), "", ""},
		{"cue-licensed", nexusIn("Nexus is licensed under MIT"), nexusIn("Nexus is licensed under GPL"), TypeContradiction, "single-valued slot"},
		{"subject-narrower", nexusIn("Nexus logs are kept for 14 days"), nexusIn("Nexus audit logs are kept for 1 year"), "", ""},
		{"subject-narrower-negation", nexusIn("Nexus logs are encrypted"), nexusIn("Nexus logs are not encrypted"), TypeContradiction, "negation"},
		{"polarity-under-values", nexusIn("The office is closed on Mondays"), nexusIn("The office is open on Tuesdays"), "", ""},
		{"polarity-under-values", nexusIn("Nexus 1.0 supports Windows"), nexusIn("Nexus 2.0 does not support Windows"), "", ""},

		// Added with the real-data measurement (issue 8).
		{"slot-argument", dom("Langara CPSC 1401 transfers to UNBC as No credit, effective Sep/16.", "transfer", "unbc"), dom("Langara CPSC 1401 transfers to VIU as No credit, effective Sep/16.", "transfer", "viu"), "", ""},
		{"slot-argument-same-domain", nexusIn("Langara CPSC 1401 transfers to UNBC as No credit"), nexusIn("Langara CPSC 1401 transfers to VIU as No credit"), "", ""},
		{"partial-in-subject", nexusIn("Langara RECR 1170 transfers to UVIC as UVIC EPHE 1XX (1.5), effective Sep/10."), nexusIn("Langara RECR 1270 transfers to UVIC as UVIC EPHE 1XX (1.5), effective Sep/10."), "", ""},
		{"effective-dates", nexusIn("Langara BIOL 1115 transfers to UBCV as UBCV BIOL 1st (3), effective May/99."), nexusIn("Langara BIOL 1115 transfers to UBCV as UBCV BIOL 1st (4), effective Sep/03."), "", ""},
		{"effective-same-date", nexusIn("Langara CHEM 1120 transfers to VIU as VIU CHEM 121 (3), effective Sep/02."), nexusIn("Langara CHEM 1120 transfers to VIU as VIU CHEM 121 (4), effective Sep/02."), TypeContradiction, "different values"},
		{"observed-year", nexusIn("Langara ANTH 1100 (Intro): Students study culture. (observed 2001)"), nexusIn("Langara ANTH 1100 (Intro): Students study culture. (observed 2002)"), "", ""},
		{"paraphrased-value-units", nexusIn("The Nexus test suite takes 70 minutes"), nexusIn("A Nexus test suite run completes in under an hour"), TypeContradiction, "paraphrased value"},
		{"paraphrased-value-bound-ok", nexusIn("The Nexus test suite takes 70 minutes"), nexusIn("A Nexus test suite run completes in under two hours"), "", ""},
		{"paraphrased-value-count", nexusIn("The search team has four designers"), nexusIn("There are 9 designers working in the search team"), TypeContradiction, "paraphrased value"},
		{"paraphrased-value-other-team", nexusIn("The search team has four designers"), nexusIn("There are 9 designers working in the billing team"), "", ""},
		{"paraphrased-value-distance", nexusIn("The Nexus office is 2 km from the station"), nexusIn("From the station, walking to the Nexus office covers 5 miles"), TypeContradiction, "different values"},
		{"reversed-preference", nexusIn("Omar prefers vim to emacs"), nexusIn("Omar likes emacs more than vim"), TypeContradiction, "reversed preference"},
		{"reversed-preference-other-person", nexusIn("Omar prefers vim to emacs"), nexusIn("Omar's manager Lia likes emacs more than vim"), "", ""},
		{"never-at-a-time", nexusIn("The Nexus batch importer never runs on weekends"), nexusIn("The Nexus batch importer is scheduled every Sunday at 04:00"), TypeContradiction, "ruled-out time"},
		{"never-other-day", nexusIn("The Nexus batch importer never runs on weekends"), nexusIn("The Nexus batch importer is scheduled every Monday at 04:00"), "", ""},
		{"only-and-another", nexusIn("The Nexus help desk answers on weekdays only"), nexusIn("There is a Sunday Nexus help desk shift"), TypeContradiction, "only one value"},
		{"paraphrased-opposition", nexusIn("Guests are allowed in the Nexus lab"), nexusIn("Visitors are banned from the Nexus lab"), TypeContradiction, "opposed terms"},
		{"until-turns-opposition", nexusIn("The Nexus office closes at 6 pm on Fridays"), nexusIn("On Fridays the Nexus office stays open until 8 pm"), TypeContradiction, "paraphrased value"},
		{"until-same-time", nexusIn("The Nexus office closes at 6 pm on Fridays"), nexusIn("On Fridays the Nexus office stays open until 6 pm"), "", ""},
		{"until-turns-negation", nexusIn("The Nexus help desk opens at 8 am"), nexusIn("The Nexus help desk does not open until 10 in the morning"), TypeContradiction, "paraphrased value"},
		{"different-start", nexusIn("Lina Park joined Initech in 2018"), nexusIn("Lina Park has worked for Initech since 2022"), TypeContradiction, "different start"},
		{"different-start-other-company", nexusIn("Lina Park joined Initech in 2018"), nexusIn("Lina Park has worked for Umbrella since 2022"), "", ""},
		{"heading-course-code", nexusIn("SFU INDG 322 (Special Topics in Indigenous Studies): Variable units: 3, 4, 5."), nexusIn("SFU INDG 422 (Special Topics in Indigenous Studies): Variable units: 3, 4, 5."), "", ""},
		{"heading-stop-word-code", nexusIn("SFU IS 309 (Special Topics in Security): Prerequisites: 45 units."), nexusIn("SFU IS 409 (Special Topics I): Prerequisites: 45 units."), "", ""},
		{"heading-designators", nexusIn("In term 202310 Langara CHEM 1114 section 005 (Chemistry) has 3 seats and 6 waitlisted, taught by James Rolke in room T533."), nexusIn("In term 202330 Langara CHEM 1114 section 003 (Chemistry) has 1 seats and 1 waitlisted, taught by James Rolke in room T533."), "", ""},
		{"heading-sections", nexusIn("In term 202310 Langara PSYC 2328 section 001 (Child Psychology) has 13 seats and <nil> waitlisted, taught by Susan Numerow in room A136B."), nexusIn("In term 202310 Langara PSYC 2328 section 002 (Child Psychology) has 14 seats and <nil> waitlisted, taught by Susan Numerow in room A136B."), "", ""},
		{"heading-same-section", nexusIn("In term 202310 Langara PSYC 2328 section 001 (Child Psychology) has 13 seats, taught by Susan Numerow."), nexusIn("In term 202310 Langara PSYC 2328 section 001 (Child Psychology) has 14 seats, taught by Susan Numerow."), TypeContradiction, "different values"},
		{"two-sentences-one-course", nexusIn("SFU STAT 330 (Introduction to Mathematical Statistics): Limiting distributions."), nexusIn("SFU STAT 330 (Introduction to Mathematical Statistics): Likelihood ratio tests."), "", ""},
		{"only-a-count", nexusIn("Langara RECR 2497 (Practicum): Students will receive credit for only one of RECR 2487 or 2497."), nexusIn("Langara RECR 2497 (Practicum): If missing three credits in one course, a student must contact the chair."), "", ""},
		{"slot-in-list", nexusIn("Langara STAT 1181 transfers to UBCV as LANG STAT 1181 (3) & LANG STAT 2225 (3) = UBCV STAT 200 (3), effective Jan/06."), nexusIn("Langara STAT 1181 transfers to UBCV as LANG STAT 1181 (3) & LANG STAT 3223 (3) = UBCV STAT 200 (3), effective Jan/06."), "", ""},
		{"slot-with-credits", nexusIn("Langara BCAP 1200 transfers to TRU as TRU COMP 1910 (3), effective Sep/10."), nexusIn("Langara BCAP 1200 transfers to TRU as TRU MIST 2610 (3), effective Sep/10."), TypeContradiction, "single-valued slot"},
		{"values-unbalanced", nexusIn("Langara JAPN 1117 transfers to UVIC as UVIC PAAS 131 (1.5), effective Sep/09."), nexusIn("Langara JAPN 1117 transfers to UVIC as LANG JAPN 1117 (3) & LANG JAPN 1217 (3) = UVIC PAAS 131 (3), effective Sep/09."), "", ""},
		{"observed-suffix", nexusIn("Langara STAT 1181 transfers to SFU as SFU STAT 301 (3), Exemption, effective Sep/99."), nexusIn("Langara STAT 1181 transfers to SFU as SFU STAT 301 (3), effective Sep/99. (observed 2001)"), "", ""},
		{"spacing-variant", nexusIn("Langara FINA 1120 transfers to SFU as SFU CA 262 (3), Visual Arts Studio, effective May/99."), nexusIn("Langara FINA 1120 transfers to SFU as SFU CA 262 (3), Visual ArtsStudio, effective May/99."), "", ""},
		{"heading-only", nexusIn("SFU POL 854 (Conflict in Public Policy): This course lets students examine the role of ideas in public policy."), nexusIn("SFU POL 854 (Conflict in Public Policy): Too often, the contention in policy processes goes unexamined."), "", ""},
		{"heading-same-claim", nexusIn("SFU POL 854 (Conflict in Public Policy): The course is offered online."), nexusIn("SFU POL 854 (Conflict in Public Policy): The course is offered offline."), TypeContradiction, "opposed terms"},
		{"increment-not-total", nexusIn("Langara CHIN 2217 (Chinese IV): Students will learn another 300 Chinese words."), nexusIn("Langara CHIN 2217 (Chinese IV): Students will use approximately 2000 Chinese words."), "", ""},
		{"heading-other-course", nexusIn("In term 202320 Langara COOP 2303 section C01 (Co-op Work Placement I Part II) has 2 seats, taught by Sue Yang in room OFFC."), nexusIn("In term 202320 Langara COOP 2502 section C01 (Co-op Work Placement II Part I) has 2 seats, taught by Sue Yang in room OFFC."), "", ""},
		{"reversed-same-order", nexusIn("Successful completion of COOP 4302 requires completion of working hours and assignments."), nexusIn("Successful completion of COOP 4302 requires completion of working hours and assignments. (observed 2001)"), "", ""},
		{"identical", nexusIn("Projects will require teams to present their design to the class."), nexusIn("Projects will require teams to present their design to the class."), "", ""},
		{"identifier-level", nexusIn("Langara ANTH 1400 transfers to TWU as TWU ANTH 1XX (3), effective May/19."), nexusIn("Langara ANTH 1400 transfers to TWU as TWU ANTH 2XX (3), effective May/19."), TypeContradiction, "single-valued slot"},
	}
}

// TestRules exercises each rule with positives and negatives.
func TestRules(t *testing.T) {
	tests := ruleCases()
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			got, ok := Detect(tc.a, tc.b)
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

// severityCase is one case of the severity table.
type severityCase struct {
	a, b   string
	ca, cb float64
	want   string
}

// severityCases are the cases of the severity table.
func severityCases() []severityCase {
	const (
		neg1, neg2   = "Nexus supports Windows", "Nexus does not support Windows"
		slot1, slot2 = "Nexus is written in Go", "Nexus is written in Rust"
		date1, date2 = "Nexus 1.0 was released in 2019", "Nexus 1.0 was released in 2021"
		scp1, scp2   = "Debug logging is enabled in staging", "Debug logging is disabled in production"
		par1, par2   = "Nexus stores belief embeddings in pgvector", "Nexus stores belief embeddings in Qdrant"
	)
	return []severityCase{
		{neg1, neg2, 0.7, 0.7, SeverityHigh},
		{neg1, neg2, 0.9, 0.8, SeverityCritical},
		{neg1, neg2, 0.9, 0.7, SeverityHigh},
		{neg1, neg2, 0.4, 0.3, SeverityMedium},
		{slot1, slot2, 0.7, 0.7, SeverityMedium},
		{slot1, slot2, 0.95, 0.85, SeverityHigh},
		{date1, date2, 0.6, 0.6, SeverityMedium},
		{date1, date2, 0.1, 0.2, SeverityLow},
		{scp1, scp2, 0.7, 0.7, SeverityMedium},
		{scp1, scp2, 0.9, 0.9, SeverityHigh},
		{par1, par2, 0.99, 0.99, SeverityLow},
		{par1, par2, 0.1, 0.1, SeverityLow},
		{neg1, neg2, math.NaN(), 2, SeverityHigh}, // clamped to 0 and 1
		{neg1, neg2, 5, 2, SeverityCritical},
	}
}

// TestSeverity checks the severity table.
func TestSeverity(t *testing.T) {
	with := func(content string, conf float64) Input {
		in := nexusIn(content)
		in.Confidence = conf
		return in
	}
	tests := severityCases()
	for _, tc := range tests {
		got, ok := Detect(with(tc.a, tc.ca), with(tc.b, tc.cb))
		if !ok {
			t.Errorf("%q vs %q: no tension", tc.a, tc.b)
			continue
		}
		if got.Severity != tc.want {
			t.Errorf("%q vs %q (%v, %v): severity %s, want %s (%s)", tc.a, tc.b, tc.ca, tc.cb, got.Severity, tc.want, got.Reason)
		}
	}
}

// TestStemAndLex pins tokenizer behaviour the rules rely on.
func TestStemAndLex(t *testing.T) {
	for _, g := range [][]string{
		{"enabled", "enable", "enables"},
		{"databases", "database"},
		{"policies", "policy"},
		{"running", "runs", "run"},
		{"embeddings", "embedding", "embedded"},
		{"stores", "stored", "store"},
	} {
		for _, w := range g[1:] {
			if stem(w) != stem(g[0]) {
				t.Errorf("stem(%q)=%q, stem(%q)=%q", g[0], stem(g[0]), w, stem(w))
			}
		}
	}
	var keys []string
	for _, tm := range toTerms(lexText("Langara CPSC 1150 doesn't transfer; v1.2.3 costs 1,000 on 2024-03-01 at 9:30pm, 16GB")) {
		switch tm.kind {
		case negTerm:
			keys = append(keys, "!")
		case breakTerm:
			keys = append(keys, "|")
		case stopTerm:
		default:
			keys = append(keys, tm.key)
		}
	}
	want := "langara cpsc1150 ! transfer | v1.2.3 cost 1000 2024-03-01 1290 | 1.7179869184e+10"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("terms = %q\nwant    %q", got, want)
	}
}

// TestSymmetricDeterministic checks, on the labelled set and the paraphrase block, that
// swapping the beliefs never changes whether or which tension is found, and
// that repeated calls agree exactly.
func TestSymmetricDeterministic(t *testing.T) {
	for _, p := range append(loadPairs(t, labelledSet), loadPairs(t, paraphraseSet)...) {
		a, b := p.A.input(), p.B.input()
		f1, ok1 := Detect(a, b)
		f2, ok2 := Detect(b, a)
		if ok1 != ok2 || f1.Type != f2.Type {
			t.Errorf("%s: asymmetric: (%v %s) vs swapped (%v %s)", p.ID, ok1, f1.Type, ok2, f2.Type)
		}
		if f3, ok3 := Detect(a, b); ok3 != ok1 || f3 != f1 {
			t.Errorf("%s: non-deterministic: %+v vs %+v", p.ID, f1, f3)
		}
	}
}

// FuzzDetect checks that arbitrary input never panics, that results
// always come from the enums with a non-empty reason, and that swapping the
// beliefs yields the same verdict and type.
func FuzzDetect(f *testing.F) {
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
		a := Input{Content: ca, Confidence: fa, DomainPath: []string{"tech"}, Entities: []string{ca}}
		b := Input{Content: cb, Confidence: fb, DomainPath: []string{"ops"}}
		if win {
			t1, t2 := time.Unix(ua%1e10, 0), time.Unix(ub%1e10, 0)
			a.ValidFrom, b.ValidUntil = &t1, &t2
		}
		f1, ok1 := Detect(a, b)
		f2, ok2 := Detect(b, a)
		for _, r := range []struct {
			f  Finding
			ok bool
		}{{f1, ok1}, {f2, ok2}} {
			if !r.ok {
				if r.f != (Finding{}) {
					t.Fatalf("no tension but non-zero finding %+v", r.f)
				}
				continue
			}
			if !validTypes[r.f.Type] || !validSeverities[r.f.Severity] || r.f.Reason == "" {
				t.Fatalf("invalid finding %+v", r.f)
			}
		}
		if ok1 != ok2 || f1.Type != f2.Type {
			t.Fatalf("asymmetric: %q / %q: (%v %s) vs (%v %s)", ca, cb, ok1, f1.Type, ok2, f2.Type)
		}
	})
}

// BenchmarkDetect measures one call over the labelled pairs.
func BenchmarkDetect(b *testing.B) {
	pairs := loadPairs(b, labelledSet)
	ins := make([][2]Input, len(pairs))
	for i, p := range pairs {
		ins[i] = [2]Input{p.A.input(), p.B.input()}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := ins[i%len(ins)]
		Detect(p[0], p[1])
	}
}

// TestRulesTable checks the decision table: named, described, unique, and
// every finding rule yields a type and a reason.
func TestRulesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if r.Name == "" || r.Description == "" {
			t.Errorf("rule %+v lacks a name or a description", r)
		}
		if seen[r.Name] {
			t.Errorf("rule %s listed twice", r.Name)
		}
		seen[r.Name] = true
		if r.when == nil {
			t.Errorf("rule %s has no condition", r.Name)
		}
		if r.Effect == Finds && (r.typ == "" || r.reason == nil || r.severity < 1 || r.severity > 4) {
			t.Errorf("finding rule %s lacks a type, a reason or a base severity", r.Name)
		}
	}
}

// TestAnalyzedOnceServesManyPairs: one analysis compared with many others
// (in both roles) answers exactly as Detect does pair by pair, so no rule
// changes an analysis it reads.
func TestAnalyzedOnceServesManyPairs(t *testing.T) {
	texts := []string{
		"The default port of Nexus is 7777", "The default port of Nexus is 8080", "Nexus never listens on port 7777",
		"Langara CPSC 1150 transfers to SFU as CMPT 120 (3), effective Sep/03.",
		"Langara CPSC 1150 transfers to SFU as CMPT 125 (3), effective Sep/03.",
		"Langara CPSC 1150 transfers to SFU as No credit, effective Sep/03.",
		"SFU CMPT 120 requires MATH 100", "SFU CMPT 120 does not require MATH 100",
	}
	ins := make([]Input, len(texts))
	an := make([]*Analyzed, len(texts))
	for i, s := range texts {
		ins[i] = Input{Content: s, Entities: []string{"Nexus"}, Confidence: 0.9}
		an[i] = Analyze(ins[i])
	}
	found := 0
	for round := range 2 {
		for i := range ins {
			for j := range ins {
				if i == j {
					continue
				}
				want, wok := Detect(ins[i], ins[j])
				got, ok := DetectAnalyzed(an[i], an[j])
				if ok != wok || got != want {
					t.Fatalf("round %d, %q vs %q: analysed once %v %v, Detect %v %v", round, texts[i], texts[j], got, ok, want, wok)
				}
				if ok {
					found++
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no pair in tension: the test compares nothing")
	}
}
