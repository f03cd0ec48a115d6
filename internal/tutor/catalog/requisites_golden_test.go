package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// The requisite golden set (issue 22): 50 real requisite texts of the
// shared data, Langara and SFU, chosen for variety, each with the tree an
// advisor reads from it, written by hand in Expr.String's compact form.
// testdata/requisites_golden.json is an excerpt: the test needs no
// shared data.

// goldenFloor is the share of the golden set that must be read right.
const goldenFloor = 0.95

// requisiteGolden is one entry of testdata/requisites_golden.json.
type requisiteGolden struct {
	Institution string `json:"institution"`
	Course      string `json:"course"`
	// Field is the text's field: "prerequisites" or "corequisites".
	Field string `json:"field"`
	Text  string `json:"text"`
	// Expr is the expected requirement in compact form; "" for none.
	Expr string `json:"expr"`
	// Corequisites is the expected corequisite tree of a prerequisite
	// text's own "Corequisite:" sentence.
	Corequisites string   `json:"corequisites,omitempty"`
	Recommended  []string `json:"recommended,omitempty"`
	// Why says what the entry tests, when it is not plain.
	Why string `json:"why,omitempty"`
}

func loadRequisiteGolden(t testing.TB) []requisiteGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requisites_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gs []requisiteGolden
	if err := json.Unmarshal(b, &gs); err != nil {
		t.Fatal(err)
	}
	return gs
}

// TestRequisitesGolden reads every text of the golden set and compares
// its tree with the one written by hand; it prints the share right and
// each wrong tree, and fails when the share is under goldenFloor.
//
// Trees are compared by structure: the children of all, any and n_of in
// any order, nested groups of one operator flattened; course nodes by
// code, minimum grade and concurrency. A condition that is not a course
// is written as a few of its words, which the reading's text for it must
// hold; a group of such conditions without a course may be read as one
// text holding all their words ("a minimum "C+" in Precalculus 12 and a
// minimum "C-" grade in Calculus 12"), since the text is then shown as
// is. Corequisite sentences and recommendations must match too.
func TestRequisitesGolden(t *testing.T) {
	gs := loadRequisiteGolden(t)
	if len(gs) != 50 {
		t.Errorf("%d golden texts, want 50", len(gs))
	}
	right := 0
	for _, g := range gs {
		if why := goldenWrong(g); why != "" {
			t.Logf("WRONG %s %s: %s\n  text: %s\n  %s", g.Institution, g.Course, g.Field, g.Text, why)
			continue
		}
		right++
	}
	share := float64(right) / float64(len(gs))
	t.Logf("requisite golden set: %d of %d trees right (%.0f%%)", right, len(gs), 100*share)
	if share < goldenFloor {
		t.Errorf("share %.2f under %.2f", share, goldenFloor)
	}
}

// goldenWrong says how the reading of g's text differs from g, "" when
// it does not.
func goldenWrong(g requisiteGolden) string {
	r := ParseRequisites(g.Institution, g.Text)
	var diffs []string
	if r.Text != g.Text {
		diffs = append(diffs, "text not kept")
	}
	for _, c := range []struct {
		name, want string
		got        *Expr
	}{{"expr", g.Expr, r.Expr}, {"corequisites", g.Corequisites, r.Corequisites}} {
		want, err := parseCompact(c.want)
		if err != nil {
			return fmt.Sprintf("golden %s %q: %v", c.name, c.want, err)
		}
		if !sameTree(want, c.got) {
			diffs = append(diffs, fmt.Sprintf("%s:\n    got  %s\n    want %s", c.name, c.got, want))
		}
	}
	got := codes(r.Recommended)
	want := slices.Clone(g.Recommended)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		diffs = append(diffs, fmt.Sprintf("recommended %v, want %v", got, want))
	}
	return strings.Join(diffs, "\n  ")
}

// sameTree compares a hand-written tree with a reading (see
// TestRequisitesGolden).
func sameTree(want, got *Expr) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	w, g := canonical(*want), canonical(*got)
	return treeMatch(&w, &g)
}

