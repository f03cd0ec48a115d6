package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The benchmarks' vault, generated from the real BC course data of
// ../shared/data (its README): one note per course (Langara's catalogue,
// SFU's outlines) and one per BC Transfer Guide rule, linked to the course
// notes they name; past those, notes per Langara section and per SFU
// offering, made from the same records. The output is deterministic.

// sharedDataDir is the shared data directory: $NEXUS_SHARED_DATA, else
// shared/data beside the repository.
func sharedDataDir() string {
	if d := os.Getenv("NEXUS_SHARED_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "data")
}

// Records as read from the shared data files (only the fields used).
type (
	langCourse struct {
		Subject    string  `json:"subject"`
		CourseCode int     `json:"course_code"`
		Credits    float64 `json:"credits"`
		Hours      struct {
			Lecture float64 `json:"lecture"`
			Seminar float64 `json:"seminar"`
			Lab     float64 `json:"lab"`
		} `json:"hours"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	langSection struct {
		CRN        int     `json:"crn"`
		Subject    string  `json:"subject"`
		CourseCode int     `json:"course_code"`
		Section    string  `json:"section"`
		Credits    float64 `json:"credits"`
		Title      string  `json:"title"`
		Notes      string  `json:"notes"`
		Schedule   []struct {
			Type, Days, Time, Room, Instructor string
		} `json:"schedule"`
		term string // "Spring 2023"...
	}
	sfuOutline struct {
		Dept, Number, Title, Units, Description, Notes, Designation string
		Prerequisites, Corequisites                                 string
		Offerings                                                   []struct {
			Instructors []string `json:"instructors"`
			Term        string   `json:"term"`
		} `json:"offerings"`
	}
	bctgRule struct {
		Subject        string          `json:"subject"`
		CourseCode     json.RawMessage `json:"course_code"`
		Source         string          `json:"source"`
		Destination    string          `json:"destination"`
		Credit         string          `json:"credit"`
		EffectiveStart string          `json:"effective_start"`
		EffectiveEnd   string          `json:"effective_end"`
	}
)

// courseData is the shared data, read once.
type courseData struct {
	catalogue []langCourse
	sections  []langSection
	outlines  []sfuOutline
	rules     []bctgRule
}

var loadCourseData = sync.OnceValues(func() (*courseData, error) {
	dir := sharedDataDir()
	d := &courseData{}
	read := func(name string, v any) error {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	var cat struct{ Courses []langCourse }
	var tr struct{ Courses []bctgRule }
	var sfu struct{ Data []sfuOutline }
	for name, v := range map[string]any{"langara/catalogue.json": &cat, "langara/transfers.json": &tr, "sfu/outlines.json": &sfu} {
		if err := read(name, v); err != nil {
			return nil, err
		}
	}
	d.catalogue, d.rules, d.outlines = cat.Courses, tr.Courses, sfu.Data
	for _, t := range []struct{ file, term string }{{"202310", "Spring 2023"}, {"202320", "Summer 2023"}, {"202330", "Fall 2023"}} {
		var secs struct{ Courses []langSection }
		if err := read("langara/"+t.file+".json", &secs); err != nil {
			return nil, err
		}
		for _, s := range secs.Courses {
			s.term = t.term
			d.sections = append(d.sections, s)
		}
	}
	return d, nil
})

// courseDataOrSkip is the shared data, or skips the benchmark loudly when
// it is not there.
func courseDataOrSkip(b *testing.B) *courseData {
	b.Helper()
	d, err := loadCourseData()
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("SKIPPED: the BC course data is not in %s (a fresh clone has no ../shared/data; set NEXUS_SHARED_DATA): %v", sharedDataDir(), err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// genStats says what a generated vault holds.
type genStats struct {
	kinds map[string]int // notes of each kind
	notes int
	bytes int64
	// codes are the course codes of the course notes, in order;
	// subjects their subjects (lower case), sorted.
	codes, subjects []string
	// paths are the notes' vault paths, in order of kind.
	paths []string
}

func (g genStats) String() string {
	var parts []string
	for _, k := range []string{"course-lang", "course-sfu", "transfer", "section", "offering"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, g.kinds[k]))
	}
	return fmt.Sprintf("%d notes (%s), %.1f MB", g.notes, strings.Join(parts, ", "), float64(g.bytes)/(1<<20))
}

// genNote is a note to write.
type genNote struct{ path, text string }

// sfuCode matches an SFU course code in text ("CMPT 120", "MATH 151W").
var sfuCode = regexp.MustCompile(`\b([A-Z]{2,4}) ?(\d{3}[A-Z]?)\b`)

// safeName makes s usable in a file name.
var safeName = strings.NewReplacer("/", "-", ":", "-", "\\", "-", "*", "", "?", "", "\"", "", "<", "", ">", "", "|", "", "#", "", "^", "", "[", "(", "]", ")")

// yq quotes a YAML scalar (JSON's double-quoted strings are YAML's).
func yq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// pick takes k of items evenly spaced (all of them when k >= len).
func pick[T any](items []T, k int) []T {
	if k >= len(items) {
		return items
	}
	out := make([]T, 0, k)
	for i := range k {
		out = append(out, items[i*len(items)/k])
	}
	return out
}

// generateVault writes a vault of (at most) n notes into dir and says what
// it holds: every course note first, then transfer rules, then sections
// and offerings, each kind taken evenly over its records when it does not
// fit whole.
func generateVault(tb testing.TB, d *courseData, dir string, n int) genStats {
	tb.Helper()
	st := genStats{kinds: map[string]int{}}
	lang := map[string]*langCourse{}
	for i := range d.catalogue {
		c := &d.catalogue[i]
		lang[fmt.Sprintf("%s %d", c.Subject, c.CourseCode)] = c
	}
	sfu := map[string]bool{}
	for _, o := range d.outlines {
		sfu[o.Dept+" "+o.Number] = true
	}
	sections := map[string][]langSection{}
	for _, s := range d.sections {
		k := fmt.Sprintf("%s %d", s.Subject, s.CourseCode)
		sections[k] = append(sections[k], s)
	}
	linkSFU := func(text string) string {
		return sfuCode.ReplaceAllStringFunc(text, func(m string) string {
			sm := sfuCode.FindStringSubmatch(m)
			if code := sm[1] + " " + sm[2]; sfu[code] {
				return "[[" + code + "]]"
			}
			return m
		})
	}

	var courses, rules, secs, offers []genNote
	subjects := map[string]bool{}
	for _, c := range d.catalogue {
		code := fmt.Sprintf("%s %d", c.Subject, c.CourseCode)
		subjects[strings.ToLower(c.Subject)] = true
		var b strings.Builder
		fmt.Fprintf(&b, "---\ninstitution: LANG\nsubject: %s\nnumber: %d\ntitle: %s\ncredits: %s\n", c.Subject, c.CourseCode, yq(c.Title), fmtNum(c.Credits))
		fmt.Fprintf(&b, "hours: %s\ntags: [course/%s, institution/lang]\n---\n", yq(fmt.Sprintf("lecture %s, seminar %s, lab %s", fmtNum(c.Hours.Lecture), fmtNum(c.Hours.Seminar), fmtNum(c.Hours.Lab))), strings.ToLower(c.Subject))
		fmt.Fprintf(&b, "# %s: %s\n\n%s\n", code, c.Title, strings.TrimSpace(c.Description))
		if ss := sections[code]; len(ss) > 0 {
			b.WriteString("\n## Sections in 2023\n\n")
			for _, s := range ss {
				fmt.Fprintf(&b, "- %s %s (CRN %d)%s\n", s.term, s.Section, s.CRN, scheduleLine(s))
			}
		}
		courses = append(courses, genNote{"Courses/LANG/" + safeName.Replace(code) + ".md", b.String()})
	}
	for _, o := range d.outlines {
		code := o.Dept + " " + o.Number
		subjects[strings.ToLower(o.Dept)] = true
		var b strings.Builder
		fmt.Fprintf(&b, "---\ninstitution: SFU\nsubject: %s\nnumber: %s\ntitle: %s\ncredits: %s\n", o.Dept, yq(o.Number), yq(o.Title), yq(o.Units))
		if o.Designation != "" {
			fmt.Fprintf(&b, "designation: %s\n", yq(o.Designation))
		}
		fmt.Fprintf(&b, "tags: [course/%s, institution/sfu]\n---\n", strings.ToLower(o.Dept))
		fmt.Fprintf(&b, "# %s: %s\n\n%s\n", code, o.Title, strings.TrimSpace(o.Description))
		for _, part := range []struct{ head, text string }{{"Notes", o.Notes}, {"Prerequisites", o.Prerequisites}, {"Corequisites", o.Corequisites}} {
			if t := strings.TrimSpace(part.text); t != "" {
				fmt.Fprintf(&b, "\n## %s\n\n%s\n", part.head, linkSFU(t))
			}
		}
		if len(o.Offerings) > 0 {
			b.WriteString("\n## Offerings\n\n")
			for _, off := range o.Offerings {
				fmt.Fprintf(&b, "- %s: %s\n", off.Term, strings.Join(off.Instructors, ", "))
			}
		}
		courses = append(courses, genNote{"Courses/SFU/" + safeName.Replace(code) + ".md", b.String()})
		for _, off := range o.Offerings {
			var ob strings.Builder
			fmt.Fprintf(&ob, "---\ninstitution: SFU\ncourse: %s\nterm: %s\ninstructors: %s\ntags: [offering, course/%s]\n---\n", yq(code), yq(off.Term), yq(strings.Join(off.Instructors, ", ")), strings.ToLower(o.Dept))
			fmt.Fprintf(&ob, "# %s in %s\n\n[[%s]] (%s) is offered in %s", code, off.Term, code, o.Title, off.Term)
			if len(off.Instructors) > 0 {
				fmt.Fprintf(&ob, ", taught by %s", strings.Join(off.Instructors, ", "))
			}
			fmt.Fprintf(&ob, ".\n\n%s\n", firstSentence(o.Description))
			offers = append(offers, genNote{"Offerings/SFU/" + safeName.Replace(off.Term) + "/" + safeName.Replace(code) + ".md", ob.String()})
		}
	}
	for _, s := range d.sections {
		code := fmt.Sprintf("%s %d", s.Subject, s.CourseCode)
		var b strings.Builder
		fmt.Fprintf(&b, "---\ninstitution: LANG\ncourse: %s\nterm: %s\nsection: %s\ncrn: %d\ncredits: %s\ntags: [section, course/%s]\n---\n", yq(code), yq(s.term), yq(s.Section), s.CRN, fmtNum(s.Credits), strings.ToLower(s.Subject))
		fmt.Fprintf(&b, "# %s %s, %s\n\n[[%s]] (%s), section %s, CRN %d%s.\n", code, s.Section, s.term, code, s.Title, s.Section, s.CRN, scheduleLine(s))
		if t := strings.TrimSpace(s.Notes); t != "" {
			fmt.Fprintf(&b, "\n%s\n", t)
		}
		secs = append(secs, genNote{"Sections/" + safeName.Replace(s.term) + "/" + safeName.Replace(code+" "+s.Section) + ".md", b.String()})
	}
	seen := map[string]int{}
	for _, r := range d.rules {
		num := strings.Trim(string(r.CourseCode), `"`)
		code := r.Subject + " " + num
		title := "a course no longer in the catalogue"
		if c := lang[code]; c != nil {
			title = c.Title
		}
		status := "active"
		if r.EffectiveEnd != "present" {
			status = "expired"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\nfrom: %s\nto: %s\ncourse: %s\ncredit: %s\neffective: %s\nstatus: %s\n", r.Source, r.Destination, yq(code), yq(r.Credit), yq(r.EffectiveStart+" to "+r.EffectiveEnd), status)
		fmt.Fprintf(&b, "tags: [transfer/%s, course/%s]\n---\n", strings.ToLower(r.Destination), strings.ToLower(r.Subject))
		fmt.Fprintf(&b, "# %s %s to %s\n\n[[%s]] (%s) transfers from %s to %s as: %s\n\n", r.Source, code, r.Destination, code, title, r.Source, r.Destination, r.Credit)
		if r.Destination == "SFU" {
			fmt.Fprintf(&b, "At SFU: %s\n\n", linkSFU(r.Credit))
		}
		fmt.Fprintf(&b, "Effective %s to %s. Source: BC Transfer Guide (bctransferguide.ca).\n", r.EffectiveStart, r.EffectiveEnd)
		name := fmt.Sprintf("Transfers/%s to %s/%s (%s)", r.Source, r.Destination, safeName.Replace(code), safeName.Replace(r.EffectiveStart))
		if seen[name]++; seen[name] > 1 {
			name += fmt.Sprintf(" %d", seen[name])
		}
		rules = append(rules, genNote{name + ".md", b.String()})
	}

	var out []genNote
	kinds := []string{"course", "transfer", "section", "offering"}
	for i, all := range [][]genNote{courses, rules, secs, offers} {
		room := n - len(out)
		if room <= 0 {
			break
		}
		took := pick(all, room)
		out = append(out, took...)
		if i == 0 {
			lang := 0
			for _, g := range took {
				if strings.HasPrefix(g.path, "Courses/LANG/") {
					lang++
				}
			}
			st.kinds["course-lang"], st.kinds["course-sfu"] = lang, len(took)-lang
			continue
		}
		st.kinds[kinds[i]] = len(took)
	}
	made := map[string]bool{}
	for _, g := range out {
		full := filepath.Join(dir, filepath.FromSlash(g.path))
		if d := filepath.Dir(full); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				tb.Fatal(err)
			}
			made[d] = true
		}
		if err := os.WriteFile(full, []byte(g.text), 0o644); err != nil {
			tb.Fatal(err)
		}
		st.bytes += int64(len(g.text))
		st.paths = append(st.paths, g.path)
		if strings.HasPrefix(g.path, "Courses/") {
			st.codes = append(st.codes, strings.TrimSuffix(filepath.Base(g.path), ".md"))
		}
	}
	st.notes = len(out)
	for s := range subjects {
		st.subjects = append(st.subjects, s)
	}
	slices.Sort(st.subjects)
	return st
}

