package tutor

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// The kinds of file Import reads (nexus import KIND FILE...).
const (
	// KindTransfers is a BC Transfer Guide export, {"courses": [{subject,
	// course_code, source, destination, credit, effective_start,
	// effective_end}]} (the shared data's langara/transfers.json): one
	// transfer rule per row.
	KindTransfers = "bctg-transfers"
	// KindCatalogue is the Langara catalogue, {"courses": [{subject,
	// course_code, credits, hours, title, description}]}: courses at
	// langara.
	KindCatalogue = "langara-catalogue"
	// KindAttributes is Langara's course attributes, {"attributes":
	// [{subject, course_code, attributes: {AR: true, ...}}]}, merged into
	// the courses' details.
	KindAttributes = "langara-attributes"
	// KindSections is a Langara term file, {year, semester, courses: [{crn,
	// section, seats, waitlist, credits, schedule, ...}]}: the sections of
	// that term.
	KindSections = "langara-sections"
	// KindSFU is SFU's outlines, {"data": [{dept, number, title, units,
	// description, ..., offerings}]}: courses at sfu.
	KindSFU = "sfu-outlines"
	// KindSession is a tutoring session's snapshot (tn_session_export),
	// restored into a workspace.
	KindSession = "tutor-session"
	// KindAuto reads each file as the kind its content shows (its top-level
	// keys and its records' fields, never its name).
	KindAuto = "auto"
)

// Kinds lists the kinds Import reads, auto last.
var Kinds = []string{KindTransfers, KindCatalogue, KindAttributes, KindSections, KindSFU, KindMaterials, KindGrades, KindSession, KindAuto}

// kindOrder is the order in which one import applies files of several
// kinds: the catalogues before what refers to their courses. Every kind's
// result is the same in any order (an import merges into what is stored);
// this order only spares placeholder courses.
var kindOrder = map[string]int{KindCatalogue: 0, KindSFU: 1, KindAttributes: 2, KindSections: 3, KindTransfers: 4, KindMaterials: 5, KindGrades: 6, KindSession: 7}

// MaxProblems is how many problems a Summary lists; all are counted.
const MaxProblems = 100

// Summary says what an import did. Every row read is either stored
// (Created, Updated or Unchanged), a Duplicate of an earlier row of its
// file, or skipped; NotParsed counts the rows that could not be read into
// a structured record: a transfer row that is not is still stored (its
// credit text verbatim, flagged unparsed), a course or section row that is
// not is skipped. Both are listed in Problems with their reason.
type Summary struct {
	Kind       string `json:"kind"`
	Files      int    `json:"files"`
	RowsRead   int    `json:"rowsRead"`
	Created    int    `json:"created"`
	Updated    int    `json:"updated"`
	Unchanged  int    `json:"unchanged"`
	Duplicates int    `json:"duplicates"`
	NotParsed  int    `json:"notParsed"`
	// DemoRemoved counts the demo's records the import deleted: real data
	// replaces the demo's made-up records of the institutions it names
	// (see purgeDemo).
	DemoRemoved int           `json:"demoRemoved,omitempty"`
	PerFile     []FileSummary `json:"perFile"`
	// Problems are the first MaxProblems problems; ProblemCount counts
	// them all and Reasons tallies them by reason.
	Problems     []Problem     `json:"problems"`
	ProblemCount int           `json:"problemCount"`
	Reasons      []ReasonCount `json:"reasons"`
}

// FileSummary is what the import did with one file.
type FileSummary struct {
	File       string `json:"file"`
	Kind       string `json:"kind"`
	RowsRead   int    `json:"rowsRead"`
	Created    int    `json:"created"`
	Updated    int    `json:"updated"`
	Unchanged  int    `json:"unchanged"`
	Duplicates int    `json:"duplicates"`
	NotParsed  int    `json:"notParsed"`
	// DemoRemoved counts the demo's records the file replaced.
	DemoRemoved int `json:"demoRemoved,omitempty"`
}

