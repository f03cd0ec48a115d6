package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Benchmarks of the vault's library on a generated vault of 10,000 notes
// made from the real BC course data (gen_test.go), against the issue's
// targets: index in 10 s or less; searchContent's median 5 ms or less; an
// edit made by another editor searchable within 1 s of its write; the
// idle memory of 10,000 notes reported.
//
//	go test ./internal/vault -run '^$' -bench 'Vault|SearchContent|ExternalEdit' -benchtime 1x -count 1
//	go test ./internal/vault -run '^$' -bench SearchContent -benchtime 2000x
//
// Without the shared data (../shared/data, or $NEXUS_SHARED_DATA) they
// skip, saying so.

// benchNotes is the size of the benchmarks' vault.
const benchNotes = 10000

// Targets of the issue.
const (
	indexTarget  = 10 * time.Second
	searchTarget = 5 * time.Millisecond
	editTarget   = time.Second
)

// benchHeap is the heap in use after a collection.
func benchHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// benchVaultDir generates the benchmarks' vault in a temporary folder.
func benchVaultDir(b *testing.B) (string, genStats) {
	b.Helper()
	d := courseDataOrSkip(b)
	dir := b.TempDir()
	start := time.Now()
	st := generateVault(b, d, dir, benchNotes)
	b.Logf("generated vault: %v in %v", st, time.Since(start).Round(time.Millisecond))
	if st.notes < benchNotes {
		b.Logf("the shared data gives only %d notes of the %d asked", st.notes, benchNotes)
	}
	return dir, st
}

// newBenchServer is a server of v alone, logging nothing.
func newBenchServer(v *Vault) *Server { return NewServer([]*Vault{v}, Options{}) }

// startServer opens the vault in dir, starts its server and waits for its
// first index; it returns the server, its library and how long the index
// took.
func startServer(b *testing.B, dir string) (*Server, *library, time.Duration) {
	b.Helper()
	v, err := Open("bench", dir, false)
	if err != nil {
		b.Fatal(err)
	}
	s := newBenchServer(v)
	l := s.libs[v]
	start := time.Now()
	s.Start()
	select {
	case <-l.ready:
	case <-time.After(10 * indexTarget):
		s.Close()
		v.Close()
		b.Fatalf("the index was not ready after %v (%d notes indexed)", 10*indexTarget, l.indexed.Load())
	}
	took := time.Since(start)
	b.Cleanup(func() {
		s.Close()
		v.Close()
	})
	return s, l, took
}

