package substrate

// Tension detection is internal/tension's; this file adapts its names to the
// ones the substrate has always used, so belief creation and the tension
// tools need not change.

import "github.com/nexus-mcp/nexus/internal/tension"

// TensionInput is one belief as the detector sees it.
type TensionInput = tension.Input

// TensionFinding is a detected tension between two beliefs.
type TensionFinding = tension.Finding

// Tension types reported in [TensionFinding.Type].
const (
	TensionTypeContradiction    = tension.TypeContradiction
	TensionTypeTemporalConflict = tension.TypeTemporalConflict
	TensionTypeScopeConflict    = tension.TypeScopeConflict
	TensionTypePartialOverlap   = tension.TypePartialOverlap
)

// Tension severities reported in [TensionFinding.Severity], weakest first.
const (
	TensionSeverityLow      = tension.SeverityLow
	TensionSeverityMedium   = tension.SeverityMedium
	TensionSeverityHigh     = tension.SeverityHigh
	TensionSeverityCritical = tension.SeverityCritical
)

// DetectTension reports whether existing belief a and new belief b are in
// tension; see [tension.Detect].
func DetectTension(a, b TensionInput) (TensionFinding, bool) { return tension.Detect(a, b) }
