// Package toolsearch ranks tools for what a person asks (issue 27): a
// lexical ranking, BM25F, over each tool's fields with their own weights:
// its name split into words (snake_case, kebab-case, camelCase), its title,
// its description, its parameters' names and descriptions, and its
// server's and toolbox's names and descriptions, and again the
// description's first sentence, which says what the tool does. Words are
// stemmed (Snowball English, as the rest of Nexus's search:
// textsearch.Stem), stop words dropped, and Chinese text is indexed by its
// bigrams and the English of its glossary words (cjk.go). A query word
// also matches its synonyms (synonyms.go), at half weight, and a tool
// scores a word and its synonyms once, by the best of them. A request is
// read for what it implies besides its words (query.go: a file path, a
// relative time, and the phrases those imply: "write file" for a path
// saved to) and without the words it is phrased in. A tool whose name the
// request says, verb and object, is preferred (nameCoverage), a tool's
// server's relevance adds to its own, and the tools that make what the
// best few require (a geocoder for tools that take coordinates) are lifted
// to just below them (supply.go).
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
	// Required says the tool cannot be called without it.
	Required bool
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
	{weight: 4.0, b: 0.3},  // the description's first sentence
}

const (
	fName = iota
	fTitle
	fDescription
	fParams
	fPlace
	fLead
	nFields
)

// k1 is BM25's term-frequency saturation.
const k1 = 1.2

// phraseWeight is how much a pair of a request's words that a tool's name,
// title or description says together, in that order ("word cloud",
// "market cap", "train tickets"), adds to the tool's score, times the
// rarer word's IDF: words said together mean more than the same words
// apart (phrase matching). 2 is the start of a plateau on LiveMCPBench
// (recall@10 0.597 at 0, 0.600 at 1, 0.603 from 2 to 4, 0.593 at 6).
const phraseWeight = 2.0

// synonymWeight is how much a query word's synonym counts, against the word
// itself.
const synonymWeight = 0.5

// MinScore is the score below which a tool is not a hit: a tool that
// shares only a common word, or a synonym, with the query is not offered as
// an answer (a query that nothing fits gets no hits rather than confident
// junk). One distinctive query word in a tool's description scores about
// 2; one in its name about 4.
const MinScore = 1.5

// minTools and minServers are the smallest catalog that a word's rarity
// (IDF) is reckoned in: in a catalog of five tools, three of which say
// "stock", the word would count for little, and a request for a stock
// price would fall under MinScore, which is set for catalogs of hundreds.
// A smaller catalog counts a word's tools as one of this size would.
const (
	minTools   = 100
	minServers = 20
)

// Index is a search index of tools.
type Index struct {
	// phrases are the tools that say each pair of terms together (in
	// their name, title or description), by "term term".
	phrases  map[string][]int32
	tools    []Tool
	postings map[string][]posting // by stemmed term
	idf      map[string]float64
	// Servers as wholes (their names, descriptions and every tool's name
	// and description): a request names what it needs in a server's
	// words as often as in a tool's.
	serverOf []int32 // each tool's server
	// The terms of each tool's name, each posting's tf its share of
	// the name (nameCoverage).
	namePostings map[string][]posting
	// suppliers are, for each tool, the tools of its server that make
	// what it requires (supply.go).
	suppliers   [][]int32
	nServers    int
	srvPostings map[string][]posting
	srvIDF      map[string]float64
}

