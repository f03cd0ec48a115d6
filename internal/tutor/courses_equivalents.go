package tutor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// BCTGCredit credits the source of the transfer rules an answer shows.
type BCTGCredit struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Note string `json:"note"`
}

func bctgAttribution() *BCTGCredit {
	return &BCTGCredit{Name: transfer.EvidenceSource, URL: transfer.EvidenceURL,
		Note: "Transfer agreements are from the BC Transfer Guide (bctransferguide.ca), the source of truth: confirm there before relying on them."}
}

// InstitutionsPage is a page of institutions, crediting the BC Transfer
// Guide when rules are loaded.
type InstitutionsPage struct {
	Items      []InstitutionInfo `json:"items"`
	NextCursor string            `json:"nextCursor,omitempty"`
	TotalCount int               `json:"totalCount"`
	HasMore    bool              `json:"hasMore"`
	Source     *BCTGCredit       `json:"source,omitempty"`
}

func (s *Server) courseInstitutions(ctx context.Context, _ *registry.Call, in coursePageIn) (InstitutionsPage, error) {
	offset, size, err := s.window("tn_course_institutions", in.Limit, in.Cursor)
	if err != nil {
		return InstitutionsPage{}, err
	}
	counts := map[string]*InstitutionInfo{}
	all := []InstitutionInfo{}
	for _, in := range s.dir.All() {
		all = append(all, InstitutionInfo{Key: in.Key, Code: in.Code, Name: in.Name, Aliases: in.Aliases})
	}
	for i := range all {
		counts[all[i].Key] = &all[i]
	}
	rules := 0
	for _, q := range []struct {
		sql string
		add func(*InstitutionInfo, int)
	}{
		{`SELECT institution, COUNT(*) FROM tn_courses GROUP BY institution`, func(i *InstitutionInfo, n int) { i.Courses += n }},
		{`SELECT institution, COUNT(*) FROM tn_sections GROUP BY institution`, func(i *InstitutionInfo, n int) { i.Sections += n }},
		{`SELECT source_institution, COUNT(*) FROM tn_transfer_rules GROUP BY source_institution`, func(i *InstitutionInfo, n int) { i.RulesFrom += n; rules += n }},
		{`SELECT target_institution, COUNT(*) FROM tn_transfer_rules GROUP BY target_institution`, func(i *InstitutionInfo, n int) { i.RulesTo += n }},
	} {
		if err := s.catGroupCounts(ctx, q.sql, func(name string, n int) {
			// Stored by key or by code: the directory knows both.
			key := name
			if in, ok := s.dir.Lookup(name); ok {
				key = in.Key
			}
			if info := counts[key]; info != nil {
				q.add(info, n)
			}
		}); err != nil {
			return InstitutionsPage{}, err
		}
	}
	p := page(s, all, offset, size, "tn_course_institutions")
	out := InstitutionsPage{Items: p.Items, NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore}
	if rules > 0 {
		out.Source = bctgAttribution()
	}
	return out, nil
}

func (s *Server) catGroupCounts(ctx context.Context, query string, f func(string, int)) error {
	rows, err := s.st.DB().QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("count by institution: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return err
		}
		f(name, n)
	}
	return rows.Err()
}

// --- tn_course_equivalent_elsewhere

