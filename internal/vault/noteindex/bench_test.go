package noteindex

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchVault is the benchmarks' vault: 10,000 notes of 300-word bodies,
// generated once.
var benchVault = sync.OnceValues(func() ([]Doc, []string) {
	g := newGenVault(1)
	return g.docs(10000, 300), g.queries(600)
})

// heapInUse is the heap's size after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkPut10000 indexes the 10,000 notes, and reports the index's heap
// size (its own: the notes' bodies, which the caller holds too, apart).
func BenchmarkPut10000(b *testing.B) {
	docs, _ := benchVault()
	bodies := 0
	for _, d := range docs {
		bodies += len(d.Body)
	}
	var heap uint64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		before := heapInUse()
		b.StartTimer()
		ix := New()
		for _, d := range docs {
			ix.Put(d)
		}
		b.StopTimer()
		heap = heapInUse() - before
		runtime.KeepAlive(ix)
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	b.ReportMetric(float64(bodies)/(1<<20), "bodies-MB")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(docs)), "µs/note")
}

// BenchmarkSearch10000 runs one-, two- and three-word queries on the
// 10,000 notes, with snippets, and reports the median and 99th percentile
// of a search's time.
func BenchmarkSearch10000(b *testing.B) {
	docs, queries := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	var times []time.Duration
	hits := 0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		start := time.Now()
		r := ix.Search(Query{Text: queries[i%len(queries)], IncludeContent: true})
		times = append(times, time.Since(start))
		hits += r.Total
		i++
	}
	slices.Sort(times)
	pct := func(p float64) float64 {
		return float64(times[min(int(p*float64(len(times))), len(times)-1)].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.5), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(hits)/float64(len(times)), "matched/query")
}

// BenchmarkSearchFilter10000 runs queries of filters only.
func BenchmarkSearchFilter10000(b *testing.B) {
	docs, _ := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	qs := []Query{{Text: "#math"}, {Text: "status:progress"}, {Paths: []string{"courses/"}}, {Paths: []string{"**/B*.md"}}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)])
		i++
	}
}

// BenchmarkReplace10000 puts a changed note into the index of 10,000.
func BenchmarkReplace10000(b *testing.B) {
	docs, _ := benchVault()
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d := docs[(i*7919)%len(docs)]
		d.Body += fmt.Sprint(" edited ", i)
		ix.Put(d)
		i++
	}
}

// BenchmarkFuzzyPaths ranks 10,000 paths.
func BenchmarkFuzzyPaths(b *testing.B) {
	docs, _ := benchVault()
	entries := make([]Entry, len(docs))
	for i, d := range docs {
		entries[i] = Entry{Path: d.Path}
	}
	b.ReportAllocs()
	for b.Loop() {
		FuzzyPaths("mathnot", entries, 10)
	}
}

// TestPhraseBonusMeasured measures the phrase bonus on a generated vault
// (go test -run PhraseBonusMeasured -v): for queries that are two words
// said together in a note's body, the share of the top 10 hits whose body
// says them together (precision of the phrase), and for queries that are
// two words of a note's title, how often that note still ranks first
// (against notes that say the words together in their bodies) — what the
// bonus gains and what it may cost, by its weight.
func TestPhraseBonusMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	g := newGenVault(3)
	docs := g.docs(3000, 300)
	ix := New()
	for _, d := range docs {
		ix.Put(d)
	}
	var phrases, titles []string
	for i := 0; len(phrases) < 200; i++ {
		words := strings.Fields(strings.NewReplacer(".", " ", "#", " ").Replace(docs[i*13%len(docs)].Body))
		j := (i * 31) % (len(words) - 1)
		phrases = append(phrases, words[j]+" "+words[j+1])
	}
	var titleDocs []string
	for i := 0; len(titles) < 200; i++ {
		d := docs[i*17%len(docs)]
		w := titleWords(titleOf(d.Path))
		titles = append(titles, w[0]+" "+w[1])
		titleDocs = append(titleDocs, d.Path)
	}
	// The most the top 10 can hold: the notes that say the phrase.
	ceiling := 0
	for _, p := range phrases {
		pq, k := parseQuery(Query{Text: p}), 0
		for _, n := range ix.notes {
			if n.hasPhrase(pq.phrase) {
				k++
			}
		}
		ceiling += min(k, defaultLimit)
	}
	chosen := ix.p.phrase
	var precision, first = map[float64]float64{}, map[float64]int{}
	for _, w := range []float64{0, 0.25, chosen, 1, 2} {
		ix.p.phrase = w
		said, top := 0, 0
		for _, p := range phrases {
			pq := parseQuery(Query{Text: p})
			for _, h := range ix.Search(Query{Text: p}).Hits {
				top++
				if ix.notes[ix.byPath[h.Path]].hasPhrase(pq.phrase) {
					said++
				}
			}
		}
		precision[w] = float64(said) / float64(top)
		for i, q := range titles {
			if r := ix.Search(Query{Text: q}); len(r.Hits) > 0 && r.Hits[0].Path == titleDocs[i] {
				first[w]++
			}
		}
		t.Logf("phrase weight %.2f: phrase precision@10 %.3f (at most %.3f), title note first %d/%d", w, precision[w], float64(ceiling)/float64(top), first[w], len(titles))
	}
	if precision[chosen] < 3*precision[0] || first[chosen] < first[0]-len(titles)/50 {
		t.Errorf("the phrase bonus %.2f brings precision %.3f (%.3f without), title note first %d (%d without)", chosen, precision[chosen], precision[0], first[chosen], first[0])
	}
}