// serverWeight is how much a tool's server's relevance adds to the tool's
// own.
const serverWeight = 0.5

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
	ix := &Index{tools: tools, postings: map[string][]posting{}, idf: map[string]float64{}, namePostings: map[string][]posting{}}
	stems := map[string]string{}
	places := map[string][]string{} // the terms of each server's place text
	// The terms of each field of each tool, and the fields' average
	// lengths.
	terms := make([][nFields][]string, len(tools))
	var total [nFields]float64
	var params strings.Builder
	for i := range tools {
		t := &tools[i]
		name := t.Tool
		if name == "" {
			name = t.Name
		}
		params.Reset()
		for _, p := range t.Params {
			params.WriteString(p.Name + " " + p.Description + " ")
		}
		lead, rest := splitLead(t.Description)
		ft := &terms[i]
		ft[fName] = analyze(name, stems)
		ft[fTitle] = analyze(t.Title, stems)
		ft[fLead] = analyze(lead, stems)
		ft[fDescription] = append(slices.Clip(ft[fLead]), analyze(rest, stems)...)
		ft[fParams] = analyze(params.String(), stems)
		place := t.Server + " " + t.Toolbox + " " + t.ServerDescription + " " + t.ToolboxDescription
		pt, ok := places[place]
		if !ok {
			pt = analyze(place, stems)
			places[place] = pt
		}
		ft[fPlace] = pt
		for f := range nFields {
			total[f] += float64(len(ft[f]))
		}
	}
	var avg [nFields]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(tools), 1)), 1)
	}
	tf := map[string]float64{}
	for i := range tools {
		clear(tf)
		for f := range nFields {
			n := float64(len(terms[i][f]))
			norm := 1 - fields[f].b + fields[f].b*n/avg[f]
			for _, term := range terms[i][f] {
				tf[term] += fields[f].weight / norm
			}
		}
		for term, v := range tf {
			ix.postings[term] = append(ix.postings[term], posting{tool: int32(i), tf: float32(v)})
		}
		// The name's terms, each with its share of the name.
		clear(tf)
		for _, term := range terms[i][fName] {
			tf[term] = 1
		}
		for term := range tf {
			ix.namePostings[term] = append(ix.namePostings[term], posting{tool: int32(i), tf: float32(1 / float64(len(tf)))})
		}
	}
	n := max(float64(len(tools)), minTools)
	for term, ps := range ix.postings {
		d := float64(len(ps))
		ix.idf[term] = math.Log(1 + (n-d+0.5)/(d+0.5))
	}
	ix.phrases = map[string][]int32{}
	seen := map[string]bool{}
	for i := range tools {
		clear(seen)
		for _, f := range []int{fName, fTitle, fDescription} {
			ts := terms[i][f]
			for j := 0; j+1 < len(ts); j++ {
				if b := ts[j] + " " + ts[j+1]; !seen[b] {
					seen[b] = true
					ix.phrases[b] = append(ix.phrases[b], int32(i))
				}
			}
		}
	}
	ix.indexServers(terms)
	ix.indexSuppliers(terms, stems)
	return ix
}

// splitLead splits a description into its first sentence (up to a full
// stop, Latin or CJK, or a line break) and the rest.
func splitLead(text string) (lead, rest string) {
	text = strings.TrimSpace(text)
	for i, r := range text {
		switch r {
		case '\n', '。', '！', '？':
			return text[:i], text[i:]
		case '.', '!', '?':
			if after := text[i+1:]; after == "" || after[0] == ' ' || after[0] == '\n' {
				return text[:i], text[i:]
			}
		}
	}
	return text, ""
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
			if (f == fPlace && ok) || f == fLead {
				continue // the server's own words once
			}
			docs[id] = append(docs[id], terms[i][f]...)
		}
	}
	ix.nServers = len(docs)
	ix.srvPostings, ix.srvIDF = map[string][]posting{}, map[string]float64{}
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	avg := max(float64(total)/float64(max(len(docs), 1)), 1)
	tf := map[string]float64{}
	for id, d := range docs {
		clear(tf)
		norm := 1 - 0.75 + 0.75*float64(len(d))/avg
		for _, term := range d {
			tf[term] += 1 / norm
		}
		for term, v := range tf {
			ix.srvPostings[term] = append(ix.srvPostings[term], posting{tool: int32(id), tf: float32(v)})
		}
	}
	n := max(float64(len(docs)), minServers)
	for term, ps := range ix.srvPostings {
		d := float64(len(ps))
		ix.srvIDF[term] = math.Log(1 + (n-d+0.5)/(d+0.5))
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
	// NoSuppliers ranks tools without lifting the suppliers of the best
	// (supply.go).
	NoSuppliers bool
	// NoSinks ranks tools without lifting the tool that writes the file a
	// request saves to.
	NoSinks bool
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
	if limit <= 0 {
		return nil
	}
	scores := ix.scores(readRequest(query), keep, o)
	var hits []Hit
	for i, s := range scores {
		if s < MinScore {
			continue
		}
		if len(hits) == limit && cmpHit(Hit{&ix.tools[i], s}, hits[0]) >= 0 {
			continue // not among the best limit
		}
		t := &ix.tools[i]
		if keep != nil && !keep(t) {
			continue
		}
		hits = pushBest(hits, Hit{Tool: t, Score: s}, limit)
	}
	slices.SortFunc(hits, cmpHit)
	return hits
}

