package tutor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// The course tools (ADR-012's course table). Their arguments are named
// alike: one course reference is `course` ("sfu:CMPT 120", normalized by
// catalog.Directory.ParseRef), an institution filter `institution` (key,
// BC Transfer Guide code or name), a term `term` (code "202330" or name
// "Fall 2023"); list tools take `limit` and `cursor` and answer a Page.
// Schedule, instructors and sections are in sections.go, the search index
// in search.go.
func (s *Server) courseTools() []registry.Def {
	d := func(name, desc string, h registry.Typed) registry.Def {
		return registry.Def{Name: name, Description: desc, ReadOnly: true, Family: registry.Tutor, Schema: schema(name), Handler: h}
	}
	return []registry.Def{
		d("tn_course_search", "Search the course catalog by keywords over course codes, subject names, titles and descriptions (BM25 relevance, best first; "+
			"code and title weigh more than the description), with optional filters by institution, subject, year level and credits; "+
			"without a query, lists the courses the filters keep in code order. Pass the student's own words: words are stemmed, common abbreviations "+
			"are understood (intro, calc, stats, psych, chem, econ, cs, comp sci, ...), \"first year\" favours first-year courses, and a course code "+
			"(\"CPSC 1150\", \"cmpt120\") ranks that course first. "+
			"Paginated (limit, cursor). Use tn_course_get for a course's full details.", registry.Handle(s.courseSearch)),
		d("tn_course_get", "Get everything known about one course: title, description, credits, hours, attributes, designation, delivery, "+
			"requisite texts, the terms it was offered in with instructors, and the terms whose sections are loaded.", registry.Handle(s.courseGet)),
		d("tn_course_prereqs", "Get a course's prerequisites: the original text, always, and the requirement read from it where the text allows "+
			"(a tree of all/any/n_of over courses with minimum grades; conditions that are not courses kept as text), the courses it names and whether the catalog has them.",
			registry.Handle(s.coursePrereqs)),
		d("tn_course_requisites", "Get a course's corequisites (courses to take before or with it) and antirequisites "+
			"(courses whose credit excludes credit for this one: \"may not take ... for further credit\", \"credit for only one of\"), with the texts they were read from.",
			registry.Handle(s.courseRequisites)),
		d("tn_course_outline", "Get a course's outline as far as it is loaded: description, notes, designation, credits, hours, delivery method, "+
			"requisites. outlineLoaded says whether an outline (not only a catalogue entry) was imported for the course.", registry.Handle(s.courseOutline)),
		d("tn_course_instructor", "Get who teaches a course, by term: from outlines' offerings and from the instructors of term sections. "+
			"Optionally one term.", registry.Handle(s.courseInstructor)),
		d("tn_course_schedule", "Get a course's scheduled sections (term, section, CRN, seats, meeting days, times, rooms, instructors), "+
			"optionally of one term. Paginated (limit, cursor).", registry.Handle(s.courseSchedule)),
		d("tn_course_similar", "Find courses of the same institution whose title and description are most like a course's (BM25 over its most "+
			"distinctive terms), most similar first, the course itself excluded. Paginated (limit, cursor).", registry.Handle(s.courseSimilar)),
		d("tn_course_institutions", "List the institutions known (their key, BC Transfer Guide code and name, any of which names them in other tools) "+
			"with how many courses, sections and transfer rules are loaded for each. Paginated (limit, cursor).", registry.Handle(s.courseInstitutions)),
		d("tn_course_equivalent_elsewhere", "Find a course's equivalents at other institutions through BC Transfer Guide rules, both directions: "+
			"rules under which this course earns credit elsewhere (direction outgoing) and rules under which courses elsewhere earn credit as this course "+
			"(direction incoming). Rules in force first. Paginated (limit, cursor). For what a set of courses earns, use tn_transfer_resolve.",
			registry.Handle(s.courseEquivalents)),
		d("tn_course_materials", "Get a course's materials (past exams, homework, notes, syllabi: title, kind, link, term) as imported "+
			"(nexus import tutor-materials), latest term first, optionally of one term and kind. Where none are loaded for the course the answer "+
			"says so (loaded false, reason) and names the import format that would provide them (importFormat). Paginated (limit, cursor).",
			registry.Handle(s.courseMaterials)),
		d("tn_course_grades", "Get a course's grade distributions (students by grade, per term and section, with the class average) as imported "+
			"(nexus import tutor-grades), latest term first, optionally of one term, and the average over them. Where none are loaded for the "+
			"course the answer says so (loaded false, reason) and names the import format that would provide them (importFormat).",
			registry.Handle(s.courseGrades)),
		d("tn_course_section_get", "Get one section's details (times, days, rooms, instructors, seats, waitlist): by term and crn, "+
			"or by term, course and section.", registry.Handle(s.sectionGet)),
		d("tn_course_section_list", "List all sections of a term, optionally of one institution and subject, in course order. Paginated (limit, cursor).",
			registry.Handle(s.sectionList)),
	}
}

