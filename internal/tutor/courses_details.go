package tutor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// requirement is e's tree as JSON (a tree: the output schema cannot
// describe it recursively, so it is any JSON), nil for none.
func requirement(e *catalog.Expr) json.RawMessage {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(reqTree(e))
	return b
}

// Mention is a course a requisite names, and what the catalog has of it.
type Mention struct {
	Course    string `json:"course"`
	InCatalog bool   `json:"inCatalog"`
	Title     string `json:"title,omitempty"`
}

func (ix *courseIndex) mentions(refs []catalog.Ref) []Mention {
	out := []Mention{}
	for _, r := range refs {
		m := Mention{Course: r.String()}
		if i, ok := ix.byRef[m.Course]; ok {
			m.InCatalog, m.Title = true, ix.courses[i].Title
		}
		out = append(out, m)
	}
	return out
}

// RequisiteText is a requisite text and what was read from it.
type RequisiteText struct {
	// Text is the original text, always kept ("" when there is none).
	Text string `json:"text"`
	// From is where the text was read: "outline" (the outline's own
	// field) or "description" (a Langara catalogue description's
	// "Prerequisite(s):" paragraph).
	From string `json:"from,omitempty"`
	// Requirement is what the text requires, structured: a tree of nodes
	// {op, n?, course?, minGrade?, concurrent?, text?, children?} where op
	// is all, any, n_of (at least n children), course, or other (a
	// condition that is not a course, its words in text). Absent when the
	// text states none.
	Requirement json.RawMessage `json:"requirement,omitempty"`
	// Courses are the courses the requirement names.
	Courses []Mention `json:"courses"`
	// Recommended are courses the text recommends without requiring them.
	Recommended []Mention `json:"recommended,omitempty"`
	// Notes are remarks of the text that are not requirements.
	Notes []string `json:"notes,omitempty"`
	// Unparsed are course codes the text names that the reading could not
	// place in the requirement: read Text for them.
	Unparsed []string `json:"unparsed,omitempty"`
}

func (ix *courseIndex) requisite(institution, text, from string) (RequisiteText, catalog.Requisite) {
	r := catalog.ParseRequisites(institution, text)
	out := RequisiteText{Text: text, From: from, Requirement: requirement(r.Expr), Courses: ix.mentions(r.Expr.Courses()), Notes: r.Notes, Unparsed: r.Unparsed()}
	if len(r.Recommended) > 0 {
		out.Recommended = ix.mentions(r.Recommended)
	}
	return out, r
}

type prereqsOut struct {
	Course           string `json:"course"`
	Title            string `json:"title"`
	HasPrerequisites bool   `json:"hasPrerequisites"`
	RequisiteText
	// Corequisites named inside the prerequisite text ("Corequisite: ...").
	Corequisites json.RawMessage `json:"corequisites,omitempty"`
	Note         string          `json:"note,omitempty"`
}

func (s *Server) coursePrereqs(ctx context.Context, _ *registry.Call, in courseRefIn) (prereqsOut, error) {
	c, err := s.findCourse(ctx, "course", in.Course)
	if err != nil {
		return prereqsOut{}, err
	}
	ix, err := s.catIndex(ctx)
	if err != nil {
		return prereqsOut{}, err
	}
	_, pre, _ := courseTexts(c)
	rt, r := ix.requisite(c.Institution, pre, courseRequisiteFrom(c.Details.Prerequisites, pre))
	out := prereqsOut{Course: c.Course, Title: c.Title, HasPrerequisites: r.Expr != nil, RequisiteText: rt, Corequisites: requirement(r.Corequisites)}
	switch {
	case pre == "":
		out.Note = fmt.Sprintf("the loaded %s data states no prerequisites for %s", s.catInstitutionName(c.Institution), c.Course)
	case r.Expr == nil:
		out.Note = "the text states no requirement (only recommendations or notes): read text"
	case len(rt.Unparsed) > 0:
		out.Note = "part of the text could not be structured: the requirement may be incomplete, read text"
	}
	return out, nil
}

type requisitesOut struct {
	Course string `json:"course"`
	Title  string `json:"title"`
	// Corequisites are courses to take before or in the same term.
	Corequisites RequisiteText `json:"corequisites"`
	// Antirequisites are courses whose credit excludes credit for this one.
	Antirequisites []Mention `json:"antirequisites"`
	// AntirequisiteText are the sentences the antirequisites were read from.
	AntirequisiteText []string `json:"antirequisiteText"`
	Note              string   `json:"note,omitempty"`
}

