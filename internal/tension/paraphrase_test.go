package tension

import "testing"

// paraphraseSet is the blind block of paraphrased pairs (issue 8), written
// without reading the detector: the same attribute in other words, number
// words against digits, units, exclusive values, "only", "never" against a
// time, reversed preferences, permission words; half near-miss negatives.
const paraphraseSet = "paraphrase_pairs.json"

// TestParaphraseSet measures the detector on the paraphrase block, per rule
// and per kind.
func TestParaphraseSet(t *testing.T) {
	pairs := loadPairs(t, paraphraseSet)
	s := score(pairs)
	for _, f := range s.failures {
		t.Log(f)
	}
	t.Logf("%s:\n%s", paraphraseSet, s.table())
}
