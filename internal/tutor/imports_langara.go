package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// The Langara files (shared data langara/): the catalogue, the course
// attributes and the term files of sections. Their records name a course
// by subject and course_code (a number in the data; a string is read too).

// catalogueFile is langara/catalogue.json.
type catalogueFile struct {
	Courses []json.RawMessage `json:"courses"`
}

type catalogueRow struct {
	Subject     string             `json:"subject"`
	CourseCode  flexText           `json:"course_code"`
	Credits     *float64           `json:"credits"`
	Hours       map[string]float64 `json:"hours"`
	Title       string             `json:"title"`
	Description string             `json:"description"`
}

// attributesFile is langara/attributes.json.
type attributesFile struct {
	Attributes []json.RawMessage `json:"attributes"`
}

type attributesRow struct {
	Subject    string          `json:"subject"`
	CourseCode flexText        `json:"course_code"`
	Attributes map[string]bool `json:"attributes"`
}

// termFile is a Langara term file (langara/2023{10,20,30}.json): the
// sections of one term, year and semester (10 spring, 20 summer, 30 fall).
type termFile struct {
	Year      int               `json:"year"`
	Semester  int               `json:"semester"`
	Retrieved string            `json:"datetime_retrieved"`
	Courses   []json.RawMessage `json:"courses"`
	term      catalog.Term
}

// check reads the file's term.
func (f *termFile) check() error {
	t, err := catalog.ParseTerm(fmt.Sprintf("%04d%02d", f.Year, f.Semester))
	if err != nil {
		return fmt.Errorf("year %d and semester %d are not a term: %w", f.Year, f.Semester, err)
	}
	f.term = t
	return nil
}

type sectionRow struct {
	RP         *string        `json:"RP"`
	Seats      flexNum        `json:"seats"`
	Waitlist   flexNum        `json:"waitlist"`
	CRN        flexText       `json:"crn"`
	Subject    string         `json:"subject"`
	CourseCode flexText       `json:"course_code"`
	Section    string         `json:"section"`
	Credits    *float64       `json:"credits"`
	Title      string         `json:"title"`
	AddFees    *float64       `json:"add_fees"`
	RptLimit   *int           `json:"rpt_limit"`
	Notes      *string        `json:"notes"`
	Schedule   []scheduleLine `json:"schedule"`
}

type scheduleLine struct {
	Type       string  `json:"type"`
	Days       string  `json:"days"`
	Time       string  `json:"time"`
	Start      *string `json:"start"`
	End        *string `json:"end"`
	Room       string  `json:"room"`
	Instructor string  `json:"instructor"`
}

// flexText is a JSON string or number, as text ("1150" and 1150 alike).
type flexText string

func (t *flexText) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*t = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = flexText(strings.TrimSpace(s))
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("%s is neither text nor a number", b)
		}
		*t = flexText(n.String())
	}
	return nil
}

// flexNum is a count that the term files give as a number, or as a word
// instead ("Cancel" seats, "N/A" or "Full" waitlist), or null.
type flexNum struct {
	N    *int
	Text string
}

func (n *flexNum) UnmarshalJSON(b []byte) error {
	var t flexText
	if err := t.UnmarshalJSON(b); err != nil {
		return err
	}
	if t == "" {
		return nil
	}
	if v, err := strconv.Atoi(string(t)); err == nil {
		n.N = &v
		return nil
	}
	n.Text = string(t)
	return nil
}

// langaraRef reads a Langara subject and course code as a reference.
func langaraRef(subject string, code flexText) (catalog.Ref, error) {
	subj, num, err := catalog.SplitCode(subject + " " + string(code))
	if err != nil {
		return catalog.Ref{}, err
	}
	return catalog.Ref{Institution: "langara", Subject: subj, Number: num}, nil
}

// courseMap is the stored courses of an institution by reference, read in
// the import's transaction.
type courseMap map[catalog.Ref]*Course

func (s *Server) coursesTx(ctx context.Context, tx *sql.Tx, institution string) (courseMap, error) {
	rows, err := tx.QueryContext(ctx, s.st.Q(`SELECT `+courseColumns+` FROM tn_courses WHERE institution = ?`), institution)
	if err != nil {
		return nil, fmt.Errorf("read courses: %w", err)
	}
	defer rows.Close()
	m := courseMap{}
	for rows.Next() {
		c, err := scanCourse(rows)
		if err != nil {
			return nil, err
		}
		m[c.Ref()] = c
	}
	return m, rows.Err()
}