type equivalentsIn struct {
	Course      string `json:"course"`
	Institution string `json:"institution,omitempty"`
	InForceOnly bool   `json:"inForceOnly,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Cursor      string `json:"cursor,omitempty"`
}

// Equivalent is a transfer rule naming the course, seen from it.
type Equivalent struct {
	RuleID string `json:"ruleId"`
	// Direction is "outgoing" when the course is on the rule's source side
	// (it earns credit at Institution), "incoming" when it is a target
	// (courses of Institution earn credit as it).
	Direction       string `json:"direction"`
	Institution     string `json:"institution"`
	InstitutionName string `json:"institutionName"`
	// From and To are the rule's source and destination institutions.
	From string `json:"from"`
	To   string `json:"to"`
	// SourceGroups must all be satisfied: kind required (all courses),
	// or_group (any one) or n_of (at least n).
	SourceGroups []sourceGroupOut `json:"sourceGroups"`
	// SourceCourses are the source side's courses with their credits where
	// the credit text states them; SourceCredits is their sum (absent when
	// the text states none). With each target set's credits, they give the
	// credit conversion.
	SourceCourses []sourceCourseOut `json:"sourceCourses"`
	SourceCredits *float64          `json:"sourceCredits,omitempty"`
	// Targets are the alternatives granted (any one set), each set granted
	// together.
	Targets      []targetSetOut `json:"targets"`
	Outcome      string         `json:"outcome"`
	Waives       []targetOut    `json:"waives,omitempty"`
	Designations []string       `json:"designations,omitempty"`
	Conditions   []string       `json:"conditions,omitempty"`
	// Credit is the BC Transfer Guide's text of the rule, verbatim.
	Credit         string     `json:"credit"`
	EffectiveStart *time.Time `json:"effectiveStart,omitempty"`
	EffectiveEnd   *time.Time `json:"effectiveEnd,omitempty"`
	InForce        bool       `json:"inForce"`
	Parsed         bool       `json:"parsed"`
	Confidence     float64    `json:"confidence"`
	Evidence       eqEvidence `json:"evidence"`
}

type sourceGroupOut struct {
	Kind    string   `json:"kind"`
	N       int      `json:"n"`
	Courses []string `json:"courses"`
}

type sourceCourseOut struct {
	Course  string   `json:"course"`
	Credits *float64 `json:"credits,omitempty"`
}

type targetSetOut struct {
	Targets []targetOut `json:"targets"`
	// Credits is the sum of the set's stated target credits.
	Credits *float64 `json:"credits,omitempty"`
}

type targetOut struct {
	Kind         string   `json:"kind"`
	Course       string   `json:"course"`
	Credits      *float64 `json:"credits,omitempty"`
	Designations []string `json:"designations,omitempty"`
	Exemption    bool     `json:"exemption,omitempty"`
}

type eqEvidence struct {
	Source    string     `json:"source"`
	URL       string     `json:"url"`
	Reference string     `json:"reference"`
	Accessed  *time.Time `json:"accessed,omitempty"`
}

// EquivalentsPage is a page of equivalents, crediting the BC Transfer Guide.
type EquivalentsPage struct {
	Items      []Equivalent `json:"items"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TotalCount int          `json:"totalCount"`
	HasMore    bool         `json:"hasMore"`
	Course     string       `json:"course"`
	Source     *BCTGCredit  `json:"source"`
	Note       string       `json:"note,omitempty"`
}

