package tutor

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Course materials and grade distributions (docs/tutor-data.md): no source
// of the shared data carries them, so Nexus defines their files' formats
// and reads them here. tn_course_materials and tn_course_grades answer from
// what these imports store (tn_materials, tn_grades; migration 008).

// The import kinds and the formats of their files.
const (
	// KindMaterials is a file of course materials, {"format":
	// "nexus-course-materials", "version": 1, "materials": [{course, title,
	// kind, url, term, description, source}]}: past exams, homework, notes,
	// syllabi of courses.
	KindMaterials = "tutor-materials"
	// KindGrades is a file of grade distributions, {"format":
	// "nexus-grade-distributions", "version": 1, "distributions": [{course,
	// term, section, counts, average, averageScale, source}]}.
	KindGrades = "tutor-grades"

	// MaterialsFormat and GradesFormat are the files' "format" values.
	MaterialsFormat = "nexus-course-materials"
	GradesFormat    = "nexus-grade-distributions"
	// formatVersion is the one version of both formats.
	formatVersion = 1
)

// MaterialKinds are the kinds of material (the kind filter of
// tn_course_materials).
var MaterialKinds = []string{"exam", "homework", "notes", "syllabus", "other"}

// materialsFile is a file of KindMaterials.
type materialsFile struct {
	Format    string            `json:"format"`
	Version   *int              `json:"version"`
	Materials []json.RawMessage `json:"materials"`
}

// gradesFile is a file of KindGrades.
type gradesFile struct {
	Format        string            `json:"format"`
	Version       *int              `json:"version"`
	Distributions []json.RawMessage `json:"distributions"`
}

// checkHeader checks a file's format and version: either may be absent (the
// list's key says what the file holds), but one given must be this kind's.
func checkHeader(format string, version *int, want string) error {
	if format != "" && format != want {
		return fmt.Errorf("format %q where %q was expected", format, want)
	}
	if version != nil && *version != formatVersion {
		return fmt.Errorf("version %d of %s; Nexus reads version %d (docs/tutor-data.md)", *version, want, formatVersion)
	}
	return nil
}

func (f *materialsFile) check() error {
	if err := checkHeader(f.Format, f.Version, MaterialsFormat); err != nil {
		return err
	}
	if f.Materials == nil {
		return fmt.Errorf("no \"materials\" list")
	}
	return nil
}

func (f *gradesFile) check() error {
	if err := checkHeader(f.Format, f.Version, GradesFormat); err != nil {
		return err
	}
	if f.Distributions == nil {
		return fmt.Errorf("no \"distributions\" list")
	}
	return nil
}

// decodeMaterials and decodeGrades decode a whole file and check its
// header (decodeInput's cases for the two kinds): a file that fails here is
// an error and nothing of the import is written.
func decodeMaterials(in *input) error {
	var f materialsFile
	if err := json.Unmarshal(in.data, &f); err != nil {
		return headerError(err)
	}
	in.decoded, in.rows = &f, len(f.Materials)
	return f.check()
}

func decodeGrades(in *input) error {
	var f gradesFile
	if err := json.Unmarshal(in.data, &f); err != nil {
		return headerError(err)
	}
	in.decoded, in.rows = &f, len(f.Distributions)
	return f.check()
}

// headerError says which top-level field of a file has the wrong type:
// the records' list that is not a list, a version that is not a number.
func headerError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := map[string]string{"materials": "a list of records", "distributions": "a list of records", "version": "a number", "format": "text"}[te.Field]
		if want == "" {
			want = te.Type.String()
		}
		return fmt.Errorf("%q is a JSON %s, not %s", te.Field, te.Value, want)
	}
	return err
}

// detectFormat is the kind of a file whose top-level "format" names one of
// the two formats ("" for another format).
func detectFormat(format string) string {
	switch format {
	case MaterialsFormat:
		return KindMaterials
	case GradesFormat:
		return KindGrades
	}
	return ""
}

