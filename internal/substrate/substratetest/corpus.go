// Package substratetest makes knowledge-base test data from the real BC
// course data in ../shared/data, for the substrate's benchmarks and the
// import's: beliefs as belief_create_batch items.
package substratetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Item is one belief as belief_create_batch takes it.
type Item struct {
	Content    string   `json:"content"`
	DomainPath []string `json:"domain_path,omitempty"`
	SourceType string   `json:"source_type,omitempty"`
	SourceRef  string   `json:"source_ref,omitempty"`
	Entities   []Entity `json:"entities,omitempty"`
	ExternalID string   `json:"external_id,omitempty"`
}

// Entity is an entity an Item links.
type Entity struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	Role string `json:"role,omitempty"`
}

// SharedData is the shared data directory: $NEXUS_SHARED_DATA, else
// shared/data beside the repository, whose root is root (relative to the
// test's package directory).
func SharedData(root string) string {
	if d := os.Getenv("NEXUS_SHARED_DATA"); d != "" {
		return d
	}
	return filepath.Join(root, "..", "shared", "data")
}

// Corpus returns belief inputs made from the shared data: transfer
// agreements, catalogue and outline sentences and term sections. Records are
// cycled with an observation year to reach n.
func Corpus(tb testing.TB, dir string, n int) []Item {
	tb.Helper()
	var base []Item
	read := func(name string, v any) {
		b, err := os.ReadFile(filepath.Join(dir, name))
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
		base = append(base, Item{
			Content:    fmt.Sprintf("Langara %s %d transfers to %s as %s, effective %s.", t.Subject, t.CourseCode, t.Destination, t.Credit, t.EffectiveStart),
			DomainPath: []string{"transfer", strings.ToLower(t.Destination)},
			SourceType: "document", SourceRef: "https://www.bctransferguide.ca",
			Entities: []Entity{{Name: fmt.Sprintf("LANG %s %d", t.Subject, t.CourseCode), Type: "concept"}, {Name: t.Destination, Type: "organization", Role: "object"}},
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
			base = append(base, Item{
				Content:    fmt.Sprintf("Langara %s %d (%s): %s", c.Subject, c.CourseCode, c.Title, s),
				DomainPath: []string{"courses", "langara", strings.ToLower(c.Subject)},
				SourceType: "document", Entities: []Entity{{Name: fmt.Sprintf("LANG %s %d", c.Subject, c.CourseCode), Type: "concept"}},
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
			base = append(base, Item{
				Content:    fmt.Sprintf("SFU %s %s (%s): %s", o.Dept, o.Number, o.Title, s),
				DomainPath: []string{"courses", "sfu", strings.ToLower(o.Dept)},
				SourceType: "document", Entities: []Entity{{Name: fmt.Sprintf("SFU %s %s", o.Dept, o.Number), Type: "concept"}},
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
			base = append(base, Item{
				Content:    fmt.Sprintf("In term %s Langara %s %d section %s (%s) has %v seats and %v waitlisted, taught by %s in room %s.", term, s.Subject, s.CourseCode, s.Section, s.Title, s.Seats, s.Waitlist, who, room),
				DomainPath: []string{"sections", "langara", term},
				SourceType: "observation", Entities: []Entity{{Name: fmt.Sprintf("LANG %s %d", s.Subject, s.CourseCode), Type: "concept"}},
			})
		}
	}
	out := make([]Item, 0, n)
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

// Queries are questions a student or advisor would ask of the corpus: the
// belief_query benchmarks' (in process and over MCP) ask the same ones.
var Queries = []string{
	"Does Langara CPSC 1150 transfer to SFU?", "introduction to psychology", "calculus prerequisites",
	"which courses transfer to UBC as ENGL 1st", "organic chemistry laboratory", "financial accounting",
	"Canadian history since confederation", "MATH 1171 transfer credit", "statistics for social sciences",
	"creative writing poetry workshop", "no credit", "data structures and algorithms", "Aboriginal studies",
	"who teaches biology in room A167", "waitlisted sections in term 202330", "economics principles microeconomics",
	"film studies", "nursing clinical practice", "SFU CMPT 120", "transfer to UVIC generic credit 1XX",
}