// --- arguments

// courseRef reads the course reference of field, or BAD_REQUEST naming it.
func (s *Server) courseRef(field, v string) (catalog.Ref, error) {
	ref, err := s.dir.ParseRef(v)
	if err != nil {
		return catalog.Ref{}, errs.Invalid(field, "%s", err)
	}
	return ref, nil
}

// findCourse reads the course reference of field and the course.
func (s *Server) findCourse(ctx context.Context, field, v string) (*Course, error) {
	ref, err := s.courseRef(field, v)
	if err != nil {
		return nil, err
	}
	return s.course(ctx, ref)
}

// catInstitution reads an institution filter (key, code or name): its key,
// "" when v is empty, or BAD_REQUEST naming institution.
func (s *Server) catInstitution(v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	in, ok := s.dir.Lookup(v)
	if !ok {
		return "", errs.Invalid("institution", "unknown institution %q; give its key (sfu), BC Transfer Guide code (LANG) or name (Langara College): tn_course_institutions lists them", v)
	}
	return in.Key, nil
}

// courseTermArg reads a term (code or name), the zero Term when v is empty, or
// BAD_REQUEST naming term.
func courseTermArg(v string) (catalog.Term, error) {
	if strings.TrimSpace(v) == "" {
		return catalog.Term{}, nil
	}
	t, err := catalog.ParseTerm(v)
	if err != nil {
		return catalog.Term{}, errs.Invalid("term", "%s", err)
	}
	return t, nil
}

// courseSubjectArg normalizes a subject filter ("cpsc" is CPSC).
func courseSubjectArg(v string) (string, error) {
	v = strings.ToUpper(strings.TrimSpace(v))
	for _, r := range v {
		if r < 'A' || r > 'Z' {
			return "", errs.Invalid("subject", "subject %q is not letters (such as CPSC or CMPT)", v)
		}
	}
	return v, nil
}

// courseTermName is a term code's name ("202330" is "Fall 2023"), or the code
// when it is not one.
func courseTermName(code string) string {
	if t, err := catalog.ParseTerm(code); err == nil {
		return t.String()
	}
	return code
}

// --- answers shared by the tools

// CourseSummary is a course in a list: its reference and what identifies
// it.
type CourseSummary struct {
	Course      string   `json:"course"`
	Institution string   `json:"institution"`
	Subject     string   `json:"subject"`
	Number      string   `json:"number"`
	Title       string   `json:"title"`
	Credits     *float64 `json:"credits,omitempty"`
	Level       int      `json:"level"`
	// Summary is the start of the description.
	Summary string `json:"summary,omitempty"`
	// Score is the relevance (search) or similarity (similar), higher is
	// closer; absent in a listing without a query.
	Score float64 `json:"score,omitempty"`
}

// SummaryLength is how much of a description a CourseSummary shows.
const SummaryLength = 240

func courseSummarize(c *Course, score float64) CourseSummary {
	desc, _, _ := courseTexts(c)
	return CourseSummary{Course: c.Course, Institution: c.Institution, Subject: c.Subject, Number: c.Number, Title: c.Title,
		Credits: c.Credits, Level: c.Level, Summary: clipText(desc, SummaryLength), Score: courseRoundScore(score)}
}

func courseRoundScore(f float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 4, 64), 64)
	return r
}

// clip cuts s to about n bytes at a word boundary, flattening its white
// space.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	return strings.TrimRight(s[:cut], " ,;:.") + "…"
}