// start returns a copy of the stored course ref (its details cloned), or a
// new course of ref, for an importer to set its fields on.
func (m courseMap) start(ref catalog.Ref, source string) *Course {
	if old, ok := m[ref]; ok {
		c := *old
		c.Details.Hours = maps.Clone(old.Details.Hours)
		c.Details.Attributes = maps.Clone(old.Details.Attributes)
		c.Details.Offerings = append([]Offering(nil), old.Details.Offerings...)
		return &c
	}
	return &Course{Institution: ref.Institution, Subject: ref.Subject, Number: ref.Number, Level: catalog.Level(ref.Number), Source: source}
}

// put stores c and keeps the map up to date. A course the map holds as
// it is is unchanged without a query (a second import of a file costs a
// read of the table, not one per row).
func (m courseMap) put(ctx context.Context, s *Server, tx *sql.Tx, c *Course) (change, error) {
	if old, ok := m[c.Ref()]; ok && sameCourse(old, c) {
		c.ID = old.ID
		return unchanged, nil
	}
	ch, err := s.putCourse(ctx, tx, c)
	if err == nil {
		m[c.Ref()] = c
	}
	return ch, err
}

// sameCourse says whether a and b would be stored alike (putCourse's
// comparison).
func sameCourse(a, b *Course) bool {
	if a.Level != b.Level || a.Title != b.Title || a.Description != b.Description || a.Source != b.Source ||
		(a.Credits == nil) != (b.Credits == nil) || (a.Credits != nil && *a.Credits != *b.Credits) {
		return false
	}
	da, errA := json.Marshal(a.Details)
	db, errB := json.Marshal(b.Details)
	return errA == nil && errB == nil && string(da) == string(db)
}

// sectionMap is the stored sections of an institution's term by CRN, read
// in the import's transaction, to tell unchanged sections without a query
// each.
type sectionMap map[string]*Section

func (s *Server) sectionsTx(ctx context.Context, tx *sql.Tx, institution, term string) (sectionMap, error) {
	rows, err := tx.QueryContext(ctx, s.st.Q(`SELECT `+sectionColumns+` FROM tn_sections WHERE institution = ? AND term = ?`), institution, term)
	if err != nil {
		return nil, fmt.Errorf("read sections: %w", err)
	}
	defer rows.Close()
	m := sectionMap{}
	for rows.Next() {
		sec, err := scanSection(rows)
		if err != nil {
			return nil, err
		}
		m[sec.CRN] = sec
	}
	return m, rows.Err()
}

// put stores sec unless the map holds it as it is (putSection's
// comparison: course, section and details).
func (m sectionMap) put(ctx context.Context, s *Server, tx *sql.Tx, sec *Section, source string) (change, error) {
	if old, ok := m[sec.CRN]; ok && old.Subject == sec.Subject && old.Number == sec.Number && old.Section == sec.Section {
		a, errA := json.Marshal(old.Details)
		b, errB := json.Marshal(sec.Details)
		if errA == nil && errB == nil && string(a) == string(b) {
			sec.ID = old.ID
			return unchanged, nil
		}
	}
	ch, err := s.putSection(ctx, tx, sec, source)
	if err == nil {
		m[sec.CRN] = sec
	}
	return ch, err
}

