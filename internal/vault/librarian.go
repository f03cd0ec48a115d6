package vault

import (
	"context"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/vault/noteindex"
)

// vaultLibrarian: search (contract section 3). Scores run from 0 to 1, the
// best hit of a search scoring 1.

func (s *Server) librarianModes() []registry.Def {
	return []registry.Def{
		def("searchContent", "Search the vault's notes by relevance: words match through their stems, a word in a note's title, headings, tags or frontmatter counts more than in its text, words said together count more; #tag and key:value in the query (or tags and properties) filter. Each hit has a snippet and the lines that match, with their numbers.", true, registry.Handle(s.searchContent)),
		def("searchDirectory", "Find files and folders by name or path (fuzzy: \"mth100\" finds \"MATH 100.md\"), in the given folders, by type, extension, pattern and modification date.", true, registry.Handle(s.searchDirectory)),
		def("batch", "Run several searches at once; each returns its notes by name (files), by content, by tag and by property.", true, registry.Handle(s.batchSearch)),
	}
}

// library waits for v's first index (or ctx) and returns it.
func (s *Server) library(ctx context.Context, v *Vault) (*library, error) {
	l := s.libs[v]
	select {
	case <-l.ready:
		return l, nil
	case <-ctx.Done():
		return nil, errs.E(errs.Unavailable, "the vault %q is still being indexed (%d notes so far): try again in a moment", v.Name, l.indexed.Load())
	}
}

type searchContentIn struct {
	Vault          string            `json:"vault"`
	Query          string            `json:"query"`
	Limit          int               `json:"limit"`
	IncludeContent *bool             `json:"includeContent"`
	SnippetLength  int               `json:"snippetLength"`
	Paths          []string          `json:"paths"`
	Tags           []string          `json:"tags"`
	Properties     map[string]string `json:"properties"`
}

type contentHit struct {
	FilePath     string         `json:"filePath"`
	Title        string         `json:"title"`
	Content      string         `json:"content"`
	Score        float64        `json:"score"`
	SearchMethod string         `json:"searchMethod"`
	Lines        []lineHit      `json:"lines,omitempty"`
	Frontmatter  map[string]any `json:"frontmatter,omitempty"`
	Metadata     hitMetadata    `json:"metadata"`
}

type lineHit struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

type hitMetadata struct {
	FileExtension string `json:"fileExtension"`
	ParentFolder  string `json:"parentFolder"`
	ModifiedTime  int64  `json:"modifiedTime"`
}

// cleanPaths cleans a search's paths: each is a folder prefix or a glob
// (kept as written but for its leading "/"); "/" alone is the whole vault.
func cleanPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "/")
		if p == "" || p == "." {
			return nil // the whole vault
		}
		out = append(out, p)
	}
	return out
}

func (s *Server) searchContent(ctx context.Context, c *registry.Call, in searchContentIn) (result, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" && len(in.Tags) == 0 && len(in.Properties) == 0 {
		return result{}, errs.E(errs.BadRequest, "Query parameter is required and cannot be empty")
	}
	v, err := s.vaultFor(ctx, c, in.Vault)
	if err != nil {
		return result{}, err
	}
	l, err := s.library(ctx, v)
	if err != nil {
		return result{}, err
	}
	include := in.IncludeContent == nil || *in.IncludeContent
	limit := cmpOr(in.Limit, 10)
	res := l.ix.Search(noteindex.Query{Text: q, Tags: in.Tags, Properties: in.Properties, Paths: cleanPaths(in.Paths),
		Limit: limit, IncludeContent: include, SnippetLength: cmpOr(in.SnippetLength, 200)})
	hits := make([]contentHit, 0, len(res.Hits))
	for _, h := range res.Hits {
		ch := contentHit{FilePath: h.Path, Title: h.Title, Content: h.Snippet, Score: round3(h.Score), SearchMethod: h.Method}
		if !include {
			ch.Content = "File: " + h.Path
		}
		for _, ln := range h.Lines {
			ch.Lines = append(ch.Lines, lineHit{Line: ln.N, Text: ln.Text})
		}
		if d, ok := l.ix.Get(h.Path); ok {
			ch.Metadata = hitMetadata{FileExtension: strings.TrimPrefix(path.Ext(h.Path), "."), ParentFolder: parent(h.Path), ModifiedTime: d.Modified.UnixMilli()}
			if len(d.Properties) > 0 {
				ch.Frontmatter = map[string]any{}
				for k, val := range d.Properties {
					ch.Frontmatter[k] = val
				}
			}
		}
		hits = append(hits, ch)
	}
	return ok(map[string]any{"results": hits, "total": res.Total, "hasMore": res.Total > len(hits)}), nil
}

