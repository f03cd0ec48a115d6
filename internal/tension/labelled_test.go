package tension

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// counts are confusion counts.
type counts struct{ tp, fp, fn, tn, typeOK int }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (c counts) precision() float64 { return ratio(c.tp, c.tp+c.fp) }
func (c counts) recall() float64    { return ratio(c.tp, c.tp+c.fn) }

// scored is the detector's verdict on a labelled block: overall, per
// deciding rule and per kind of pair.
type scored struct {
	all       counts
	positives int
	byRule    map[string]*counts // the rule or check that decided; "(none)" when none applied
	byKind    map[string]*counts
	failures  []string
}

// score runs the detector over pairs.
func score(pairs []labelledPair) scored {
	s := scored{byRule: map[string]*counts{}, byKind: map[string]*counts{}}
	get := func(m map[string]*counts, k string) *counts {
		if m[k] == nil {
			m[k] = &counts{}
		}
		return m[k]
	}
	for _, p := range pairs {
		got, rule, ok := decide(p.A.input(), p.B.input())
		if rule == "" {
			rule = "(none)"
		}
		if p.Tension {
			s.positives++
		}
		for _, c := range []*counts{&s.all, get(s.byRule, rule), get(s.byKind, p.Kind)} {
			switch {
			case ok && p.Tension:
				c.tp++
				if got.Type == p.Type {
					c.typeOK++
				}
			case ok:
				c.fp++
			case p.Tension:
				c.fn++
			default:
				c.tn++
			}
		}
		switch {
		case ok && !p.Tension:
			s.failures = append(s.failures, fmt.Sprintf("FP %s [%s] %s: %q vs %q", p.ID, p.Kind, got.Reason, p.A.Content, p.B.Content))
		case !ok && p.Tension:
			s.failures = append(s.failures, fmt.Sprintf("FN %s [%s] (%s; decided by %s): %q vs %q", p.ID, p.Kind, p.Type, rule, p.A.Content, p.B.Content))
		case ok && got.Type != p.Type:
			s.failures = append(s.failures, fmt.Sprintf("TYPE %s: got %s want %s: %s", p.ID, got.Type, p.Type, got.Reason))
		}
	}
	return s
}

// table renders the per-rule and per-kind figures as Markdown (the form
// docs/benchmarks.md quotes). For a finding rule, precision is over the
// pairs it fired on and "recall share" is its true positives over all
// positives of the block; for a veto, excuse or check, FN are the positives
// it suppressed and TN the negatives it correctly dismissed.
func (s scored) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "overall: pairs=%d positives=%d TP=%d FP=%d FN=%d TN=%d precision=%.3f recall=%.3f type_accuracy=%.3f\n\n",
		s.all.tp+s.all.fp+s.all.fn+s.all.tn, s.positives, s.all.tp, s.all.fp, s.all.fn, s.all.tn,
		s.all.precision(), s.all.recall(), ratio(s.all.typeOK, s.all.tp))
	b.WriteString("| rule | effect | TP | FP | precision | recall share | FN | TN |\n|---|---|---|---|---|---|---|---|\n")
	effects := map[string]string{"(none)": "-"}
	for _, r := range Rules() {
		effects[r.Name] = [...]string{"finds", "vetoes", "excuses"}[r.Effect]
		if c := s.byRule[r.Name]; c != nil {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %d | %d |\n", r.Name, effects[r.Name], c.tp, c.fp,
				fmtRatio(c.tp, c.tp+c.fp), fmtRatio(c.tp, s.positives), c.fn, c.tn)
		}
	}
	if c := s.byRule["(none)"]; c != nil {
		fmt.Fprintf(&b, "| (no rule) | - | 0 | 0 | - | - | %d | %d |\n", c.fn, c.tn)
	}
	kinds := make([]string, 0, len(s.byKind))
	for k := range s.byKind {
		if k != "" {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) > 0 {
		slices.Sort(kinds)
		b.WriteString("\n| kind | pairs | TP | FP | FN | TN | precision | recall |\n|---|---|---|---|---|---|---|---|\n")
		for _, k := range kinds {
			c := s.byKind[k]
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s | %s |\n", k, c.tp+c.fp+c.fn+c.tn, c.tp, c.fp, c.fn, c.tn,
				fmtRatio(c.tp, c.tp+c.fp), fmtRatio(c.tp, c.tp+c.fn))
		}
	}
	return b.String()
}

