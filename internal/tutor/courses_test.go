package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// The course tools' tests call them through the real pipeline on both
// stores, over a handful of real records stored with the store helpers:
// those of the excerpt of the shared data the repository keeps
// (testtools.Excerpt), which holds every record the fixture takes.

// courseReadJSON decodes the file rel of the data directory dir (the
// excerpt, or the whole shared data: testtools.SharedData).
func courseReadJSON(tb testing.TB, dir, rel string, v any) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		tb.Fatalf("reading the real data: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decoding %s: %v", rel, err)
	}
}

// The shapes of the shared data's files, as far as the fixtures read them.
type (
	fxLangaraCourse struct {
		Subject     string             `json:"subject"`
		Code        int                `json:"course_code"`
		Credits     *float64           `json:"credits"`
		Hours       map[string]float64 `json:"hours"`
		Title       string             `json:"title"`
		Description string             `json:"description"`
	}
	fxLangaraAttrs struct {
		Subject    string          `json:"subject"`
		Code       int             `json:"course_code"`
		Attributes map[string]bool `json:"attributes"`
	}
	fxSFUOutline struct {
		Dept, Number, Title, Units, Description, Notes, Designation string
		DeliveryMethod                                              string `json:"deliveryMethod"`
		Prerequisites, Corequisites                                 string
		DegreeLevel                                                 string `json:"degreeLevel"`
		Offerings                                                   []Offering
	}
	fxTermFile struct {
		Year     int `json:"year"`
		Semester int `json:"semester"`
		Courses  []struct {
			Seats    any      `json:"seats"`    // a number, or "Cancel"
			Waitlist any      `json:"waitlist"` // a number, "N/A", "Full" or null
			CRN      int      `json:"crn"`
			Subject  string   `json:"subject"`
			Code     int      `json:"course_code"`
			Section  string   `json:"section"`
			Credits  *float64 `json:"credits"`
			Title    string   `json:"title"`
			Fees     *float64 `json:"add_fees"`
			Notes    *string  `json:"notes"`
			Schedule []struct {
				Type, Days, Time, Room, Instructor string
				Start, End                         *string
			} `json:"schedule"`
		} `json:"courses"`
	}
)

// fxCatalog is every course of the data directory dir: the Langara
// catalogue (with its attributes) and the SFU outlines, as an import
// stores them.
func fxCatalog(tb testing.TB, dir string) []*Course {
	var cat struct{ Courses []fxLangaraCourse }
	courseReadJSON(tb, dir, "langara/catalogue.json", &cat)
	var attrs struct{ Attributes []fxLangaraAttrs }
	courseReadJSON(tb, dir, "langara/attributes.json", &attrs)
	byCode := map[string]map[string]bool{}
	for _, a := range attrs.Attributes {
		byCode[fmt.Sprintf("%s %d", a.Subject, a.Code)] = a.Attributes
	}
	var out []*Course
	for _, c := range cat.Courses {
		num := strconv.Itoa(c.Code)
		out = append(out, &Course{Institution: "langara", Subject: c.Subject, Number: num, Level: catalog.Level(num), Title: c.Title,
			Description: c.Description, Credits: c.Credits, Source: "langara-catalogue",
			Details: CourseDetails{Hours: c.Hours, Attributes: byCode[c.Subject+" "+num]}})
	}
	var sfu struct{ Data []fxSFUOutline }
	courseReadJSON(tb, dir, "sfu/outlines.json", &sfu)
	seen := map[string]bool{}
	for _, o := range sfu.Data {
		if seen[o.Dept+o.Number] {
			continue
		}
		seen[o.Dept+o.Number] = true
		c := &Course{Institution: "sfu", Subject: o.Dept, Number: o.Number, Level: catalog.Level(o.Number), Title: o.Title,
			Description: strings.TrimSpace(o.Description), Source: "sfu-outlines",
			Details: CourseDetails{Designation: o.Designation, DeliveryMethod: o.DeliveryMethod, DegreeLevel: o.DegreeLevel, Notes: o.Notes,
				Prerequisites: o.Prerequisites, Corequisites: o.Corequisites, Offerings: o.Offerings}}
		if u, err := strconv.ParseFloat(o.Units, 64); err == nil {
			c.Credits = &u
		}
		out = append(out, c)
	}
	return out
}

