package tension

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// update rewrites testdata/golden.json with the detector's current output:
// only for a deliberate change of behaviour, whose diff is then reviewed.
var update = flag.Bool("update", false, "rewrite testdata/golden.json")

// goldenInput is one belief of testdata/golden.json. The confidence is a
// string so that NaN round-trips.
type goldenInput struct {
	Content    string     `json:"content"`
	DomainPath []string   `json:"domain_path,omitempty"`
	Entities   []string   `json:"entities,omitempty"`
	ValidFrom  *time.Time `json:"valid_from,omitempty"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	Confidence string     `json:"confidence"`
}

func (g goldenInput) input(t *testing.T) Input {
	t.Helper()
	c, err := strconv.ParseFloat(g.Confidence, 64)
	if err != nil {
		t.Fatalf("confidence %q: %v", g.Confidence, err)
	}
	return Input{Content: g.Content, DomainPath: g.DomainPath, Entities: g.Entities,
		ValidFrom: g.ValidFrom, ValidUntil: g.ValidUntil, Confidence: c}
}

// goldenRecord is the detector's output for one pair, recorded before the
// detector moved out of internal/substrate (issue 8).
type goldenRecord struct {
	ID       string      `json:"id"`
	A        goldenInput `json:"a"`
	B        goldenInput `json:"b"`
	Tension  bool        `json:"tension"`
	Type     string      `json:"type,omitempty"`
	Severity string      `json:"severity,omitempty"`
	Reason   string      `json:"reason,omitempty"`
}

// TestGolden checks that the detector reproduces, exactly, its recorded
// output for every labelled pair and every synthetic rule and severity case.
// The file was first recorded from internal/substrate's detector before the
// refactor (issue 8), which reproduced it exactly; later deliberate changes
// of behaviour regenerate it with -update, and the diff shows what changed.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []goldenRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatalf("golden.json: %v", err)
	}
	if len(recs) < 300 {
		t.Fatalf("golden.json has %d records, want the labelled set and the synthetic cases", len(recs))
	}
	changed := 0
	for i, r := range recs {
		got, ok := Detect(r.A.input(t), r.B.input(t))
		if *update {
			if ok != r.Tension || got.Type != r.Type || got.Severity != r.Severity || got.Reason != r.Reason {
				changed++
				t.Logf("%s: %q vs %q: %v %s %q -> %v %s %q", r.ID, r.A.Content, r.B.Content, r.Tension, r.Type, r.Reason, ok, got.Type, got.Reason)
			}
			recs[i].Tension, recs[i].Type, recs[i].Severity, recs[i].Reason = ok, got.Type, got.Severity, got.Reason
			continue
		}
		if ok != r.Tension || got.Type != r.Type || got.Severity != r.Severity || got.Reason != r.Reason {
			t.Errorf("%s: %q vs %q\n got  %v %s/%s %q\n want %v %s/%s %q", r.ID, r.A.Content, r.B.Content,
				ok, got.Type, got.Severity, got.Reason, r.Tension, r.Type, r.Severity, r.Reason)
		}
	}
	if *update {
		data, err := json.MarshalIndent(recs, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "golden.json"), append(data, '\n'), 0o644); err != nil {
			t.Fatalf("write golden.json: %v", err)
		}
		t.Logf("golden.json rewritten: %d records changed", changed)
	}
}