// scores are each tool's score for r (nil if r has no words to search
// for).
func (ix *Index) scores(r request, keep func(*Tool) bool, o Options) []float64 {
	concepts := queryConcepts(r, !o.NoSynonyms)
	if len(concepts) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.tools))
	ix.score(scores, concepts, ix.postings, ix.idf)
	var srv []float64
	if !o.NoServers {
		srv = make([]float64, ix.nServers)
		ix.score(srv, concepts, ix.srvPostings, ix.srvIDF)
	}
	strong := ix.strongConcepts(concepts)
	cov := ix.nameCoverage(concepts)
	phrases := ix.phraseScores(r)
	for i, s := range scores {
		if s == 0 || !strong[i] {
			scores[i] = 0
			continue
		}
		s += phrases[i]
		s *= 1 + cov[i]*cov[i]
		if srv != nil {
			s += serverWeight * srv[ix.serverOf[i]]
		}
		scores[i] = s
	}
	if !o.NoSinks && r.sink != "" {
		ix.sink(scores, r.sink, keep, o)
	}
	if !o.NoSuppliers {
		ix.supply(scores, keep)
	}
	return scores
}

// phraseScores are, for each tool, what the pairs of the request's words
// that it says together add to its score (phraseWeight).
func (ix *Index) phraseScores(r request) []float64 {
	out := make([]float64, len(ix.tools))
	qt := analyze(r.text, map[string]string{})
	seen := map[string]bool{}
	for _, p := range r.phrases {
		a, b := textsearch.Stem(p[0]), textsearch.Stem(p[1])
		if seen[a+" "+b] {
			continue
		}
		w := impliedWeight * phraseWeight * min(ix.idf[a], ix.idf[b])
		for _, d := range ix.phrases[a+" "+b] {
			out[d] += w
		}
		seen[a+" "+b] = true
	}
	for j := 0; j+1 < len(qt); j++ {
		b := qt[j] + " " + qt[j+1]
		if seen[b] {
			continue
		}
		seen[b] = true
		w := phraseWeight * min(ix.idf[qt[j]], ix.idf[qt[j+1]])
		for _, d := range ix.phrases[b] {
			out[d] += w
		}
	}
	return out
}

// pushBest adds h to hits, the best limit hits so far as a heap whose
// root, hits[0], is the worst of them.
func pushBest(hits []Hit, h Hit, limit int) []Hit {
	if len(hits) < limit {
		hits = append(hits, h)
		for i := len(hits) - 1; i > 0; {
			p := (i - 1) / 2
			if cmpHit(hits[i], hits[p]) <= 0 {
				break
			}
			hits[i], hits[p] = hits[p], hits[i]
			i = p
		}
		return hits
	}
	hits[0] = h
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(hits) && cmpHit(hits[l], hits[worst]) > 0 {
			worst = l
		}
		if r < len(hits) && cmpHit(hits[r], hits[worst]) > 0 {
			worst = r
		}
		if worst == i {
			return hits
		}
		hits[i], hits[worst] = hits[worst], hits[i]
		i = worst
	}
}

// nameCoverage is, for each tool, how much of its name the query says:
// the mean, over the name's terms, of the weight the query gives each (1
// for its own words, less for synonyms and implied words, 0 for a term it
// does not have). A tool is named for what it does (verb and object:
// write_file, get_current_time), so a request that says its whole name,
// in its words or their synonyms, asks for that tool; one that says one
// word of it may not. A hit's score is multiplied by 1 plus its coverage
// squared.
func (ix *Index) nameCoverage(concepts []concept) []float64 {
	qw := map[string]float64{} // each term's weight
	for _, c := range concepts {
		for _, t := range c {
			qw[t.term] = max(qw[t.term], t.w)
		}
	}
	cov := make([]float64, len(ix.tools))
	for term, w := range qw {
		for _, p := range ix.namePostings[term] {
			cov[p.tool] += w * float64(p.tf)
		}
	}
	return cov
}

