package toolsearch

import (
	"slices"
	"testing"
)

func mapsCatalog() []Tool {
	place := "Maps: places, routes and parking."
	return []Tool{
		{Name: "maps__osm__geocode_address", Tool: "geocode_address", Toolbox: "maps", Server: "osm", ServerDescription: place,
			Description: "Convert an address or place name to geographic coordinates: its latitude and longitude.",
			Params:      []Param{{Name: "address", Required: true}}},
		{Name: "maps__osm__reverse_geocode", Tool: "reverse_geocode", Toolbox: "maps", Server: "osm", ServerDescription: place,
			Description: "Convert a latitude and longitude to an address.",
			Params:      []Param{{Name: "latitude", Required: true}, {Name: "longitude", Required: true}}},
		{Name: "maps__osm__find_parking_facilities", Tool: "find_parking_facilities", Toolbox: "maps", Server: "osm", ServerDescription: place,
			Description: "Locate parking facilities near a location.",
			Params:      []Param{{Name: "latitude", Required: true}, {Name: "longitude", Required: true}, {Name: "radius"}}},
		{Name: "web__search__web_search", Tool: "web_search", Toolbox: "web", Server: "search",
			Description: "Search the web for a query and return the results, with the query's text, name and id.",
			Params:      []Param{{Name: "query", Required: true}}},
		{Name: "web__search__get_result", Tool: "get_result", Toolbox: "web", Server: "search",
			Description: "Get one result of a search by its id.",
			Params:      []Param{{Name: "id", Required: true}}},
		{Name: "city__guide__city_parks", Tool: "city_parks", Toolbox: "city", Server: "guide",
			Description: "Parks and gardens of the city centre."},
	}
}

func hitTools(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tool.Tool)
	}
	return out
}

// TestSuppliers: a request for what a tool does finds the tool that makes
// what it requires (the geocoder that makes the latitude and longitude
// parking facilities are found by) just below it; a tool that itself
// requires them (reverse_geocode) is no supplier, and neither is a tool
// that merely mentions a generic parameter (an id, a query).
func TestSuppliers(t *testing.T) {
	ix := New(mapsCatalog())
	const q = "where can I find parking facilities near the Forbidden City"
	hits := hitTools(ix.Search(q, 10, nil))
	if len(hits) < 2 || hits[0] != "find_parking_facilities" || hits[1] != "geocode_address" {
		t.Errorf("hits %q, want find_parking_facilities then geocode_address", hits)
	}
	if slices.Contains(hits, "reverse_geocode") && slices.Index(hits, "reverse_geocode") < slices.Index(hits, "geocode_address") {
		t.Errorf("hits %q: reverse_geocode, which requires coordinates, lifted above the geocoder", hits)
	}
	without := hitTools(ix.SearchWith(q, 10, nil, Options{NoSuppliers: true}))
	if i := slices.Index(without, "geocode_address"); i >= 0 && i < 2 {
		t.Errorf("without suppliers, hits %q: the test does not test suppliers", without)
	}
	// keep hides the consumer: its suppliers are not lifted for it.
	noParking := hitTools(ix.Search(q, 10, func(t *Tool) bool { return t.Tool != "find_parking_facilities" }))
	if slices.Contains(noParking, "geocode_address") && slices.Index(noParking, "geocode_address") < slices.Index(noParking, "city_parks") {
		t.Errorf("hits %q: the geocoder lifted for a tool the caller may not use", noParking)
	}
	// A generic parameter (id, query) makes no supplier.
	if s := ix.suppliers[4]; len(s) != 0 {
		t.Errorf("get_result (requires id) has suppliers %v", s)
	}
	if s := ix.suppliers[3]; len(s) != 0 {
		t.Errorf("web_search (requires query) has suppliers %v", s)
	}
}

// TestSinks: a request that saves what it finds to a file needs the tool
// that writes the file as much as the tools that find it, though its words
// are all about the finding; the writer is lifted to just below the best
// (the kind of document a .pptx or .docx is decides the writer).
func TestSinks(t *testing.T) {
	ix := New([]Tool{
		{Name: "dev__github__trending_repositories", Tool: "trending_repositories", Toolbox: "dev", Server: "github",
			Description: "Get the trending GitHub repositories of the day."},
		{Name: "dev__git__git_log", Tool: "git_log", Toolbox: "dev", Server: "git",
			Description: "Show the commit log of a git repository.", Params: []Param{{Name: "repo_path", Required: true}}},
		{Name: "dev__git__git_status", Tool: "git_status", Toolbox: "dev", Server: "git",
			Description: "Show the working tree status of a git repository.", Params: []Param{{Name: "repo_path", Required: true}}},
		{Name: "dev__git__git_init", Tool: "git_init", Toolbox: "dev", Server: "git",
			Description: "Create a new git repository.", Params: []Param{{Name: "repo_path", Required: true}}},
		{Name: "fs__files__write_file", Tool: "write_file", Toolbox: "fs", Server: "files",
			Description: "Create a new file or overwrite an existing one with new content.", Params: []Param{{Name: "path", Required: true}, {Name: "content", Required: true}}},
		{Name: "office__ppt__create_presentation", Tool: "create_presentation", Toolbox: "office", Server: "ppt",
			Description: "Create a new PowerPoint presentation."},
	})
	const q = "Find the trending GitHub repositories and draft an intro to the top repository in /root/markdown/github_trends.md"
	hits := hitTools(ix.Search(q, 10, nil))
	if len(hits) < 2 || hits[0] != "trending_repositories" || hits[1] != "write_file" {
		t.Errorf("hits %q, want trending_repositories then write_file", hits)
	}
	without := hitTools(ix.SearchWith(q, 10, nil, Options{NoSinks: true}))
	if i := slices.Index(without, "write_file"); i >= 0 && i < 2 {
		t.Errorf("without sinks, hits %q: the test does not test sinks", without)
	}
	deck := hitTools(ix.Search("Find the trending GitHub repositories and make slides of them in /root/ppt/trends.pptx", 10, nil))
	if len(deck) < 2 || deck[1] != "create_presentation" {
		t.Errorf("hits %q, want create_presentation second", deck)
	}
	// A tool that only mentions files is no writer.
	noWriter := New([]Tool{
		{Name: "dev__github__trending_repositories", Tool: "trending_repositories", Toolbox: "dev", Server: "github",
			Description: "Get the trending GitHub repositories of the day."},
		{Name: "chat__sessions__session_export", Tool: "session_export", Toolbox: "chat", Server: "sessions",
			Description: "Generate a portable snapshot of a session, which `nexus import FILE` restores."},
	})
	score := func(hits []Hit) float64 {
		for _, h := range hits {
			if h.Tool.Tool == "session_export" {
				return h.Score
			}
		}
		return 0
	}
	if with, without := score(noWriter.Search(q, 10, nil)), score(noWriter.SearchWith(q, 10, nil, Options{NoSinks: true})); with != without {
		t.Errorf("session_export scores %.2f, %.2f without sinks: a tool that mentions a file lifted as the writer", with, without)
	}
	if got := readRequest("read /root/csv/a.csv and save the table to /root/word/b.docx").sink; got != "create document word document" {
		t.Errorf("sink %q, want the last path's (a Word document)", got)
	}
	if got := readRequest("summarize /root/markdown/a.md").sink; got != "" {
		t.Errorf("sink %q for a request that saves nothing", got)
	}
}