// --- materials

// materialDetails are what a material's details column holds.
type materialDetails struct {
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
}

type materialRow struct {
	Course      string   `json:"course"`
	Title       string   `json:"title"`
	Kind        string   `json:"kind"`
	URL         string   `json:"url"`
	Term        flexText `json:"term"`
	Description string   `json:"description"`
	Source      string   `json:"source"`
}

// storedMaterial is a material as a row of tn_materials.
type storedMaterial struct {
	ref                      catalog.Ref
	term                     string // code, "" for none
	kind, title, url, source string
	details                  string
}

// readMaterial reads a row of a materials file, or says why it does not
// read (the reason shared by such rows, and this row's detail).
func (s *Server) readMaterial(raw json.RawMessage) (m storedMaterial, reason, detail string) {
	var r materialRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return m, "record does not decode", err.Error()
	}
	ref, err := s.dir.ParseRef(r.Course)
	if err != nil {
		return m, "no valid course reference", err.Error()
	}
	m.ref = ref
	m.title = strings.TrimSpace(r.Title)
	if m.title == "" {
		return m, "material without a title", ""
	}
	m.kind = strings.ToLower(strings.TrimSpace(r.Kind))
	if !validMaterialKind(m.kind) {
		return m, "unknown material kind", fmt.Sprintf("kind %q; the kinds are %s", r.Kind, strings.Join(MaterialKinds, ", "))
	}
	m.url = strings.TrimSpace(r.URL)
	if u, err := url.Parse(m.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return m, "URL is not an http or https address", fmt.Sprintf("url %q", r.URL)
	}
	if t := strings.TrimSpace(string(r.Term)); t != "" {
		term, err := catalog.ParseTerm(t)
		if err != nil {
			return m, "term does not read", err.Error()
		}
		m.term = term.Code()
	}
	d, err := json.Marshal(materialDetails{Description: strings.TrimSpace(r.Description), Source: strings.TrimSpace(r.Source)})
	if err != nil {
		return m, "record does not decode", err.Error()
	}
	m.details = string(d)
	return m, "", ""
}

func validMaterialKind(k string) bool {
	for _, x := range MaterialKinds {
		if x == k {
			return true
		}
	}
	return false
}

// importMaterials stores a materials file's rows, each identified by its
// course and URL: a row read again is unchanged, one whose title, kind,
// term, description or source changed is updated. A row that does not
// read (course reference, title, kind, URL, term) is not stored and is
// reported; a row of a course the catalog does not hold is stored and
// reported (materials may be loaded before the catalogue). A later row of
// the same course and URL is a duplicate: the first is stored.
func (s *Server) importMaterials(ctx context.Context, tx *sql.Tx, f *materialsFile, source string, run *fileRun) error {
	known := catalogCourses{}
	first := map[string]int{}
	for i, raw := range f.Materials {
		row := i + 1
		m, reason, detail := s.readMaterial(raw)
		if reason != "" {
			key := ""
			if m.ref.Institution != "" {
				key = m.ref.String()
			}
			run.notParsed(row, key, reason, detail)
			continue
		}
		m.source = source
		key := m.ref.String() + " " + m.url
		if at, dup := first[key]; dup {
			run.sum.Duplicates++
			run.problem(row, key, "the same course and URL again: the first row is stored", fmt.Sprintf("as row %d", at))
			run.rowDone()
			continue
		}
		first[key] = row
		ok, err := known.has(ctx, s, tx, m.ref)
		if err != nil {
			return err
		}
		if !ok {
			run.problem(row, m.ref.String(), "course not in the catalog; stored", "")
		}
		ch, err := s.putMaterial(ctx, tx, &m)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}

// putMaterial inserts or updates m by its course and URL.
func (s *Server) putMaterial(ctx context.Context, tx *sql.Tx, m *storedMaterial) (change, error) {
	var (
		id, kind, title, details, src string
		term                          sql.NullString
	)
	err := tx.QueryRowContext(ctx, s.st.Q(`SELECT id, term, kind, title, details, source FROM tn_materials
		WHERE institution = ? AND subject = ? AND number = ? AND url = ?`), m.ref.Institution, m.ref.Subject, m.ref.Number, m.url).
		Scan(&id, &term, &kind, &title, &details, &src)
	now := s.now().UnixMicro()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_materials (id, institution, subject, number, term, kind, title, url, details, source, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), ulid.Make().String(), m.ref.Institution, m.ref.Subject, m.ref.Number,
			nullText(m.term), m.kind, m.title, m.url, m.details, m.source, now)
		if err != nil {
			return 0, fmt.Errorf("insert material %s %s: %w", m.ref, m.url, err)
		}
		return created, nil
	case err != nil:
		return 0, fmt.Errorf("read material %s %s: %w", m.ref, m.url, err)
	}
	if term.String == m.term && kind == m.kind && title == m.title && details == m.details && src == m.source {
		return unchanged, nil
	}
	_, err = tx.ExecContext(ctx, s.st.Q(`UPDATE tn_materials SET term = ?, kind = ?, title = ?, details = ?, source = ?, updated_at = ? WHERE id = ?`),
		nullText(m.term), m.kind, m.title, m.details, m.source, now, id)
	if err != nil {
		return 0, fmt.Errorf("update material %s %s: %w", m.ref, m.url, err)
	}
	return updated, nil
}

