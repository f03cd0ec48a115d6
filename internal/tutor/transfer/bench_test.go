package transfer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// synthetic copies each real rule to n synthetic destination institutions
// ("syn00", "syn01", ...), its targets and waivers moved there.
func synthetic(real []Rule, n int) []Rule {
	out := make([]Rule, 0, len(real)*n)
	for k := range n {
		inst := fmt.Sprintf("syn%02d", k)
		for _, r := range real {
			c := r
			c.Destination = inst
			c.Targets = make([]TargetSet, len(r.Targets))
			for i, s := range r.Targets {
				ts := slices.Clone(s.Targets)
				for j := range ts {
					ts[j].Course.Institution = inst
				}
				c.Targets[i] = TargetSet{Targets: ts}
			}
			c.Waives = slices.Clone(r.Waives)
			for j := range c.Waives {
				c.Waives[j].Course.Institution = inst
			}
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkResolve resolves 10 source courses against 20 times the real
// rule set (each real rule copied to 20 synthetic destinations, about
// 240,000 rules). "random" draws the 10 courses from the source courses
// of the real rules; "busiest" takes the 10 courses with the most rules.
// Besides ns/op it reports the p50 and p99 latency of one call, and the
// process CPU time per call (garbage collection included), which a busy
// machine does not inflate as it does wall-clock latency.
func BenchmarkResolve(b *testing.B) {
	_, real := loadReal(b, testtools.SharedData(b))
	rs := synthetic(real, 20)
	ix := NewIndex(rs)
	b.Logf("%d synthetic rules, %d indexed after removing agreements listed under several courses", len(rs), ix.Len())

	count := map[catalog.Ref]int{}
	for _, r := range real {
		for _, c := range r.SourceCourses() {
			count[c]++
		}
	}
	var courses []catalog.Ref
	for c := range count {
		courses = append(courses, c)
	}
	slices.SortFunc(courses, func(a, b catalog.Ref) int {
		if d := count[b] - count[a]; d != 0 {
			return d
		}
		return compareRef(a, b)
	})
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([][]catalog.Ref, 1024)
	for i := range random {
		for range 10 {
			random[i] = append(random[i], courses[rng.IntN(len(courses))])
		}
	}
	busiest := [][]catalog.Ref{courses[:10]}
	asOf := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

	for _, c := range []struct {
		name    string
		queries [][]catalog.Ref
	}{{"random", random}, {"busiest", busiest}} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			matches := 0
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				res := ix.Resolve(c.queries[i%len(c.queries)], asOf)
				lat = append(lat, time.Since(t0))
				matches += len(res.ExactMatches) + len(res.PartialMatches)
			}
			b.StopTimer()
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(matches)/float64(b.N), "matches/op")
		})
	}
}

func compareRef(a, b catalog.Ref) int {
	if a.Institution != b.Institution {
		return cmpString(a.Institution, b.Institution)
	}
	if a.Subject != b.Subject {
		return cmpString(a.Subject, b.Subject)
	}
	return cmpString(a.Number, b.Number)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkParse parses every row of the shared data's transfers.json
// (11,882 rows) once per iteration.
func BenchmarkParse(b *testing.B) {
	rows, _ := loadReal(b, testtools.SharedData(b))
	p := Parser{Dir: catalog.NewDirectory(), Accessed: accessed}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.ParseAll(rows)
	}
}

// BenchmarkReview reviews the parsed real rules (11,882) with the
// catalogue's credits once per iteration.
func BenchmarkReview(b *testing.B) {
	dir := testtools.SharedData(b)
	_, parsed := loadReal(b, dir)
	credits := catalogueCredits(b, dir)
	rules := slices.Clone(parsed)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Review(rules, credits)
	}
}