// Problem is a row the import could not take as it is.
type Problem struct {
	File string `json:"file"`
	// Row is the row's position among the file's records, from 1 (0 for
	// the file as a whole).
	Row int `json:"row,omitempty"`
	// Key identifies the record: a course reference, a section's term and
	// CRN, a transfer rule's row key.
	Key string `json:"key,omitempty"`
	// Reason says what is wrong, in words shared by all rows of the same
	// problem (Summary.Reasons counts them); Detail adds this row's
	// particulars.
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// ReasonCount is how many problems have a reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// ImportOption adjusts an import.
type ImportOption func(*importConfig)

// IntoWorkspace names the workspace a tutor-session snapshot is restored
// into (default "default"); the other kinds are reference data shared by
// every workspace.
func IntoWorkspace(ws string) ImportOption { return func(c *importConfig) { c.workspace = ws } }

type importConfig struct {
	workspace string
	// source labels the stored records (tn_courses.source, ...): the kind,
	// or "demo" for the demo data.
	source string
}

// DefaultWorkspace is where a session snapshot is restored without
// IntoWorkspace: the pipeline's default workspace.
const DefaultWorkspace = "default"

// input is one file to import: its name (for messages) and content.
type input struct {
	name string
	data []byte
	kind string
	rows int
	// decoded is what the kind's decoder made of data.
	decoded any
}

// Import reads files of kind (one of Kinds) into the store. Every file is
// read and checked before anything is written: a file that is not JSON,
// is truncated, or holds another kind of data is an error naming it, and
// nothing is written. Then each file is written in one transaction: all
// its rows or none. Importing the same file again changes nothing (its
// rows are Unchanged); a row whose content changed is Updated; an import
// never deletes, except the demo's records of the institutions a file of
// real data names (purgeDemo), in that file's transaction. progress, if
// not nil, is called as rows are written, with the rows done and the total
// of all files.
func (s *Server) Import(ctx context.Context, kind string, files []string, progress func(done, total int), opts ...ImportOption) (Summary, error) {
	ins := make([]*input, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return Summary{Kind: kind}, fmt.Errorf("import %s: %w", f, err)
		}
		ins = append(ins, &input{name: f, data: b})
	}
	return s.importInputs(ctx, kind, ins, progress, opts...)
}