// importCatalogue stores the catalogue's courses at langara: subject,
// number, level, credits, hours, title and the description, whose
// "Prerequisite(s):" and "Corequisite(s):" paragraphs become the course's
// requisite texts (catalog.ExtractLangara). What other imports merged into
// a course (attributes) is kept.
func (s *Server) importCatalogue(ctx context.Context, tx *sql.Tx, f *catalogueFile, source string, run *fileRun) error {
	courses, err := s.coursesTx(ctx, tx, "langara")
	if err != nil {
		return err
	}
	for i, raw := range f.Courses {
		row := i + 1
		var r catalogueRow
		if err := json.Unmarshal(raw, &r); err != nil {
			run.notParsed(row, "", "record does not decode", err.Error())
			continue
		}
		ref, err := langaraRef(r.Subject, r.CourseCode)
		if err != nil {
			run.notParsed(row, "", "no valid subject and course_code", err.Error())
			continue
		}
		c := courses.start(ref, source)
		desc, pre, co := catalog.ExtractLangara(strings.TrimSpace(r.Description))
		c.Title, c.Description, c.Credits, c.Source = strings.TrimSpace(r.Title), desc, r.Credits, source
		c.Details.Hours = r.Hours
		c.Details.Prerequisites, c.Details.Corequisites = pre, co
		ch, err := courses.put(ctx, s, tx, c)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}

// importAttributes merges each row's attributes into its Langara course
// (replacing the attributes the course had). A row whose course is not in
// the catalog creates the course with what is known (its subject, number
// and attributes; no title), so that the result does not depend on the
// order of the imports: a later catalogue import completes it.
func (s *Server) importAttributes(ctx context.Context, tx *sql.Tx, f *attributesFile, source string, run *fileRun) error {
	courses, err := s.coursesTx(ctx, tx, "langara")
	if err != nil {
		return err
	}
	for i, raw := range f.Attributes {
		row := i + 1
		var r attributesRow
		if err := json.Unmarshal(raw, &r); err != nil {
			run.notParsed(row, "", "record does not decode", err.Error())
			continue
		}
		ref, err := langaraRef(r.Subject, r.CourseCode)
		if err != nil {
			run.notParsed(row, "", "no valid subject and course_code", err.Error())
			continue
		}
		c := courses.start(ref, source)
		c.Details.Attributes = r.Attributes
		if len(c.Details.Attributes) == 0 {
			c.Details.Attributes = nil
		}
		ch, err := courses.put(ctx, s, tx, c)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}

// importSections stores a term file's sections (term from the file's year
// and semester, e.g. 202330): CRN, section, title, credits, seats,
// waitlist, fees, notes and the schedule lines with their instructors;
// further attributes (RP, rpt_limit) and seats or waitlist given as words
// ("Cancel", "N/A", "Full") are kept in the section's extra attributes. A
// section of a course not in the catalog creates the course with its title
// and credits; a course that exists is left as it is.
func (s *Server) importSections(ctx context.Context, tx *sql.Tx, f *termFile, source string, run *fileRun) error {
	courses, err := s.coursesTx(ctx, tx, "langara")
	if err != nil {
		return err
	}
	term := f.term.Code()
	stored, err := s.sectionsTx(ctx, tx, "langara", term)
	if err != nil {
		return err
	}
	for i, raw := range f.Courses {
		row := i + 1
		var r sectionRow
		if err := json.Unmarshal(raw, &r); err != nil {
			run.notParsed(row, "", "record does not decode", err.Error())
			continue
		}
		ref, err := langaraRef(r.Subject, r.CourseCode)
		if err != nil {
			run.notParsed(row, "", "no valid subject and course_code", err.Error())
			continue
		}
		if r.CRN == "" {
			run.notParsed(row, ref.String(), "section without a CRN", "")
			continue
		}
		if _, ok := courses[ref]; !ok {
			c := courses.start(ref, source)
			c.Title, c.Credits = strings.TrimSpace(r.Title), r.Credits
			if _, err := courses.put(ctx, s, tx, c); err != nil {
				return fmt.Errorf("row %d: %w", row, err)
			}
		}
		sec := &Section{Institution: ref.Institution, Subject: ref.Subject, Number: ref.Number, Term: term, CRN: string(r.CRN),
			Section: strings.TrimSpace(r.Section), Details: sectionDetails(&r)}
		ch, err := stored.put(ctx, s, tx, sec, source)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}

// sectionDetails maps a term file's record to a section's details.
func sectionDetails(r *sectionRow) SectionDetails {
	d := SectionDetails{Title: strings.TrimSpace(r.Title), Credits: r.Credits, Seats: r.Seats.N, Waitlist: r.Waitlist.N,
		Fees: r.AddFees, Meetings: []Meeting{}}
	if r.Notes != nil {
		d.Notes = strings.TrimSpace(*r.Notes)
	}
	extra := extraAttrs{}
	if r.RP != nil && *r.RP != "" {
		extra["RP"] = *r.RP
	}
	if r.RptLimit != nil {
		extra["rpt_limit"] = *r.RptLimit
	}
	if r.Seats.Text != "" {
		extra["seats"] = r.Seats.Text
	}
	if r.Waitlist.Text != "" {
		extra["waitlist"] = r.Waitlist.Text
	}
	if len(extra) > 0 {
		d.Extra = extra
	}
	for _, l := range r.Schedule {
		m := Meeting{Type: strings.TrimSpace(l.Type), Days: strings.TrimSpace(l.Days), Time: strings.TrimSpace(l.Time),
			Room: strings.TrimSpace(l.Room), Instructor: strings.TrimSpace(l.Instructor), Instructors: instructors(l.Instructor)}
		if l.Start != nil {
			m.Start = strings.TrimSpace(*l.Start)
		}
		if l.End != nil {
			m.End = strings.TrimSpace(*l.End)
		}
		d.Meetings = append(d.Meetings, m)
	}
	return d
}

// instructors splits a schedule line's instructor text ("Colin Mills,
// Kelin Emmett") into names, leaving out placeholders (". TBA", blank).
func instructors(text string) []string {
	var out []string
	for _, n := range strings.Split(text, ",") {
		n = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(n), ". "))
		if n == "" || strings.EqualFold(n, "TBA") || strings.EqualFold(n, "staff") {
			continue
		}
		out = append(out, n)
	}
	return out
}

// notParsed counts a row that could not be read, with its problem.
func (r *fileRun) notParsed(row int, key, reason, detail string) {
	r.sum.NotParsed++
	r.problem(row, key, reason, detail)
	r.rowDone()
}