// canonical flattens nested groups of one operator and replaces a group
// of one child by the child.
func canonical(e Expr) Expr {
	if e.Op != OpAll && e.Op != OpAny && e.Op != OpNOf {
		return e
	}
	var kids []Expr
	for _, k := range e.Children {
		k = canonical(k)
		if k.Op == e.Op && e.Op != OpNOf {
			kids = append(kids, k.Children...)
		} else {
			kids = append(kids, k)
		}
	}
	if len(kids) == 1 && e.Op != OpNOf {
		return kids[0]
	}
	e.Children = kids
	return e
}

func treeMatch(w, g *Expr) bool {
	if g.Op == OpOther && len(w.Courses()) == 0 {
		// A condition, or a group of conditions read as one text.
		words := textWords(g.Text)
		ok := true
		w.Walk(func(n *Expr) {
			if n.Op == OpOther {
				for _, kw := range textWords(n.Text) {
					if !slices.Contains(words, kw) {
						ok = false
					}
				}
			}
		})
		return ok
	}
	if w.Op != g.Op {
		return false
	}
	switch w.Op {
	case OpCourse:
		return w.Course.Code() == g.Course.Code() && w.MinGrade == g.MinGrade && w.Concurrent == g.Concurrent
	case OpOther:
		return false // a course-free want is handled above
	case OpNOf:
		if w.N != g.N {
			return false
		}
	}
	if len(w.Children) != len(g.Children) {
		return false
	}
	used := make([]bool, len(g.Children))
	var match func(i int) bool
	match = func(i int) bool {
		if i == len(w.Children) {
			return true
		}
		for j := range g.Children {
			if !used[j] && treeMatch(&w.Children[i], &g.Children[j]) {
				used[j] = true
				if match(i + 1) {
					return true
				}
				used[j] = false
			}
		}
		return false
	}
	return match(0)
}

// textWords are the lower-case words of s: letters, digits and the signs
// of grades and percentages.
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '%')
	})
}

// parseCompact reads Expr.String's compact form: all(...), any(...),
// 2of(...), "quoted conditions" and courses "SUBJ 123[C-]~". The
// institution of the courses is left empty; "" is no tree.
func parseCompact(s string) (*Expr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	e, rest, err := compactNode(s)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("trailing %q", rest)
	}
	return &e, nil
}

func compactNode(s string) (Expr, string, error) {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return Expr{}, "", err
		}
		text, _ := strconv.Unquote(q)
		return other(text), s[len(q):], nil
	}
	if i := strings.IndexByte(s, '('); i > 0 && !strings.ContainsAny(s[:i], " ,)") {
		head := s[:i]
		e := Expr{}
		switch {
		case head == OpAll || head == OpAny:
			e.Op = head
		case strings.HasSuffix(head, "of"):
			n, err := strconv.Atoi(strings.TrimSuffix(head, "of"))
			if err != nil {
				return Expr{}, "", fmt.Errorf("bad group %q", head)
			}
			e.Op, e.N = OpNOf, n
		default:
			return Expr{}, "", fmt.Errorf("bad group %q", head)
		}
		rest := s[i+1:]
		for {
			k, r, err := compactNode(rest)
			if err != nil {
				return Expr{}, "", err
			}
			e.Children = append(e.Children, k)
			r = strings.TrimLeft(r, " ")
			switch {
			case strings.HasPrefix(r, ","):
				rest = r[1:]
			case strings.HasPrefix(r, ")"):
				return e, r[1:], nil
			default:
				return Expr{}, "", fmt.Errorf("unclosed group at %q", r)
			}
		}
	}
	end := strings.IndexAny(s, ",)")
	if end < 0 {
		end = len(s)
	}
	tok := strings.TrimSpace(s[:end])
	e := Expr{Op: OpCourse}
	if strings.HasSuffix(tok, "~") {
		e.Concurrent, tok = true, strings.TrimSuffix(tok, "~")
	}
	if i := strings.IndexByte(tok, '['); i > 0 && strings.HasSuffix(tok, "]") {
		e.MinGrade, tok = tok[i+1:len(tok)-1], tok[:i]
	}
	subject, number, ok := strings.Cut(tok, " ")
	if !ok || !subjRe().MatchString(subject) || !codeRe().MatchString(tok) {
		return Expr{}, "", fmt.Errorf("bad course %q", tok)
	}
	e.Course = &Ref{Subject: subject, Number: number}
	return e, s[end:], nil
}

