package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Course is one course of the catalog.
type Course struct {
	ID          string        `json:"id"`
	Course      string        `json:"course"` // the canonical reference, "sfu:CMPT 120"
	Institution string        `json:"institution"`
	Subject     string        `json:"subject"`
	Number      string        `json:"number"`
	Level       int           `json:"level"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Credits     *float64      `json:"credits,omitempty"`
	Details     CourseDetails `json:"details"`
	Source      string        `json:"source"`
}

// CourseDetails are what the imports know of a course beyond its title and
// description; every field is optional.
type CourseDetails struct {
	Hours          map[string]float64 `json:"hours,omitempty"`
	Attributes     map[string]bool    `json:"attributes,omitempty"`
	Designation    string             `json:"designation,omitempty"`
	DeliveryMethod string             `json:"deliveryMethod,omitempty"`
	DegreeLevel    string             `json:"degreeLevel,omitempty"`
	Notes          string             `json:"notes,omitempty"`
	Prerequisites  string             `json:"prerequisites,omitempty"`
	Corequisites   string             `json:"corequisites,omitempty"`
	Offerings      []Offering         `json:"offerings,omitempty"`
}

// Offering is a term a course was offered in, with its instructors.
type Offering struct {
	Term        string   `json:"term"`
	Instructors []string `json:"instructors"`
}

// Ref is the course's reference.
func (c *Course) Ref() catalog.Ref {
	return catalog.Ref{Institution: c.Institution, Subject: c.Subject, Number: c.Number}
}

// Section is one section of a course in a term.
type Section struct {
	ID          string         `json:"id"`
	Course      string         `json:"course"`
	Institution string         `json:"institution"`
	Subject     string         `json:"subject"`
	Number      string         `json:"number"`
	Term        string         `json:"term"` // the term's code, "202330"
	CRN         string         `json:"crn"`
	Section     string         `json:"section"`
	Details     SectionDetails `json:"details"`
}

// SectionDetails are a section's seats, credits and schedule.
type SectionDetails struct {
	Title    string     `json:"title,omitempty"`
	Credits  *float64   `json:"credits,omitempty"`
	Seats    *int       `json:"seats,omitempty"`
	Waitlist *int       `json:"waitlist,omitempty"`
	Notes    string     `json:"notes,omitempty"`
	Fees     *float64   `json:"additionalFees,omitempty"`
	Meetings []Meeting  `json:"meetings"`
	Extra    extraAttrs `json:"extra,omitempty"`
}

// extraAttrs keeps a term file's further attributes as given.
type extraAttrs map[string]any

// Meeting is one line of a section's schedule.
type Meeting struct {
	Type       string `json:"type"`
	Days       string `json:"days"`
	Time       string `json:"time"`
	Start      string `json:"start,omitempty"`
	End        string `json:"end,omitempty"`
	Room       string `json:"room,omitempty"`
	Instructor string `json:"instructor,omitempty"`
	// Instructors are the names in Instructor ("A, B" is two), without
	// placeholders such as "TBA".
	Instructors []string `json:"instructors,omitempty"`
}

// change says what a write did.
type change int

const (
	unchanged change = iota
	created
	updated
)

// putCourse inserts or updates c (by institution, subject and number) in
// tx, writing nothing when it is unchanged. c.ID is set to the stored id.
func (s *Server) putCourse(ctx context.Context, tx *sql.Tx, c *Course) (change, error) {
	details, err := json.Marshal(c.Details)
	if err != nil {
		return 0, fmt.Errorf("course %s: %w", c.Ref(), err)
	}
	var (
		id, title, desc, det, src string
		level                     int
		credits                   sql.NullFloat64
	)
	err = tx.QueryRowContext(ctx, s.st.Q(`SELECT id, level, title, description, credits, details, source FROM tn_courses
		WHERE institution = ? AND subject = ? AND number = ?`), c.Institution, c.Subject, c.Number).
		Scan(&id, &level, &title, &desc, &credits, &det, &src)
	now := s.now().UnixMicro()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.ID = ulid.Make().String()
		_, err = tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_courses (id, institution, subject, number, level, title, description, credits, details, source, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), c.ID, c.Institution, c.Subject, c.Number, c.Level, c.Title, c.Description,
			nullFloat(c.Credits), string(details), c.Source, now)
		if err != nil {
			return 0, fmt.Errorf("insert course %s: %w", c.Ref(), err)
		}
		return created, nil
	case err != nil:
		return 0, fmt.Errorf("read course %s: %w", c.Ref(), err)
	}
	c.ID = id
	if level == c.Level && title == c.Title && desc == c.Description && sameFloat(credits, c.Credits) && det == string(details) && src == c.Source {
		return unchanged, nil
	}
	_, err = tx.ExecContext(ctx, s.st.Q(`UPDATE tn_courses SET level = ?, title = ?, description = ?, credits = ?, details = ?, source = ?, updated_at = ?
		WHERE id = ?`), c.Level, c.Title, c.Description, nullFloat(c.Credits), string(details), c.Source, now, id)
	if err != nil {
		return 0, fmt.Errorf("update course %s: %w", c.Ref(), err)
	}
	return updated, nil
}

const courseColumns = `id, institution, subject, number, level, title, description, credits, details, source`

func scanCourse(r interface{ Scan(...any) error }) (*Course, error) {
	var (
		c       Course
		credits sql.NullFloat64
		details string
	)
	if err := r.Scan(&c.ID, &c.Institution, &c.Subject, &c.Number, &c.Level, &c.Title, &c.Description, &credits, &details, &c.Source); err != nil {
		return nil, err
	}
	if credits.Valid {
		c.Credits = &credits.Float64
	}
	if err := json.Unmarshal([]byte(details), &c.Details); err != nil {
		return nil, fmt.Errorf("course %s: details: %w", c.ID, err)
	}
	c.Course = c.Ref().String()
	return &c, nil
}

// course returns the course ref names, or NOT_FOUND naming it.
func (s *Server) course(ctx context.Context, ref catalog.Ref) (*Course, error) {
	row := s.st.DB().QueryRowContext(ctx, s.st.Q(`SELECT `+courseColumns+` FROM tn_courses WHERE institution = ? AND subject = ? AND number = ?`),
		ref.Institution, ref.Subject, ref.Number)
	c, err := scanCourse(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.E(errs.NotFound, "no course %s is in the catalog (tn_course_search finds courses; nexus import loads catalogs)", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("read course %s: %w", ref, err)
	}
	return c, nil
}

// allCourses reads the whole catalog, in reference order.
func (s *Server) allCourses(ctx context.Context) ([]*Course, error) {
	rows, err := s.st.DB().QueryContext(ctx, `SELECT `+courseColumns+` FROM tn_courses ORDER BY institution, subject, number`)
	if err != nil {
		return nil, fmt.Errorf("read courses: %w", err)
	}
	defer rows.Close()
	var out []*Course
	for rows.Next() {
		c, err := scanCourse(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// putSection inserts or updates sec (by institution, term and CRN) in tx.
func (s *Server) putSection(ctx context.Context, tx *sql.Tx, sec *Section, source string) (change, error) {
	details, err := json.Marshal(sec.Details)
	if err != nil {
		return 0, fmt.Errorf("section %s %s: %w", sec.Term, sec.CRN, err)
	}
	var id, subj, num, section, det string
	err = tx.QueryRowContext(ctx, s.st.Q(`SELECT id, subject, number, section, details FROM tn_sections WHERE institution = ? AND term = ? AND crn = ?`),
		sec.Institution, sec.Term, sec.CRN).Scan(&id, &subj, &num, &section, &det)
	now := s.now().UnixMicro()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		sec.ID = ulid.Make().String()
		_, err = tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_sections (id, institution, subject, number, term, crn, section, details, source, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), sec.ID, sec.Institution, sec.Subject, sec.Number, sec.Term, sec.CRN, sec.Section, string(details), source, now)
		if err != nil {
			return 0, fmt.Errorf("insert section %s %s: %w", sec.Term, sec.CRN, err)
		}
		return created, nil
	case err != nil:
		return 0, fmt.Errorf("read section %s %s: %w", sec.Term, sec.CRN, err)
	}
	sec.ID = id
	if subj == sec.Subject && num == sec.Number && section == sec.Section && det == string(details) {
		return unchanged, nil
	}
	_, err = tx.ExecContext(ctx, s.st.Q(`UPDATE tn_sections SET subject = ?, number = ?, section = ?, details = ?, source = ?, updated_at = ? WHERE id = ?`),
		sec.Subject, sec.Number, sec.Section, string(details), source, now, id)
	if err != nil {
		return 0, fmt.Errorf("update section %s %s: %w", sec.Term, sec.CRN, err)
	}
	return updated, nil
}

const sectionColumns = `id, institution, subject, number, term, crn, section, details`

func scanSection(r interface{ Scan(...any) error }) (*Section, error) {
	var (
		sec     Section
		details string
	)
	if err := r.Scan(&sec.ID, &sec.Institution, &sec.Subject, &sec.Number, &sec.Term, &sec.CRN, &sec.Section, &details); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(details), &sec.Details); err != nil {
		return nil, fmt.Errorf("section %s: details: %w", sec.ID, err)
	}
	sec.Course = catalog.Ref{Institution: sec.Institution, Subject: sec.Subject, Number: sec.Number}.String()
	return &sec, nil
}

// sections reads sections matching the filters (empty ones match all), in
// term, course and section order.
func (s *Server) sections(ctx context.Context, institution, subject, number, term string) ([]*Section, error) {
	q := `SELECT ` + sectionColumns + ` FROM tn_sections WHERE institution = ?`
	args := []any{institution}
	for _, f := range []struct{ col, v string }{{"subject", subject}, {"number", number}, {"term", term}} {
		if f.v != "" {
			q += " AND " + f.col + " = ?"
			args = append(args, f.v)
		}
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(q+` ORDER BY term, subject, number, section, crn`), args...)
	if err != nil {
		return nil, fmt.Errorf("read sections: %w", err)
	}
	defer rows.Close()
	var out []*Section
	for rows.Next() {
		sec, err := scanSection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sec)
	}
	return out, rows.Err()
}

func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func sameFloat(a sql.NullFloat64, b *float64) bool {
	if !a.Valid || b == nil {
		return !a.Valid && b == nil
	}
	return a.Float64 == *b
}
