package tutor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/tutor"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// impRealFile is a file of the real data (the excerpt of the shared data
// the repository keeps, or the whole shared data: testtools.Data), its
// kind and how many records it holds (counted here by reading it, not
// through the importer).
type impRealFile struct {
	rel, kind, list string
}

var impRealFiles = []impRealFile{
	{"langara/catalogue.json", tutor.KindCatalogue, "courses"},
	{"langara/attributes.json", tutor.KindAttributes, "attributes"},
	{"langara/202310.json", tutor.KindSections, "courses"},
	{"langara/202320.json", tutor.KindSections, "courses"},
	{"langara/202330.json", tutor.KindSections, "courses"},
	{"sfu/outlines.json", tutor.KindSFU, "data"},
	{"langara/transfers.json", tutor.KindTransfers, "courses"},
}

// path is the file's path in the data directory dir.
func (f impRealFile) path(dir string) string { return filepath.Join(dir, f.rel) }

// records counts the file's records in dir, and returns them.
func (f impRealFile) records(t testing.TB, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(f.path(dir))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(top[f.list], &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func impTutor(st *store.Store) *tutor.Server {
	return tutor.New(st, conversation.New(st), tutor.Options{CursorKey: []byte("test-key")})
}

// impTables are the tables an import writes.
var impTables = []struct{ name, order string }{
	{"tn_courses", "institution, subject, number"},
	{"tn_sections", "institution, term, crn"},
	{"tn_transfer_rules", "row_key"},
	{"tn_transfer_rule_courses", "rule_id, side, course"},
}

// checksum digests every row of the import's tables, every column.
func impChecksum(t testing.TB, st *store.Store) string {
	t.Helper()
	h := sha256.New()
	for _, tb := range impTables {
		rows, err := st.DB().Query(`SELECT * FROM ` + tb.name + ` ORDER BY ` + tb.order)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(h, "%v\x1f", v)
			}
			h.Write([]byte{'\n'})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

func impCount(t testing.TB, st *store.Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(st.Q(q), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestImportRealFiles imports every real file by its kind on both stores,
// checks the counts against the files, then imports everything again:
// the second import reports every row unchanged and no stored row
// changes. On the excerpt, and on the whole shared data when it is there.
func TestImportRealFiles(t *testing.T) {
	testtools.ForEachData(t, func(t *testing.T, d testtools.Data) {
		testImportRealFiles(t, d.Dir)
	})
}

func testImportRealFiles(t *testing.T, data string) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		// Expected counts, read from the files.
		catalogue := impRealFiles[0].records(t, data)
		sectionCourses := map[string]bool{}
		catalogued := map[string]bool{}
		for _, r := range catalogue {
			catalogued[fmt.Sprintf("%v %v", r["subject"], r["course_code"])] = true
		}
		sections := 0
		for _, f := range impRealFiles[2:5] {
			for _, r := range f.records(t, data) {
				sections++
				if k := fmt.Sprintf("%v %v", r["subject"], r["course_code"]); !catalogued[k] {
					sectionCourses[k] = true
				}
			}
		}
		outlines := len(impRealFiles[5].records(t, data))
		transfers := impRealFiles[6].records(t, data)
		distinct := map[string]bool{}
		for _, r := range transfers {
			distinct[fmt.Sprintf("%v|%v|%v|%v|%v|%v", r["source"], r["destination"], r["subject"], r["course_code"], r["effective_start"], r["credit"])] = true
		}

		for _, f := range impRealFiles {
			sum, err := tut.Import(ctx, f.kind, []string{f.path(data)}, nil)
			if err != nil {
				t.Fatalf("import %s: %v", f.rel, err)
			}
			n := len(f.records(t, data))
			if sum.RowsRead != n || sum.Files != 1 || sum.Kind != f.kind {
				t.Fatalf("%s: read %d rows of %d files as %s, want %d of 1 as %s", f.rel, sum.RowsRead, sum.Files, sum.Kind, n, f.kind)
			}
			stored := sum.Created + sum.Updated + sum.Unchanged
			if stored+sum.Duplicates != n {
				t.Fatalf("%s: %d stored + %d duplicates of %d rows: %+v", f.rel, stored, sum.Duplicates, n, sum)
			}
			switch f.kind {
			case tutor.KindCatalogue:
				if sum.Created != n || sum.NotParsed != 0 {
					t.Fatalf("catalogue: %+v", sum)
				}
			case tutor.KindAttributes:
				// Every attributes row is a catalogued course: merged, none created.
				if sum.Updated != n || impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'langara'`) != len(catalogue) {
					t.Fatalf("attributes: %+v", sum)
				}
			case tutor.KindTransfers:
				if sum.Created != len(distinct) || sum.Duplicates != n-len(distinct) || sum.Duplicates == 0 {
					t.Fatalf("transfers: %d created, %d duplicates; the file has %d distinct rows of %d", sum.Created, sum.Duplicates, len(distinct), n)
				}
				t.Logf("transfers: %d rows, %d stored, %d duplicates, %d not parsed (%.2f%% parsed)", n, sum.Created, sum.Duplicates, sum.NotParsed,
					100*float64(n-sum.Duplicates-sum.NotParsed)/float64(n-sum.Duplicates))
			}
		}
		if got := impCount(t, st, `SELECT COUNT(*) FROM tn_sections`); got != sections {
			t.Fatalf("%d sections stored, the term files hold %d", got, sections)
		}
		if got, want := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'langara'`), len(catalogue)+len(sectionCourses); got != want {
			t.Fatalf("%d Langara courses, want %d (catalogue) + %d (only in term files)", got, len(catalogue), len(sectionCourses))
		}
		if got := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'sfu'`); got != outlines {
			t.Fatalf("%d SFU courses, want %d", got, outlines)
		}
		if got := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules`); got != len(distinct) {
			t.Fatalf("%d transfer rules, want %d", got, len(distinct))
		}
		if got := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE parsed = 0`); got != impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE outcome = ''`) {
			t.Fatalf("unparsed rules without an empty outcome")
		}
		// Every rule names its own course on the source side.
		if got := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules r WHERE NOT EXISTS (SELECT 1 FROM tn_transfer_rule_courses c
			WHERE c.rule_id = r.id AND c.side = 'source' AND c.course = 'langara:' || r.subject || ' ' || r.number)`); got != 0 {
			t.Fatalf("%d rules without their own course among their source courses", got)
		}
		impCheckSamples(t, st, len(catalogue))

		before := impChecksum(t, st)
		var all []string
		for _, f := range impRealFiles {
			all = append(all, f.path(data))
		}
		sum, err := tut.Import(ctx, tutor.KindAuto, all, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 0 || sum.Updated != 0 || sum.Unchanged+sum.Duplicates != sum.RowsRead {
			t.Fatalf("second import: %+v", sum)
		}
		if after := impChecksum(t, st); after != before {
			t.Fatal("the second import changed stored rows")
		}
	})
}

// checkSamples checks a few records against what their files say, read by
// hand (the excerpt keeps them all); catalogue is how many courses the
// Langara catalogue holds.
func impCheckSamples(t *testing.T, st *store.Store, catalogue int) {
	t.Helper()
	var title, desc, details string
	var credits float64
	// langara/catalogue.json: ABST 1100, 3 credits, 3 hours of lecture.
	if err := st.DB().QueryRow(`SELECT title, credits, details FROM tn_courses WHERE institution = 'langara' AND subject = 'ABST' AND number = '1100'`).
		Scan(&title, &credits, &details); err != nil {
		t.Fatal(err)
	}
	if title != "Canadian Aboriginal Experience" || credits != 3 || !strings.Contains(details, `"lecture":3`) || !strings.Contains(details, `"HUM":true`) {
		t.Fatalf("langara ABST 1100: %q %v %s", title, credits, details)
	}
	// sfu/outlines.json: ACMA 301, prerequisites and an offering in Fall 2024 by Cherie Ng.
	if err := st.DB().QueryRow(`SELECT title, description, details FROM tn_courses WHERE institution = 'sfu' AND subject = 'ACMA' AND number = '301'`).
		Scan(&title, &desc, &details); err != nil {
		t.Fatal(err)
	}
	if title != "Long-Term Actuarial Mathematics I" || !strings.Contains(details, `"prerequisites":"ACMA 201 (or 210), with a minimum grade of C. Corequisite: STAT 285."`) ||
		!strings.Contains(details, `{"term":"Fall 2024","instructors":["Cherie Ng"]}`) || !strings.Contains(details, `"designation":"Quantitative"`) {
		t.Fatalf("sfu ACMA 301: %q %s", title, details)
	}
	// langara/202330.json: CRN 30852 is ANTH 1120 M01, 27 seats, 18 on the
	// waitlist, two schedule lines.
	var section string
	if err := st.DB().QueryRow(`SELECT section, details FROM tn_sections WHERE term = '202330' AND crn = '30852'`).Scan(&section, &details); err != nil {
		t.Fatal(err)
	}
	var d tutor.SectionDetails
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		t.Fatal(err)
	}
	if section != "M01" || d.Seats == nil || *d.Seats != 27 || d.Waitlist == nil || *d.Waitlist != 18 || len(d.Meetings) != 2 || d.Meetings[1].Room != "WWW" {
		t.Fatalf("202330 CRN 30852: %s %s", section, details)
	}
	// A Langara requisite paragraph is the course's prerequisite text: more
	// than half the courses have one (62% of the whole catalogue).
	if n := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE institution = 'langara' AND details LIKE '%"prerequisites":%'`); 2*n < catalogue {
		t.Fatalf("only %d of %d Langara courses with prerequisites", n, catalogue)
	}
	// transfers.json: LANG ABST 1100 to CAPU, effective May/03, is CAPU HIST 209 (3).
	var outcome, rule, start string
	if err := st.DB().QueryRow(`SELECT outcome, rule, effective_start FROM tn_transfer_rules WHERE subject = 'ABST' AND number = '1100' AND target_institution = 'capu'`).
		Scan(&outcome, &rule, &start); err != nil {
		t.Fatal(err)
	}
	if outcome != "credit" || start != "2003-05-01" || !strings.Contains(rule, `"raw":"CAPU HIST 209 (3)"`) {
		t.Fatalf("ABST 1100 to CAPU: %s %s %s", outcome, start, rule)
	}
	if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rule_courses c JOIN tn_transfer_rules r ON r.id = c.rule_id
		WHERE r.subject = 'ABST' AND r.number = '1100' AND r.target_institution = 'capu' AND c.side = 'target' AND c.course = 'capu:HIST 209'`); n != 1 {
		t.Fatalf("ABST 1100 to CAPU: target course rows %d", n)
	}
}

// TestImportBadFiles: a truncated file, a file of another kind, a file that
// is not JSON, an unknown kind: each is an error naming the file and the
// problem, and nothing is written, not even the good files of the same
// import. The real files are the excerpt's.
func TestImportBadFiles(t *testing.T) {
	data := testtools.Excerpt(t)
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		dir := t.TempDir()
		write := func(name, content string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		whole, err := os.ReadFile(impRealFiles[0].path(data))
		if err != nil {
			t.Fatal(err)
		}
		truncated := write("cut.json", string(whole[:len(whole)/2]))
		notJSON := write("notes.json", "subject,course_code\nCPSC,1150\n")
		unknown := write("other.json", `{"rows": [{"a": 1}]}`)
		good := impRealFiles[1].path(data)
		for _, tt := range []struct {
			kind  string
			files []string
			want  []string
		}{
			{tutor.KindCatalogue, []string{truncated}, []string{"cut.json", "ends early", "truncated"}},
			{tutor.KindAuto, []string{good, truncated}, []string{"cut.json", "truncated"}},
			{tutor.KindSFU, []string{impRealFiles[0].path(data)}, []string{"catalogue.json", "holds langara-catalogue data, not sfu-outlines"}},
			{tutor.KindTransfers, []string{good}, []string{"attributes.json", "not bctg-transfers"}},
			{tutor.KindAuto, []string{notJSON}, []string{"notes.json", "not valid JSON at line 1"}},
			{tutor.KindAuto, []string{unknown}, []string{"other.json", "top-level keys rows"}},
			{tutor.KindCatalogue, []string{filepath.Join(dir, "missing.json")}, []string{"missing.json", "no such file"}},
		} {
			sum, err := tut.Import(ctx, tt.kind, tt.files, nil)
			if err == nil {
				t.Fatalf("%s %v: no error (%+v)", tt.kind, tt.files, sum)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("%s %v: error %q does not say %q", tt.kind, tt.files, err, w)
				}
			}
		}
		if _, err := tut.Import(ctx, "langara-grades", []string{good}, nil); err == nil || errs.CodeOf(err) != errs.BadRequest {
			t.Fatalf("unknown kind: %v", err)
		}
		for _, tb := range impTables {
			if n := impCount(t, st, `SELECT COUNT(*) FROM `+tb.name); n != 0 {
				t.Fatalf("%d rows written to %s by failed imports", n, tb.name)
			}
		}
		// A bad row is not a bad file: the row is reported, the others stored.
		rows := write("rows.json", `{"courses": [
			{"subject": "CPSC", "course_code": 1150, "credits": 3, "hours": {"lecture": 4}, "title": "Program Design", "description": "Designing programs."},
			{"subject": "CPSC", "course_code": {"n": 1}, "credits": 3, "title": "Bad code", "description": ""},
			{"subject": "", "course_code": 1160, "credits": 3, "title": "No subject", "description": ""}]}`)
		sum, err := tut.Import(ctx, tutor.KindCatalogue, []string{rows}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 1 || sum.NotParsed != 2 || sum.ProblemCount != 2 || len(sum.Problems) != 2 || sum.Problems[1].Row != 3 || sum.Problems[0].File != rows {
			t.Fatalf("bad rows: %+v", sum)
		}
	})
}

// TestImportAutoDetects: auto reads each real file as its kind, from its
// content: the files are copied under names that say nothing. On the
// excerpt, and on the whole shared data when it is there.
func TestImportAutoDetects(t *testing.T) {
	testtools.ForEachData(t, func(t *testing.T, d testtools.Data) {
		testImportAutoDetects(t, d.Dir)
	})
}

func testImportAutoDetects(t *testing.T, data string) {
	st := storetest.OpenTestSQLite(t)
	tut := impTutor(st)
	dir := t.TempDir()
	var files []string
	want := map[string]string{}
	for i, f := range impRealFiles {
		b, err := os.ReadFile(f.path(data))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("file%d.json", i))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		want[p] = f.kind
	}
	var calls, last, total int
	sum, err := tut.Import(context.Background(), tutor.KindAuto, files, func(done, tot int) { calls++; last, total = done, tot })
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.PerFile) != len(files) {
		t.Fatalf("per file: %+v", sum.PerFile)
	}
	for _, f := range sum.PerFile {
		if f.Kind != want[f.File] {
			t.Fatalf("%s read as %s, want %s", f.File, f.Kind, want[f.File])
		}
	}
	if calls < 10 || last != total || total != sum.RowsRead {
		t.Fatalf("progress: %d calls, last %d of %d; %d rows read", calls, last, total, sum.RowsRead)
	}
}

// TestImportSessionRoundTrip: a session exported on one store and imported
// on another is the same session; importing it again changes nothing; into
// another workspace it is a CONFLICT.
func TestImportSessionRoundTrip(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		src := newHarness(t, storetest.OpenTestSQLite(t))
		id, _ := src.Call("tn_session_start", map[string]any{"context": map[string]any{"program": "Arts"}})["sessionId"].(string)
		for _, m := range []string{"Which of my courses count at SFU?", "PSYC 1130 is SFU PSYC 101 since Sep 2018."} {
			src.Call("exchange_add", map[string]any{"session_id": id, "role": "user", "content": m})
		}
		src.Call("tn_session_ask", map[string]any{"sessionId": id, "message": "a draft", "draft": true})
		snap, err := src.tut.Export(ctx, "default", id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(snap)
		file := filepath.Join(t.TempDir(), "session.json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}

		tut := impTutor(st)
		sum, err := tut.Import(ctx, tutor.KindAuto, []string{file}, nil, tutor.IntoWorkspace("class-a"))
		if err != nil || sum.Created != 1 || sum.PerFile[0].Kind != tutor.KindSession {
			t.Fatalf("import session: %v %+v", err, sum)
		}
		got, err := tut.Export(ctx, "class-a", id)
		if err != nil {
			t.Fatal(err)
		}
		got.ExportedAt = snap.ExportedAt
		gb, _ := json.Marshal(got)
		if string(gb) != string(b) {
			t.Fatalf("round trip:\n got %s\nwant %s", gb, b)
		}
		sum, err = tut.Import(ctx, tutor.KindSession, []string{file}, nil, tutor.IntoWorkspace("class-a"))
		if err != nil || sum.Unchanged != 1 || sum.Created != 0 {
			t.Fatalf("import again: %v %+v", err, sum)
		}
		if _, err := tut.Import(ctx, tutor.KindSession, []string{file}, nil, tutor.IntoWorkspace("class-b")); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("into another workspace: %v", err)
		}
		// A file that fails while written leaves the files before it imported, and says so.
		cat := filepath.Join(t.TempDir(), "cat.json")
		os.WriteFile(cat, []byte(`{"courses": [{"subject": "CPSC", "course_code": 1150, "credits": 3, "title": "Program Design", "description": ""}]}`), 0o600)
		_, err = tut.Import(ctx, tutor.KindAuto, []string{file, cat}, nil, tutor.IntoWorkspace("class-b"))
		if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "the 1 file(s) before it are imported") ||
			impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE subject = 'CPSC' AND number = '1150'`) != 1 {
			t.Fatalf("a failing session after a catalogue: %v", err)
		}
	})
}

