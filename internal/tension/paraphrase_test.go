package tension

import "testing"

// paraphraseSet is the blind block of paraphrased pairs (issue 8), written
// without reading the detector: the same attribute in other words, number
// words against digits, units, exclusive values, "only", "never" against a
// time, reversed preferences, permission words; half near-miss negatives.
const paraphraseSet = "paraphrase_pairs.json"

// Floors on the paraphrase block, pinned from the figures after the
// paraphrase rules (docs/benchmarks.md, "Tension detection (issue 8)"); the
// blind figures, before any change for the block, were 2/2 and 2/58.
const (
	paraphrasePrecision = 30.0 / 30
	paraphraseRecall    = 30.0 / 58
	// minPrecision is the bar every block must clear.
	minPrecision = 0.9
)

// TestParaphraseSet measures the detector on the paraphrase block, per rule
// and per kind, and fails below the pinned floors.
func TestParaphraseSet(t *testing.T) {
	pairs := loadPairs(t, paraphraseSet)
	if len(pairs) < 120 {
		t.Fatalf("paraphrase block has %d pairs, want at least 120", len(pairs))
	}
	s := score(pairs)
	for _, f := range s.failures {
		t.Log(f)
	}
	t.Logf("%s:\n%s", paraphraseSet, s.table())
	if p := s.all.precision(); p < max(paraphrasePrecision, minPrecision)-1e-9 {
		t.Errorf("precision %.3f < %.3f", p, paraphrasePrecision)
	}
	if r := s.all.recall(); r < paraphraseRecall-1e-9 {
		t.Errorf("recall %.3f < %.3f", r, paraphraseRecall)
	}
}
