package tutor

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// transfersFile is a BC Transfer Guide export (langara/transfers.json).
type transfersFile struct {
	Courses []json.RawMessage `json:"courses"`
}

// RuleKey is the row key of a BC Transfer Guide row: the agreement's
// identity (source institution, subject and course, destination, effective
// start) and a digest of its credit text, e.g. "LANG CPSC 1150 > SFU May/03
// #3f2a9c1e". The identity alone is not unique in the real data (311 of its
// keys hold two rows: an agreement and a block transfer listed under the
// same course, or two agreements of different ends), the identity with the
// credit text is, except for rows repeated verbatim, which are one
// agreement. The effective end is left out so that an agreement that ends
// later than a previous export said is updated, not duplicated.
func RuleKey(row transfer.Row) string {
	return bctgRow{Subject: row.Subject, CourseCode: flexText(strconv.Itoa(row.CourseCode)), Source: row.Source, Destination: row.Destination,
		Credit: row.Credit, EffectiveStart: row.EffectiveStart}.key()
}

// bctgRow is a BC Transfer Guide row as read, course_code a number or
// text: a row whose code is not a number is kept, unparsed.
type bctgRow struct {
	Subject        string   `json:"subject"`
	CourseCode     flexText `json:"course_code"`
	Source         string   `json:"source"`
	Destination    string   `json:"destination"`
	Credit         string   `json:"credit"`
	EffectiveStart string   `json:"effective_start"`
	EffectiveEnd   string   `json:"effective_end"`
}

func (r bctgRow) key() string {
	credit := strings.Join(strings.Fields(r.Credit), " ")
	sum := sha256.Sum256([]byte(credit))
	return fmt.Sprintf("%s %s %s > %s %s #%s", strings.ToUpper(strings.TrimSpace(r.Source)), strings.ToUpper(strings.TrimSpace(r.Subject)),
		r.CourseCode, strings.ToUpper(strings.TrimSpace(r.Destination)), strings.TrimSpace(r.EffectiveStart), hex.EncodeToString(sum[:4]))
}

// parse parses the row with transfer.Parse; a row whose course_code is not
// a number is returned unparsed, saying so.
func (r bctgRow) parse(dir *catalog.Directory) transfer.Rule {
	code, err := strconv.Atoi(string(r.CourseCode))
	if err != nil || code < 0 {
		return transfer.Rule{Raw: r.Credit, ParseProblem: fmt.Sprintf("course_code %q is not a course number", r.CourseCode),
			Evidence: transfer.Evidence{Source: transfer.EvidenceSource, URL: transfer.EvidenceURL,
				Reference: fmt.Sprintf("%s %s %s to %s, effective %s", r.Source, r.Subject, r.CourseCode, r.Destination, r.EffectiveStart)}}
	}
	return transfer.Parse(transfer.Row{Subject: r.Subject, CourseCode: code, Source: r.Source, Destination: r.Destination, Credit: r.Credit,
		EffectiveStart: r.EffectiveStart, EffectiveEnd: r.EffectiveEnd}, dir)
}

// ruleRecord is a tn_transfer_rules row as the import compares it.
type ruleRecord struct {
	id                               string
	src, dst, subject, number, start string
	end                              sql.NullString
	outcome, rule, source            string
	parsed                           bool
}

// ruleRow is what a BCTG row becomes in tn_transfer_rules.
type ruleRow struct {
	ruleRecord
	courses [][2]string // course, side
}

