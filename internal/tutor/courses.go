package tutor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
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
		d("tn_course_search", "Search the course catalog by keywords over course codes, titles and descriptions (BM25 relevance, best first), "+
			"with optional filters by institution, subject, year level and credits; without a query, lists the courses the filters keep in code order. "+
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
