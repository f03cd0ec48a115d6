// Package toolsearch ranks tools for what a person asks (issue 27): a
// lexical ranking, BM25F, over each tool's fields with their own weights:
// its name split into words (snake_case, kebab-case, camelCase), its title,
// its description, its parameters' names and descriptions, and its
// server's and toolbox's names and descriptions. Words are stemmed
// (Snowball English, as the rest of Nexus's search: textsearch.Stem), stop
// words dropped, and a query word also matches its synonyms
// (synonyms.go), at half weight.
//
// An Index is built once for a set of tools and is safe for concurrent
// searches; a catalog that changes builds a new one.
package toolsearch

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Tool is one tool as search sees it.
type Tool struct {
	// Name is the name the tool is called by (its flat name).
	Name string
	// Tool is the tool's own name (the part of Name its server gave it).
	Tool               string
	Toolbox, Server    string
	Title, Description string
	Params             []Param
	// ServerDescription and ToolboxDescription say what its server and
	// toolbox are for.
	ServerDescription, ToolboxDescription string
}

// Param is a parameter of a tool.
type Param struct {
	Name, Description string
}

// The fields of a tool and how much each counts. The name and title say
// what a tool does in a few words, so a word there counts most; the
// description says it at length; the parameters say what it works on; the
// server and toolbox say where it belongs. b is BM25's length
// normalisation of the field (short, fixed-form fields take little).
type field struct {
	weight, b float64
}

var fields = [...]field{
	{weight: 2.0, b: 0.3},  // name (its words)
	{weight: 2.0, b: 0.3},  // title
	{weight: 1.0, b: 0.75}, // description
	{weight: 0.6, b: 0.5},  // parameters: names and descriptions
	{weight: 1.0, b: 0.5},  // server and toolbox: names and descriptions
}

const (
	fName = iota
	fTitle
	fDescription
	fParams
	fPlace
	nFields
)

// k1 is BM25's term-frequency saturation.
const k1 = 1.2

// synonymWeight is how much a query word's synonym counts, against the word
// itself.
const synonymWeight = 0.5

// MinScore is the score below which a tool is not a hit: a tool that
// shares only a common word, or a synonym, with the query is not offered as
// an answer (a query that nothing fits gets no hits rather than confident
// junk). One distinctive query word in a tool's description scores about
// 2; one in its name about 4.
const MinScore = 1.5

// Index is a search index of tools.
type Index struct {
	tools    []Tool
	postings map[string][]posting // by stemmed term
	idf      map[string]float64
	// Servers as wholes (their names, descriptions and every tool's name
	// and description): a request names what it needs in a server's
	// words as often as in a tool's.
	serverOf    []int32 // each tool's server
	srvPostings map[string][]posting
	srvIDF      map[string]float64
}

// serverWeight is how much a tool's server's relevance adds to the tool's
// own.
var serverWeight = 0.5

type posting struct {
	tool int32
	tf   float32 // the weighted, length-normalised term frequency (BM25F)
}

// Hit is a tool found, with its score.
type Hit struct {
	Tool  *Tool
	Score float64
}

// New indexes tools.
func New(tools []Tool) *Index {
	ix := &Index{tools: tools, postings: map[string][]posting{}, idf: map[string]float64{}}
	stems := map[string]string{}
	// The terms of each field of each tool, and the fields' average
	// lengths.
	terms := make([][nFields][]string, len(tools))
	var total [nFields]float64
	for i := range tools {
		t := &tools[i]
		name := t.Tool
		if name == "" {
			name = t.Name
		}
		texts := [nFields]string{
			fName:        name,
			fTitle:       t.Title,
			fDescription: t.Description,
			fPlace:       t.Server + " " + t.Toolbox + " " + t.ServerDescription + " " + t.ToolboxDescription,
		}
		var params strings.Builder
		for _, p := range t.Params {
			params.WriteString(p.Name + " " + p.Description + " ")
		}
		texts[fParams] = params.String()
		for f, text := range texts {
			terms[i][f] = analyze(text, stems)
			total[f] += float64(len(terms[i][f]))
		}
	}
	var avg [nFields]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(tools), 1)), 1)
	}
	df := map[string]int{}
	for i := range tools {
		tf := map[string]float64{}
		for f := range nFields {
			n := float64(len(terms[i][f]))
			norm := 1 - fields[f].b + fields[f].b*n/avg[f]
			for _, term := range terms[i][f] {
				tf[term] += fields[f].weight / norm
			}
		}
		for term, v := range tf {
			ix.postings[term] = append(ix.postings[term], posting{tool: int32(i), tf: float32(v)})
			df[term]++
		}
	}
	n := float64(len(tools))
	for term, d := range df {
		ix.idf[term] = math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))
	}
	ix.indexServers(terms)
	return ix
}