// TestSameTree checks the golden comparison itself: it must be able to
// say no.
func TestSameTree(t *testing.T) {
	for _, c := range []struct {
		want, got string
		same      bool
	}{
		{"all(MATH 150, any(MATH 151, MATH 152))", "all(any(MATH 152, MATH 151), MATH 150)", true},
		{"all(MATH 150, MATH 151, MATH 152)", "all(MATH 150, all(MATH 151, MATH 152))", true},
		{"all(MATH 150, any(MATH 151, MATH 152))", "any(all(MATH 150, MATH 151), MATH 152)", false},
		{"MATH 150[C-]", "MATH 150", false},
		{"MATH 150~", "MATH 150", false},
		{"2of(ARCH 100, ARCH 101, ARCH 102)", "any(ARCH 100, ARCH 101, ARCH 102)", false},
		{"2of(ARCH 100, ARCH 101, ARCH 102)", "3of(ARCH 100, ARCH 101, ARCH 102)", false},
		{`any("LET 3", "LEAP 8", ENGL 1120)`, `all("LET 3", "LEAP 8", ENGL 1120)`, false},
		{`any("LET 3", "LEAP 8", ENGL 1120)`, `any("One of: LET 3", "LEAP 8", ENGL 1120)`, true},
		{`any("LET 3", "LEAP 8", ENGL 1120)`, `any("LET 4", "LEAP 8", ENGL 1120)`, false},
		{`all("Precalculus 12", "Calculus 12")`, `"a minimum C+ in Precalculus 12 and a minimum C- grade in Calculus 12"`, true},
		{`all("Precalculus 12", "Calculus 12")`, `"a minimum C+ in Precalculus 12"`, false},
		{`any(ARCH 100, "x")`, `"x and ARCH 100"`, false},
		{"", "ARCH 100", false},
		{"", "", true},
	} {
		w, err := parseCompact(c.want)
		if err != nil {
			t.Fatalf("%q: %v", c.want, err)
		}
		g, err := parseCompact(c.got)
		if err != nil {
			t.Fatalf("%q: %v", c.got, err)
		}
		if got := sameTree(w, g); got != c.same {
			t.Errorf("sameTree(%s, %s) = %v, want %v", c.want, c.got, got, c.same)
		}
	}
}

// TestRequisitesGoldenTextsAreReal checks that every text of the golden
// set is the text of its course and field in the shared data, word for
// word.
func TestRequisitesGoldenTextsAreReal(t *testing.T) {
	dir := testtools.SharedData(t)
	real := map[string]string{}
	for _, c := range langaraCatalogue(t, dir) {
		_, pre, co := ExtractLangara(c.Description)
		code := fmt.Sprintf("%s %d", c.Subject, c.Code)
		real["langara|"+code+"|prerequisites"] = pre
		real["langara|"+code+"|corequisites"] = co
	}
	for _, o := range sfuOutlines(t, dir) {
		code := strings.ToUpper(o.Dept) + " " + strings.ToUpper(o.Number)
		real["sfu|"+code+"|prerequisites"] = o.Prerequisites
		real["sfu|"+code+"|corequisites"] = o.Corequisites
	}
	for _, g := range loadRequisiteGolden(t) {
		if got, ok := real[g.Institution+"|"+g.Course+"|"+g.Field]; !ok || got != g.Text {
			t.Errorf("%s %s %s: the golden text is not the data's: %q", g.Institution, g.Course, g.Field, got)
		}
	}
}
