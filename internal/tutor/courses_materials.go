package tutor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Material is a course material: a past exam, homework, notes, a syllabus.
type Material struct {
	Course string `json:"course"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	URL    string `json:"url"`
	// Term is the term's name ("Fall 2023") and TermCode its code
	// ("202330"); both absent for a material of no particular term.
	Term        string `json:"term,omitempty"`
	TermCode    string `json:"termCode,omitempty"`
	Description string `json:"description,omitempty"`
	// Source is where the material was found, as its file says.
	Source string `json:"source,omitempty"`
	ID     string `json:"id,omitempty"`
}

// MaterialsPage is a page of materials, saying whether any are loaded.
type MaterialsPage struct {
	Items      []Material `json:"items"`
	NextCursor string     `json:"nextCursor,omitempty"`
	TotalCount int        `json:"totalCount"`
	HasMore    bool       `json:"hasMore"`
	Course     string     `json:"course"`
	// Loaded says whether materials of the course are loaded; when not,
	// Reason says why and ImportFormat where the format that provides them
	// is documented.
	Loaded       bool   `json:"loaded"`
	Reason       string `json:"reason,omitempty"`
	ImportFormat string `json:"importFormat,omitempty"`
	// Note says why a loaded course has no materials on this page's
	// filters.
	Note string `json:"note,omitempty"`
}

func (s *Server) courseMaterials(ctx context.Context, _ *registry.Call, in materialsIn) (MaterialsPage, error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return MaterialsPage{}, err
	}
	t, err := courseTermArg(in.Term)
	if err != nil {
		return MaterialsPage{}, err
	}
	const tool = "tn_course_materials"
	scope := []string{ref.String(), in.Kind, termCodeOf(t)}
	offset, size, err := s.window(tool, in.Limit, in.Cursor, scope...)
	if err != nil {
		return MaterialsPage{}, err
	}
	all, err := s.materialsOf(ctx, ref)
	if err != nil {
		return MaterialsPage{}, err
	}
	if len(all) == 0 {
		if _, err := s.course(ctx, ref); err != nil {
			return MaterialsPage{}, err
		}
		out := MaterialsPage{Items: []Material{}, Course: ref.String(), Loaded: false, ImportFormat: materialsFormat,
			Reason: "no course materials (past exams, homework, notes) are loaded on this server: none of the imported data " +
				"(BC Transfer Guide, Langara catalogue and sections, SFU outlines) carries them; nexus import tutor-materials loads a file in the format importFormat documents"}
		if n, err := s.countRows(ctx, "tn_materials"); err != nil {
			return MaterialsPage{}, err
		} else if n > 0 {
			out.Reason = fmt.Sprintf("no course materials (past exams, homework, notes) are loaded for %s (%d are loaded for other courses); "+
				"nexus import tutor-materials loads them, in the format importFormat documents", ref, n)
		}
		return out, nil
	}
	var kept []Material
	for _, m := range all {
		if (in.Kind == "" || m.Kind == in.Kind) && (!t.Valid() || m.TermCode == t.Code()) {
			kept = append(kept, m)
		}
	}
	p := page(s, kept, offset, size, tool, scope...)
	out := MaterialsPage{Items: p.Items, NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore, Course: ref.String(), Loaded: true}
	if len(kept) == 0 {
		var filters []string
		if in.Kind != "" {
			filters = append(filters, "of kind "+in.Kind)
		}
		if t.Valid() {
			filters = append(filters, "of "+t.String())
		}
		out.Note = fmt.Sprintf("no materials %s are loaded for %s; %d of other kinds or terms are", strings.Join(filters, " "), ref, len(all))
	}
	return out, nil
}

func termCodeOf(t catalog.Term) string {
	if !t.Valid() {
		return ""
	}
	return t.Code()
}

type gradesIn struct {
	Course string `json:"course"`
	Term   string `json:"term,omitempty"`
}

// GradeDistribution is the grades of a course (or one of its sections) in
// a term.
type GradeDistribution struct {
	// Term is the term's name ("Fall 2023"), TermCode its code ("202330").
	Term     string `json:"term"`
	TermCode string `json:"termCode,omitempty"`
	// Section is absent for a distribution over the whole course.
	Section string `json:"section,omitempty"`
	// Counts are the students by grade, as the institution writes its
	// grades (A+ ... F, and non-grades such as W).
	Counts map[string]int `json:"counts"`
	// Students is the sum of the counts.
	Students int      `json:"students,omitempty"`
	Average  *float64 `json:"average,omitempty"`
	// AverageScale is "percent" (0 to 100) or "gpa" (the grade-point
	// scale, 4.33 at Langara and SFU); AverageComputed says the file gave
	// no average and Nexus computed it from the letter grades' points
	// (non-grades left out).
	AverageScale    string `json:"averageScale,omitempty"`
	AverageComputed bool   `json:"averageComputed,omitempty"`
	Source          string `json:"source,omitempty"`
	ID              string `json:"id,omitempty"`
}

type gradesOut struct {
	Course        string              `json:"course"`
	Loaded        bool                `json:"loaded"`
	Distributions []GradeDistribution `json:"distributions"`
	// Average is over the distributions shown (per term, the whole
	// course's distribution, else its sections'), weighted by students;
	// AverageScale its scale and AverageOver how many distributions it
	// averages. Absent when none has an average or their scales differ.
	Average      *float64 `json:"average,omitempty"`
	AverageScale string   `json:"averageScale,omitempty"`
	AverageOver  int      `json:"averageOver,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	ImportFormat string   `json:"importFormat,omitempty"`
	// Note says why a loaded course has no distribution of the term asked.
	Note string `json:"note,omitempty"`
	// Sources credit the figures: the sources the distributions' files name.
	Sources []string `json:"sources,omitempty"`
}