func (s *Server) rulesTx(ctx context.Context, tx *sql.Tx) (map[string]*ruleRecord, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, row_key, source_institution, target_institution, subject, number, effective_start, effective_end,
		outcome, parsed, rule, source FROM tn_transfer_rules`)
	if err != nil {
		return nil, fmt.Errorf("read transfer rules: %w", err)
	}
	defer rows.Close()
	m := map[string]*ruleRecord{}
	for rows.Next() {
		var r ruleRecord
		var key string
		var parsed int
		if err := rows.Scan(&r.id, &key, &r.src, &r.dst, &r.subject, &r.number, &r.start, &r.end, &r.outcome, &parsed, &r.rule, &r.source); err != nil {
			return nil, fmt.Errorf("read transfer rules: %w", err)
		}
		r.parsed = parsed != 0
		m[key] = &r
	}
	return m, rows.Err()
}

// transferRow puts a BCTG row and its rule (parsed and reviewed) into the
// stored form.
func (s *Server) transferRow(row bctgRow, rule transfer.Rule, source string) (ruleRow, transfer.Rule, error) {
	if source == DemoSource {
		// The demo rows are made up in the BC Transfer Guide's format: their
		// evidence must not credit the BC Transfer Guide.
		rule.Evidence.Source, rule.Evidence.URL = DemoEvidence, ""
	}
	b, err := json.Marshal(rule)
	if err != nil {
		return ruleRow{}, rule, err
	}
	r := ruleRow{ruleRecord: ruleRecord{rule: string(b), outcome: string(rule.Outcome), parsed: rule.Parsed, source: source,
		subject: strings.ToUpper(strings.TrimSpace(row.Subject)), number: strings.ToUpper(string(row.CourseCode))}}
	r.src = institutionKey(s.dir, row.Source)
	r.dst = institutionKey(s.dir, row.Destination)
	if !rule.EffectiveStart.IsZero() {
		r.start = rule.EffectiveStart.Format("2006-01-02")
	}
	if !rule.EffectiveEnd.IsZero() {
		r.end = sql.NullString{String: rule.EffectiveEnd.Format("2006-01-02"), Valid: true}
	}
	// Every course the rule names, on either side; an unparsed rule names
	// at least the course its row is listed under, so that a search by
	// that course finds it.
	seen := map[[2]string]bool{}
	add := func(ref catalog.Ref, side string) {
		k := [2]string{ref.String(), side}
		if ref.Subject != "" && !seen[k] {
			seen[k] = true
			r.courses = append(r.courses, k)
		}
	}
	add(catalog.Ref{Institution: r.src, Subject: r.subject, Number: r.number}, "source")
	for _, c := range rule.SourceCourses() {
		add(c, "source")
	}
	for _, set := range rule.Targets {
		for _, t := range set.Targets {
			add(t.Course, "target")
		}
	}
	return r, rule, nil
}

// institutionKey is the directory key of an institution's code, or the
// code in lower case when the directory does not know it.
func institutionKey(dir *catalog.Directory, code string) string {
	if in, ok := dir.Lookup(code); ok {
		return in.Key
	}
	return strings.ToLower(strings.TrimSpace(code))
}

// importTransfers stores one tn_transfer_rules row per BCTG row (see
// RuleKey; a row repeated verbatim is stored once and reported), the rule
// structured by transfer.Parse as JSON with its outcome, parsed flag and
// effective dates (ISO dates; no end for "present"), and the courses it
// names on either side in tn_transfer_rule_courses. A row the parser
// cannot structure is stored all the same (parsed false, its credit text
// verbatim in the rule) and counted as not parsed with the parser's
// reason; a destination the directory does not know is a problem too.
// Every rule of the file is first weighed by transfer.Review against the
// file's other rules and the credits of the catalogued courses (so its
// Doubts and Confidence depend on the catalogue stored at the time: the
// import's kind order puts catalogues first).
func (s *Server) importTransfers(ctx context.Context, tx *sql.Tx, f *transfersFile, source string, run *fileRun) error {
	stored, err := s.rulesTx(ctx, tx)
	if err != nil {
		return err
	}
	rules := newBatch(s, tx, "tn_transfer_rules", "id, row_key, source_institution, target_institution, subject, number, effective_start, effective_end, outcome, parsed, rule, source, updated_at", 13, 200)
	links := newBatch(s, tx, "tn_transfer_rule_courses", "course, rule_id, side", 3, 500)
	links.before = rules // a link's rule is written first
	// Every row is parsed first, so that Review weighs each rule against
	// the whole file (and the catalogue's credits) before it is stored.
	type parsedRow struct {
		row  int
		in   bctgRow
		key  string
		rule transfer.Rule
	}
	var parsed []parsedRow
	firstRow := map[string]int{}
	for i, raw := range f.Courses {
		row := i + 1
		var in bctgRow
		if err := json.Unmarshal(raw, &in); err != nil {
			run.notParsed(row, "", "record does not decode", err.Error())
			continue
		}
		key := in.key()
		if first, dup := firstRow[key]; dup {
			run.sum.Duplicates++
			run.problem(row, key, "the same row again (same agreement and credit text): stored once", fmt.Sprintf("as row %d", first))
			run.rowDone()
			continue
		}
		firstRow[key] = row
		parsed = append(parsed, parsedRow{row: row, in: in, key: key, rule: in.parse(s.dir)})
	}
	credits, err := storedCredits(ctx, tx)
	if err != nil {
		return err
	}
	reviewed := make([]transfer.Rule, len(parsed))
	for i := range parsed {
		reviewed[i] = parsed[i].rule
	}
	transfer.Review(reviewed, credits)
	now := s.now().UnixMicro()
	for i, p := range parsed {
		row, in, key := p.row, p.in, p.key
		r, rule, err := s.transferRow(in, reviewed[i], source)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		if _, ok := s.dir.Lookup(in.Destination); !ok {
			run.problem(row, key, "destination institution not in the directory; stored unparsed", fmt.Sprintf("destination %q", in.Destination))
		} else if !rule.Parsed {
			run.problem(row, key, rule.ParseProblem, rule.Raw)
		}
		if !rule.Parsed {
			run.sum.NotParsed++
		}
		old, ok := stored[key]
		switch {
		case !ok:
			r.id = ulid.Make().String()
			stored[key] = &r.ruleRecord
			if err := rules.add(ctx, r.id, key, r.src, r.dst, r.subject, r.number, r.start, r.end, r.outcome, boolInt(r.parsed), r.rule, r.source, now); err != nil {
				return err
			}
			run.count(created)
		case old.src == r.src && old.dst == r.dst && old.subject == r.subject && old.number == r.number && old.start == r.start &&
			old.end == r.end && old.outcome == r.outcome && old.parsed == r.parsed && old.rule == r.rule && old.source == r.source:
			run.count(unchanged)
			run.rowDone()
			continue
		default:
			r.id = old.id
			if err := rules.flush(ctx); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE tn_transfer_rules SET source_institution = ?, target_institution = ?, subject = ?, number = ?,
				effective_start = ?, effective_end = ?, outcome = ?, parsed = ?, rule = ?, source = ?, updated_at = ? WHERE id = ?`),
				r.src, r.dst, r.subject, r.number, r.start, r.end, r.outcome, boolInt(r.parsed), r.rule, r.source, now, r.id); err != nil {
				return fmt.Errorf("row %d: update rule: %w", row, err)
			}
			if err := links.flush(ctx); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.st.Q(`DELETE FROM tn_transfer_rule_courses WHERE rule_id = ?`), r.id); err != nil {
				return fmt.Errorf("row %d: update rule courses: %w", row, err)
			}
			*old = r.ruleRecord
			run.count(updated)
		}
		for _, c := range r.courses {
			if err := links.add(ctx, c[0], r.id, c[1]); err != nil {
				return err
			}
		}
		run.rowDone()
	}
	if err := rules.flush(ctx); err != nil {
		return err
	}
	return links.flush(ctx)
}