// materialsOf reads the materials of a course: latest term first (those
// of no term last), then by title and URL.
func (s *Server) materialsOf(ctx context.Context, ref catalog.Ref) ([]Material, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, term, kind, title, url, details FROM tn_materials
		WHERE institution = ? AND subject = ? AND number = ?`), ref.Institution, ref.Subject, ref.Number)
	if err != nil {
		return nil, fmt.Errorf("read materials of %s: %w", ref, err)
	}
	defer rows.Close()
	out := []Material{}
	for rows.Next() {
		var (
			m       = Material{Course: ref.String()}
			term    sql.NullString
			details string
			d       materialDetails
		)
		if err := rows.Scan(&m.ID, &term, &m.Kind, &m.Title, &m.URL, &details); err != nil {
			return nil, fmt.Errorf("read materials of %s: %w", ref, err)
		}
		if err := json.Unmarshal([]byte(details), &d); err != nil {
			return nil, fmt.Errorf("material %s: details: %w", m.ID, err)
		}
		if term.Valid && term.String != "" {
			m.Term, m.TermCode = courseTermName(term.String), term.String
		}
		m.Description, m.Source = d.Description, d.Source
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read materials of %s: %w", ref, err)
	}
	// Sorted here, not by the store: the same order on both dialects
	// (PostgreSQL's collation would order titles otherwise).
	slices.SortFunc(out, func(a, b Material) int {
		noTerm := func(m Material) int { return map[bool]int{true: 1}[m.TermCode == ""] } // no term last
		return cmp.Or(cmp.Compare(noTerm(a), noTerm(b)), strings.Compare(b.TermCode, a.TermCode),
			strings.Compare(a.Title, b.Title), strings.Compare(a.URL, b.URL))
	})
	return out, nil
}

// --- grade distributions

// gradeDetails are what a distribution's details column holds.
type gradeDetails struct {
	Source          string `json:"source,omitempty"`
	AverageComputed bool   `json:"averageComputed,omitempty"`
}

type gradeRow struct {
	Course       string          `json:"course"`
	Term         flexText        `json:"term"`
	Section      flexText        `json:"section"`
	Counts       json.RawMessage `json:"counts"`
	Average      *float64        `json:"average"`
	AverageScale string          `json:"averageScale"`
	Source       string          `json:"source"`
}

// The scales of an average.
const (
	scalePercent = "percent"
	scaleGPA     = "gpa"
	// maxGPA is the top of the grade-point scale of Langara and SFU (A+).
	maxGPA = 4.33
)

// letterPoints are the grade points of letter grades on the 4.33 scale of
// the institutions in letterScale.
var letterPoints = map[string]float64{
	"A+": 4.33, "A": 4.00, "A-": 3.67, "B+": 3.33, "B": 3.00, "B-": 2.67,
	"C+": 2.33, "C": 2.00, "C-": 1.67, "D": 1.00, "F": 0,
}

// letterScale are the institutions whose letter grades are letterPoints:
// the only ones an average is computed for.
var letterScale = map[string]bool{"langara": true, "sfu": true}

// storedGrades is a distribution as a row of tn_grades.
type storedGrades struct {
	ref           catalog.Ref
	term, section string
	counts        string
	average       *float64
	scale         string
	details       string
	source        string
}

// readGrades reads a row of a grades file, or says why it does not read.
func (s *Server) readGrades(raw json.RawMessage) (g storedGrades, reason, detail string) {
	var r gradeRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return g, "record does not decode", err.Error()
	}
	ref, err := s.dir.ParseRef(r.Course)
	if err != nil {
		return g, "no valid course reference", err.Error()
	}
	g.ref = ref
	t := strings.TrimSpace(string(r.Term))
	if t == "" {
		return g, "distribution without a term", ""
	}
	term, err := catalog.ParseTerm(t)
	if err != nil {
		return g, "term does not read", err.Error()
	}
	g.term = term.Code()
	g.section = strings.TrimSpace(string(r.Section))
	counts, why := readCounts(r.Counts)
	if why != "" {
		return g, "counts are not non-negative integers by grade", why
	}
	c, err := json.Marshal(counts)
	if err != nil {
		return g, "record does not decode", err.Error()
	}
	g.counts = string(c)
	d := gradeDetails{Source: strings.TrimSpace(r.Source)}
	switch {
	case r.Average != nil:
		g.scale = strings.ToLower(strings.TrimSpace(r.AverageScale))
		top := map[string]float64{scalePercent: 100, scaleGPA: maxGPA}[g.scale]
		if top == 0 {
			return g, "average without a scale (percent or gpa)", fmt.Sprintf("averageScale %q", r.AverageScale)
		}
		if v := *r.Average; math.IsNaN(v) || v < 0 || v > top {
			return g, "average out of its scale", fmt.Sprintf("average %v on the %s scale (0 to %v)", v, g.scale, top)
		}
		g.average = r.Average
	case letterScale[ref.Institution]:
		if avg, ok := letterAverage(counts); ok {
			g.average, g.scale, d.AverageComputed = &avg, scaleGPA, true
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return g, "record does not decode", err.Error()
	}
	g.details = string(b)
	return g, "", ""
}

// readCounts reads a distribution's counts: an object of grades (non-empty
// keys, distinct once trimmed) to non-negative integers, at least one.
func readCounts(raw json.RawMessage) (map[string]int, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "no counts"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, "counts are not an object of grade to count"
	}
	if len(m) == 0 {
		return nil, "no counts"
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		grade := strings.TrimSpace(k)
		if grade == "" {
			return nil, "a count of an empty grade"
		}
		if _, dup := out[grade]; dup {
			return nil, fmt.Sprintf("grade %q twice", grade)
		}
		num, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Sprintf("the count of %q is not a number", grade)
		}
		n, err := strconv.Atoi(num.String())
		if err != nil || n < 0 {
			return nil, fmt.Sprintf("the count of %q is %s, not a non-negative integer", grade, num)
		}
		out[grade] = n
	}
	return out, ""
}

// letterAverage is the grade-point average of the letter grades of counts
// (letterPoints), rounded to two decimals; non-grades are left out. False
// when no student has a letter grade.
func letterAverage(counts map[string]int) (float64, bool) {
	var sum float64
	n := 0
	for g, c := range counts {
		if p, ok := letterPoints[strings.ToUpper(g)]; ok {
			sum += p * float64(c)
			n += c
		}
	}
	if n == 0 {
		return 0, false
	}
	return math.Round(sum/float64(n)*100) / 100, true
}

// importGrades stores a grades file's rows, each identified by its course,
// term and section: a row read again is unchanged, one whose counts,
// average or source changed replaces the stored one. A row that does not
// read (course reference, term, counts, average) is not stored and is
// reported; a row of a course the catalog does not hold is stored and
// reported. A later row of the same course, term and section is a
// duplicate: the first is stored.
func (s *Server) importGrades(ctx context.Context, tx *sql.Tx, f *gradesFile, source string, run *fileRun) error {
	known := catalogCourses{}
	first := map[string]int{}
	for i, raw := range f.Distributions {
		row := i + 1
		g, reason, detail := s.readGrades(raw)
		if reason != "" {
			key := ""
			if g.ref.Institution != "" {
				key = g.ref.String()
			}
			run.notParsed(row, key, reason, detail)
			continue
		}
		g.source = source
		key := g.ref.String() + " " + g.term
		if g.section != "" {
			key += " " + g.section
		}
		if at, dup := first[key]; dup {
			run.sum.Duplicates++
			run.problem(row, key, "the same course, term and section again: the first row is stored", fmt.Sprintf("as row %d", at))
			run.rowDone()
			continue
		}
		first[key] = row
		ok, err := known.has(ctx, s, tx, g.ref)
		if err != nil {
			return err
		}
		if !ok {
			run.problem(row, g.ref.String(), "course not in the catalog; stored", "")
		}
		ch, err := s.putGrades(ctx, tx, &g)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}

// putGrades inserts or replaces g by its course, term and section.
func (s *Server) putGrades(ctx context.Context, tx *sql.Tx, g *storedGrades) (change, error) {
	var (
		id, counts, details, src string
		average                  sql.NullFloat64
		scale                    sql.NullString
	)
	err := tx.QueryRowContext(ctx, s.st.Q(`SELECT id, counts, average, average_scale, details, source FROM tn_grades
		WHERE institution = ? AND subject = ? AND number = ? AND term = ? AND section = ?`),
		g.ref.Institution, g.ref.Subject, g.ref.Number, g.term, g.section).Scan(&id, &counts, &average, &scale, &details, &src)
	now := s.now().UnixMicro()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, s.st.Q(`INSERT INTO tn_grades (id, institution, subject, number, term, section, counts, average, average_scale, details, source, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), ulid.Make().String(), g.ref.Institution, g.ref.Subject, g.ref.Number, g.term, g.section,
			g.counts, nullFloat(g.average), nullText(g.scale), g.details, g.source, now)
		if err != nil {
			return 0, fmt.Errorf("insert grades %s %s %s: %w", g.ref, g.term, g.section, err)
		}
		return created, nil
	case err != nil:
		return 0, fmt.Errorf("read grades %s %s %s: %w", g.ref, g.term, g.section, err)
	}
	if counts == g.counts && sameFloat(average, g.average) && scale.String == g.scale && details == g.details && src == g.source {
		return unchanged, nil
	}
	_, err = tx.ExecContext(ctx, s.st.Q(`UPDATE tn_grades SET counts = ?, average = ?, average_scale = ?, details = ?, source = ?, updated_at = ? WHERE id = ?`),
		g.counts, nullFloat(g.average), nullText(g.scale), g.details, g.source, now, id)
	if err != nil {
		return 0, fmt.Errorf("update grades %s %s %s: %w", g.ref, g.term, g.section, err)
	}
	return updated, nil
}

