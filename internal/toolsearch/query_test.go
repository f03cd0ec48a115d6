package toolsearch

import (
	"slices"
	"strings"
	"testing"
)

func TestReadRequest(t *testing.T) {
	blob := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAgAAAAIACAYAAAD0eNT6", 3)
	for q, want := range map[string][]string{
		"save the summary to /root/markdown/report.md": {"file", "markdown", "write"},
		"read /root/excel/people.xlsx":                 {"file", "excel spreadsheet", "read"},
		"what files are in my /root/music folder?":     {"directory"},
		"convert report.docx":                          {"file", "word document"},
		"trains from Beijing tomorrow":                 {"current", "date", "time"},
		"how did it change over the past three days?":  {"current", "date", "time"},
		"the last word":                                {},
		"open https://www.apple.com/iphone-16/ please": {},
		"what does this image mean? " + blob:           {},
	} {
		r := readRequest(q)
		if got := r.implied; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("readRequest(%q) implies %q, want %q", q, got, want)
		}
		if strings.Contains(r.text, blob) {
			t.Errorf("readRequest(%q) kept the blob", q)
		}
	}
	for q, want := range map[string][][2]string{
		"save the summary to /root/markdown/report.md": {{"write", "file"}},
		"read /root/excel/people.xlsx":                 {{"read", "file"}},
		"save the deck at /root/ppt/apple.pptx":        {{"write", "file"}, {"create", "presentation"}},
		"trains from Beijing tomorrow":                 {{"current", "date"}, {"current", "time"}},
		"summarize report.md":                          nil, // a path, but neither read nor written
	} {
		if got := readRequest(q).phrases; !slices.Equal(got, want) {
			t.Errorf("readRequest(%q) implies the phrases %q, want %q", q, got, want)
		}
	}
}

// TestImpliedPhrases: a request that writes to a path finds the tool that
// writes files before one that shares more of its words (a Markdown note
// for a Markdown file).
func TestImpliedPhrases(t *testing.T) {
	ix := New([]Tool{
		{Name: "fs__files__write_file", Tool: "write_file", Toolbox: "fs", Server: "files",
			Description: "Create a new file or overwrite an existing one with new content.", Params: []Param{{Name: "path", Required: true}, {Name: "content", Required: true}}},
		{Name: "notes__memory__write_note", Tool: "write_note", Toolbox: "notes", Server: "memory",
			Description: "Create or update a markdown note. Returns a markdown formatted summary."},
		{Name: "web__fetch__fetch_markdown", Tool: "fetch_markdown", Toolbox: "web", Server: "fetch",
			Description: "Fetch a web page as markdown."},
	})
	hits := ix.Search("Generate a deep report of bitcoin and save it in /root/markdown/bitcoin.md", 3, nil)
	if len(hits) == 0 || hits[0].Tool.Tool != "write_file" {
		t.Fatalf("hits %v, want write_file first", hits)
	}
}

func catalog2() []Tool {
	return []Tool{
		{Name: "fs__files__write_file", Tool: "write_file", Toolbox: "fs", Server: "files",
			Description: "Create a new file or overwrite an existing one with new content.", Params: []Param{{Name: "path"}, {Name: "content"}},
			ServerDescription: "Read and write files on disk."},
		{Name: "fs__files__list_directory", Tool: "list_directory", Toolbox: "fs", Server: "files",
			Description: "List the entries of a directory.", Params: []Param{{Name: "path"}}, ServerDescription: "Read and write files on disk."},
		{Name: "time__clock__get_current_time", Tool: "get_current_time", Toolbox: "time", Server: "clock",
			Description: "Get the current time in a timezone.", Params: []Param{{Name: "timezone"}}},
		{Name: "feedback__app__give_feedback", Tool: "give_feedback", Toolbox: "feedback", Server: "app",
			Description: "Give feedback to the app's makers: help us improve."},
		{Name: "cn__weibo__get-weibo-trending", Tool: "get-weibo-trending", Toolbox: "cn", Server: "weibo",
			Description: "获取微博热搜榜，包含时事热点、社会话题、娱乐新闻"},
		{Name: "cn__12306__get-tickets", Tool: "get-tickets", Toolbox: "cn", Server: "12306",
			Description: "查询火车票余票信息。"},
		{Name: "media__books__list_books", Tool: "list_books", Toolbox: "media", Server: "books",
			Description: "List books."},
	}
}

func firstHit(ix *Index, q string) string {
	hits := ix.Search(q, 3, nil)
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Tool.Name
}