func (s *Server) courseRequisites(ctx context.Context, _ *registry.Call, in courseRefIn) (requisitesOut, error) {
	c, err := s.findCourse(ctx, "course", in.Course)
	if err != nil {
		return requisitesOut{}, err
	}
	ix, err := s.catIndex(ctx)
	if err != nil {
		return requisitesOut{}, err
	}
	desc, pre, co := courseTexts(c)
	coreq, r := ix.requisite(c.Institution, co, courseRequisiteFrom(c.Details.Corequisites, co))
	if r.Corequisites != nil && r.Expr == nil {
		// "Corequisite: ..." read as its own sentence.
		coreq.Requirement = requirement(r.Corequisites)
		coreq.Courses = ix.mentions(r.Corequisites.Courses())
	} else if r.Corequisites != nil {
		coreq.Courses = ix.mentions(append(r.Expr.Courses(), r.Corequisites.Courses()...))
	}
	// Corequisites stated inside the prerequisite text.
	if pr := catalog.ParseRequisites(c.Institution, pre); pr.Corequisites != nil && co == "" {
		coreq.Text, coreq.From = pre, courseRequisiteFrom(c.Details.Prerequisites, pre)
		coreq.Requirement, coreq.Courses = requirement(pr.Corequisites), ix.mentions(pr.Corequisites.Courses())
	}
	out := requisitesOut{Course: c.Course, Title: c.Title, Corequisites: coreq, Antirequisites: []Mention{}, AntirequisiteText: []string{}}
	var anti []catalog.Ref
	self := c.Ref()
	for _, text := range []string{c.Details.Notes, desc, pre, co} {
		for _, sent := range antirequisiteSentences(text) {
			refs := catalog.Antirequisites(c.Institution, sent)
			if len(refs) == 0 {
				continue
			}
			if !slices.Contains(out.AntirequisiteText, sent) {
				out.AntirequisiteText = append(out.AntirequisiteText, sent)
			}
			for _, ref := range refs {
				if ref != self && !slices.Contains(anti, ref) {
					anti = append(anti, ref)
				}
			}
		}
	}
	out.Antirequisites = ix.mentions(anti)
	if co == "" && coreq.Requirement == nil && len(anti) == 0 {
		out.Note = fmt.Sprintf("the loaded %s data states no corequisites or antirequisites for %s", s.catInstitutionName(c.Institution), c.Course)
	}
	return out, nil
}

// antirequisiteSentences are the sentences of text about further credit or
// credit for only one of several courses.
func antirequisiteSentences(text string) []string {
	var out []string
	flat := strings.Join(strings.Fields(text), " ")
	for _, sent := range courseSentences(flat) {
		l := strings.ToLower(sent)
		if strings.Contains(l, "further credit") || strings.Contains(l, "credit for only one of") || strings.Contains(l, "credit for one of") {
			out = append(out, sent)
		}
	}
	return out
}

// splitSentences cuts a text after ". " where the next word starts with a
// capital letter ("CMPT 102. Students ..."), keeping each sentence's
// period.
func courseSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' && s[i+2] >= 'A' && s[i+2] <= 'Z' {
			out = append(out, strings.TrimSpace(s[start:i+1]))
			start = i + 2
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// --- tn_course_outline

type outlineOut struct {
	Course      string `json:"course"`
	Title       string `json:"title"`
	Institution string `json:"institution"`
	// OutlineLoaded says whether an outline was imported for the course;
	// false when only its catalogue entry (title, description, credits,
	// hours) is known.
	OutlineLoaded  bool               `json:"outlineLoaded"`
	Description    string             `json:"description"`
	Notes          string             `json:"notes,omitempty"`
	Designation    string             `json:"designation,omitempty"`
	Credits        *float64           `json:"credits,omitempty"`
	Hours          map[string]float64 `json:"hours,omitempty"`
	DeliveryMethod string             `json:"deliveryMethod,omitempty"`
	DegreeLevel    string             `json:"degreeLevel,omitempty"`
	Prerequisites  string             `json:"prerequisites,omitempty"`
	Corequisites   string             `json:"corequisites,omitempty"`
	Offerings      []offeringOut      `json:"offerings"`
	Source         string             `json:"source"`
	// Missing names what an outline would say that is not loaded.
	Missing []string `json:"missing"`
	Note    string   `json:"note,omitempty"`
}