// courseTexts are a course's description and its prerequisite and
// corequisite texts. Langara writes its requisites as paragraphs of the
// description ("Prerequisite(s): ..."): they are taken out of it
// (catalog.ExtractLangara) unless the import stored them apart.
func courseTexts(c *Course) (desc, prereq, coreq string) {
	desc, prereq, coreq = c.Description, c.Details.Prerequisites, c.Details.Corequisites
	if c.Institution == "langara" {
		d, p, co := catalog.ExtractLangara(c.Description)
		desc = d
		if prereq == "" {
			prereq = p
		}
		if coreq == "" {
			coreq = co
		}
	}
	return strings.TrimSpace(desc), strings.TrimSpace(prereq), strings.TrimSpace(coreq)
}

// courseRequisiteFrom says where a course's requisite text was read: the
// outline's own field, or the catalogue description.
func courseRequisiteFrom(field, text string) string {
	switch {
	case text == "":
		return ""
	case field != "":
		return "outline"
	}
	return "description"
}

// offeringOut is a term a course was offered in with its instructors, as
// an answer: the term's name and code.
type offeringOut struct {
	Term        string   `json:"term"`
	TermCode    string   `json:"termCode,omitempty"`
	Instructors []string `json:"instructors"`
}

func courseOfferings(c *Course) []offeringOut {
	out := []offeringOut{}
	for _, o := range c.Details.Offerings {
		oo := offeringOut{Term: o.Term, Instructors: o.Instructors}
		if t, err := catalog.ParseTerm(o.Term); err == nil {
			oo.Term, oo.TermCode = t.String(), t.Code()
		}
		if oo.Instructors == nil {
			oo.Instructors = []string{}
		}
		out = append(out, oo)
	}
	return out
}

// --- tn_course_search

