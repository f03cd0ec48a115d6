// Package tension decides whether two beliefs are in tension (contradict,
// conflict in time or scope, or partially overlap). It is deterministic
// and pure: it tokenizes both statements, aligns them (shared terms,
// opposed terms, matching and conflicting values, a substituted slot) and
// tries a table of named rules in order ([Rules]); the rule that decides is
// named in the finding.
//
// The caller narrows the candidates first: internal/substrate calls [Detect]
// once per active belief that shares an entity or a domain path with a new
// belief and matches it lexically. The vocabulary is data, embedded from
// vocab/*.txt. The rules, thresholds and measured quality are in
// docs/tensions.md and docs/benchmarks.md ("Tension detection"). Package
// tables are built once at init and only read afterwards, and no output
// depends on map iteration order.
package tension

import (
	"time"
)

// Input is one belief as the detector sees it.
type Input struct {
	Content    string
	DomainPath []string   // e.g. ["tech","database"]
	Entities   []string   // linked entity names, any case
	ValidFrom  *time.Time // nil = unknown/open
	ValidUntil *time.Time // nil = open
	Confidence float64    // overall 0..1
}

// Finding is a detected tension between two beliefs.
type Finding struct {
	Type     string // "contradiction" | "temporal_conflict" | "scope_conflict" | "partial_overlap"
	Severity string // "low" | "medium" | "high" | "critical"
	Reason   string // one human sentence naming the rule and the evidence
	Rule     string // the name of the rule that fired (see [Rules])
}

// Tension types reported in [Finding.Type].
const (
	TypeContradiction    = "contradiction"
	TypeTemporalConflict = "temporal_conflict"
	TypeScopeConflict    = "scope_conflict"
	TypePartialOverlap   = "partial_overlap"
)

// Tension severities reported in [Finding.Severity], weakest first.
const (
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// Thresholds; docs/tensions.md explains each.
const (
	// minOverlap is the minimum overlap coefficient of aligned content
	// terms (shared terms plus aligned opposed terms/values/slots over the
	// smaller belief's term count) before any rule may fire.
	minOverlap = 0.6
	// minJaccard is the minimum Jaccard index of aligned content terms.
	minJaccard = 0.2
	// maxSlot is the most terms a substituted slot may span on one side.
	maxSlot = 3
	// partialMinShared is how many word terms two beliefs must share for
	// a partial overlap.
	partialMinShared = 3
	// confident is the confidence both beliefs must reach to raise the
	// severity one level.
	confident = 0.8
	// weak is the confidence below which both beliefs lower the severity
	// one level.
	weak = 0.5
	// maxReasonTerms caps how many shared terms a reason lists.
	maxReasonTerms = 6
	// maxBytes and maxTerms bound the work per belief: beliefs are
	// short statements, and only this much of a longer one is analysed, so
	// the pairwise steps stay cheap on pathological input.
	maxBytes = 2048
	maxTerms = 128
)

// Detect reports whether existing belief a and new belief b are in
// tension. It is deterministic, allocation-light and safe for concurrent use.
func Detect(a, b Input) (Finding, bool) {
	f, _, ok := decide(a, b)
	return f, ok
}

// Analyzed is a belief analysed once, to be compared with any number of
// others by [DetectAnalyzed] without analysing it again (most of a
// comparison's cost). It is read only, safe for concurrent use.
type Analyzed struct {
	in Input
	x  belief
}

// Analyze analyses in for [DetectAnalyzed].
func Analyze(in Input) *Analyzed { return &Analyzed{in: in, x: analyze(in)} }

// DetectAnalyzed is [Detect] on analysed beliefs: the same answer.
func DetectAnalyzed(a, b *Analyzed) (Finding, bool) {
	f, _, ok := decideAnalyzed(a, b)
	return f, ok
}
