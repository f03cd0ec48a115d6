package textsearch

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
		for _, tok := range Tokens(text) {
			terms[Key(tok)] = 1
		}
		want := map[string]int{}
		for _, tok := range Tokens(text) {
			want[Key(tok)]++
		}
		got := map[string]int{}
		n, _ := countTerms(text, terms, got, nil)
		if n != len(Tokens(text)) || !maps.Equal(got, want) {
			t.Errorf("%q: countTerms = %d %v, want %d %v", text, n, got, len(Tokens(text)), want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	got := Terms(`Does "Langara" CPSC-1150 transfer to SFU? OR NOT* (x`)
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
