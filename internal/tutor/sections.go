package tutor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// The term-data tools: tn_course_schedule, tn_course_instructor,
// tn_course_section_get and tn_course_section_list, over tn_sections (the
// term files' sections) and the offerings of outlines.

// SectionOut is a section as answered.
type SectionOut struct {
	Course      string `json:"course"`
	Institution string `json:"institution"`
	Subject     string `json:"subject"`
	Number      string `json:"number"`
	// Term is the term's name ("Fall 2023"), TermCode its code ("202330").
	Term           string         `json:"term"`
	TermCode       string         `json:"termCode"`
	CRN            string         `json:"crn"`
	Section        string         `json:"section"`
	Title          string         `json:"title,omitempty"`
	Credits        *float64       `json:"credits,omitempty"`
	Seats          *int           `json:"seats,omitempty"`
	Waitlist       *int           `json:"waitlist,omitempty"`
	Notes          string         `json:"notes,omitempty"`
	AdditionalFees *float64       `json:"additionalFees,omitempty"`
	Meetings       []Meeting      `json:"meetings"`
	Instructors    []string       `json:"instructors"`
	Extra          map[string]any `json:"extra,omitempty"`
}

func sectionOut(sec *Section) SectionOut {
	d := sec.Details
	out := SectionOut{Course: sec.Course, Institution: sec.Institution, Subject: sec.Subject, Number: sec.Number, Term: courseTermName(sec.Term),
		TermCode: sec.Term, CRN: sec.CRN, Section: sec.Section, Title: d.Title, Credits: d.Credits, Seats: d.Seats, Waitlist: d.Waitlist,
		Notes: d.Notes, AdditionalFees: d.Fees, Meetings: d.Meetings, Instructors: sectionInstructors(sec), Extra: d.Extra}
	if out.Meetings == nil {
		out.Meetings = []Meeting{}
	}
	return out
}