// BenchmarkVaultIndex10000 starts a server on the vault and times its
// first index (Start until the library is ready), and measures the heap
// the idle server holds (after a collection, less the heap before it).
func BenchmarkVaultIndex10000(b *testing.B) {
	dir, _ := benchVaultDir(b)
	var took []time.Duration
	var idle uint64
	notes := 0
	for b.Loop() {
		b.StopTimer()
		before := benchHeap()
		b.StartTimer()
		v, err := Open("bench", dir, false)
		if err != nil {
			b.Fatal(err)
		}
		s := newBenchServer(v)
		l := s.libs[v]
		start := time.Now()
		s.Start()
		select {
		case <-l.ready:
		case <-time.After(10 * indexTarget):
			b.Fatalf("the index was not ready after %v (%d notes indexed)", 10*indexTarget, l.indexed.Load())
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		notes = l.ix.Len()
		if after := benchHeap(); after > before {
			idle = after - before
		}
		runtime.KeepAlive(s)
		s.Close()
		v.Close()
		b.StartTimer()
	}
	slices.Sort(took)
	ms := float64(took[len(took)/2].Microseconds()) / 1e3
	b.ReportMetric(ms, "index-ms")
	b.ReportMetric(float64(idle)/(1<<20), "idle-MB")
	b.ReportMetric(float64(idle)/(1<<20)*10000/float64(max(notes, 1)), "idle-MB/10k-notes")
	b.ReportMetric(float64(notes), "notes")
	if took[len(took)/2] > indexTarget {
		b.Logf("MISSES TARGET: indexing took %.0f ms, target %v", ms, indexTarget)
	}
}

// benchQueries is a mix of what a student or an agent asks of a vault of
// courses: topics, course codes, tag filters (in the query and as the
// tags argument), and property filters (key:value in the query and the
// properties argument).
func benchQueries(st genStats) []searchContentIn {
	var qs []searchContentIn
	for _, t := range []string{
		"calculus", "organic chemistry", "linear algebra", "Indigenous history", "climate change",
		"data structures", "statistics", "creative writing", "microeconomics", "human anatomy",
		"marketing strategy", "ethics", "software engineering", "research methods in psychology", "French",
		"film studies", "nursing practice", "financial accounting", "political science", "machine learning",
		"transfer credit", "differential equations", "Canadian literature", "public health", "music theory",
	} {
		qs = append(qs, searchContentIn{Query: t})
	}
	for i := range 12 {
		qs = append(qs, searchContentIn{Query: st.codes[(i*397+11)%len(st.codes)]})
	}
	qs = append(qs,
		searchContentIn{Query: "#course/cpsc"},
		searchContentIn{Query: "#course/math calculus"},
		searchContentIn{Query: "#transfer/ubcv psychology"},
		searchContentIn{Query: "#institution/sfu algorithms"},
		searchContentIn{Query: "programming", Tags: []string{"course/cmpt"}},
		searchContentIn{Query: "to:UBCV psychology"},
		searchContentIn{Query: "status:expired english"},
		searchContentIn{Query: "institution:SFU statistics"},
		searchContentIn{Query: "biology", Properties: map[string]string{"institution": "LANG"}},
		searchContentIn{Query: "economics", Properties: map[string]string{"to": "SFU"}},
	)
	return qs
}

// BenchmarkSearchContent10000 runs searchContent, as a client calls it
// (with snippets and lines), with a mix of queries on the indexed vault,
// and reports the median and 99th percentile of a call's time.
func BenchmarkSearchContent10000(b *testing.B) {
	dir, st := benchVaultDir(b)
	s, _, _ := startServer(b, dir)
	qs := benchQueries(st)
	ctx := context.Background()
	// Once each first, to check every query runs.
	for _, q := range qs {
		if _, err := s.searchContent(ctx, nil, q); err != nil {
			b.Fatalf("%+v: %v", q, err)
		}
	}
	var times []time.Duration
	byQuery := make([][]time.Duration, len(qs))
	hits, empty := 0, 0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := qs[i%len(qs)]
		start := time.Now()
		r, err := s.searchContent(ctx, nil, q)
		took := time.Since(start)
		times = append(times, took)
		byQuery[i%len(qs)] = append(byQuery[i%len(qs)], took)
		if err != nil {
			b.Fatal(err)
		}
		n := len(r.Data.(map[string]any)["results"].([]contentHit))
		hits += n
		if n == 0 {
			empty++
		}
		i++
	}
	slices.Sort(times)
	pct := func(p float64) time.Duration { return times[min(int(p*float64(len(times))), len(times)-1)] }
	b.ReportMetric(float64(pct(0.5).Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(pct(0.99).Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(hits)/float64(len(times)), "hits/call")
	b.ReportMetric(float64(empty)/float64(len(times)), "empty/call")
	if pct(0.5) > searchTarget {
		b.Logf("MISSES TARGET: searchContent p50 %v, target %v", pct(0.5), searchTarget)
	}
	if len(times) >= 5*len(qs) {
		// The slowest queries of the mix, by their median.
		order := make([]int, len(qs))
		med := make([]time.Duration, len(qs))
		for k, ts := range byQuery {
			slices.Sort(ts)
			order[k], med[k] = k, ts[len(ts)/2]
		}
		slices.SortFunc(order, func(x, y int) int { return int(med[y] - med[x]) })
		for _, k := range order[:3] {
			b.Logf("slow query: %q tags %v properties %v: median %v", qs[k].Query, qs[k].Tags, qs[k].Properties, med[k])
		}
	}
	if len(times) < len(qs) {
		b.Logf("only %d calls of the %d queries' mix: run with -benchtime %dx or more for the whole mix", len(times), len(qs), 10*len(qs))
	}
}

// searchable polls searchContent every 5 ms until a search for word finds
// the note at p, and returns how long that took since start (or fails
// after 10 s).
func searchable(b *testing.B, s *Server, word, p string, start time.Time) time.Duration {
	b.Helper()
	f := false
	for {
		r, err := s.searchContent(context.Background(), nil, searchContentIn{Query: word, Limit: 5, IncludeContent: &f})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range r.Data.(map[string]any)["results"].([]contentHit) {
			if h.FilePath == p {
				return time.Since(start)
			}
		}
		if time.Since(start) > 10*editTarget {
			b.Fatalf("%s written %v ago: a search for %q does not find it", p, time.Since(start).Round(time.Millisecond), word)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkExternalEdit10000 edits notes of the watched vault as another
// editor would (os.WriteFile, in place), each with a word no note has,
// and polls searchContent until the word finds the note; then creates
// notes in new folders (which the watcher must add). It reports the
// latencies from the write: median and worst of 20 edits an iteration,
// and the worst of the creates.
func BenchmarkExternalEdit10000(b *testing.B) {
	dir, st := benchVaultDir(b)
	s, l, _ := startServer(b, dir)
	const edits, creates = 20, 3
	var editTimes, createTimes []time.Duration
	round := 0
	for b.Loop() {
		for i := range edits {
			p := st.paths[(round*edits+i)*7919%len(st.paths)]
			full := filepath.Join(dir, filepath.FromSlash(p))
			old, err := os.ReadFile(full)
			if err != nil {
				b.Fatal(err)
			}
			word := editWord(round*edits + i)
			start := time.Now()
			if err := os.WriteFile(full, append(old, "\n\nEdited in another editor: "+word+".\n"...), 0o644); err != nil {
				b.Fatal(err)
			}
			editTimes = append(editTimes, searchable(b, s, word, p, start))
		}
		for i := range creates {
			n := round*creates + i
			p := fmt.Sprintf("Inbox %d/Term %d/New note %d.md", n, n, n)
			full := filepath.Join(dir, filepath.FromSlash(p))
			word := editWord(100000 + n)
			start := time.Now()
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				b.Fatal(err)
			}
			text := "---\ntags: [inbox]\n---\n# Plan\n\nTake [[" + st.codes[n%len(st.codes)] + "]] next term: " + word + ".\n"
			if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			createTimes = append(createTimes, searchable(b, s, word, p, start))
		}
		round++
	}
	slices.Sort(editTimes)
	slices.Sort(createTimes)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(editTimes[len(editTimes)/2]), "edit-ms-p50")
	b.ReportMetric(ms(editTimes[len(editTimes)-1]), "edit-ms-max")
	b.ReportMetric(ms(createTimes[len(createTimes)-1]), "create-ms-max")
	b.ReportMetric(float64(l.ix.Len()), "notes")
	if worst := max(editTimes[len(editTimes)-1], createTimes[len(createTimes)-1]); worst > editTarget {
		b.Logf("MISSES TARGET: an external change took %v to be searchable, target %v", worst, editTarget)
	}
}

// editWord is a word no generated note holds: "zq" and n in letters.
func editWord(n int) string {
	var sb strings.Builder
	sb.WriteString("zq")
	for {
		sb.WriteByte(byte('a' + n%26))
		n /= 26
		if n == 0 {
			break
		}
	}
	return sb.String() + "vx"
}