func (s *Server) courseGrades(ctx context.Context, _ *registry.Call, in gradesIn) (gradesOut, error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return gradesOut{}, err
	}
	t, err := courseTermArg(in.Term)
	if err != nil {
		return gradesOut{}, err
	}
	all, err := s.gradesOf(ctx, ref)
	if err != nil {
		return gradesOut{}, err
	}
	if len(all) == 0 {
		if _, err := s.course(ctx, ref); err != nil {
			return gradesOut{}, err
		}
		out := gradesOut{Course: ref.String(), Loaded: false, Distributions: []GradeDistribution{}, ImportFormat: gradesFormat,
			Reason: "no grade distributions are loaded on this server: none of the imported data " +
				"(BC Transfer Guide, Langara catalogue and sections, SFU outlines) carries grades; nexus import tutor-grades loads a file in the format importFormat documents"}
		if n, err := s.countRows(ctx, "tn_grades"); err != nil {
			return gradesOut{}, err
		} else if n > 0 {
			out.Reason = fmt.Sprintf("no grade distributions are loaded for %s (%d are loaded for other courses); "+
				"nexus import tutor-grades loads them, in the format importFormat documents", ref, n)
		}
		return out, nil
	}
	out := gradesOut{Course: ref.String(), Loaded: true, Distributions: []GradeDistribution{}}
	seen := map[string]bool{}
	for _, g := range all {
		if t.Valid() && g.TermCode != t.Code() {
			continue
		}
		out.Distributions = append(out.Distributions, g)
		if g.Source != "" && !seen[g.Source] {
			seen[g.Source] = true
			out.Sources = append(out.Sources, g.Source)
		}
	}
	if avg, scale, over, ok := combinedAverage(out.Distributions); ok {
		out.Average, out.AverageScale, out.AverageOver = &avg, scale, over
	}
	if len(out.Distributions) == 0 {
		out.Note = fmt.Sprintf("no grade distribution of %s is loaded for %s; %d of other terms are", t, ref, len(all))
	}
	return out, nil
}

// notFound says whether err is a NOT_FOUND.
func isNotFound(err error) bool { return errors.Is(err, errs.Kind(errs.NotFound)) }
