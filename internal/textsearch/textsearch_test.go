package textsearch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestCountMatchesTokens(t *testing.T) {
	for _, text := range []string{
		"Langara CPSC 1150 transfers to SFU as CMPT 120.",
		"Études françaises: l'ÉTÉ à Montréal, 3.12 cafés",
		"", "   ", "policies POLICY policy's ss glass",
	} {
		m := newMatcher(Tokens(text))
		for _, k := range m.key {
			m.idf[k] = 1
		}
		want := map[string]int{}
		for _, tok := range Tokens(text) {
			want[Stem(tok)]++
		}
		got := map[string]int{}
		n, _ := m.count(text, got, nil)
		if n != len(Tokens(text)) || !maps.Equal(got, want) {
			t.Errorf("%q: count = %d %v, want %d %v", text, n, got, len(Tokens(text)), want)
		}
	}
}

// TestBM25CountsStems: a text scores for a term through any word of its
// stem, as the full-text index selected it ("played" for "play",
// "painting" for "paintings"), and not through a word that only starts
// like it.
func TestBM25CountsStems(t *testing.T) {
	texts := []string{"Melanie played with her kids", "She showed her painting", "a plain sentence", "playground and painter"}
	df := map[string]int{"play": 2, "paintings": 2}
	got := BM25(texts, []string{"play", "paintings"}, df, 10)
	if got[0] <= 0 || got[1] <= 0 {
		t.Errorf("stems not counted: %v", got)
	}
	if got[2] != 0 || got[3] != 0 {
		t.Errorf("words that only share a prefix counted: %v", got)
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

// TestStatsStaleWhenCorpusGrows: a statistic read when the corpus was less
// than half its present size is read again (in the background) even within
// its TTL; one read at a similar size is kept.
func TestStatsStaleWhenCorpusGrows(t *testing.T) {
	s := NewStats(time.Hour, 100, nil)
	ctx := context.Background()
	var calls atomic.Int32
	value := atomic.Int32{}
	value.Store(3)
	fetch := func(context.Context) (int, error) { calls.Add(1); return int(value.Load()), nil }
	s.Observe(1000)
	if v, _ := s.Get(ctx, "df:x", fetch, fetch); v != 3 {
		t.Fatalf("first read: %d", v)
	}
	value.Store(40)
	s.Observe(1900) // under twice: kept
	if v, _ := s.Get(ctx, "df:x", fetch, fetch); v != 3 || calls.Load() != 1 {
		t.Fatalf("at 1,900: %d after %d reads, want the cached 3 after 1", v, calls.Load())
	}
	s.Observe(2500) // over twice: returned once more, refreshed behind
	s.Get(ctx, "df:x", fetch, fetch)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if v, _ := s.Get(ctx, "df:x", fetch, fetch); v == 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statistic read at 1,000 was not refreshed at 2,500")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStatsKeepsTermsInUseWhenFull: a cache fuller than Max drops the terms
// not used since its older generation began, not the ones in use: a term
// read once per round, with many other terms read once each between,
// is counted once (before, the whole cache was cleared when full, and
// every term was counted again).
func TestStatsKeepsTermsInUseWhenFull(t *testing.T) {
	s := NewStats(time.Hour, 10, nil)
	ctx := context.Background()
	counted := map[string]int{}
	fetch := func(key string) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { counted[key]++; return 7, nil }
	}
	for round := range 20 {
		for _, key := range []string{"df:course", "df:transfer"} {
			if v, err := s.Get(ctx, key, fetch(key), fetch(key)); err != nil || v != 7 {
				t.Fatalf("%s: %d, %v", key, v, err)
			}
		}
		for i := range 6 {
			key := fmt.Sprintf("df:rare%d-%d", round, i)
			s.Get(ctx, key, fetch(key), fetch(key))
		}
	}
	if counted["df:course"] != 1 || counted["df:transfer"] != 1 {
		t.Errorf("terms in use were counted %d and %d times, want once each", counted["df:course"], counted["df:transfer"])
	}
	s.mu.Lock()
	held := len(s.m) + len(s.old)
	s.mu.Unlock()
	if held > 2*10 {
		t.Errorf("the cache holds %d entries, over two generations of 10", held)
	}
}

// TestBM25Coverage: coverage is the share of the query's IDF a text's
// matching terms carry; BM25 is unchanged by it.
func TestBM25Coverage(t *testing.T) {
	texts := []string{"gina gina gina said so", "the store opened", "gina opened the store", "nothing here"}
	df := map[string]int{"gina": 50, "store": 2}
	scores, cov := BM25Coverage(texts, []string{"gina", "store"}, df, 100)
	if !(cov[2] > 0.99 && cov[1] > cov[0] && cov[0] > 0 && cov[3] == 0) {
		t.Errorf("coverage %v: want full for both terms, more for the rare term than the common one, none for neither", cov)
	}
	if plain := BM25(texts, []string{"gina", "store"}, df, 100); !slices.Equal(plain, scores) {
		t.Errorf("BM25 %v, BM25Coverage's scores %v", plain, scores)
	}
}