// scheduleLine is a section's meetings, as ": Lecture M------ 1430-1720
// A167 (Instructor); ...".
func scheduleLine(s langSection) string {
	var parts []string
	for _, m := range s.Schedule {
		if m.Type == "" {
			continue
		}
		p := strings.TrimSpace(strings.Join([]string{m.Type, m.Days, m.Time, m.Room}, " "))
		if m.Instructor != "" && m.Instructor != "TBA" {
			p += " (" + m.Instructor + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// firstSentence is text up to its first ". ".
func firstSentence(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1]
	}
	return text
}

// TestGenerateVault: the generator is deterministic, every note parses
// with its tags, and the transfer rules' links reach the course notes.
func TestGenerateVault(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two vaults of 6,000 notes")
	}
	d, err := loadCourseData()
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("SKIPPED: the BC course data is not in %s (set NEXUS_SHARED_DATA): %v", sharedDataDir(), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	const n = 6000
	a, b := t.TempDir(), t.TempDir()
	st := generateVault(t, d, a, n)
	if generateVault(t, d, b, n); !slices.Equal(snapshotPaths(t, a), snapshotPaths(t, b)) {
		t.Fatal("two generations differ in their files")
	}
	for _, p := range st.paths {
		x, _ := os.ReadFile(filepath.Join(a, filepath.FromSlash(p)))
		y, _ := os.ReadFile(filepath.Join(b, filepath.FromSlash(p)))
		if string(x) != string(y) {
			t.Fatalf("two generations differ in %s", p)
		}
	}
	if st.notes != n || st.kinds["transfer"] == 0 {
		t.Fatalf("generated %v", st)
	}
	v, err := Open("gen", a, true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	l := newLibrary(v, slog.New(slog.DiscardHandler))
	if err := l.build(t.Context()); err != nil {
		t.Fatal(err)
	}
	linked, rules := 0, 0
	for _, p := range st.paths {
		doc, ok := l.ix.Get(p)
		if !ok || len(doc.Tags) < 2 || len(doc.Properties) < 4 {
			t.Fatalf("%s indexed as %+v", p, doc)
		}
		if strings.HasPrefix(p, "Transfers/") {
			rules++
			if out, _ := l.graph(p); len(out) > 0 && strings.HasPrefix(out[0], "Courses/LANG/") {
				linked++
			}
		}
	}
	t.Logf("%v; %d of %d transfer rules link to their Langara course note", st, linked, rules)
	if linked < rules*9/10 {
		t.Errorf("only %d of %d transfer rules link to their course note", linked, rules)
	}
	for _, p := range []string{st.paths[100], st.paths[2000], st.paths[len(st.paths)-7]} {
		b, _ := os.ReadFile(filepath.Join(a, filepath.FromSlash(p)))
		t.Logf("%s:\n%s", p, b)
	}
}

// snapshotPaths are the files under dir, sorted.
func snapshotPaths(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}
