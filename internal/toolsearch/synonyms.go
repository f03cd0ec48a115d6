package toolsearch

// synonymGroups are words that people and tool descriptions use for the
// same action or thing: a query word also matches the others of its group,
// at synonymWeight. They are the general vocabulary of tools (what they do
// to what), not chosen for any one tool or task; a word may be in several
// groups.
var synonymGroups = [][]string{
	// actions
	{"find", "search", "lookup", "query", "look"},
	{"get", "fetch", "retrieve", "read", "obtain", "load"},
	{"show", "list", "display", "view"},
	{"create", "make", "generate", "new", "add", "build"},
	{"write", "save", "store", "record"},
	{"delete", "remove", "erase", "drop"},
	{"update", "edit", "modify", "change", "set"},
	{"convert", "transform", "export", "turn"},
	{"send", "post", "publish", "share"},
	{"run", "execute", "launch", "start"},
	{"download", "fetch", "save"},
	{"summarize", "summary", "digest", "overview"},
	{"analyze", "analyse", "analysis", "inspect", "examine"},
	{"translate", "translation"},
	{"calculate", "compute", "math", "calculator", "estimate"},
	{"compare", "comparison", "versus"},
	{"schedule", "calendar", "event", "meeting", "appointment"},
	{"navigate", "route", "directions"},
	// things
	{"document", "doc", "docx", "word", "file"},
	{"spreadsheet", "excel", "xlsx", "sheet", "table"},
	{"presentation", "slides", "powerpoint", "pptx", "ppt", "deck"},
	{"image", "picture", "photo", "png", "jpg"},
	{"chart", "graph", "plot", "diagram", "visualization", "visualize"},
	{"map", "location", "place", "geocode", "address"},
	{"weather", "forecast", "temperature"},
	{"news", "headlines", "articles"},
	{"trending", "trend", "trends", "hot", "popular", "rank", "ranking", "top"},
	{"stock", "stocks", "share", "shares", "market", "ticker"},
	{"price", "cost", "quote"},
	{"video", "videos", "movie", "film"},
	{"music", "song", "songs", "track"},
	{"book", "books", "novel", "reading"},
	{"email", "mail", "inbox"},
	{"message", "chat", "messages"},
	{"web", "website", "page", "webpage", "url", "site", "browser", "internet"},
	{"code", "repository", "repo", "github", "source"},
	{"paper", "papers", "article", "research", "academic", "arxiv", "scholar"},
	{"job", "jobs", "career", "position", "hiring"},
	{"flight", "flights", "airline", "airport"},
	{"hotel", "hotels", "accommodation", "lodging"},
	{"restaurant", "restaurants", "food", "dining"},
	{"time", "date", "clock", "timezone"},
	{"currency", "exchange", "money"},
	{"pdf"},
	{"directory", "folder", "dir"},
	{"markdown", "md"},
}

// synonyms maps each word of a group to the other words of its groups.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		for _, w := range g {
			for _, o := range g {
				if o != w {
					m[w] = append(m[w], o)
				}
			}
		}
	}
	return m
}()
