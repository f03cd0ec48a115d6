package transfer

import (
	"slices"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// BenchmarkAward measures resolution followed by the award, on the real
// rules: "10-all" is 10 courses (the busiest: the most rules) to every
// destination, one award per destination (Awards); "40-all" a 40-course
// transcript (the 40 busiest) the same way; "40-ubcv" the 40 courses to
// UBC Vancouver (AwardFor). Reported: p50-ns and p99-ns of one call
// (resolution and award), awards/op and awarded-rules/op.
//
//	go test ./internal/tutor/transfer -run '^$' -bench BenchmarkAward -benchtime 2000x -count 5
func BenchmarkAward(b *testing.B) {
	_, real := loadReal(b, testtools.SharedData(b))
	ix := NewIndex(real)
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
	asOf := time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		dest string
		have []catalog.Ref
	}{{"10-all", "", courses[:10]}, {"40-all", "", courses[:40]}, {"40-ubcv", "ubcv", courses[:40]}} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			awards, rules := 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				res := ix.ResolveTo(c.dest, c.have, asOf)
				var aws []Award
				if c.dest == "" {
					aws = Awards(res, c.have)
				} else {
					aws = []Award{AwardFor(res, c.dest, c.have)}
				}
				lat = append(lat, time.Since(t0))
				awards += len(aws)
				for _, a := range aws {
					rules += len(a.Rules)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(awards)/float64(b.N), "awards/op")
			b.ReportMetric(float64(rules)/float64(b.N), "awarded-rules/op")
		})
	}
}