// gradesOf reads the grade distributions of a course: latest term first,
// then the whole course's before its sections', sections in order.
func (s *Server) gradesOf(ctx context.Context, ref catalog.Ref) ([]GradeDistribution, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, term, section, counts, average, average_scale, details FROM tn_grades
		WHERE institution = ? AND subject = ? AND number = ?`), ref.Institution, ref.Subject, ref.Number)
	if err != nil {
		return nil, fmt.Errorf("read grades of %s: %w", ref, err)
	}
	defer rows.Close()
	out := []GradeDistribution{}
	for rows.Next() {
		var (
			g               GradeDistribution
			counts, details string
			average         sql.NullFloat64
			scale           sql.NullString
			d               gradeDetails
		)
		if err := rows.Scan(&g.ID, &g.TermCode, &g.Section, &counts, &average, &scale, &details); err != nil {
			return nil, fmt.Errorf("read grades of %s: %w", ref, err)
		}
		if err := json.Unmarshal([]byte(counts), &g.Counts); err != nil {
			return nil, fmt.Errorf("grades %s: counts: %w", g.ID, err)
		}
		if err := json.Unmarshal([]byte(details), &d); err != nil {
			return nil, fmt.Errorf("grades %s: details: %w", g.ID, err)
		}
		g.Term = courseTermName(g.TermCode)
		for _, n := range g.Counts {
			g.Students += n
		}
		if average.Valid {
			g.Average, g.AverageScale = &average.Float64, scale.String
		}
		g.AverageComputed, g.Source = d.AverageComputed, d.Source
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read grades of %s: %w", ref, err)
	}
	slices.SortFunc(out, func(a, b GradeDistribution) int {
		return cmp.Or(strings.Compare(b.TermCode, a.TermCode), strings.Compare(a.Section, b.Section))
	})
	return out, nil
}

// combinedAverage is the average of a course over distributions: per term,
// the whole course's distribution if there is one, else its sections';
// over those that have an average, weighted by their students. ok is false
// when none has an average or their scales differ; over counts the
// distributions averaged.
func combinedAverage(ds []GradeDistribution) (avg float64, scale string, over int, ok bool) {
	whole := map[string]bool{}
	for _, d := range ds {
		if d.Section == "" {
			whole[d.TermCode] = true
		}
	}
	var sum, weight float64
	for _, d := range ds {
		if d.Average == nil || (d.Section != "" && whole[d.TermCode]) {
			continue
		}
		if scale != "" && d.AverageScale != scale {
			return 0, "", 0, false
		}
		scale = d.AverageScale
		w := float64(d.Students)
		if w == 0 {
			continue
		}
		sum += *d.Average * w
		weight += w
		over++
	}
	if weight == 0 {
		return 0, "", 0, false
	}
	return math.Round(sum/weight*100) / 100, scale, over, true
}

// --- shared

// catalogCourses says which courses the catalog holds, read once per
// institution in the import's transaction.
type catalogCourses map[string]map[catalog.Ref]bool

func (k catalogCourses) has(ctx context.Context, s *Server, tx *sql.Tx, ref catalog.Ref) (bool, error) {
	set, ok := k[ref.Institution]
	if !ok {
		rows, err := tx.QueryContext(ctx, s.st.Q(`SELECT subject, number FROM tn_courses WHERE institution = ?`), ref.Institution)
		if err != nil {
			return false, fmt.Errorf("read courses: %w", err)
		}
		defer rows.Close()
		set = map[catalog.Ref]bool{}
		for rows.Next() {
			r := catalog.Ref{Institution: ref.Institution}
			if err := rows.Scan(&r.Subject, &r.Number); err != nil {
				return false, fmt.Errorf("read courses: %w", err)
			}
			set[r] = true
		}
		if err := rows.Err(); err != nil {
			return false, fmt.Errorf("read courses: %w", err)
		}
		k[ref.Institution] = set
	}
	return set[ref], nil
}

// countRows counts a table's rows (materials or grades loaded anywhere).
func (s *Server) countRows(ctx context.Context, table string) (int, error) {
	var n int
	if err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}

func nullText(v string) any {
	if v == "" {
		return nil
	}
	return v
}
