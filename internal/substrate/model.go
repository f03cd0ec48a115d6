package substrate

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// Confidence is a belief's confidence: an overall value and the optional
// dimensions of SPEC section 3.
type Confidence struct {
	Overall             float64  `json:"overall"`
	SourceReliability   *float64 `json:"source_reliability,omitempty"`
	MethodQuality       *float64 `json:"method_quality,omitempty"`
	InternalConsistency *float64 `json:"internal_consistency,omitempty"`
	TemporalFreshness   *float64 `json:"temporal_freshness,omitempty"`
	Corroboration       *float64 `json:"corroboration,omitempty"`
	DomainApplicability *float64 `json:"domain_applicability,omitempty"`
}

// ConfidenceInput is the confidence argument as sent.
type ConfidenceInput struct {
	Overall             *float64 `json:"overall"`
	SourceReliability   *float64 `json:"source_reliability"`
	MethodQuality       *float64 `json:"method_quality"`
	InternalConsistency *float64 `json:"internal_consistency"`
	TemporalFreshness   *float64 `json:"temporal_freshness"`
	Corroboration       *float64 `json:"corroboration"`
	DomainApplicability *float64 `json:"domain_applicability"`
}

// DefaultConfidence is the overall confidence of a belief created without one.
const DefaultConfidence = 0.7

// resolve turns the argument into a Confidence: overall as given, else the
// mean of the given dimensions, else fallback.
func (c *ConfidenceInput) resolve(fallback float64) Confidence {
	if c == nil {
		return Confidence{Overall: fallback}
	}
	out := Confidence{
		SourceReliability: c.SourceReliability, MethodQuality: c.MethodQuality,
		InternalConsistency: c.InternalConsistency, TemporalFreshness: c.TemporalFreshness,
		Corroboration: c.Corroboration, DomainApplicability: c.DomainApplicability,
	}
	if c.Overall != nil {
		out.Overall = *c.Overall
		return out
	}
	sum, n := 0.0, 0
	for _, d := range []*float64{c.SourceReliability, c.MethodQuality, c.InternalConsistency, c.TemporalFreshness, c.Corroboration, c.DomainApplicability} {
		if d != nil {
			sum += *d
			n++
		}
	}
	if n == 0 {
		out.Overall = fallback
	} else {
		out.Overall = math.Round(sum/float64(n)*1e4) / 1e4
	}
	return out
}

// Source says where a belief came from.
type Source struct {
	Type  string `json:"type,omitempty"`
	Ref   string `json:"ref,omitempty"`
	Title string `json:"title,omitempty"`
}

// EntityLink is an entity as linked to a belief.
type EntityLink struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Role string `json:"role"`
}

// Belief is a belief in full, as every tool returns it.
type Belief struct {
	ID              string       `json:"id"`
	Content         string       `json:"content"`
	Confidence      Confidence   `json:"confidence"`
	DomainPath      []string     `json:"domain_path"`
	Source          Source       `json:"source,omitzero"` // omitted when no source was given
	Entities        []EntityLink `json:"entities"`
	Status          string       `json:"status"`
	ValidFrom       *time.Time   `json:"valid_from,omitempty"`
	ValidUntil      *time.Time   `json:"valid_until,omitempty"`
	Supersedes      string       `json:"supersedes,omitempty"`
	SupersededBy    string       `json:"superseded_by,omitempty"`
	SupersedeReason string       `json:"supersede_reason,omitempty"`
	Workspace       string       `json:"workspace"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
	// RelevanceScore is set by belief_query only.
	RelevanceScore *float64 `json:"relevance_score,omitempty"`

	seq int64
}

// Entity is an entity in full.
type Entity struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Aliases     []string  `json:"aliases"`
	Workspace   string    `json:"workspace"`
	BeliefCount int       `json:"belief_count"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Tension is a detected tension between two beliefs.
type Tension struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	Severity    string     `json:"severity"`
	Status      string     `json:"status"`
	Description string     `json:"description"`
	BeliefAID   string     `json:"belief_a_id"`
	BeliefBID   string     `json:"belief_b_id"`
	BeliefA     *Belief    `json:"belief_a,omitempty"`
	BeliefB     *Belief    `json:"belief_b,omitempty"`
	Resolution  string     `json:"resolution,omitempty"`
	Action      string     `json:"action,omitempty"`
	Workspace   string     `json:"workspace"`
	CreatedAt   time.Time  `json:"created_at"`
	ResolvedAt  *time.Time `json:"resolved_at,omitempty"`
	// Judge is the model judge's verdict when a chat model confirmed the
	// tension (tensions: {judge: model}); absent when the rules alone
	// decided.
	Judge *Judgment `json:"judge,omitempty"`
}

// Belief statuses.
const (
	StatusActive     = "active"
	StatusSuperseded = "superseded"
	StatusArchived   = "archived"
)

// severityRank orders severities for the "minimum severity" filter.
var severityRank = map[string]int{"low": 1, "medium": 2, "high": 3, "critical": 4}

// defaultEntityType is the type of an entity created without one. Entity
// types are kept as given (lower-cased); entity_search filters by the seed's
// enum of types.
const defaultEntityType = "concept"

// normalizeKey is the lookup key of an entity name or alias: trimmed,
// white space collapsed, lower-cased.
func normalizeKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// domainKey encodes a domain path for prefix filtering: each segment
// lower-cased and followed by "/", so ["tech","db"] is "tech/db/" and the
// filter ["tech"] matches it with LIKE 'tech/%'.
func domainKey(path []string) (string, error) {
	var b strings.Builder
	for i, p := range path {
		p = strings.TrimSpace(p)
		if p == "" {
			return "", errs.Invalid("domain_path", "segment %d is empty", i)
		}
		if strings.Contains(p, "/") {
			return "", errs.Invalid("domain_path", "segment %q must not contain '/'", p)
		}
		b.WriteString(strings.ToLower(p))
		b.WriteByte('/')
	}
	return b.String(), nil
}

// likePrefix returns a LIKE pattern (with ESCAPE '\\') matching strings that
// start with prefix.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// parseTime parses an RFC 3339 argument.
func parseTime(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, errs.Invalid(field, "%q is not an RFC 3339 date-time (e.g. 2025-01-15T10:30:00Z)", v)
	}
	t = t.UTC().Truncate(time.Microsecond) // the stores' precision
	return &t, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on types that always marshal
	}
	return string(b)
}