func (s *Server) importInputs(ctx context.Context, kind string, ins []*input, progress func(done, total int), opts ...ImportOption) (Summary, error) {
	cfg := importConfig{workspace: DefaultWorkspace}
	for _, o := range opts {
		o(&cfg)
	}
	sum := Summary{Kind: kind, Problems: []Problem{}, Reasons: []ReasonCount{}, PerFile: []FileSummary{}}
	if !slices.Contains(Kinds, kind) {
		return sum, errs.Invalid("kind", "unknown import kind %q; the kinds are %s", kind, strings.Join(Kinds, ", "))
	}
	if len(ins) == 0 {
		return sum, errs.Invalid("files", "no file to import")
	}
	// Read every file first: a bad one stops the import before any write.
	total := 0
	for _, in := range ins {
		detected, err := detectKind(in.data)
		if err != nil {
			return sum, fmt.Errorf("import %s: %w", in.name, err)
		}
		if kind != KindAuto && detected != kind {
			return sum, fmt.Errorf("import %s: the file holds %s data, not %s (nexus import auto reads each file as what it holds)", in.name, detected, kind)
		}
		in.kind = detected
		if err := decodeInput(in); err != nil {
			return sum, fmt.Errorf("import %s (%s): %w", in.name, in.kind, err)
		}
		total += in.rows
	}
	slices.SortStableFunc(ins, func(a, b *input) int { return cmp.Compare(kindOrder[a.kind], kindOrder[b.kind]) })
	done := 0
	tick := func(n int) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	if progress != nil {
		progress(0, total)
	}
	tally := map[string]int{}
	changed := false
	defer func() {
		// Also when a later file fails: the earlier ones are committed.
		if changed {
			s.rulesChanged()   // the transfer rule index (transfers.go)
			s.catalogChanged() // the course search index (search.go)
		}
	}()
	for _, in := range ins {
		fs, probs, err := s.importOne(ctx, cfg, in, tick)
		if err != nil {
			err = fmt.Errorf("import %s (%s): %w; nothing of it is written", in.name, in.kind, err)
			if sum.Files > 0 {
				err = fmt.Errorf("%w (the %d file(s) before it are imported)", err, sum.Files)
			}
			return sum, err
		}
		sum.Files++
		sum.PerFile = append(sum.PerFile, fs)
		sum.RowsRead += fs.RowsRead
		sum.Created += fs.Created
		sum.Updated += fs.Updated
		sum.Unchanged += fs.Unchanged
		sum.Duplicates += fs.Duplicates
		sum.NotParsed += fs.NotParsed
		sum.DemoRemoved += fs.DemoRemoved
		for _, p := range probs {
			sum.ProblemCount++
			tally[p.Reason]++
			if len(sum.Problems) < MaxProblems {
				sum.Problems = append(sum.Problems, p)
			}
		}
		changed = changed || fs.Created > 0 || fs.Updated > 0 || fs.DemoRemoved > 0
	}
	for r, n := range tally {
		sum.Reasons = append(sum.Reasons, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(sum.Reasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	return sum, nil
}

// fileRun collects one file's counts and problems while it is written.
type fileRun struct {
	in    *input
	sum   FileSummary
	probs []Problem
	tick  func(int)
	// pendingTicks are rows done but not yet reported (progress is
	// reported every few rows).
	pendingTicks int
}

func (r *fileRun) problem(row int, key, reason, detail string) {
	r.probs = append(r.probs, Problem{File: r.in.name, Row: row, Key: key, Reason: reason, Detail: detail})
}

func (r *fileRun) count(c change) {
	switch c {
	case created:
		r.sum.Created++
	case updated:
		r.sum.Updated++
	default:
		r.sum.Unchanged++
	}
}

// rowDone reports progress every 64 rows.
func (r *fileRun) rowDone() {
	r.pendingTicks++
	if r.pendingTicks == 64 {
		r.tick(r.pendingTicks)
		r.pendingTicks = 0
	}
}

// importOne writes one decoded file in one transaction.
func (s *Server) importOne(ctx context.Context, cfg importConfig, in *input, tick func(int)) (FileSummary, []Problem, error) {
	run := &fileRun{in: in, tick: tick, sum: FileSummary{File: in.name, Kind: in.kind, RowsRead: in.rows}}
	source := cfg.source
	if source == "" {
		source = in.kind
	}
	var err error
	if in.kind == KindSession {
		err = s.importSession(ctx, cfg.workspace, in.decoded.(Snapshot), run)
	} else {
		err = s.st.Tx(ctx, func(tx *sql.Tx) error {
			if source != DemoSource {
				// Real data replaces the demo's records of its institutions.
				n, err := s.purgeDemo(ctx, tx, s.demoInstitutions(in))
				if err != nil {
					return err
				}
				run.sum.DemoRemoved = n
			}
			switch d := in.decoded.(type) {
			case *catalogueFile:
				return s.importCatalogue(ctx, tx, d, source, run)
			case *attributesFile:
				return s.importAttributes(ctx, tx, d, source, run)
			case *termFile:
				return s.importSections(ctx, tx, d, source, run)
			case *outlinesFile:
				return s.importOutlines(ctx, tx, d, source, run)
			case *transfersFile:
				return s.importTransfers(ctx, tx, d, source, run)
			case *materialsFile:
				return s.importMaterials(ctx, tx, d, source, run)
			case *gradesFile:
				return s.importGrades(ctx, tx, d, source, run)
			}
			return fmt.Errorf("no importer for %T", in.decoded)
		})
	}
	if err != nil {
		return FileSummary{}, nil, err
	}
	tick(run.pendingTicks)
	return run.sum, run.probs, nil
}

// detectKind tells the kind of a file from its content: its top-level keys
// and the fields of its first record.
func detectKind(data []byte) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", jsonProblem(data, err)
	}
	if f, ok := top["format"]; ok {
		var format string
		_ = json.Unmarshal(f, &format)
		if format == SnapshotFormat {
			return KindSession, nil
		}
		if k := detectFormat(format); k != "" {
			return k, nil
		}
		return "", fmt.Errorf("format %q is not one Nexus imports (a session snapshot is %q, course materials %q, grade distributions %q)",
			format, SnapshotFormat, MaterialsFormat, GradesFormat)
	}
	first := func(key string) (map[string]json.RawMessage, bool, error) {
		raw, ok := top[key]
		if !ok {
			return nil, false, nil
		}
		var recs []json.RawMessage
		if err := json.Unmarshal(raw, &recs); err != nil {
			return nil, true, fmt.Errorf("%q is not a list of records", key)
		}
		if len(recs) == 0 {
			return nil, true, nil
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(recs[0], &rec); err != nil {
			return nil, true, fmt.Errorf("the first record of %q is not an object", key)
		}
		return rec, true, nil
	}
	has := func(rec map[string]json.RawMessage, keys ...string) bool {
		for _, k := range keys {
			if _, ok := rec[k]; !ok {
				return false
			}
		}
		return true
	}
	if rec, ok, err := first("data"); ok {
		if err != nil {
			return "", err
		}
		if rec == nil || has(rec, "dept", "number") {
			return KindSFU, nil
		}
		return "", fmt.Errorf("records of \"data\" have no dept and number: not SFU outlines")
	}
	if rec, ok, err := first("attributes"); ok {
		if err != nil {
			return "", err
		}
		if rec == nil || has(rec, "subject", "course_code", "attributes") {
			return KindAttributes, nil
		}
		return "", fmt.Errorf("records of \"attributes\" have no subject, course_code and attributes: not Langara attributes")
	}
	if rec, ok, err := first("courses"); ok {
		if err != nil {
			return "", err
		}
		_, hasYear := top["year"]
		_, hasSemester := top["semester"]
		switch {
		case hasYear && hasSemester && (rec == nil || has(rec, "crn")):
			return KindSections, nil
		case rec == nil:
			return "", fmt.Errorf("\"courses\" is empty: cannot tell a catalogue from transfer rows")
		case has(rec, "subject", "course_code", "destination", "credit"):
			return KindTransfers, nil
		case has(rec, "crn", "section"):
			return "", fmt.Errorf("section records without the term's year and semester at the top level")
		case has(rec, "subject", "course_code", "title"):
			return KindCatalogue, nil
		}
		return "", fmt.Errorf("records of \"courses\" are neither catalogue entries (subject, course_code, title), sections (crn) nor transfer rows (destination, credit)")
	}
	if _, ok, err := first("materials"); ok {
		if err != nil {
			return "", err
		}
		return KindMaterials, nil
	}
	if _, ok, err := first("distributions"); ok {
		if err != nil {
			return "", err
		}
		return KindGrades, nil
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "", fmt.Errorf("not a file Nexus imports: top-level keys %s (expected \"courses\", \"attributes\", \"data\", \"materials\", \"distributions\" or a session snapshot)", strings.Join(keys, ", "))
}

// jsonProblem says what is wrong with data that is not a JSON object: a
// truncated file, or a syntax error at a line.
func jsonProblem(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(data)) {
			return fmt.Errorf("not valid JSON: the file ends early, after %d bytes (truncated?)", len(data))
		}
		line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
		return fmt.Errorf("not valid JSON at line %d (byte %d): %v", line, se.Offset, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("not a JSON object at the top level but %s", te.Value)
	}
	return fmt.Errorf("not valid JSON: %v", err)
}

// decodeInput decodes in.data as in.kind, setting in.decoded and in.rows.
func decodeInput(in *input) error {
	var err error
	switch in.kind {
	case KindCatalogue:
		var f catalogueFile
		err = json.Unmarshal(in.data, &f)
		in.decoded, in.rows = &f, len(f.Courses)
	case KindAttributes:
		var f attributesFile
		err = json.Unmarshal(in.data, &f)
		in.decoded, in.rows = &f, len(f.Attributes)
	case KindSections:
		var f termFile
		err = json.Unmarshal(in.data, &f)
		if err == nil {
			err = f.check()
		}
		in.decoded, in.rows = &f, len(f.Courses)
	case KindSFU:
		var f outlinesFile
		err = json.Unmarshal(in.data, &f)
		in.decoded, in.rows = &f, len(f.Data)
	case KindTransfers:
		var f transfersFile
		err = json.Unmarshal(in.data, &f)
		in.decoded, in.rows = &f, len(f.Courses)
	case KindMaterials:
		err = decodeMaterials(in)
	case KindGrades:
		err = decodeGrades(in)
	case KindSession:
		var snap Snapshot
		snap, err = ReadSnapshot(bytes.NewReader(in.data))
		in.decoded, in.rows = snap, 1
	default:
		err = fmt.Errorf("unknown kind %q", in.kind)
	}
	return err
}