func fmtRatio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", ratio(a, b))
}

// Floors pinned from measurements (docs/benchmarks.md, "Tension detection
// (issue 8)"). Raise them when the detector improves; never lower them to
// pass.
const (
	// labelledPrecision and labelledRecall: 131/133 and 131/142 when the
	// detector moved out of internal/substrate; 132/134 and 132/142 after
	// the paraphrase rules ("every 6 hours" vs "once a day").
	labelledPrecision = 132.0 / 134
	labelledRecall    = 132.0 / 142
)

// TestLabelledSet measures the detector on the labelled set, per rule, and
// fails if precision or recall falls below the pinned floors.
func TestLabelledSet(t *testing.T) {
	pairs := loadPairs(t, labelledSet)
	if len(pairs) < minPairs {
		t.Fatalf("labelled set has %d pairs, want at least %d", len(pairs), minPairs)
	}
	seen := map[string]bool{}
	types := map[string]int{}
	for _, p := range pairs {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
		if p.Tension {
			if !validTypes[p.Type] {
				t.Errorf("%s: invalid label type %q", p.ID, p.Type)
			}
			types[p.Type]++
		}
	}
	for ty := range validTypes {
		if types[ty] == 0 {
			t.Errorf("labelled set has no %s positives", ty)
		}
	}
	s := score(pairs)
	for _, f := range s.failures {
		t.Log(f)
	}
	t.Logf("%s:\n%s", labelledSet, s.table())
	if p := s.all.precision(); p < labelledPrecision-1e-9 {
		t.Errorf("precision %.3f < %.3f", p, labelledPrecision)
	}
	if r := s.all.recall(); r < labelledRecall-1e-9 {
		t.Errorf("recall %.3f < %.3f", r, labelledRecall)
	}
}

// TestRealDataSampleLabels checks the hand-labelled real-data samples
// (testdata/realdata_sample_labels.json): every pair has a verdict and a
// reason, and each run's precision is its share of true tensions.
func TestRealDataSampleLabels(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "realdata_sample_labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Runs []struct {
			Name      string   `json:"name"`
			True      int      `json:"true"`
			Precision *float64 `json:"precision"`
			Pairs     []struct {
				A, B    string
				Tension *bool  `json:"tension"`
				Why     string `json:"why"`
			} `json:"pairs"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("realdata_sample_labels.json: %v", err)
	}
	if len(f.Runs) < 2 {
		t.Fatalf("want the runs before and after, have %d", len(f.Runs))
	}
	for _, r := range f.Runs {
		if len(r.Pairs) == 0 || len(r.Pairs) > 100 {
			t.Errorf("%s: %d pairs, want 1 to 100", r.Name, len(r.Pairs))
		}
		n := 0
		for i, p := range r.Pairs {
			if p.A == "" || p.B == "" || p.Tension == nil || p.Why == "" {
				t.Errorf("%s: pair %d lacks texts, a verdict or a reason", r.Name, i)
				continue
			}
			if *p.Tension {
				n++
			}
		}
		if n != r.True || r.Precision == nil || math.Abs(*r.Precision-float64(n)/float64(len(r.Pairs))) > 0.001 {
			t.Errorf("%s: %d true of %d, file says %d (precision %v)", r.Name, n, len(r.Pairs), r.True, r.Precision)
		}
	}
	t.Logf("before: %d/%d true, after: %d/%d true", f.Runs[0].True, len(f.Runs[0].Pairs), f.Runs[len(f.Runs)-1].True, len(f.Runs[len(f.Runs)-1].Pairs))
}
