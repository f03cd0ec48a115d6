package toolsearch

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"get-weread-rank":           {"get", "weread", "rank"},
		"generate_word_cloud_chart": {"generate", "word", "cloud", "chart"},
		"getWeatherForecast":        {"get", "weather", "forecast"},
		"HTMLParser v2":             {"html", "parser", "v", "2"},
		"搜索 关键词":                    {"搜索", "search", "关键", "键词", "keywords"},
		"获取BBC新闻":                   {"获取", "get", "bbc", "新闻", "news"},
	} {
		if got := words(in); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func catalog() []Tool {
	return []Tool{
		{Name: "maps__geo__geocode_address", Tool: "geocode_address", Toolbox: "maps", Server: "geo",
			Description: "Convert an address into geographic coordinates.", Params: []Param{{Name: "address", Description: "the street address"}},
			ServerDescription: "Maps: places, routes and coordinates."},
		{Name: "maps__geo__find_nearby_places", Tool: "find_nearby_places", Toolbox: "maps", Server: "geo",
			Description: "Find points of interest near a location.", ServerDescription: "Maps: places, routes and coordinates."},
		{Name: "office__word__create_document", Tool: "create_document", Toolbox: "office", Server: "word",
			Description: "Create a new Word document.", Params: []Param{{Name: "filename"}}, ServerDescription: "Word documents."},
		{Name: "office__word__add_paragraph", Tool: "add_paragraph", Toolbox: "office", Server: "word",
			Description: "Add a paragraph to a Word document.", ServerDescription: "Word documents."},
		{Name: "weather__wx__get_forecast", Tool: "get_forecast", Toolbox: "weather", Server: "wx",
			Description: "Get the weather forecast for a city.", Params: []Param{{Name: "city"}}},
	}
}

// TestSearchRanksTheToolThatFits: the tool whose name and description say
// what is asked comes first; words match through their stems and their
// synonyms; a request that nothing fits gets no hits; keep hides tools.
func TestSearchRanksTheToolThatFits(t *testing.T) {
	ix := New(catalog())
	first := func(q string, keep func(*Tool) bool) string {
		hits := ix.Search(q, 3, keep)
		if len(hits) == 0 {
			return ""
		}
		return hits[0].Tool.Name
	}
	for q, want := range map[string]string{
		"what will the weather be in Vancouver tomorrow": "weather__wx__get_forecast",
		"geocoding the address of the Forbidden City":    "maps__geo__geocode_address",
		"make a new docx report":                         "office__word__create_document", // make ~ create, docx ~ document
		"translate this poem into French":                "",                              // no tool translates
		"the":                                            "",                              // stop words only
	} {
		if got := first(q, nil); got != want {
			t.Errorf("%q: first %q, want %q", q, got, want)
		}
	}
	noWeather := func(t *Tool) bool { return t.Toolbox != "weather" }
	if got := first("weather forecast", noWeather); got != "" {
		t.Errorf("a tool keep refuses was found: %q", got)
	}
}

// TestServerRelevance: a request in its server's words ranks the server's
// tools above a tool that shares one word of it.
func TestServerRelevance(t *testing.T) {
	ix := New(catalog())
	hits := ix.Search("places and routes coordinates", 5, nil)
	if len(hits) < 2 || hits[0].Tool.Server != "geo" || hits[1].Tool.Server != "geo" {
		t.Fatalf("hits %v", hits)
	}
	score := func(hits []Hit, name string) float64 {
		for _, h := range hits {
			if h.Tool.Tool == name {
				return h.Score
			}
		}
		return 0
	}
	plain := ix.SearchWith("places and routes coordinates", 5, nil, Options{NoServers: true})
	if with, without := score(hits, "find_nearby_places"), score(plain, "find_nearby_places"); with <= without {
		t.Errorf("find_nearby_places scores %.2f with its server's relevance, %.2f without; want more with", with, without)
	}
}
