package substrate

import (
	"maps"
	"testing"
)

func TestCountTermsMatchesTokens(t *testing.T) {
	for _, text := range []string{
		"Langara CPSC 1150 transfers to SFU as CMPT 120.",
		"Études françaises: l'ÉTÉ à Montréal, 3.12 cafés",
		"", "   ", "policies POLICY policy's ss glass",
	} {
		terms := map[string]float64{}
		for _, tok := range tokens(text) {
			terms[scoreKey(tok)] = 1
		}
		want := map[string]int{}
		for _, tok := range tokens(text) {
			want[scoreKey(tok)]++
		}
		got := map[string]int{}
		n, _ := countTerms(text, terms, got, nil)
		if n != len(tokens(text)) || !maps.Equal(got, want) {
			t.Errorf("%q: countTerms = %d %v, want %d %v", text, n, got, len(tokens(text)), want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	got := queryTerms(`Does "Langara" CPSC-1150 transfer to SFU? OR NOT* (x`)
	want := []string{"langara", "cpsc", "1150", "transfer", "sfu", "not", "x"}
	if len(got) != len(want) {
		t.Fatalf("queryTerms = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("queryTerms = %v, want %v", got, want)
		}
	}
}