// fxSections are the sections of a Langara term file.
func fxSections(tb testing.TB, dir, file string, keep func(subject string, code int) bool) []*Section {
	var f fxTermFile
	courseReadJSON(tb, dir, file, &f)
	term := fmt.Sprintf("%04d%02d", f.Year, f.Semester)
	var out []*Section
	for _, c := range f.Courses {
		if !keep(c.Subject, c.Code) {
			continue
		}
		sec := &Section{Institution: "langara", Subject: c.Subject, Number: strconv.Itoa(c.Code), Term: term, CRN: strconv.Itoa(c.CRN), Section: c.Section,
			Details: SectionDetails{Title: c.Title, Credits: c.Credits, Seats: fxInt(c.Seats), Waitlist: fxInt(c.Waitlist), Fees: c.Fees, Meetings: []Meeting{}, Extra: extraAttrs{}}}
		for k, v := range map[string]any{"seats": c.Seats, "waitlist": c.Waitlist} {
			if s, ok := v.(string); ok {
				sec.Details.Extra[k] = s
			}
		}
		if c.Notes != nil {
			sec.Details.Notes = *c.Notes
		}
		for _, m := range c.Schedule {
			mt := Meeting{Type: m.Type, Days: m.Days, Time: m.Time, Room: m.Room, Instructor: m.Instructor}
			if m.Start != nil {
				mt.Start = *m.Start
			}
			if m.End != nil {
				mt.End = *m.End
			}
			sec.Details.Meetings = append(sec.Details.Meetings, mt)
		}
		out = append(out, sec)
	}
	return out
}

// fxInt is a JSON number as an int, nil for anything else.
func fxInt(v any) *int {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	n := int(f)
	return &n
}