func eqTargets(ts []transfer.Target) []targetOut {
	out := []targetOut{}
	for _, t := range ts {
		out = append(out, targetOut{Kind: string(t.Kind), Course: t.Course.String(), Credits: t.Credits, Designations: t.Designations, Exemption: t.Exemption})
	}
	return out
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// equivalent is rule r seen from the course ref in direction dir.
func (s *Server) catEquivalent(id string, r *transfer.Rule, dir string, now time.Time) Equivalent {
	from := r.Course.Institution
	if from == "" && len(r.Source) > 0 && len(r.Source[0].Courses) > 0 {
		from = r.Source[0].Courses[0].Course.Institution
	}
	e := Equivalent{RuleID: id, Direction: dir, From: from, To: r.Destination, Outcome: string(r.Outcome), Designations: r.Designations,
		Conditions: r.Conditions, Credit: r.Raw, EffectiveStart: optTime(r.EffectiveStart), EffectiveEnd: optTime(r.EffectiveEnd),
		InForce: r.InForce(now), Parsed: r.Parsed, Confidence: r.Confidence, SourceGroups: []sourceGroupOut{}, Targets: []targetSetOut{},
		Evidence: eqEvidence{Source: r.Evidence.Source, URL: r.Evidence.URL, Reference: r.Evidence.Reference, Accessed: optTime(r.Evidence.Accessed)}}
	if e.Evidence.Source == "" {
		e.Evidence.Source, e.Evidence.URL = transfer.EvidenceSource, transfer.EvidenceURL
	}
	e.Institution = e.To
	if dir == "incoming" {
		e.Institution = e.From
	}
	e.InstitutionName = s.catInstitutionName(e.Institution)
	e.SourceCourses = []sourceCourseOut{}
	for _, g := range r.Source {
		sg := sourceGroupOut{Kind: string(g.Kind), N: g.N, Courses: []string{}}
		for _, c := range g.Courses {
			sg.Courses = append(sg.Courses, c.Course.String())
			e.SourceCourses = append(e.SourceCourses, sourceCourseOut{Course: c.Course.String(), Credits: c.Credits})
			if c.Credits != nil {
				sum := *c.Credits
				if e.SourceCredits != nil {
					sum += *e.SourceCredits
				}
				e.SourceCredits = &sum
			}
		}
		e.SourceGroups = append(e.SourceGroups, sg)
	}
	for _, ts := range r.Targets {
		set := targetSetOut{Targets: eqTargets(ts.Targets)}
		for _, t := range ts.Targets {
			if t.Credits != nil {
				sum := *t.Credits
				if set.Credits != nil {
					sum += *set.Credits
				}
				set.Credits = &sum
			}
		}
		e.Targets = append(e.Targets, set)
	}
	if len(r.Waives) > 0 {
		e.Waives = eqTargets(r.Waives)
	}
	return e
}

// catStoredRule is a transfer rule as stored.
type catStoredRule struct {
	id   string
	rule transfer.Rule
}

// catRulesNaming reads the transfer rules that name ref on either side, by
// tn_transfer_rule_courses (where the importer lists every course a rule
// names, the course it is listed under included).
func (s *Server) catRulesNaming(ctx context.Context, ref catalog.Ref) ([]catStoredRule, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT r.id, r.source_institution, r.rule FROM tn_transfer_rules r
		WHERE r.id IN (SELECT rule_id FROM tn_transfer_rule_courses WHERE course = ?)
		ORDER BY r.id`), ref.String())
	if err != nil {
		return nil, fmt.Errorf("read transfer rules of %s: %w", ref, err)
	}
	defer rows.Close()
	var out []catStoredRule
	for rows.Next() {
		var id, src, raw string
		if err := rows.Scan(&id, &src, &raw); err != nil {
			return nil, fmt.Errorf("read transfer rules of %s: %w", ref, err)
		}
		var r transfer.Rule
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("transfer rule %s: %w", id, err)
		}
		out = append(out, catStoredRule{id, r})
	}
	return out, rows.Err()
}

func (s *Server) courseEquivalents(ctx context.Context, _ *registry.Call, in equivalentsIn) (EquivalentsPage, error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return EquivalentsPage{}, err
	}
	other, err := s.catInstitution(in.Institution)
	if err != nil {
		return EquivalentsPage{}, err
	}
	scope := []string{ref.String(), other, strconv.FormatBool(in.InForceOnly)}
	offset, size, err := s.window("tn_course_equivalent_elsewhere", in.Limit, in.Cursor, scope...)
	if err != nil {
		return EquivalentsPage{}, err
	}
	rules, err := s.catRulesNaming(ctx, ref)
	if err != nil {
		return EquivalentsPage{}, err
	}
	if len(rules) == 0 {
		// An unknown course is NOT_FOUND; a known one may have no rules.
		if _, err := s.course(ctx, ref); err != nil {
			return EquivalentsPage{}, err
		}
	}
	now := s.now()
	var all []Equivalent
	for _, sr := range rules {
		r := &sr.rule
		isSource := r.Course == ref || slices.Contains(r.SourceCourses(), ref)
		isTarget := false
		for _, ts := range r.Targets {
			for _, t := range ts.Targets {
				isTarget = isTarget || t.Course == ref
			}
		}
		for _, d := range []struct {
			on  bool
			dir string
		}{{isSource, "outgoing"}, {isTarget, "incoming"}} {
			if !d.on {
				continue
			}
			e := s.catEquivalent(sr.id, r, d.dir, now)
			if (other != "" && e.Institution != other) || (in.InForceOnly && !e.InForce) {
				continue
			}
			all = append(all, e)
		}
	}
	// In force first; then by institution, direction, latest start first.
	slices.SortStableFunc(all, func(a, b Equivalent) int {
		switch {
		case a.InForce != b.InForce:
			if a.InForce {
				return -1
			}
			return 1
		case a.Institution != b.Institution:
			return strings.Compare(a.Institution, b.Institution)
		case a.Direction != b.Direction:
			return strings.Compare(b.Direction, a.Direction) // outgoing first
		}
		as, bs := time.Time{}, time.Time{}
		if a.EffectiveStart != nil {
			as = *a.EffectiveStart
		}
		if b.EffectiveStart != nil {
			bs = *b.EffectiveStart
		}
		if c := bs.Compare(as); c != 0 {
			return c
		}
		return strings.Compare(a.RuleID, b.RuleID)
	})
	p := page(s, all, offset, size, "tn_course_equivalent_elsewhere", scope...)
	out := EquivalentsPage{Items: p.Items, NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore, Course: ref.String(), Source: bctgAttribution()}
	// Rules of another source (the demo data) are credited as theirs.
	var shown []transfer.Evidence
	for _, e := range p.Items {
		shown = append(shown, transfer.Evidence{Source: e.Evidence.Source})
	}
	if note := attribution(shown); note != Attribution {
		out.Source = &BCTGCredit{Name: "the sources of these rules", Note: note}
	}
	if len(all) == 0 {
		out.Note = fmt.Sprintf("no loaded BC Transfer Guide rule names %s", ref)
		if other != "" || in.InForceOnly {
			out.Note += " with these filters"
		}
		out.Note += " (nexus import bctg-transfers loads them)"
	}
	return out, nil
}

// --- tn_course_materials and tn_course_grades: from tutor-materials and
// tutor-grades imports (imports_materials.go), or loaded false

// The import formats of materials and grade distributions (docs/tutor-data.md).
const (
	materialsFormat = "docs/tutor-data.md#course-materials"
	gradesFormat    = "docs/tutor-data.md#grade-distributions"
)

type materialsIn struct {
	Course string `json:"course"`
	Term   string `json:"term,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}