// TestLoadDemo: the demo data loads through the importers on both stores,
// every transfer row of it is structured, and loading it again changes
// nothing.
func TestLoadDemo(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		sum, err := tut.LoadDemo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sum.NotParsed != 0 || sum.ProblemCount != 0 || sum.Files != 5 {
			t.Fatalf("demo: %+v", sum)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_courses WHERE source = 'demo'`); n != 14 {
			t.Fatalf("%d demo courses, want 14", n)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE source = 'demo' AND parsed = 1`); n != 17 {
			t.Fatalf("%d parsed demo rules, want 17", n)
		}
		for _, o := range []string{"credit", "no_credit", "exemption"} {
			if impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE outcome = ?`, o) == 0 {
				t.Fatalf("no demo rule of outcome %s", o)
			}
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE rule LIKE '%BC Transfer Guide"%'`); n != 0 {
			t.Fatalf("%d demo rules credit the BC Transfer Guide", n)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_sections WHERE term = '202530'`); n != 5 {
			t.Fatalf("%d demo sections", n)
		}
		before := impChecksum(t, st)
		sum, err = tut.LoadDemo(ctx)
		if err != nil || sum.Created+sum.Updated != 0 || impChecksum(t, st) != before {
			t.Fatalf("demo again: %v %+v", err, sum)
		}
	})
}

// TestImportTransferRowsKept: a transfer row the parser cannot structure,
// one to an institution the directory does not know and one whose course
// code is not a number are stored all the same, flagged unparsed and found
// by their course; a row repeated verbatim is stored once and reported.
func TestImportTransferRowsKept(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		file := filepath.Join(t.TempDir(), "rows.json")
		rows := `{"courses": [
			{"subject": "CPSC", "course_code": 1150, "source": "LANG", "destination": "SFU", "credit": "SFU CMPT 120 (3)", "effective_start": "Sep/10", "effective_end": "present"},
			{"subject": "CPSC", "course_code": 1150, "source": "LANG", "destination": "XYZU", "credit": "XYZU CS 101 (3)", "effective_start": "Sep/10", "effective_end": "present"},
			{"subject": "CPSC", "course_code": "11A0", "source": "LANG", "destination": "SFU", "credit": "SFU CMPT 1XX (3)", "effective_start": "Sep/10", "effective_end": "present"},
			{"subject": "CPSC", "course_code": 1181, "source": "LANG", "destination": "SFU", "credit": "", "effective_start": "Sep/10", "effective_end": "present"},
			{"subject": "CPSC", "course_code": 1150, "source": "LANG", "destination": "SFU", "credit": "SFU CMPT 120 (3)", "effective_start": "Sep/10", "effective_end": "present"}]}`
		if err := os.WriteFile(file, []byte(rows), 0o600); err != nil {
			t.Fatal(err)
		}
		sum, err := tut.Import(ctx, tutor.KindTransfers, []string{file}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.RowsRead != 5 || sum.Created != 4 || sum.Duplicates != 1 || sum.NotParsed != 3 || sum.ProblemCount != 4 {
			t.Fatalf("summary: %+v", sum)
		}
		reasons := fmt.Sprint(sum.Reasons)
		for _, w := range []string{"destination institution not in the directory", "course_code \"11A0\" is not a course number", "empty credit text", "the same row again"} {
			if !strings.Contains(reasons, w) {
				t.Fatalf("reasons %s do not say %q", reasons, w)
			}
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE parsed = 0`); n != 3 {
			t.Fatalf("%d unparsed rules stored, want 3", n)
		}
		if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE target_institution = 'xyzu' AND rule LIKE '%XYZU CS 101 (3)%'`); n != 1 {
			t.Fatal("the rule to an unknown institution is not stored with its text")
		}
		for _, c := range []string{"langara:CPSC 1150", "langara:CPSC 11A0", "langara:CPSC 1181"} {
			if n := impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rule_courses WHERE course = ? AND side = 'source'`, c); n == 0 {
				t.Fatalf("no rule found by %s", c)
			}
		}
		before := impChecksum(t, st)
		if sum, err := tut.Import(ctx, tutor.KindTransfers, []string{file}, nil); err != nil || sum.Unchanged != 4 || impChecksum(t, st) != before {
			t.Fatalf("again: %v %+v", err, sum)
		}
		// An agreement whose end changed is updated, not duplicated.
		changed := strings.Replace(rows, `"SFU CMPT 120 (3)", "effective_start": "Sep/10", "effective_end": "present"}`, `"SFU CMPT 120 (3)", "effective_start": "Sep/10", "effective_end": "Aug/24"}`, 1)
		if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		sum, err = tut.Import(ctx, tutor.KindTransfers, []string{file}, nil)
		if err != nil || sum.Updated != 1 || sum.Created != 0 || impCount(t, st, `SELECT COUNT(*) FROM tn_transfer_rules WHERE effective_end = '2024-08-31'`) != 1 {
			t.Fatalf("changed end: %v %+v", err, sum)
		}
	})
}

