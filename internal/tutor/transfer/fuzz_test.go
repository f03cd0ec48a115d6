package transfer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// FuzzParse checks the parser on any credit text: it never panics, keeps
// the text verbatim, and a Parsed rule has a source group and, when it
// grants credit, a non-empty target set; its notes keep their text from
// the conditions and name what they offer or preclude, and Review only
// lowers its confidence. Seeds are one real credit text
// of each shape in the excerpt of transfers.json the repository keeps
// (testdata/excerpt: no shared data needed) plus a few broken ones.
func FuzzParse(f *testing.F) {
	_, real := loadReal(f, testtools.Excerpt(f))
	seen := map[string]bool{}
	for _, r := range real {
		if s := shape(r.Raw); !seen[s] {
			seen[s] = true
			f.Add(r.Raw, "May/03", "present")
		}
	}
	for _, s := range []string{"", "=", "&", " or ", "Any 0 of", "Any 9 of LANG CPSC 1150 (3) = SFU CMPT 120 (3)",
		"SFU CMPT 120 (", "SFU CMPT 120 (3), or", "LANG X 1 (3) = ", "SFU CA 1XX (3), B-", "Exemption", "UBCV CPSC 1st (3), Exempt"} {
		f.Add(s, "Jan/99", "Dec/49")
	}
	dir := catalog.NewDirectory()
	f.Fuzz(func(t *testing.T, credit, start, end string) {
		r := Parse(Row{Subject: "CPSC", CourseCode: 1150, Source: "LANG", Destination: "SFU", Credit: credit, EffectiveStart: start, EffectiveEnd: end}, dir)
		if r.Raw != credit {
			t.Fatalf("Raw %q, want the credit text %q", r.Raw, credit)
		}
		if r.Confidence < 0 || r.Confidence > 1 {
			t.Fatalf("confidence %v out of [0, 1]", r.Confidence)
		}
		if !r.Parsed {
			if r.ParseProblem == "" || r.Confidence != 0 {
				t.Fatalf("unparsed %q: problem %q, confidence %v", credit, r.ParseProblem, r.Confidence)
			}
			return
		}
		if len(r.Source) == 0 {
			t.Fatalf("parsed %q without a source group", credit)
		}
		for _, g := range r.Source {
			if len(g.Courses) == 0 || g.N < 1 || g.N > len(g.Courses) {
				t.Fatalf("parsed %q: group %+v", credit, g)
			}
		}
		if r.Outcome == OutcomeCredit || r.Outcome == OutcomeExemption {
			if len(r.Targets) == 0 {
				t.Fatalf("parsed %q: %s without a target set", credit, r.Outcome)
			}
			for _, s := range r.Targets {
				if len(s.Targets) == 0 {
					t.Fatalf("parsed %q: empty target set", credit)
				}
			}
		}
		for _, n := range r.Notes {
			if len(r.Conditions) != 1 || !strings.Contains(r.Conditions[0], n.Text) {
				t.Fatalf("note text %q of %q is not in the conditions %q", n.Text, credit, r.Conditions)
			}
			if (n.Kind == NoteAlternative || n.Kind == NoteConditional && !n.AppliesToMain) && (n.Targets == nil || len(n.Targets.Targets) == 0) {
				t.Fatalf("note %+v of %q offers no target", n, credit)
			}
			if n.Kind == NotePreclusion && len(n.OnlyOneOf)+len(n.Precludes) == 0 {
				t.Fatalf("preclusion %+v of %q names no course", n, credit)
			}
		}
		reviewed := []Rule{r}
		Review(reviewed, func(catalog.Ref) (float64, bool) { return 3, true })
		if c := reviewed[0].Confidence; c < 0 || c > r.Confidence {
			t.Fatalf("reviewed confidence %v of %q: out of [0, %v]", c, credit, r.Confidence)
		}
		if utf8.ValidString(credit) {
			for _, c := range r.Conditions {
				if !utf8.ValidString(c) {
					t.Fatalf("condition %q of valid text %q is not valid UTF-8", c, credit)
				}
			}
		}
	})
}