// sectionInstructors are the named instructors of a section's meetings,
// in order, without repeats: a meeting may name several ("A, B"), and one
// to be announced (". TBA", blank) names none.
func sectionInstructors(sec *Section) []string {
	out := []string{}
	for _, m := range sec.Details.Meetings {
		names := m.Instructors
		if names == nil {
			names = strings.Split(m.Instructor, ",")
		}
		for _, name := range names {
			name = strings.Join(strings.Fields(strings.Trim(strings.TrimSpace(name), ".")), " ")
			if name == "" || strings.EqualFold(name, "TBA") || strings.EqualFold(name, "Staff") {
				continue
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// courseOrSections returns the course ref names; a course missing from the
// catalog is still answered when sections of it are loaded (course nil),
// else NOT_FOUND.
func (s *Server) courseOrSections(ctx context.Context, ref catalog.Ref) (*Course, []*Section, error) {
	secs, err := s.sections(ctx, ref.Institution, ref.Subject, ref.Number, "")
	if err != nil {
		return nil, nil, err
	}
	c, err := s.course(ctx, ref)
	if err != nil && !(isNotFound(err) && len(secs) > 0) {
		return nil, nil, err
	}
	return c, secs, nil
}

// --- tn_course_schedule

type scheduleIn struct {
	Course string `json:"course"`
	Term   string `json:"term,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// SchedulePage is a page of a course's sections.
type SchedulePage struct {
	Items      []SectionOut `json:"items"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TotalCount int          `json:"totalCount"`
	HasMore    bool         `json:"hasMore"`
	Course     string       `json:"course"`
	// Terms are the terms whose sections of the course are loaded.
	Terms []courseTermOut `json:"terms"`
	Note  string          `json:"note,omitempty"`
}

func (s *Server) courseSchedule(ctx context.Context, _ *registry.Call, in scheduleIn) (SchedulePage, error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return SchedulePage{}, err
	}
	t, err := courseTermArg(in.Term)
	if err != nil {
		return SchedulePage{}, err
	}
	scope := []string{ref.String(), termCodeOf(t)}
	offset, size, err := s.window("tn_course_schedule", in.Limit, in.Cursor, scope...)
	if err != nil {
		return SchedulePage{}, err
	}
	c, secs, err := s.courseOrSections(ctx, ref)
	if err != nil {
		return SchedulePage{}, err
	}
	out := SchedulePage{Course: ref.String(), Terms: []courseTermOut{}}
	var all []SectionOut
	for _, sec := range secs {
		if tt := (courseTermOut{Term: courseTermName(sec.Term), TermCode: sec.Term}); len(out.Terms) == 0 || out.Terms[len(out.Terms)-1] != tt {
			out.Terms = append(out.Terms, tt)
		}
		if t.Valid() && sec.Term != t.Code() {
			continue
		}
		all = append(all, sectionOut(sec))
	}
	p := page(s, all, offset, size, "tn_course_schedule", scope...)
	out.Items, out.NextCursor, out.TotalCount, out.HasMore = p.Items, p.NextCursor, p.TotalCount, p.HasMore
	if len(all) == 0 {
		switch {
		case len(secs) > 0:
			out.Note = fmt.Sprintf("no sections of %s are loaded for %s; terms with sections: see terms", ref, t)
		case c != nil && len(c.Details.Offerings) > 0:
			var terms []string
			for _, o := range c.Details.Offerings {
				terms = append(terms, o.Term)
			}
			out.Note = fmt.Sprintf("no section schedule of %s is loaded (times and rooms come from term section files); its outline lists offerings in %s: tn_course_instructor shows them",
				ref, strings.Join(terms, ", "))
		default:
			out.Note = fmt.Sprintf("no sections of %s are loaded (nexus import langara-sections loads term files)", ref)
		}
	}
	return out, nil
}

// --- tn_course_instructor

type instructorIn struct {
	Course string `json:"course"`
	Term   string `json:"term,omitempty"`
}

// TermInstructors are who taught or teaches a course in a term.
type TermInstructors struct {
	Term        string   `json:"term"`
	TermCode    string   `json:"termCode,omitempty"`
	Instructors []string `json:"instructors"`
	// Sections are the section numbers of the term (term data only).
	Sections []string `json:"sections,omitempty"`
	// From is "outline" (an outline's offerings) or "sections" (the term's
	// section schedule).
	From string `json:"from"`
}

// Instructor is one instructor of a course and the terms they taught it.
type Instructor struct {
	Name  string   `json:"name"`
	Terms []string `json:"terms"`
}

type instructorOut struct {
	Course      string            `json:"course"`
	Title       string            `json:"title,omitempty"`
	Instructors []Instructor      `json:"instructors"`
	ByTerm      []TermInstructors `json:"byTerm"`
	Note        string            `json:"note,omitempty"`
}

func (s *Server) courseInstructor(ctx context.Context, _ *registry.Call, in instructorIn) (instructorOut, error) {
	ref, err := s.courseRef("course", in.Course)
	if err != nil {
		return instructorOut{}, err
	}
	t, err := courseTermArg(in.Term)
	if err != nil {
		return instructorOut{}, err
	}
	c, secs, err := s.courseOrSections(ctx, ref)
	if err != nil {
		return instructorOut{}, err
	}
	out := instructorOut{Course: ref.String(), Instructors: []Instructor{}, ByTerm: []TermInstructors{}}
	type keyed struct {
		t  catalog.Term
		ti TermInstructors
	}
	var terms []keyed
	if c != nil {
		out.Title = c.Title
		for _, o := range c.Details.Offerings {
			ti := TermInstructors{Term: o.Term, Instructors: o.Instructors, From: "outline"}
			ot, err := catalog.ParseTerm(o.Term)
			if err == nil {
				ti.Term, ti.TermCode = ot.String(), ot.Code()
			}
			if t.Valid() && ot != t {
				continue
			}
			if ti.Instructors == nil {
				ti.Instructors = []string{}
			}
			terms = append(terms, keyed{ot, ti})
		}
	}
	for _, sec := range secs {
		if t.Valid() && sec.Term != t.Code() {
			continue
		}
		st, _ := catalog.ParseTerm(sec.Term)
		i := slices.IndexFunc(terms, func(k keyed) bool { return k.ti.From == "sections" && k.ti.TermCode == sec.Term })
		if i < 0 {
			terms = append(terms, keyed{st, TermInstructors{Term: courseTermName(sec.Term), TermCode: sec.Term, Instructors: []string{}, From: "sections"}})
			i = len(terms) - 1
		}
		ti := &terms[i].ti
		ti.Sections = append(ti.Sections, sec.Section)
		for _, name := range sectionInstructors(sec) {
			if !slices.Contains(ti.Instructors, name) {
				ti.Instructors = append(ti.Instructors, name)
			}
		}
	}
	// Latest term first.
	slices.SortStableFunc(terms, func(a, b keyed) int { return b.t.Compare(a.t) })
	for _, k := range terms {
		out.ByTerm = append(out.ByTerm, k.ti)
		for _, name := range k.ti.Instructors {
			i := slices.IndexFunc(out.Instructors, func(in Instructor) bool { return in.Name == name })
			if i < 0 {
				out.Instructors = append(out.Instructors, Instructor{Name: name, Terms: []string{}})
				i = len(out.Instructors) - 1
			}
			if !slices.Contains(out.Instructors[i].Terms, k.ti.Term) {
				out.Instructors[i].Terms = append(out.Instructors[i].Terms, k.ti.Term)
			}
		}
	}
	switch {
	case len(out.ByTerm) == 0 && t.Valid():
		out.Note = fmt.Sprintf("no offering or section of %s is loaded for %s", ref, t)
	case len(out.ByTerm) == 0:
		out.Note = fmt.Sprintf("no instructors of %s are loaded: instructors come from SFU outlines' offerings and Langara term sections", ref)
	case len(out.Instructors) == 0:
		out.Note = "the loaded terms name no instructor yet (to be announced)"
	}
	return out, nil
}

// --- tn_course_section_get

type sectionGetIn struct {
	Term        string `json:"term"`
	CRN         string `json:"crn,omitempty"`
	Course      string `json:"course,omitempty"`
	Section     string `json:"section,omitempty"`
	Institution string `json:"institution,omitempty"`
}

func (s *Server) sectionGet(ctx context.Context, _ *registry.Call, in sectionGetIn) (SectionOut, error) {
	t, err := courseTermArg(in.Term)
	if err != nil {
		return SectionOut{}, err
	}
	if !t.Valid() {
		return SectionOut{}, errs.Invalid("term", "a term is required: a code such as 202330 or a name such as Fall 2023")
	}
	inst, err := s.catInstitution(in.Institution)
	if err != nil {
		return SectionOut{}, err
	}
	crn, section := strings.TrimSpace(in.CRN), strings.TrimSpace(in.Section)
	q := `SELECT ` + sectionColumns + ` FROM tn_sections WHERE term = ?`
	args := []any{t.Code()}
	var what string
	switch {
	case crn != "":
		q += ` AND crn = ?`
		args = append(args, crn)
		what = "CRN " + crn
		if in.Course != "" {
			ref, err := s.courseRef("course", in.Course)
			if err != nil {
				return SectionOut{}, err
			}
			q += ` AND institution = ? AND subject = ? AND number = ?`
			args = append(args, ref.Institution, ref.Subject, ref.Number)
			what = ref.String() + " " + what
		}
	case in.Course != "" && section != "":
		ref, err := s.courseRef("course", in.Course)
		if err != nil {
			return SectionOut{}, err
		}
		q += ` AND institution = ? AND subject = ? AND number = ? AND section = ?`
		args = append(args, ref.Institution, ref.Subject, ref.Number, section)
		what = ref.String() + " section " + section
	case in.Course != "":
		return SectionOut{}, errs.Invalid("section", "give the section (such as 001) with the course, or the crn")
	default:
		return SectionOut{}, errs.Invalid("crn", "give the crn, or the course and section, of the section in term %s", t.Code())
	}
	if inst != "" {
		q += ` AND institution = ?`
		args = append(args, inst)
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(q+` ORDER BY institution, subject, number, section, crn`), args...)
	if err != nil {
		return SectionOut{}, fmt.Errorf("read section: %w", err)
	}
	defer rows.Close()
	var found []*Section
	for rows.Next() {
		sec, err := scanSection(rows)
		if err != nil {
			return SectionOut{}, err
		}
		found = append(found, sec)
	}
	if err := rows.Err(); err != nil {
		return SectionOut{}, err
	}
	switch len(found) {
	case 0:
		return SectionOut{}, errs.E(errs.NotFound, "no section %s is loaded for %s (tn_course_section_list lists the term's sections)", what, t)
	case 1:
		return sectionOut(found[0]), nil
	}
	return SectionOut{}, errs.Invalid("institution", "CRN %s of %s names sections of several institutions; give the institution or the course", crn, t)
}

// --- tn_course_section_list

type sectionListIn struct {
	Term        string `json:"term"`
	Institution string `json:"institution,omitempty"`
	Subject     string `json:"subject,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Cursor      string `json:"cursor,omitempty"`
}

// SectionsPage is a page of a term's sections.
type SectionsPage struct {
	Items      []SectionOut `json:"items"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TotalCount int          `json:"totalCount"`
	HasMore    bool         `json:"hasMore"`
	Term       string       `json:"term"`
	TermCode   string       `json:"termCode"`
	Note       string       `json:"note,omitempty"`
}

func (s *Server) sectionList(ctx context.Context, _ *registry.Call, in sectionListIn) (SectionsPage, error) {
	t, err := courseTermArg(in.Term)
	if err != nil {
		return SectionsPage{}, err
	}
	if !t.Valid() {
		return SectionsPage{}, errs.Invalid("term", "a term is required: a code such as 202330 or a name such as Fall 2023")
	}
	inst, err := s.catInstitution(in.Institution)
	if err != nil {
		return SectionsPage{}, err
	}
	subject, err := courseSubjectArg(in.Subject)
	if err != nil {
		return SectionsPage{}, err
	}
	scope := []string{t.Code(), inst, subject}
	offset, size, err := s.window("tn_course_section_list", in.Limit, in.Cursor, scope...)
	if err != nil {
		return SectionsPage{}, err
	}
	where := ` WHERE term = ?`
	args := []any{t.Code()}
	if inst != "" {
		where += ` AND institution = ?`
		args = append(args, inst)
	}
	if subject != "" {
		where += ` AND subject = ?`
		args = append(args, subject)
	}
	var total int
	if err := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT COUNT(*) FROM tn_sections`+where), args...).Scan(&total); err != nil {
		return SectionsPage{}, fmt.Errorf("count sections: %w", err)
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT `+sectionColumns+` FROM tn_sections`+where+
		` ORDER BY institution, subject, number, section, crn LIMIT ? OFFSET ?`), append(args, size, offset)...)
	if err != nil {
		return SectionsPage{}, fmt.Errorf("read sections: %w", err)
	}
	defer rows.Close()
	var items []SectionOut
	for rows.Next() {
		sec, err := scanSection(rows)
		if err != nil {
			return SectionsPage{}, err
		}
		items = append(items, sectionOut(sec))
	}
	if err := rows.Err(); err != nil {
		return SectionsPage{}, err
	}
	p := counted(s, items, total, offset, size, "tn_course_section_list", scope...)
	out := SectionsPage{Items: p.Items, NextCursor: p.NextCursor, TotalCount: p.TotalCount, HasMore: p.HasMore, Term: t.String(), TermCode: t.Code()}
	if total == 0 {
		out.Note = fmt.Sprintf("no sections are loaded for %s with these filters (nexus import langara-sections loads term files)", t)
	}
	return out, nil
}