// TestImportReviewsTransferRules: the import weighs each rule against the
// file's others and the catalogue (transfer.Review) before storing it: the
// "or" list of PHYS 1125 / 1225 to SFU (Sep/04) that grants what both earn
// alone is stored doubted; a 1-credit course granted 3 credits is doubted
// only once the catalogue says it has 1 credit.
func TestImportReviewsTransferRules(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tut := impTutor(st)
		dir := t.TempDir()
		transfers := filepath.Join(dir, "transfers.json")
		if err := os.WriteFile(transfers, []byte(`{"courses": [
			{"subject": "PHYS", "course_code": 1125, "source": "LANG", "destination": "SFU", "credit": "LANG PHYS 1125 (4) or LANG PHYS 1225 (4) = SFU PHYS 120 (3), Q/B-Sci & SFU PHYS 121 (3), Q/B-Sci & SFU PHYS 131 (2), Q", "effective_start": "Sep/04", "effective_end": "Dec/15"},
			{"subject": "PHYS", "course_code": 1125, "source": "LANG", "destination": "SFU", "credit": "SFU PHYS 120 (3), Q/B-Sci & SFU PHYS 1XX (1)", "effective_start": "Sep/04", "effective_end": "Dec/15"},
			{"subject": "PHYS", "course_code": 1225, "source": "LANG", "destination": "SFU", "credit": "SFU PHYS 121 (3), Q/B-Sci & SFU PHYS 1XX (1)", "effective_start": "Sep/04", "effective_end": "Dec/15"},
			{"subject": "PHOT", "course_code": 2490, "source": "LANG", "destination": "VIU", "credit": "VIU ARTS 2nd (3)", "effective_start": "Jan/18", "effective_end": "present"}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		catalogue := filepath.Join(dir, "catalogue.json")
		if err := os.WriteFile(catalogue, []byte(`{"courses": [{"subject": "PHOT", "course_code": 2490, "credits": 1, "title": "Photo", "description": ""}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		rule := func(subject, start string) map[string]any {
			t.Helper()
			var text string
			if err := st.DB().QueryRowContext(ctx, st.Q(`SELECT rule FROM tn_transfer_rules WHERE subject = ? AND effective_start = ? AND rule LIKE '%doubts%'`), subject, start).Scan(&text); err != nil {
				return nil
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if _, err := tut.Import(ctx, tutor.KindTransfers, []string{transfers}, nil); err != nil {
			t.Fatal(err)
		}
		or := rule("PHYS", "2004-09-01")
		if or == nil || or["confidence"].(float64) >= 1 || !strings.Contains(fmt.Sprint(or["doubts"]), `"&" typed as "or"`) {
			t.Fatalf("or-list rule stored as %v", or)
		}
		if phot := rule("PHOT", "2018-01-01"); phot != nil {
			t.Fatalf("PHOT 2490 doubted without its credits: %v", phot["doubts"])
		}
		if _, err := tut.Import(ctx, tutor.KindAuto, []string{catalogue, transfers}, nil); err != nil {
			t.Fatal(err)
		}
		if phot := rule("PHOT", "2018-01-01"); phot == nil || phot["confidence"].(float64) != 0.8 {
			t.Fatalf("PHOT 2490 (1 credit) to VIU ARTS 2nd (3) stored as %v, want doubted, confidence 0.8", phot)
		}
	})
}