// score adds to scores (by document) the BM25 score of each concept: the
// best of its terms' scores in the document.
func (ix *Index) score(scores []float64, concepts []concept, postings map[string][]posting, idfs map[string]float64) {
	best := make([]float64, len(scores))
	var touched []int32
	for _, c := range concepts {
		for _, t := range c {
			idf := idfs[t.term]
			for _, p := range postings[t.term] {
				tf := float64(p.tf)
				v := t.w * idf * tf * (k1 + 1) / (tf + k1)
				if best[p.tool] == 0 {
					touched = append(touched, p.tool)
				}
				best[p.tool] = max(best[p.tool], v)
			}
		}
		for _, d := range touched {
			scores[d] += best[d]
			best[d] = 0
		}
		touched = touched[:0]
	}
}

// strongConcepts reports, for each tool, whether it matches a concept of
// the query that is not a qualifier (weakWords): a tool that matches only
// "current" of "current stock price" is not an answer, however rare the
// word is in the catalog.
func (ix *Index) strongConcepts(concepts []concept) []bool {
	strong := make([]bool, len(ix.tools))
	for _, c := range concepts {
		if len(c) == 0 || weakTerms[c[0].term] {
			continue
		}
		for _, t := range c {
			for _, p := range ix.postings[t.term] {
				strong[p.tool] = true
			}
		}
	}
	return strong
}

// cmpHit orders hits best first (by name among equals).
func cmpHit(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Tool.Name, b.Tool.Name)
}

// A concept is what one word of a query asks for: the word's term and its
// synonyms' (or a word the request implies). A tool scores a concept's
// best term, not their sum, so that a tool that has a word's every
// synonym does not outscore one that has the word and another of the
// query's words.
type concept []qterm

// qterm is a stemmed term of a query with its weight.
type qterm struct {
	term string
	w    float64
}

// queryConcepts are the concepts of query: one for each of its words (the
// word's term at weight 1, its synonyms' at synonymWeight) and one for
// each word the request implies, at impliedWeight (query.go).
func queryConcepts(r request, withSynonyms bool) []concept {
	stems := map[string]string{}
	var own []string            // the query's words
	ownTerm := map[string]int{} // the query's terms, each its concept's index
	var out []concept
	for _, w := range words(r.text) {
		if requestWords[w] {
			continue
		}
		terms := analyze(w, stems)
		if len(terms) == 0 {
			continue
		}
		own = append(own, w)
		if _, ok := ownTerm[terms[0]]; !ok {
			ownTerm[terms[0]] = len(out)
			out = append(out, concept{{terms[0], 1}})
		}
	}
	if withSynonyms {
		for _, w := range own {
			i := ownTerm[analyze(w, stems)[0]]
			for _, syn := range synonyms[w] {
				for _, term := range analyze(syn, stems) {
					if _, isOwn := ownTerm[term]; !isOwn && !slices.ContainsFunc(out[i], func(t qterm) bool { return t.term == term }) {
						out[i] = append(out[i], qterm{term, synonymWeight})
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, w := range r.implied {
		for _, term := range analyze(w, stems) {
			if _, isOwn := ownTerm[term]; !isOwn && !seen[term] {
				seen[term] = true
				out = append(out, concept{{term, impliedWeight}})
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
// (getWeatherForecast, HTMLParser) and between letters and digits. A run
// of Han characters gives its bigrams and its glossary words (cjk.go).
func words(text string) []string {
	var out []string
	start := -1  // of the current word, in bytes
	han := false // the current word is Han
	var prev rune
	flush := func(end int) {
		if start < 0 {
			return
		}
		if han {
			out = hanWords([]rune(text[start:end]), out)
		} else {
			out = append(out, strings.ToLower(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		h := isHan(r)
		if start >= 0 && h != han {
			flush(i)
		}
		if start >= 0 && !han {
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush(i) // getWeather
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && nextIsLower(text[i+utf8.RuneLen(r):]):
				flush(i) // HTMLParser
			case unicode.IsDigit(prev) != unicode.IsDigit(r) && prev < utf8.RuneSelf && r < utf8.RuneSelf:
				flush(i) // utf8, v2
			}
		}
		if start < 0 {
			start, han = i, h
		}
		prev = r
	}
	flush(len(text))
	return out
}

// nextIsLower reports whether text starts with a lower-case letter.
func nextIsLower(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	return unicode.IsLower(r)
}