type courseSearchIn struct {
	Query       string   `json:"query,omitempty"`
	Institution string   `json:"institution,omitempty"`
	Subject     string   `json:"subject,omitempty"`
	Level       int      `json:"level,omitempty"`
	MinCredits  *float64 `json:"minCredits,omitempty"`
	MaxCredits  *float64 `json:"maxCredits,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	Cursor      string   `json:"cursor,omitempty"`
}

func (s *Server) courseSearch(ctx context.Context, _ *registry.Call, in courseSearchIn) (Page[CourseSummary], error) {
	inst, err := s.catInstitution(in.Institution)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	subject, err := courseSubjectArg(in.Subject)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	if in.MinCredits != nil && in.MaxCredits != nil && *in.MinCredits > *in.MaxCredits {
		return Page[CourseSummary]{}, errs.Invalid("maxCredits", "maxCredits %g is below minCredits %g", *in.MaxCredits, *in.MinCredits)
	}
	query := strings.Join(strings.Fields(in.Query), " ")
	scope := []string{query, inst, subject, strconv.Itoa(in.Level), courseFmtFloat(in.MinCredits), courseFmtFloat(in.MaxCredits)}
	offset, size, err := s.window("tn_course_search", in.Limit, in.Cursor, scope...)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	ix, err := s.catIndex(ctx)
	if err != nil {
		return Page[CourseSummary]{}, err
	}
	keep := func(c *Course) bool {
		switch {
		case inst != "" && c.Institution != inst,
			subject != "" && c.Subject != subject,
			in.Level != 0 && catalog.Level(c.Number) != in.Level,
			in.MinCredits != nil && (c.Credits == nil || *c.Credits < *in.MinCredits),
			in.MaxCredits != nil && (c.Credits == nil || *c.Credits > *in.MaxCredits):
			return false
		}
		return true
	}
	var hits []courseHit
	if query == "" {
		for i, c := range ix.courses {
			if keep(c) {
				hits = append(hits, courseHit{doc: i})
			}
		}
	} else {
		hits = ix.search(query, keep)
	}
	p := page(s, hits, offset, size, "tn_course_search", scope...)
	out := Page[CourseSummary]{Items: make([]CourseSummary, len(p.Items)), NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore}
	for i, h := range p.Items {
		out.Items[i] = courseSummarize(ix.courses[h.doc], h.score)
	}
	return out, nil
}

func courseFmtFloat(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// --- tn_course_get

type courseRefIn struct {
	Course string `json:"course"`
}

type courseDetail struct {
	ID              string             `json:"id"`
	Course          string             `json:"course"`
	Institution     string             `json:"institution"`
	InstitutionName string             `json:"institutionName"`
	Subject         string             `json:"subject"`
	Number          string             `json:"number"`
	Level           int                `json:"level"`
	Title           string             `json:"title"`
	Description     string             `json:"description"`
	Credits         *float64           `json:"credits,omitempty"`
	Hours           map[string]float64 `json:"hours,omitempty"`
	Attributes      map[string]bool    `json:"attributes,omitempty"`
	Designation     string             `json:"designation,omitempty"`
	DeliveryMethod  string             `json:"deliveryMethod,omitempty"`
	DegreeLevel     string             `json:"degreeLevel,omitempty"`
	Notes           string             `json:"notes,omitempty"`
	Prerequisites   string             `json:"prerequisites,omitempty"`
	Corequisites    string             `json:"corequisites,omitempty"`
	Offerings       []offeringOut      `json:"offerings"`
	// SectionTerms are the terms whose sections of the course are loaded
	// (tn_course_schedule lists them).
	SectionTerms []courseTermOut `json:"sectionTerms"`
	Source       string          `json:"source"`
}

type courseTermOut struct {
	Term     string `json:"term"`
	TermCode string `json:"termCode"`
}

func (s *Server) courseGet(ctx context.Context, _ *registry.Call, in courseRefIn) (courseDetail, error) {
	c, err := s.findCourse(ctx, "course", in.Course)
	if err != nil {
		return courseDetail{}, err
	}
	desc, pre, co := courseTexts(c)
	out := courseDetail{ID: c.ID, Course: c.Course, Institution: c.Institution, InstitutionName: s.catInstitutionName(c.Institution),
		Subject: c.Subject, Number: c.Number, Level: c.Level, Title: c.Title, Description: desc, Credits: c.Credits,
		Hours: c.Details.Hours, Attributes: c.Details.Attributes, Designation: c.Details.Designation, DeliveryMethod: c.Details.DeliveryMethod,
		DegreeLevel: c.Details.DegreeLevel, Notes: c.Details.Notes, Prerequisites: pre, Corequisites: co, Offerings: courseOfferings(c),
		SectionTerms: []courseTermOut{}, Source: c.Source}
	terms, err := s.catSectionTerms(ctx, c.Ref())
	if err != nil {
		return courseDetail{}, err
	}
	for _, t := range terms {
		out.SectionTerms = append(out.SectionTerms, courseTermOut{Term: courseTermName(t), TermCode: t})
	}
	return out, nil
}

func (s *Server) catInstitutionName(key string) string {
	if in, ok := s.dir.Lookup(key); ok {
		return in.Name
	}
	return key
}

// catSectionTerms lists the terms with sections of a course, in order.
func (s *Server) catSectionTerms(ctx context.Context, ref catalog.Ref) ([]string, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT DISTINCT term FROM tn_sections WHERE institution = ? AND subject = ? AND number = ? ORDER BY term`),
		ref.Institution, ref.Subject, ref.Number)
	if err != nil {
		return nil, fmt.Errorf("read section terms: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// --- requisites

// reqNode is a node of a requirement as answered: catalog.Expr with the
// course as its reference text.
type reqNode struct {
	Op         string    `json:"op"`
	N          int       `json:"n,omitempty"`
	Course     string    `json:"course,omitempty"`
	MinGrade   string    `json:"minGrade,omitempty"`
	Concurrent bool      `json:"concurrent,omitempty"`
	Text       string    `json:"text,omitempty"`
	Children   []reqNode `json:"children,omitempty"`
}

func reqTree(e *catalog.Expr) reqNode {
	n := reqNode{Op: e.Op, N: e.N, MinGrade: e.MinGrade, Concurrent: e.Concurrent, Text: e.Text}
	if e.Course != nil {
		n.Course = e.Course.String()
	}
	for i := range e.Children {
		n.Children = append(n.Children, reqTree(&e.Children[i]))
	}
	return n
}