// fxRules are the BC Transfer Guide rows kept, parsed.
func fxRules(tb testing.TB, data string, dir *catalog.Directory, keep func(transfer.Row) bool) ([]transfer.Row, []transfer.Rule) {
	rows, err := transfer.LoadRows(filepath.Join(data, "langara", "transfers.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var kept []transfer.Row
	var rules []transfer.Rule
	for _, r := range rows {
		if keep(r) {
			kept = append(kept, r)
			rules = append(rules, transfer.Parse(r, dir))
		}
	}
	return kept, rules
}

// fxPutRules stores rules as the importer does: the rule's JSON in
// tn_transfer_rules, every course it names (reference text, side source or
// target) in tn_transfer_rule_courses.
func fxPutRules(tb testing.TB, s *Server, rows []transfer.Row, rules []transfer.Rule) {
	tb.Helper()
	err := s.st.Tx(context.Background(), func(tx *sql.Tx) error {
		for i, r := range rules {
			id := ulid.Make().String()
			raw, _ := json.Marshal(r)
			row := rows[i]
			var end any
			if !strings.EqualFold(row.EffectiveEnd, "present") {
				end = row.EffectiveEnd
			}
			parsed := 0
			if r.Parsed {
				parsed = 1
			}
			key := fmt.Sprintf("%s|%s|%d|%s|%s|%s", row.Source, row.Subject, row.CourseCode, row.Destination, row.EffectiveStart, row.Credit)
			if _, err := tx.Exec(s.st.Q(`INSERT INTO tn_transfer_rules (id, row_key, source_institution, target_institution, subject, number,
				effective_start, effective_end, outcome, parsed, rule, source, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
				id, key, r.Course.Institution, r.Destination, r.Course.Subject, r.Course.Number, row.EffectiveStart, end, string(r.Outcome), parsed,
				string(raw), "bctg-transfers", time.Now().UnixMicro()); err != nil {
				return err
			}
			seen := map[string]bool{}
			put := func(ref catalog.Ref, side string) error {
				if seen[ref.String()+side] {
					return nil
				}
				seen[ref.String()+side] = true
				_, err := tx.Exec(s.st.Q(`INSERT INTO tn_transfer_rule_courses (course, rule_id, side) VALUES (?, ?, ?)`), ref.String(), id, side)
				return err
			}
			for _, c := range append([]catalog.Ref{r.Course}, r.SourceCourses()...) {
				if err := put(c, "source"); err != nil {
					return err
				}
			}
			for _, ts := range r.Targets {
				for _, t := range ts.Targets {
					if err := put(t.Course, "target"); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("store rules: %v", err)
	}
}

func fxPutCourses(tb testing.TB, s *Server, courses []*Course, sections []*Section) {
	tb.Helper()
	ctx := context.Background()
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		for _, c := range courses {
			if _, err := s.putCourse(ctx, tx, c); err != nil {
				return err
			}
		}
		for _, sec := range sections {
			if _, err := s.putSection(ctx, tx, sec, "langara-sections"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("store courses: %v", err)
	}
}

// courseHarness calls the tutor's tools through the real pipeline.
type courseHarness struct {
	pipelinetest.Valence
	tut *Server
}

func newCourseHarness(tb testing.TB, st *store.Store) courseHarness {
	reg := registry.New()
	conv := conversation.New(st)
	tut := New(st, conv, Options{CursorKey: []byte("test-key")})
	if err := tut.Register(reg); err != nil {
		tb.Fatal(err)
	}
	return courseHarness{pipelinetest.Valence{T: tb, St: st, P: pipeline.New(pipeline.Options{Registry: reg, Sessions: conv}), Transport: "test"}, tut}
}

// The fixture: the CPSC and MATH courses of the Langara catalogue, the
// CMPT, MACM and ACMA courses of the SFU outlines, the Fall 2023 CPSC
// sections, and the BC Transfer Guide rows of Langara CPSC 1150 and 1181
// to SFU and UBC Vancouver.
func fxKeep(c *Course) bool {
	return (c.Institution == "langara" && (c.Subject == "CPSC" || c.Subject == "MATH")) ||
		(c.Institution == "sfu" && (c.Subject == "CMPT" || c.Subject == "MACM" || c.Subject == "ACMA"))
}

func fxLoad(tb testing.TB, h courseHarness) (courses []*Course) {
	data := testtools.Excerpt(tb)
	for _, c := range fxCatalog(tb, data) {
		if fxKeep(c) {
			courses = append(courses, c)
		}
	}
	secs := fxSections(tb, data, "langara/202330.json", func(subject string, _ int) bool { return subject == "CPSC" })
	fxPutCourses(tb, h.tut, courses, secs)
	rows, rules := fxRules(tb, data, h.tut.dir, func(r transfer.Row) bool {
		return r.Subject == "CPSC" && (r.CourseCode == 1150 || r.CourseCode == 1181) && (r.Destination == "SFU" || r.Destination == "UBCV")
	})
	fxPutRules(tb, h.tut, rows, rules)
	return courses
}

var (
	cobj = pipelinetest.Obj
	carr = pipelinetest.Arr
)

// walk calls a list tool page by page (limit per page) and returns every
// item, failing on a repeated key or a totalCount that changes.
func (h courseHarness) walk(tool string, args map[string]any, limit int, key func(map[string]any) string) []map[string]any {
	h.T.Helper()
	var all []map[string]any
	seen := map[string]bool{}
	total := -1.0
	args["limit"] = limit
	for pages := 0; ; pages++ {
		if pages > 1000 {
			h.T.Fatalf("%s: more than 1000 pages", tool)
		}
		p := h.Call(tool, args)
		if total >= 0 && p["totalCount"] != total {
			h.T.Fatalf("%s: totalCount changed from %v to %v", tool, total, p["totalCount"])
		}
		total = p["totalCount"].(float64)
		items := carr(p["items"])
		if len(items) > limit {
			h.T.Fatalf("%s: %d items for limit %d", tool, len(items), limit)
		}
		for _, it := range items {
			o := cobj(it)
			k := key(o)
			if seen[k] {
				h.T.Fatalf("%s: item %s on two pages", tool, k)
			}
			seen[k] = true
			all = append(all, o)
		}
		if p["hasMore"] != true {
			if p["nextCursor"] != nil {
				h.T.Fatalf("%s: last page has a nextCursor", tool)
			}
			break
		}
		args["cursor"] = p["nextCursor"]
	}
	if float64(len(all)) != total {
		h.T.Fatalf("%s: walked %d items, totalCount %v", tool, len(all), total)
	}
	return all
}

func courseKey(o map[string]any) string { return o["course"].(string) }

func strs(v any) []string {
	var out []string
	for _, x := range carr(v) {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			out = append(out, x["course"].(string))
		}
	}
	return out
}

func TestCourseTools(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := newCourseHarness(t, st)
		courses := fxLoad(t, h)
		t.Run("search", func(t *testing.T) {
			h := h.with(t)
			// A course code ranks its course first, written either way.
			for _, q := range []string{"CPSC 1150", "cpsc1150"} {
				p := h.Call("tn_course_search", map[string]any{"query": q})
				if first := cobj(carr(p["items"])[0]); first["course"] != "langara:CPSC 1150" || first["title"] != "Program Design" {
					t.Errorf("search %q: first %v", q, first)
				}
			}
			// Keywords: "data structures" at SFU finds CMPT 225 "Data Structures and Programming".
			p := h.Call("tn_course_search", map[string]any{"query": "data structures", "institution": "Simon Fraser University"})
			items := carr(p["items"])
			if len(items) == 0 || !slices.Contains(strs(p["items"])[:min(3, len(items))], "sfu:CMPT 225") {
				t.Errorf("search data structures at SFU: %v", strs(p["items"]))
			}
			for _, it := range items {
				if cobj(it)["institution"] != "sfu" || cobj(it)["score"].(float64) <= 0 {
					t.Fatalf("search with institution sfu: %v", it)
				}
			}
			// Filters without a query list in code order; level and subject apply.
			all := h.walk("tn_course_search", map[string]any{"institution": "LANG", "subject": "cpsc", "level": 2}, 7, courseKey)
			want := 0
			for _, c := range courses {
				if c.Institution == "langara" && c.Subject == "CPSC" && c.Number[0] == '2' {
					want++
				}
			}
			if len(all) != want || want == 0 || !slices.IsSorted(strs(anySlice(all))) {
				t.Errorf("langara CPSC level 2: %d courses, want %d: %v", len(all), want, strs(anySlice(all)))
			}
			// Credits: SFU CMPT 120 has 3 units; at least 4 credits leaves it out.
			for _, tc := range []struct {
				min, max float64
				in       bool
			}{{3, 3, true}, {4, 6, false}} {
				p := h.Call("tn_course_search", map[string]any{"query": "CMPT 120", "institution": "sfu", "minCredits": tc.min, "maxCredits": tc.max, "limit": 100})
				if slices.Contains(strs(p["items"]), "sfu:CMPT 120") != tc.in {
					t.Errorf("credits %v-%v: CMPT 120 in %v, want %v", tc.min, tc.max, strs(p["items"]), tc.in)
				}
			}
			// Pagination of a ranked query walks every result once.
			all = h.walk("tn_course_search", map[string]any{"query": "programming"}, 5, courseKey)
			if len(all) < 10 {
				t.Errorf("programming: %d results", len(all))
			}
		})
		t.Run("get", func(t *testing.T) {
			h := h.with(t)
			// langara/catalogue.json: CPSC 1150 Program Design, 3 credits,
			// lecture 4 and lab 2 hours; its prerequisite is a paragraph of
			// the description, shown apart.
			g := h.Call("tn_course_get", map[string]any{"course": "Langara College:cpsc  1150"})
			if g["course"] != "langara:CPSC 1150" || g["title"] != "Program Design" || g["credits"] != 3.0 || cobj(g["hours"])["lecture"] != 4.0 ||
				cobj(g["hours"])["lab"] != 2.0 || g["institutionName"] != "Langara College" || g["level"] != 1.0 {
				t.Fatalf("get CPSC 1150: %v", g)
			}
			if strings.Contains(g["description"].(string), "Prerequisite") || !strings.HasPrefix(g["prerequisites"].(string), "One of the following: MDT 85") {
				t.Errorf("CPSC 1150's prerequisite paragraph: description %q, prerequisites %q", g["description"], g["prerequisites"])
			}
			if terms := carr(g["sectionTerms"]); len(terms) != 1 || cobj(terms[0])["termCode"] != "202330" || cobj(terms[0])["term"] != "Fall 2023" {
				t.Errorf("section terms: %v", g["sectionTerms"])
			}
			// langara/attributes.json: CPSC 1150 is UT.
			if cobj(g["attributes"])["UT"] != true {
				t.Errorf("attributes: %v", g["attributes"])
			}
			// sfu/outlines.json: CMPT 120, Quantitative/Breadth-Science, In Person, offered Fall 2025.
			g = h.Call("tn_course_get", map[string]any{"course": "SFU:CMPT120"})
			off := cobj(carr(g["offerings"])[0])
			if g["designation"] != "Quantitative/Breadth-Science" || g["deliveryMethod"] != "In Person" || g["credits"] != 3.0 ||
				off["term"] != "Fall 2025" || off["termCode"] != "202530" || !slices.Contains(strs(off["instructors"]), "Diana Cukierman") {
				t.Errorf("get CMPT 120: %v", g)
			}
		})
		t.Run("prereqs", func(t *testing.T) {
			h := h.with(t)
			// Langara CPSC 1181: A minimum "C" grade in CPSC 1150 or 1155; or permission of department.
			p := h.Call("tn_course_prereqs", map[string]any{"course": "langara:CPSC 1181"})
			if p["hasPrerequisites"] != true || p["from"] != "description" || !strings.HasPrefix(p["text"].(string), `A minimum "C" grade in CPSC 1150 or 1155`) {
				t.Fatalf("prereqs CPSC 1181: %v", p)
			}
			if got := strs(p["courses"]); !slices.Contains(got, "langara:CPSC 1150") || !slices.Contains(got, "langara:CPSC 1155") {
				t.Errorf("CPSC 1181 prerequisite courses: %v", got)
			}
			if m := cobj(carr(p["courses"])[0]); m["inCatalog"] != true || m["title"] == nil {
				t.Errorf("a mention of a loaded course: %v", m)
			}
			if !grades(p["requirement"])["langara:CPSC 1150"]["C"] {
				t.Errorf("CPSC 1150 needs a C: %v", p["requirement"])
			}
			// SFU CMPT 225: (MACM 101 and (CMPT 125, CMPT 129 or CMPT 135)) or (ENSC 251 and ENSC 252), all with a minimum grade of C-.
			p = h.Call("tn_course_prereqs", map[string]any{"course": "sfu:CMPT 225"})
			got := strs(p["courses"])
			for _, c := range []string{"sfu:MACM 101", "sfu:CMPT 125", "sfu:CMPT 129", "sfu:CMPT 135", "sfu:ENSC 251", "sfu:ENSC 252"} {
				if !slices.Contains(got, c) {
					t.Errorf("CMPT 225 prerequisites: %v lacks %s", got, c)
				}
			}
			if p["from"] != "outline" || cobj(p["requirement"])["op"] != "any" {
				t.Errorf("CMPT 225 requirement: %v", p)
			}
			// SFU CMPT 120: only a recommendation.
			p = h.Call("tn_course_prereqs", map[string]any{"course": "sfu:CMPT 120"})
			if p["hasPrerequisites"] != false || p["text"] != "BC Math 12 or equivalent is recommended." || p["note"] == nil {
				t.Errorf("CMPT 120 prerequisites: %v", p)
			}
		})
		t.Run("requisites", func(t *testing.T) {
			h := h.with(t)
			// SFU CMPT 120's notes: credit for CMPT 102, 128, 130 or 166; taken CMPT 125, 129, 130 or 135 first.
			r := h.Call("tn_course_requisites", map[string]any{"course": "sfu:CMPT 120"})
			got := strs(r["antirequisites"])
			slices.Sort(got)
			want := []string{"sfu:CMPT 102", "sfu:CMPT 125", "sfu:CMPT 128", "sfu:CMPT 129", "sfu:CMPT 130", "sfu:CMPT 135", "sfu:CMPT 166"}
			if !slices.Equal(got, want) || len(carr(r["antirequisiteText"])) != 2 {
				t.Errorf("CMPT 120 antirequisites %v, want %v (%v)", got, want, r["antirequisiteText"])
			}
			// Langara CPSC 1150: "credit for only one of CPSC 1150 or 1155": itself left out.
			r = h.Call("tn_course_requisites", map[string]any{"course": "langara:CPSC 1150"})
			if got := strs(r["antirequisites"]); !slices.Equal(got, []string{"langara:CPSC 1155"}) {
				t.Errorf("CPSC 1150 antirequisites: %v", got)
			}
			// SFU ACMA 101: corequisites MATH 150, 151, 154 or 157.
			r = h.Call("tn_course_requisites", map[string]any{"course": "sfu:ACMA 101"})
			co := cobj(r["corequisites"])
			if co["text"] != "MATH 150, 151, 154 or 157." || !slices.Equal(strs(co["courses"]), []string{"sfu:MATH 150", "sfu:MATH 151", "sfu:MATH 154", "sfu:MATH 157"}) ||
				cobj(co["courses"].([]any)[0])["inCatalog"] != false {
				t.Errorf("ACMA 101 corequisites: %v", co)
			}
		})
		t.Run("outline", func(t *testing.T) {
			h := h.with(t)
			o := h.Call("tn_course_outline", map[string]any{"course": "sfu:CMPT 120"})
			if o["outlineLoaded"] != true || o["designation"] != "Quantitative/Breadth-Science" || !strings.Contains(o["notes"].(string), "further credit") {
				t.Errorf("outline CMPT 120: %v", o)
			}
			o = h.Call("tn_course_outline", map[string]any{"course": "langara:CPSC 1150"})
			if o["outlineLoaded"] != false || !strings.Contains(o["note"].(string), "no outline is loaded") || o["description"] == "" {
				t.Errorf("outline CPSC 1150: %v", o)
			}
		})
		t.Run("instructor", func(t *testing.T) {
			h := h.with(t)
			// sfu/outlines.json: CMPT 120 in Fall 2025 by Diana Cukierman, Harinder Khangura, Nicholas Vincent.
			r := h.Call("tn_course_instructor", map[string]any{"course": "sfu:CMPT 120", "term": "fall 2025"})
			bt := carr(r["byTerm"])
			if len(bt) != 1 || !slices.Equal(strs(cobj(bt[0])["instructors"]), []string{"Diana Cukierman", "Harinder Khangura", "Nicholas Vincent"}) || cobj(bt[0])["from"] != "outline" {
				t.Errorf("CMPT 120 Fall 2025: %v", r)
			}
			// 202330.json: CPSC 1150 section 001 (CRN 30471) by Hossein Darbandi.
			r = h.Call("tn_course_instructor", map[string]any{"course": "langara:CPSC 1150", "term": "202330"})
			bt = carr(r["byTerm"])
			if len(bt) != 1 || cobj(bt[0])["from"] != "sections" || !slices.Contains(strs(cobj(bt[0])["instructors"]), "Hossein Darbandi") ||
				len(carr(cobj(bt[0])["sections"])) != 7 {
				t.Errorf("CPSC 1150 Fall 2023: %v", r)
			}
			for _, in := range strs(cobj(bt[0])["instructors"]) {
				if strings.Contains(in, "TBA") || strings.TrimSpace(in) == "" {
					t.Errorf("instructor %q", in)
				}
			}
			r = h.Call("tn_course_instructor", map[string]any{"course": "langara:CPSC 1150", "term": "Spring 2023"})
			if len(carr(r["byTerm"])) != 0 || r["note"] == nil {
				t.Errorf("CPSC 1150 Spring 2023 (no term data loaded): %v", r)
			}
		})
		t.Run("schedule", func(t *testing.T) {
			h := h.with(t)
			all := h.walk("tn_course_schedule", map[string]any{"course": "langara:CPSC 1150", "term": "Fall 2023"}, 3, func(o map[string]any) string { return o["crn"].(string) })
			if len(all) != 7 || all[0]["section"] != "001" || all[0]["crn"] != "30471" || all[0]["termCode"] != "202330" || all[0]["seats"] != 0.0 ||
				all[0]["waitlist"] != 36.0 || cobj(carr(all[0]["meetings"])[0])["days"] != "-T-R---" {
				t.Errorf("CPSC 1150 Fall 2023 sections: %v", all)
			}
			p := h.Call("tn_course_schedule", map[string]any{"course": "sfu:CMPT 120"})
			if p["totalCount"] != 0.0 || !strings.Contains(p["note"].(string), "offerings") {
				t.Errorf("CMPT 120 schedule: %v", p)
			}
		})
		t.Run("similar", func(t *testing.T) {
			h := h.with(t)
			all := h.walk("tn_course_similar", map[string]any{"course": "langara:CPSC 1150"}, 20, courseKey)
			if len(all) == 0 {
				t.Fatal("no similar courses")
			}
			for _, o := range all {
				if o["course"] == "langara:CPSC 1150" || o["institution"] != "langara" {
					t.Fatalf("similar to CPSC 1150: %v", o)
				}
			}
			// CPSC 1155, "Program Design for Engineers", teaches the same.
			if top := strs(anySlice(all[:5])); !slices.Contains(top, "langara:CPSC 1155") {
				t.Errorf("similar to CPSC 1150: top 5 %v", top)
			}
		})
		t.Run("institutions", func(t *testing.T) {
			h := h.with(t)
			all := h.walk("tn_course_institutions", map[string]any{}, 10, func(o map[string]any) string { return o["key"].(string) })
			if len(all) != 38 {
				t.Fatalf("%d institutions", len(all))
			}
			n := map[string]map[string]any{}
			for _, o := range all {
				n[o["key"].(string)] = o
			}
			langara := 0
			for _, c := range courses {
				if c.Institution == "langara" {
					langara++
				}
			}
			if n["langara"]["courses"] != float64(langara) || n["langara"]["code"] != "LANG" || n["langara"]["rulesFrom"].(float64) == 0 ||
				n["sfu"]["rulesTo"].(float64) == 0 || n["langara"]["sections"].(float64) == 0 {
				t.Errorf("langara %v, sfu %v", n["langara"], n["sfu"])
			}
		})
		t.Run("equivalent elsewhere", func(t *testing.T) {
			h := h.with(t)
			// transfers.json, LANG CPSC 1150 to SFU: CMPT 120 (3) Q/B-Sci from Sep/04 (present); CMPT 101 (3) May/03-Aug/04 and May/99-Apr/03.
			all := h.walk("tn_course_equivalent_elsewhere", map[string]any{"course": "LANG:CPSC 1150", "institution": "SFU"}, 2, func(o map[string]any) string { return o["ruleId"].(string) })
			if len(all) != 3 {
				t.Fatalf("CPSC 1150 at SFU: %d rules: %v", len(all), all)
			}
			first := all[0]
			tg := cobj(carr(cobj(carr(first["targets"])[0])["targets"])[0])
			if first["inForce"] != true || first["direction"] != "outgoing" || tg["course"] != "sfu:CMPT 120" || tg["credits"] != 3.0 ||
				first["credit"] != "SFU CMPT 120 (3), Q/B-Sci" || cobj(first["evidence"])["source"] != "BC Transfer Guide" || first["effectiveStart"] != "2004-09-01T00:00:00Z" {
				t.Errorf("CPSC 1150 at SFU, in force: %v", first)
			}
			if first["sourceCredits"] != nil || cobj(carr(first["targets"])[0])["credits"] != 3.0 || !slices.Equal(strs(first["sourceCourses"]), []string{"langara:CPSC 1150"}) {
				t.Errorf("credits of CPSC 1150 at SFU (the text states none for the source): %v", first)
			}
			for _, o := range all[1:] {
				if o["inForce"] != false || !strings.HasPrefix(o["credit"].(string), "SFU CMPT 101 (3)") {
					t.Errorf("ended rule: %v", o)
				}
			}
			p := h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "langara:CPSC 1150", "institution": "sfu", "inForceOnly": true})
			if p["totalCount"] != 1.0 || cobj(p["source"])["name"] != "BC Transfer Guide" {
				t.Errorf("in force only: %v", p)
			}
			// UBCV: the rules of CPSC 1150 and those of CPSC 1181 whose source group names CPSC 1150 too.
			p = h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "langara:CPSC 1150", "institution": "UBC Vancouver", "limit": 100})
			multi := 0
			for _, it := range carr(p["items"]) {
				if c := cobj(it)["credit"].(string); strings.HasPrefix(c, "LANG CPSC 1150 (3) & LANG CPSC 1181 (3) =") {
					multi++
					if g := cobj(carr(cobj(it)["sourceGroups"])[0]); g["kind"] != "required" || len(carr(g["courses"])) != 2 {
						t.Errorf("paired rule's source: %v", it)
					}
					// LANG CPSC 1150 (3) & LANG CPSC 1181 (3) = UBCV CPSC 1st (3) & UBCV CPSC 2nd (3): 6 credits for 6.
					if cobj(it)["sourceCredits"] != 6.0 || cobj(carr(cobj(it)["targets"])[0])["credits"] != 6.0 {
						t.Errorf("paired rule's credits: %v", it)
					}
				}
			}
			if multi != 2 { // listed under CPSC 1150 and under CPSC 1181
				t.Errorf("paired rules of CPSC 1150 and 1181 to UBCV: %d: %v", multi, p["items"])
			}
			// The other direction: SFU CMPT 120 is the target of Langara CPSC 1150's rule.
			p = h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "sfu:CMPT 120"})
			items := carr(p["items"])
			if len(items) != 1 || cobj(items[0])["direction"] != "incoming" || cobj(items[0])["institution"] != "langara" ||
				!slices.Equal(strs(cobj(carr(cobj(items[0])["sourceGroups"])[0])["courses"]), []string{"langara:CPSC 1150"}) {
				t.Errorf("SFU CMPT 120 incoming: %v", p)
			}
			// A course with no rules: an empty page that says so.
			p = h.Call("tn_course_equivalent_elsewhere", map[string]any{"course": "sfu:ACMA 101"})
			if p["totalCount"] != 0.0 || p["note"] == nil || cobj(p["source"])["url"] != transfer.EvidenceURL {
				t.Errorf("no rules: %v", p)
			}
		})
		t.Run("materials and grades", func(t *testing.T) {
			h := h.with(t)
			m := h.Call("tn_course_materials", map[string]any{"course": "sfu:CMPT 120", "kind": "exam"})
			if m["loaded"] != false || m["totalCount"] != 0.0 || len(carr(m["items"])) != 0 || m["reason"] == nil || m["importFormat"] != materialsFormat || m["hasMore"] != false {
				t.Errorf("materials: %v", m)
			}
			g := h.Call("tn_course_grades", map[string]any{"course": "langara:CPSC 1150", "term": "Fall 2023"})
			if g["loaded"] != false || len(carr(g["distributions"])) != 0 || g["reason"] == nil || g["importFormat"] != gradesFormat {
				t.Errorf("grades: %v", g)
			}
		})
		t.Run("sections", func(t *testing.T) {
			h := h.with(t)
			for _, args := range []map[string]any{
				{"term": "Fall 2023", "crn": "30471"},
				{"term": "202330", "course": "langara:CPSC 1150", "section": "001"},
				{"term": "202330", "crn": "30471", "course": "LANG:CPSC1150", "institution": "Langara"},
			} {
				s := h.Call("tn_course_section_get", args)
				if s["course"] != "langara:CPSC 1150" || s["crn"] != "30471" || s["section"] != "001" || s["additionalFees"] != 34.0 ||
					!slices.Equal(strs(s["instructors"]), []string{"Hossein Darbandi"}) || len(carr(s["meetings"])) != 2 {
					t.Errorf("section_get %v: %v", args, s)
				}
			}
			all := h.walk("tn_course_section_list", map[string]any{"term": "fall 2023", "institution": "langara", "subject": "CPSC"}, 25,
				func(o map[string]any) string { return o["termCode"].(string) + o["crn"].(string) })
			n := 0
			for _, sec := range fxSections(t, testtools.Excerpt(t), "langara/202330.json", func(subject string, _ int) bool { return subject == "CPSC" }) {
				_ = sec
				n++
			}
			if len(all) != n || all[0]["course"].(string) > all[len(all)-1]["course"].(string) {
				t.Errorf("section_list: %d sections, want %d", len(all), n)
			}
			if p := h.Call("tn_course_section_list", map[string]any{"term": "Spring 2023"}); p["totalCount"] != 0.0 || p["note"] == nil {
				t.Errorf("an unloaded term: %v", p)
			}
		})
		t.Run("errors", func(t *testing.T) {
			h := h.with(t)
			p := h.Call("tn_course_search", map[string]any{"query": "programming", "limit": 2})
			cur := p["nextCursor"].(string)
			altered := cur[:len(cur)-2] + map[bool]string{true: "AA", false: "AB"}[strings.HasSuffix(cur, "AB")]
			courseTools := []string{"tn_course_get", "tn_course_prereqs", "tn_course_requisites", "tn_course_outline", "tn_course_instructor",
				"tn_course_schedule", "tn_course_similar", "tn_course_equivalent_elsewhere", "tn_course_materials", "tn_course_grades"}
			type tc struct {
				tool  string
				args  map[string]any
				field string
				code  errs.Code
			}
			var cases []tc
			for _, tool := range courseTools {
				cases = append(cases,
					tc{tool, map[string]any{"course": "CPSC 1150"}, "course", errs.BadRequest},          // no institution
					tc{tool, map[string]any{"course": "hogwarts:CPSC 1150"}, "course", errs.BadRequest}, // unknown institution
					tc{tool, map[string]any{"course": "sfu:"}, "course", errs.BadRequest},
					tc{tool, map[string]any{}, "course", errs.BadRequest},
					tc{tool, map[string]any{"course": "sfu:CMPT 999"}, "", errs.NotFound})
			}
			for _, tool := range []string{"tn_course_instructor", "tn_course_schedule", "tn_course_materials", "tn_course_grades"} {
				cases = append(cases, tc{tool, map[string]any{"course": "sfu:CMPT 120", "term": "Winter 2023"}, "term", errs.BadRequest},
					tc{tool, map[string]any{"course": "sfu:CMPT 120", "term": "202340"}, "term", errs.BadRequest})
			}
			paged := map[string]map[string]any{
				"tn_course_search":               {"query": "programming"},
				"tn_course_schedule":             {"course": "langara:CPSC 1150"},
				"tn_course_similar":              {"course": "langara:CPSC 1150"},
				"tn_course_institutions":         {},
				"tn_course_equivalent_elsewhere": {"course": "langara:CPSC 1150"},
				"tn_course_materials":            {"course": "langara:CPSC 1150"},
				"tn_course_section_list":         {"term": "202330"},
			}
			with := func(m map[string]any, k string, v any) map[string]any {
				out := map[string]any{k: v}
				for kk, vv := range m {
					if kk != k {
						out[kk] = vv
					}
				}
				return out
			}
			for tool, args := range paged {
				cases = append(cases, tc{tool, with(args, "limit", 0), "limit", errs.BadRequest}, tc{tool, with(args, "limit", 101), "limit", errs.BadRequest},
					tc{tool, with(args, "cursor", altered), "cursor", errs.BadRequest})
			}
			// A cursor of one query is not valid for another.
			cases = append(cases, tc{"tn_course_search", map[string]any{"query": "data", "cursor": cur}, "cursor", errs.BadRequest},
				tc{"tn_course_search", map[string]any{"institution": "Hogwarts"}, "institution", errs.BadRequest},
				tc{"tn_course_search", map[string]any{"subject": "CP-SC"}, "subject", errs.BadRequest},
				tc{"tn_course_search", map[string]any{"level": 0}, "level", errs.BadRequest},
				tc{"tn_course_search", map[string]any{"minCredits": 4, "maxCredits": 3}, "maxCredits", errs.BadRequest},
				tc{"tn_course_equivalent_elsewhere", map[string]any{"course": "sfu:CMPT 120", "institution": "Hogwarts"}, "institution", errs.BadRequest},
				tc{"tn_course_section_list", map[string]any{"term": "Autumn 2023"}, "term", errs.BadRequest},
				tc{"tn_course_section_list", map[string]any{}, "term", errs.BadRequest},
				tc{"tn_course_section_list", map[string]any{"term": "202330", "institution": "Hogwarts"}, "institution", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "202330"}, "crn", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "2023", "crn": "30471"}, "term", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "202330", "course": "langara:CPSC 1150"}, "section", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "202330", "course": "CPSC 1150", "section": "001"}, "course", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "202330", "crn": "30471", "institution": "Hogwarts"}, "institution", errs.BadRequest},
				tc{"tn_course_section_get", map[string]any{"term": "202330", "crn": "99999"}, "", errs.NotFound},
				tc{"tn_course_section_get", map[string]any{"term": "202310", "crn": "30471"}, "", errs.NotFound},
				tc{"tn_course_materials", map[string]any{"course": "sfu:CMPT 120", "kind": "gossip"}, "kind", errs.BadRequest},
			)
			for _, c := range cases {
				_, e := h.Try(c.tool, c.args)
				if e == nil || e.Code != c.code || (c.field != "" && !strings.Contains(e.Field+" "+e.Message, c.field)) {
					t.Errorf("%s %v: %v, want %s naming %q", c.tool, c.args, e, c.code, c.field)
				}
			}
		})
	})
}