// TestRequestImplies: a path the request writes to finds the tool that
// writes files, a relative time the tool that tells the time; the words a
// request is phrased in find nothing.
func TestRequestImplies(t *testing.T) {
	ix := New(catalog2())
	for q, want := range map[string]string{
		"Draft an intro for the project, saved at /root/markdown/intro.md": "fs__files__write_file",
		"What is in /root/music?":                                                    "fs__files__list_directory",
		"Find me a hotel for tomorrow":                                               "time__clock__get_current_time",
		"Could you please help me, I want to give it a go":                           "",
		"Summarize this blob " + strings.Repeat("QmFzZTY0IGRhdGEgYm9va3MgbGlzdA", 3): "",
	} {
		if got := firstHit(ix, q); got != want {
			t.Errorf("%q: first %q, want %q", q, got, want)
		}
	}
}

// TestChineseDescriptions: an English request finds tools described in
// Chinese, through the glossary, and a Chinese one through bigrams.
func TestChineseDescriptions(t *testing.T) {
	ix := New(catalog2())
	for q, want := range map[string]string{
		"hot topics in entertainment news": "cn__weibo__get-weibo-trending",
		"available trains to Shanghai":     "cn__12306__get-tickets",
		"微博":                               "cn__weibo__get-weibo-trending",
	} {
		if got := firstHit(ix, q); got != want {
			t.Errorf("%q: first %q, want %q", q, got, want)
		}
	}
}

// TestSynonymsCountOnce: a tool that has a query word's every synonym
// does not outscore one that has the word and another of the query's.
func TestSynonymsCountOnce(t *testing.T) {
	ix := New([]Tool{
		{Name: "a", Tool: "picture_tools", Description: "Image, picture, photo, png and jpg helpers."},
		{Name: "b", Tool: "resize_image", Description: "Resize an image."},
	})
	if got := firstHit(ix, "resize my photo"); got != "b" {
		t.Errorf("first %q, want b", got)
	}
}

// TestNameCoverage: a tool whose whole name the request says comes before
// one that says the request's words more often in its description.
func TestNameCoverage(t *testing.T) {
	ix := New([]Tool{
		{Name: "a", Tool: "get_weather", Description: "Weather for a city."},
		{Name: "b", Tool: "city_guide", Description: "A guide to a city: its sights, its weather, what to get there, city life."},
	})
	if got := firstHit(ix, "get the weather in my city"); got != "a" {
		t.Errorf("first %q, want a", got)
	}
}

// TestFirstSentence: the first sentence of a description, which says what
// a tool does, counts more than the rest.
func TestFirstSentence(t *testing.T) {
	ix := New([]Tool{
		{Name: "a", Tool: "tool_a", Description: "Lists the files of an archive. Works with zip, tar and 7z; fast on large ones, with progress, sizes, dates and permissions, sorted as you ask."},
		{Name: "b", Tool: "tool_b", Description: "Uploads folders. Keeps a list of the files in each archive."},
	})
	if got := firstHit(ix, "list archive files"); got != "a" {
		t.Errorf("first %q, want a", got)
	}
	if lead, rest := splitLead("获取热榜。包含新闻"); lead != "获取热榜" || rest != "。包含新闻" {
		t.Errorf("splitLead: %q %q", lead, rest)
	}
}

// TestQualifiersAloneAreNoHit: a tool that matches only a qualifier of the
// request ("current") is not a hit, even in a small catalog where the word
// is rare; the same word beside one that names the tool's work still counts.
func TestQualifiersAloneAreNoHit(t *testing.T) {
	ix := New([]Tool{
		{Name: "nexus__tutor__tn_user_byok_delete", Tool: "tn_user_byok_delete", Description: "Delete the current user's model key."},
		{Name: "nexus__tutor__tn_user_quota", Tool: "tn_user_quota", Description: "The current user's prompts left today."},
		{Name: "nexus__notes__note_write", Tool: "note_write", Description: "Write a note."},
	})
	if hits := ix.Search("current stock price", 10, nil); len(hits) != 0 {
		t.Errorf("current stock price: %v", hits[0].Tool.Name)
	}
	if hits := ix.Search("the current user's quota", 10, nil); len(hits) == 0 || hits[0].Tool.Tool != "tn_user_quota" {
		t.Errorf("the current user's quota: %v", hits)
	}
}

// TestPhrases: a tool that says two of the request's words together ranks
// above one that says them apart.
func TestPhrases(t *testing.T) {
	ix := New([]Tool{
		{Name: "a__s__apart", Tool: "apart", Description: "Cloud words: word counts in the cloud."},
		{Name: "a__s__together", Tool: "together", Description: "Draw a word cloud of a text."},
	})
	hits := ix.Search("make a word cloud", 10, nil)
	if len(hits) != 2 || hits[0].Tool.Tool != "together" {
		t.Fatalf("hits %v", hits)
	}
}
