package textsearch

import (
	"math"
	"testing"
)

// TestBM25DocsIsBM25: scoring texts tokenized once gives BM25's scores,
// with plurals, keys that are themselves tokens, repeats, non-ASCII text
// and texts that match nothing.
func TestBM25DocsIsBM25(t *testing.T) {
	texts := []string{
		"Langara CPSC 1100 transfers to SFU as CMPT 120 (3 credits)",
		"Classes and class: the classes' studies study studies",
		"Über straße ÜBER Straße café CAFÉ",
		"nothing here matches",
		"credits credit CREDITS transfers transfer",
		"",
	}
	docs := make([]Doc, len(texts))
	for i, s := range texts {
		docs[i] = NewDoc(s)
	}
	for _, terms := range [][]string{
		{"transfers", "credits", "cmpt"},
		{"class", "classes", "studies"},
		{"über", "café"},
		{"missing"},
		{},
	} {
		df := map[string]int{}
		for i, t := range terms {
			df[t] = 3 * i
		}
		want := BM25(texts, terms, df, 1000)
		got := BM25Docs(docs, terms, df, 1000)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("terms %v, text %q: BM25Docs %v, BM25 %v", terms, texts[i], got[i], want[i])
			}
		}
	}
}