// courseHasOutline says whether a course's data comes from an outline: its
// source names one, or it carries what only outlines give (designation,
// delivery method, degree level, offerings).
func courseHasOutline(c *Course) bool {
	d := c.Details
	return strings.Contains(strings.ToLower(c.Source), "outline") || d.Designation != "" || d.DeliveryMethod != "" || d.DegreeLevel != "" || len(d.Offerings) > 0
}

func (s *Server) courseOutline(ctx context.Context, _ *registry.Call, in courseRefIn) (outlineOut, error) {
	c, err := s.findCourse(ctx, "course", in.Course)
	if err != nil {
		return outlineOut{}, err
	}
	desc, pre, co := courseTexts(c)
	d := c.Details
	out := outlineOut{Course: c.Course, Title: c.Title, Institution: c.Institution, OutlineLoaded: courseHasOutline(c), Description: desc,
		Notes: d.Notes, Designation: d.Designation, Credits: c.Credits, Hours: d.Hours, DeliveryMethod: d.DeliveryMethod,
		DegreeLevel: d.DegreeLevel, Prerequisites: pre, Corequisites: co, Offerings: courseOfferings(c), Source: c.Source, Missing: []string{}}
	for _, f := range []struct {
		name string
		has  bool
	}{{"description", desc != ""}, {"credits", c.Credits != nil}, {"hours", len(d.Hours) > 0}, {"designation", d.Designation != ""},
		{"deliveryMethod", d.DeliveryMethod != ""}, {"offerings", len(d.Offerings) > 0}} {
		if !f.has {
			out.Missing = append(out.Missing, f.name)
		}
	}
	out.Missing = append(out.Missing, "syllabus", "assessment", "textbooks")
	if !out.OutlineLoaded {
		out.Note = fmt.Sprintf("no outline is loaded for %s: this is its catalogue entry (%s). A weekly syllabus, assessment and textbooks are not in the loaded data.",
			c.Course, s.catInstitutionName(c.Institution))
	} else {
		out.Note = "the outline as loaded: description, notes, designation, units, delivery and requisites; a weekly syllabus, assessment and textbooks are not in the loaded data."
	}
	return out, nil
}

// --- tn_course_similar

type courseSimilarIn struct {
	Course string `json:"course"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

func (s *Server) courseSimilar(ctx context.Context, _ *registry.Call, in courseSimilarIn) (Page[CourseSummary], error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	offset, size, err := s.window("tn_course_similar", in.Limit, in.Cursor, ref.String())
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	ix, err := s.catIndex(ctx)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	doc, ok := ix.byRef[ref.String()]
	if !ok {
		if _, err := s.course(ctx, ref); err != nil {
			return Page[CourseSummary]{}, err // NOT_FOUND, saying so
		}
		// Imported since the index was last checked: rebuild it.
		s.catalogChanged()
		if ix, err = s.catIndex(ctx); err != nil {
			return Page[CourseSummary]{}, err
		}
		if doc, ok = ix.byRef[ref.String()]; !ok {
			return Page[CourseSummary]{}, fmt.Errorf("course %s is stored but not in the search index", ref)
		}
	}
	hits := ix.similar(doc, func(c *Course) bool { return c.Institution == ref.Institution })
	p := page(s, hits, offset, size, "tn_course_similar", ref.String())
	out := Page[CourseSummary]{Items: make([]CourseSummary, len(p.Items)), NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore}
	for i, h := range p.Items {
		out.Items[i] = courseSummarize(ix.courses[h.doc], h.score)
	}
	return out, nil
}

// --- tn_course_institutions

type coursePageIn struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// InstitutionInfo is an institution of the directory with what is loaded
// of it.
type InstitutionInfo struct {
	Key     string   `json:"key"`
	Code    string   `json:"code"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	// Courses and Sections are the catalog courses and term sections loaded.
	Courses  int `json:"courses"`
	Sections int `json:"sections"`
	// RulesFrom counts transfer rules from its courses; RulesTo rules into
	// it.
	RulesFrom int `json:"rulesFrom"`
	RulesTo   int `json:"rulesTo"`
}