func parent(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

type searchDirectoryIn struct {
	Vault      string   `json:"vault"`
	Query      string   `json:"query"`
	Paths      []string `json:"paths"`
	SearchType string   `json:"searchType"`
	FileTypes  []string `json:"fileTypes"`
	Depth      int      `json:"depth"`
	Pattern    string   `json:"pattern"`
	DateRange  *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"dateRange"`
	Limit          int    `json:"limit"`
	IncludeContent *bool  `json:"includeContent"`
	WorkspaceID    string `json:"workspaceId"`
}

type dirHit struct {
	Path         string         `json:"path"`
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Score        float64        `json:"score"`
	SearchMethod string         `json:"searchMethod"`
	Snippet      string         `json:"snippet,omitempty"`
	Metadata     map[string]any `json:"metadata"`
}

// searchDirectory (contract section 3). The original applied depth twice
// (relative to the folder and again as an absolute depth), which dropped
// nearly everything under a folder; here depth counts levels below each
// searched folder (1: its children), as documented.
func (s *Server) searchDirectory(ctx context.Context, c *registry.Call, in searchDirectoryIn) (result, error) {
	if len(in.Paths) == 0 {
		return result{}, errs.E(errs.BadRequest, "Paths parameter is required and cannot be empty")
	}
	v, err := s.vaultFor(ctx, c, in.Vault)
	if err != nil {
		return result{}, err
	}
	var pattern *regexp.Regexp
	if in.Pattern != "" {
		pattern, _ = regexp.Compile("(?i)" + in.Pattern) // an invalid one is ignored, as in the original
	}
	var from, to time.Time
	if in.DateRange != nil {
		if from, err = parseDate(in.DateRange.Start); err != nil {
			return result{}, errs.Invalid("dateRange.start", "%q is not an ISO date or time", in.DateRange.Start)
		}
		if to, err = parseDate(in.DateRange.End); err != nil {
			return result{}, errs.Invalid("dateRange.end", "%q is not an ISO date or time", in.DateRange.End)
		}
	}
	if to.IsZero() {
		to = time.Now()
	}
	types := map[string]bool{}
	for _, t := range in.FileTypes {
		types[strings.ToLower(strings.TrimPrefix(t, "."))] = true
	}
	searchType := cmpOrStr(in.SearchType, "both")
	depth := -1
	if in.Depth > 0 {
		depth = in.Depth - 1
	}
	var entries []noteindex.Entry
	infos := map[string]fs.DirEntry{}
	seen := map[string]bool{}
	for _, root := range in.Paths {
		dir, glob := strings.TrimPrefix(strings.ReplaceAll(root, `\`, "/"), "/"), false
		if strings.ContainsAny(dir, "*?[]{}") {
			dir, glob = "", true
		} else if dir != "" {
			if dir, err = Clean(dir, true); err != nil {
				return result{}, errs.E(errs.BadRequest, "%v", err)
			}
			if st, err := v.Stat(dir); err != nil || !st.IsDir() {
				continue // a missing folder is ignored, as in the original
			}
		}
		d := depth
		if glob {
			d = -1
		}
		err := v.walk(dir, d, func(p string, e fs.DirEntry) {
			if seen[p] || (glob && !globMatch(root, p)) {
				return
			}
			if e.IsDir() && searchType == "files" || !e.IsDir() && searchType == "folders" {
				return
			}
			if !e.IsDir() {
				if len(types) > 0 && !types[strings.ToLower(strings.TrimPrefix(path.Ext(p), "."))] {
					return
				}
				if info, err := e.Info(); err != nil || (!from.IsZero() && info.ModTime().Before(from)) || info.ModTime().After(to) {
					return
				}
			}
			if pattern != nil && !pattern.MatchString(p) && !pattern.MatchString(e.Name()) {
				return
			}
			seen[p] = true
			infos[p] = e
			entries = append(entries, noteindex.Entry{Path: p, Folder: e.IsDir()})
		})
		if err != nil {
			return result{}, err
		}
	}
	hits, total := noteindex.FuzzyPaths(in.Query, entries, cmpOr(in.Limit, 20))
	include := in.IncludeContent == nil || *in.IncludeContent
	out := make([]dirHit, 0, len(hits))
	for _, h := range hits {
		e := infos[h.Path]
		dh := dirHit{Path: h.Path, Name: e.Name(), Type: "file", Score: round3(h.Score), SearchMethod: h.Method}
		if h.Folder {
			dh.Type = "folder"
			files, folders := 0, 0
			if list, err := fs.ReadDir(v.root.FS(), h.Path); err == nil {
				for _, c := range list {
					if strings.HasPrefix(c.Name(), ".") {
						continue
					}
					if c.IsDir() {
						folders++
					} else {
						files++
					}
				}
			}
			dh.Metadata = map[string]any{"depth": strings.Count(h.Path, "/") + 1, "fileCount": files, "folderCount": folders}
		} else {
			info, _ := e.Info()
			dh.Metadata = map[string]any{"fileType": strings.TrimPrefix(path.Ext(h.Path), ".")}
			if info != nil {
				dh.Metadata["created"], dh.Metadata["modified"], dh.Metadata["size"] = created(info).UnixMilli(), info.ModTime().UnixMilli(), info.Size()
			}
			if include && isNote(h.Path) {
				dh.Snippet = firstLines(v, h.Path)
			}
		}
		out = append(out, dh)
	}
	return ok(map[string]any{"results": out, "total": total, "hasMore": total > len(out)}), nil
}

// firstLines is a note's first 3 lines, cut to 200 characters.
func firstLines(v *Vault, p string) string {
	f, err := v.Read(p)
	if err != nil {
		return ""
	}
	lines := strings.SplitN(string(f.Content), "\n", 4)
	s := strings.Join(lines[:min(3, len(lines))], "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

func cmpOrStr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseDate reads an ISO date or date and time ("" is no bound).
func parseDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	_, err := time.Parse(time.RFC3339, s)
	return time.Time{}, err
}

// globMatch matches a path against a glob: ** anything, * anything but
// "/", ? one character, anchored on the whole path.
func globMatch(glob, p string) bool {
	glob = strings.TrimPrefix(glob, "/")
	var b strings.Builder
	b.WriteString("(?i)^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(p)
}

type batchSearchIn struct {
	Vault    string `json:"vault"`
	Searches []struct {
		Query                string   `json:"query"`
		Limit                int      `json:"limit"`
		Paths                []string `json:"paths"`
		IncludeContent       *bool    `json:"includeContent"`
		ExcludeCategories    []string `json:"excludeCategories"`
		PrioritizeCategories []string `json:"prioritizeCategories"`
		ForceSemanticSearch  bool     `json:"forceSemanticSearch"`
	} `json:"searches"`
	MergeResults   bool `json:"mergeResults"`
	MaxConcurrency int  `json:"maxConcurrency"`
}

type category struct {
	Count        int    `json:"count"`
	Results      []any  `json:"results"`
	HasMore      bool   `json:"hasMore"`
	SearchMethod string `json:"searchMethod"`
}

// batchSearch (contract section 3): each search's notes by name (files),
// by content, by tag and by property. The original's content category was
// a stub and its tag and property categories empty; here each holds what
// its name says.
func (s *Server) batchSearch(ctx context.Context, c *registry.Call, in batchSearchIn) (result, error) {
	max := cmpOr(in.MaxConcurrency, 10)
	if len(in.Searches) > max {
		return result{}, errs.E(errs.BadRequest, "Too many searches requested. Maximum allowed: %d", max)
	}
	v, err := s.vaultFor(ctx, c, in.Vault)
	if err != nil {
		return result{}, err
	}
	l, err := s.library(ctx, v)
	if err != nil {
		return result{}, err
	}
	var searches []map[string]any
	merged := map[string]map[string]any{} // category -> id -> item
	failed := 0
	for _, sq := range in.Searches {
		start := time.Now()
		q := strings.TrimSpace(sq.Query)
		if q == "" {
			failed++
			searches = append(searches, map[string]any{"success": false, "query": sq.Query, "error": "Query parameter is required and cannot be empty"})
			continue
		}
		limit := cmpOr(sq.Limit, 10)
		paths := cleanPaths(sq.Paths)
		cats := map[string]category{}
		// files: names.
		var entries []noteindex.Entry
		for _, p := range l.ix.Paths() {
			entries = append(entries, noteindex.Entry{Path: p})
		}
		names, total := noteindex.FuzzyPaths(q, entries, limit)
		files := category{Count: total, HasMore: total > len(names), SearchMethod: "fuzzy", Results: []any{}}
		for _, h := range names {
			files.Results = append(files.Results, map[string]any{"id": h.Path, "title": strings.TrimSuffix(path.Base(h.Path), path.Ext(h.Path)), "snippet": "File: " + h.Path, "score": round3(h.Score), "searchMethod": "fuzzy"})
		}
		cats["files"] = files
		// content, tags, properties: the index, by words and by filters.
		include := sq.IncludeContent == nil || *sq.IncludeContent
		for name, query := range map[string]noteindex.Query{
			"content":    {Text: q, Paths: paths, Limit: limit, IncludeContent: include},
			"tags":       {Tags: []string{strings.TrimPrefix(q, "#")}, Paths: paths, Limit: limit},
			"properties": {Text: q, Paths: paths, Limit: limit},
		} {
			if name == "properties" {
				if k, val, found := strings.Cut(q, ":"); found {
					query = noteindex.Query{Properties: map[string]string{k: val}, Paths: paths, Limit: limit}
				} else {
					cats[name] = category{SearchMethod: "property", Results: []any{}}
					continue
				}
			}
			res := l.ix.Search(query)
			cat := category{Count: res.Total, HasMore: res.Total > len(res.Hits), SearchMethod: map[string]string{"content": "keyword", "tags": "tag", "properties": "property"}[name], Results: []any{}}
			for _, h := range res.Hits {
				cat.Results = append(cat.Results, map[string]any{"id": h.Path, "title": h.Title, "snippet": h.Snippet, "score": round3(h.Score), "searchMethod": h.Method})
			}
			cats[name] = cat
		}
		for name, cat := range cats {
			if merged[name] == nil {
				merged[name] = map[string]any{}
			}
			for _, r := range cat.Results {
				id := r.(map[string]any)["id"].(string)
				if _, dup := merged[name][id]; !dup {
					merged[name][id] = r
				}
			}
		}
		searches = append(searches, map[string]any{"success": true, "query": q, "totalResults": files.Count + cats["content"].Count + cats["tags"].Count + cats["properties"].Count,
			"executionTime": time.Since(start).Milliseconds(), "categories": cats, "searchStrategy": "lexical"})
	}
	if !in.MergeResults {
		return ok(map[string]any{"searches": searches, "queriesFailed": failed}), nil
	}
	combined := map[string]any{}
	totalResults := 0
	for name, items := range merged {
		var list []any
		for _, it := range items {
			list = append(list, it)
		}
		slices.SortFunc(list, func(a, b any) int {
			sa, sb := a.(map[string]any)["score"].(float64), b.(map[string]any)["score"].(float64)
			if sa != sb {
				if sa > sb {
					return -1
				}
				return 1
			}
			return strings.Compare(a.(map[string]any)["id"].(string), b.(map[string]any)["id"].(string))
		})
		totalResults += len(list)
		combined[name] = list[:min(10, len(list))]
	}
	return ok(map[string]any{"merged": map[string]any{"totalResults": totalResults, "combinedCategories": combined}, "queriesFailed": failed}), nil
}
