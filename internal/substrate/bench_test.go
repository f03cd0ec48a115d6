package substrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// Benchmarks of belief_query and belief_create on a knowledge base built from
// the real BC course data in ../shared/data (see docs/benchmarks.md).
//
//	NEXUS_BENCH_BELIEFS   beliefs in the store (default 100000)
//	NEXUS_BENCH_DIR       where SQLite benchmark databases are kept and reused
//	NEXUS_TEST_POSTGRES_URL  enables the PostgreSQL variants
//	NEXUS_SHARED_DATA     the shared data directory (default ../../../shared/data)

func sharedData() string {
	if d := os.Getenv("NEXUS_SHARED_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "data")
}

// corpus returns belief inputs made from the shared data: transfer
// agreements, catalogue and outline sentences and term sections. Records are
// cycled with an observation year to reach n.
func corpus(tb testing.TB, n int) []CreateInput {
	tb.Helper()
	var base []CreateInput
	read := func(name string, v any) {
		b, err := os.ReadFile(filepath.Join(sharedData(), name))
		if err != nil {
			tb.Fatalf("read shared data (set NEXUS_SHARED_DATA): %v", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	var transfers struct {
		Courses []struct {
			Subject             string
			CourseCode          int `json:"course_code"`
			Destination, Credit string
			EffectiveStart      string `json:"effective_start"`
		}
	}
	read("langara/transfers.json", &transfers)
	for _, t := range transfers.Courses {
		base = append(base, CreateInput{
			Content:    fmt.Sprintf("Langara %s %d transfers to %s as %s, effective %s.", t.Subject, t.CourseCode, t.Destination, t.Credit, t.EffectiveStart),
			DomainPath: []string{"transfer", strings.ToLower(t.Destination)},
			SourceType: "document", SourceRef: "https://www.bctransferguide.ca",
			Entities: []EntityInput{{Name: fmt.Sprintf("LANG %s %d", t.Subject, t.CourseCode), Type: "concept"}, {Name: t.Destination, Type: "organization", Role: "object"}},
		})
	}
	var catalogue struct {
		Courses []struct {
			Subject, Title, Description string
			CourseCode                  int `json:"course_code"`
		}
	}
	read("langara/catalogue.json", &catalogue)
	for _, c := range catalogue.Courses {
		for _, s := range sentences(c.Description) {
			base = append(base, CreateInput{
				Content:    fmt.Sprintf("Langara %s %d (%s): %s", c.Subject, c.CourseCode, c.Title, s),
				DomainPath: []string{"courses", "langara", strings.ToLower(c.Subject)},
				SourceType: "document", Entities: []EntityInput{{Name: fmt.Sprintf("LANG %s %d", c.Subject, c.CourseCode), Type: "concept"}},
			})
		}
	}
	var outlines struct {
		Data []struct{ Dept, Number, Title, Description, Prerequisites string }
	}
	read("sfu/outlines.json", &outlines)
	for _, o := range outlines.Data {
		text := o.Description
		if o.Prerequisites != "" {
			text += " Prerequisites: " + o.Prerequisites
		}
		for _, s := range sentences(text) {
			base = append(base, CreateInput{
				Content:    fmt.Sprintf("SFU %s %s (%s): %s", o.Dept, o.Number, o.Title, s),
				DomainPath: []string{"courses", "sfu", strings.ToLower(o.Dept)},
				SourceType: "document", Entities: []EntityInput{{Name: fmt.Sprintf("SFU %s %s", o.Dept, o.Number), Type: "concept"}},
			})
		}
	}
	for _, term := range []string{"202310", "202320", "202330"} {
		var sections struct {
			Courses []struct {
				Subject, Section, Title string
				CourseCode              int `json:"course_code"`
				Seats                   any
				Waitlist                any
				Schedule                []struct{ Type, Days, Time, Room, Instructor string }
			}
		}
		read("langara/"+term+".json", &sections)
		for _, s := range sections.Courses {
			who, room := "TBA", "TBA"
			if len(s.Schedule) > 0 {
				who, room = strings.TrimSpace(strings.TrimPrefix(s.Schedule[0].Instructor, ".")), s.Schedule[0].Room
			}
			base = append(base, CreateInput{
				Content:    fmt.Sprintf("In term %s Langara %s %d section %s (%s) has %v seats and %v waitlisted, taught by %s in room %s.", term, s.Subject, s.CourseCode, s.Section, s.Title, s.Seats, s.Waitlist, who, room),
				DomainPath: []string{"sections", "langara", term},
				SourceType: "observation", Entities: []EntityInput{{Name: fmt.Sprintf("LANG %s %d", s.Subject, s.CourseCode), Type: "concept"}},
			})
		}
	}
	out := make([]CreateInput, 0, n)
	for i := 0; len(out) < n; i++ {
		in := base[i%len(base)]
		if round := i / len(base); round > 0 {
			in.Content = fmt.Sprintf("%s (observed %d)", in.Content, 2000+round)
		}
		out = append(out, in)
	}
	return out
}

func sentences(text string) []string {
	var out []string
	for _, s := range strings.SplitAfter(strings.Join(strings.Fields(text), " "), ". ") {
		if s = strings.TrimSpace(s); len(s) > 20 {
			out = append(out, s)
		}
	}
	return out
}

func benchSize() int {
	if v, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_BELIEFS")); err == nil && v > 0 {
		return v
	}
	return 100_000
}

// benchStore opens (and on first use fills) the benchmark store of the
// dialect holding n beliefs in workspace "default".
func benchStore(b *testing.B, dialect store.Dialect, n int) *store.Store {
	b.Helper()
	ctx := context.Background()
	st := storetest.OpenBench(b, dialect, fmt.Sprintf("beliefs-%d", n))
	var have int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM beliefs`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have >= n {
		return st
	}
	start := time.Now()
	s := New(st, nil)
	// Spread creation times over two years so that recency matters.
	base := time.Now().Add(-2 * 365 * 24 * time.Hour)
	items := corpus(b, n)[have:]
	const batch = 2000
	for i := 0; i < len(items); i += batch {
		end := min(i+batch, len(items))
		err := st.Tx(ctx, func(tx *sql.Tx) error {
			for j, in := range items[i:end] {
				k := have + i + j
				s.now = func() time.Time { return base.Add(time.Duration(k) * 2 * 365 * 24 * time.Hour / time.Duration(n)) }
				if _, err := s.insertBelief(ctx, tx, pipeline.DefaultWorkspace, newBelief{
					content: in.Content, confidence: Confidence{Overall: 0.5 + 0.5*float64(k%10)/10}, domainPath: in.DomainPath,
					source: Source{Type: in.SourceType, Ref: in.SourceRef}, entities: in.Entities,
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if st.Dialect() == store.Postgres {
		st.DB().Exec(`VACUUM ANALYZE`)
	}
	b.Logf("loaded %d beliefs into %s in %v", len(items), dialect, time.Since(start).Round(time.Second))
	return st
}

func benchPipeline(b *testing.B, st *store.Store) *pipeline.Pipeline {
	reg := registry.New()
	if err := New(st, nil).Register(reg); err != nil {
		b.Fatal(err)
	}
	return pipeline.New(pipeline.Options{Registry: reg})
}

// benchQueries are questions a student or advisor would ask of the corpus.
var benchQueries = []string{
	"Does Langara CPSC 1150 transfer to SFU?", "introduction to psychology", "calculus prerequisites",
	"which courses transfer to UBC as ENGL 1st", "organic chemistry laboratory", "financial accounting",
	"Canadian history since confederation", "MATH 1171 transfer credit", "statistics for social sciences",
	"creative writing poetry workshop", "no credit", "data structures and algorithms", "Aboriginal studies",
	"who teaches biology in room A167", "waitlisted sections in term 202330", "economics principles microeconomics",
	"film studies", "nursing clinical practice", "SFU CMPT 120", "transfer to UVIC generic credit 1XX",
}

func BenchmarkBeliefQuery(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			st := benchStore(b, d, benchSize())
			p := benchPipeline(b, st)
			ctx := context.Background()
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				raw, _ := json.Marshal(map[string]any{"query": benchQueries[i%len(benchQueries)]})
				t0 := time.Now()
				o := p.Call(ctx, pipeline.Request{Tool: "belief_query", Args: raw})
				ds = append(ds, time.Since(t0))
				if o.Err != nil {
					b.Fatal(o.Err)
				}
			}
			b.StopTimer()
			storetest.ReportLatencies(b, ds)
		})
	}
}

func BenchmarkBeliefCreate(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			n := benchSize()
			st := benchStore(b, d, n)
			p := benchPipeline(b, st)
			ctx := context.Background()
			// New beliefs restate corpus records with changed details, so
			// tension detection has real candidates to examine.
			src := corpus(b, min(n, 50_000))
			rng := rand.New(rand.NewPCG(1, 2))
			ds := make([]time.Duration, 0, b.N)
			tensions := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				in := src[rng.IntN(len(src))]
				in.Content = strings.Replace(in.Content, "3", "4", 1)
				raw, _ := json.Marshal(in)
				t0 := time.Now()
				o := p.Call(ctx, pipeline.Request{Tool: "belief_create", Args: raw})
				ds = append(ds, time.Since(t0))
				if o.Err != nil {
					b.Fatal(o.Err)
				}
				var res struct{ Tensions []json.RawMessage }
				json.Unmarshal(o.Result, &res)
				tensions += len(res.Tensions)
			}
			b.StopTimer()
			storetest.ReportLatencies(b, ds)
			b.ReportMetric(float64(tensions)/float64(b.N), "tensions/op")
		})
	}
}
