package noteindex

import (
	"slices"
	"testing"
	"time"
)

func TestSlowDebug(t *testing.T) {
	docs, queries := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	type qt struct {
		q string
		d time.Duration
		n int
	}
	var out []qt
	for _, q := range queries {
		best := time.Hour
		var n int
		for range 3 {
			s := time.Now()
			r := ix.Search(Query{Text: q, IncludeContent: true})
			best = min(best, time.Since(s))
			n = r.Total
		}
		out = append(out, qt{q, best, n})
	}
	slices.SortFunc(out, func(a, b qt) int { return int(b.d - a.d) })
	for _, x := range out[:15] {
		pq := parseQuery(Query{Text: x.q})
		t.Logf("%v %q total %d phrase %v", x.d, x.q, x.n, len(pq.phrase))
	}
	t.Logf("median %v", out[len(out)/2].d)
}

func BenchmarkSlowQuery(b *testing.B) {
	docs, _ := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	b.ResetTimer()
	for b.Loop() {
		ix.Search(Query{Text: "cirfoujous tharho", IncludeContent: true})
	}
}

func TestMemDebug(t *testing.T) {
	docs, _ := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	np, capp, nt, seq, pairs := 0, 0, 0, 0, 0
	for _, tm := range ix.terms {
		np += len(tm.postings)
		capp += cap(tm.postings)
	}
	for _, n := range ix.notes {
		nt += cap(n.terms)
		seq += cap(n.seq)
		pairs += len(n.pairs)
	}
	t.Logf("terms %d postings %d cap %d (%.1f MB) noteterms %d seq %d (%.1f MB) pairs %.1f MB", len(ix.terms), np, capp, float64(capp*12)/1e6, nt, seq, float64(seq*4)/1e6, float64(pairs*8)/1e6)
}

func TestShowDebug(t *testing.T) {
	docs, queries := benchVault()
	ix := New()
	for _, d := range docs[:2000] {
		ix.Put(d)
	}
	for _, q := range append(queries[10:13], "#math/algebra status:draft", "Bril Grisva") {
		r := ix.Search(Query{Text: q, IncludeContent: true, Limit: 3, SnippetLength: 120})
		t.Logf("Q %q total %d", q, r.Total)
		for _, h := range r.Hits {
			t.Logf("  %.3f %s %s\n    %s\n    %+v", h.Score, h.Method, h.Path, h.Snippet, h.Lines)
		}
	}
}