// indexServers indexes each server as one document of the terms of all its
// tools' fields.
func (ix *Index) indexServers(terms [][nFields][]string) {
	ids := map[string]int32{}
	var docs [][]string
	ix.serverOf = make([]int32, len(ix.tools))
	for i, t := range ix.tools {
		key := t.Toolbox + "/" + t.Server
		id, ok := ids[key]
		if !ok {
			id = int32(len(docs))
			ids[key] = id
			docs = append(docs, nil)
		}
		ix.serverOf[i] = id
		for f := range nFields {
			if f == fPlace && ok {
				continue // the server's own words once
			}
			docs[id] = append(docs[id], terms[i][f]...)
		}
	}
	ix.srvPostings, ix.srvIDF = map[string][]posting{}, map[string]float64{}
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	avg := max(float64(total)/float64(max(len(docs), 1)), 1)
	df := map[string]int{}
	for id, d := range docs {
		tf := map[string]float64{}
		norm := 1 - 0.75 + 0.75*float64(len(d))/avg
		for _, term := range d {
			tf[term] += 1 / norm
		}
		for term, v := range tf {
			ix.srvPostings[term] = append(ix.srvPostings[term], posting{tool: int32(id), tf: float32(v)})
			df[term]++
		}
	}
	n := float64(len(docs))
	for term, d := range df {
		ix.srvIDF[term] = math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))
	}
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.tools) }

// Options changes how Search ranks (for measuring what each part brings).
type Options struct {
	// NoSynonyms matches the query's own words only.
	NoSynonyms bool
	// NoServers ranks tools by their own fields alone, without their
	// server's relevance.
	NoServers bool
}

// Search returns up to limit tools for query, best first, whose score
// reaches MinScore; keep, if set, says which tools may be returned (the
// caller's).
func (ix *Index) Search(query string, limit int, keep func(*Tool) bool) []Hit {
	return ix.SearchWith(query, limit, keep, Options{})
}

// SearchWith is [Index.Search] with o.
func (ix *Index) SearchWith(query string, limit int, keep func(*Tool) bool, o Options) []Hit {
	return ix.rank(query, limit, keep, o)
}

// rank ranks the tools for query.
func (ix *Index) rank(query string, limit int, keep func(*Tool) bool, o Options) []Hit {
	weights := queryTerms(query, !o.NoSynonyms)
	if len(weights) == 0 || limit <= 0 {
		return nil
	}
	scores := map[int32]float64{}
	for term, w := range weights {
		idf := ix.idf[term]
		for _, p := range ix.postings[term] {
			tf := float64(p.tf)
			scores[p.tool] += w * idf * tf * (k1 + 1) / (tf + k1)
		}
	}
	if !o.NoServers {
		srv := map[int32]float64{}
		for term, w := range weights {
			idf := ix.srvIDF[term]
			for _, p := range ix.srvPostings[term] {
				tf := float64(p.tf)
				srv[p.tool] += w * idf * tf * (k1 + 1) / (tf + k1)
			}
		}
		for i, s := range scores {
			scores[i] = s + serverWeight*srv[ix.serverOf[i]]
		}
	}
	hits := make([]Hit, 0, min(len(scores), 4*limit))
	for i, s := range scores {
		if s < MinScore {
			continue
		}
		t := &ix.tools[i]
		if keep != nil && !keep(t) {
			continue
		}
		hits = append(hits, Hit{Tool: t, Score: s})
	}
	byScore(hits)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// byScore sorts hits best first (by name among equals).
func byScore(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Tool.Name, b.Tool.Name)
	})
}

// queryTerms are the stemmed terms of query with their weights: 1 for the
// query's own words, synonymWeight for their synonyms.
func queryTerms(query string, withSynonyms bool) map[string]float64 {
	out := map[string]float64{}
	stems := map[string]string{}
	for _, term := range analyze(query, stems) {
		out[term] = 1
	}
	if !withSynonyms {
		return out
	}
	for _, word := range words(query) {
		for _, syn := range synonyms[word] {
			for _, term := range analyze(syn, stems) {
				if _, own := out[term]; !own {
					out[term] = synonymWeight
				}
			}
		}
	}
	return out
}

// analyze is the stemmed terms of text, stop words left out: identifiers
// are split into their words first.
func analyze(text string, stems map[string]string) []string {
	var out []string
	for _, w := range words(text) {
		if textsearch.IsStopWord(w) || len(w) > 64 {
			continue
		}
		s, ok := stems[w]
		if !ok {
			s = textsearch.Stem(w)
			stems[w] = s
		}
		out = append(out, s)
	}
	return out
}

// words splits text into lower-cased words: at anything that is not a
// letter or digit, and inside identifiers at camelCase humps
// (getWeatherForecast, HTMLParser) and between letters and digits.
func words(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush() // getWeather
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush() // HTMLParser
			case unicode.IsDigit(prev) != unicode.IsDigit(r) && prev < utf8.RuneSelf && r < utf8.RuneSelf:
				flush() // utf8, v2
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}