// storedCredits reads the credits of the catalogued courses
// (tn_courses), for transfer.Review to weigh a rule whose text states no
// source credits; a course without credits is not known.
func storedCredits(ctx context.Context, tx *sql.Tx) (func(catalog.Ref) (float64, bool), error) {
	rows, err := tx.QueryContext(ctx, `SELECT institution, subject, number, credits FROM tn_courses WHERE credits IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("read course credits: %w", err)
	}
	defer rows.Close()
	m := map[catalog.Ref]float64{}
	for rows.Next() {
		var ref catalog.Ref
		var c float64
		if err := rows.Scan(&ref.Institution, &ref.Subject, &ref.Number, &c); err != nil {
			return nil, fmt.Errorf("read course credits: %w", err)
		}
		m[ref] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read course credits: %w", err)
	}
	return func(ref catalog.Ref) (float64, bool) { c, ok := m[ref]; return c, ok }, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// batch inserts rows into a table many at a time (one statement per size
// rows: a round trip per row is most of an import's time on PostgreSQL).
type batch struct {
	s      *Server
	tx     *sql.Tx
	head   string
	row    string
	cols   int
	size   int
	n      int
	args   []any
	before *batch
}

func newBatch(s *Server, tx *sql.Tx, table, columns string, cols, size int) *batch {
	return &batch{s: s, tx: tx, head: "INSERT INTO " + table + " (" + columns + ") VALUES ",
		row: "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")", cols: cols, size: size}
}

func (b *batch) add(ctx context.Context, vals ...any) error {
	if len(vals) != b.cols {
		return fmt.Errorf("batch %s: %d values for %d columns", b.head, len(vals), b.cols)
	}
	b.args = append(b.args, vals...)
	b.n++
	if b.n == b.size {
		return b.flush(ctx)
	}
	return nil
}

func (b *batch) flush(ctx context.Context) error {
	if b.before != nil {
		if err := b.before.flush(ctx); err != nil {
			return err
		}
	}
	if b.n == 0 {
		return nil
	}
	q := b.head + strings.TrimSuffix(strings.Repeat(b.row+", ", b.n), ", ")
	if _, err := b.tx.ExecContext(ctx, b.s.st.Q(q), b.args...); err != nil {
		return fmt.Errorf("%s...: %w", strings.TrimSpace(b.head), err)
	}
	b.n, b.args = 0, b.args[:0]
	return nil
}
