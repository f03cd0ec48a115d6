package toolsearch

import "slices"

// Suppliers. A request names what it wants done, rarely the step before:
// "park near the Forbidden City" asks for parking facilities, whose tool
// takes a latitude and a longitude, which the request does not have; the
// tool that turns a place's name into coordinates is needed first. A
// tool's required parameters say what it needs; a tool of the same server
// whose description speaks of all of it, and that does not itself require
// it, makes it (a search for papers makes the paper id that reading one
// requires; a geocoder makes the latitude and longitude). When a tool is
// among the best few, its suppliers are lifted to just below it.

// Sinks. A request that saves what it finds to a file ("... and save it
// in /root/markdown/report.md") needs the tool that writes the file as
// much as the tools that find, but its words are all about the finding: a
// lexical ranking of the whole request puts the writer far down. The
// saving is read as a request of its own (query.go: sinkOf, "write file
// markdown", "create presentation powerpoint"), and its best tool is
// lifted to just below the best of the whole request.

// sinkShare is the share of the best tool's score that the tool writing
// the file a request saves to is lifted to. LiveMCPBench's recall@5 is on
// a plateau from 0.7 to 1 (0.534 to 0.539; 0.515 at 0.5).
const sinkShare = 0.9

// sink lifts the best tool for sink (the saving, as a request), among
// those keep allows, to sinkShare of the best score.
func (ix *Index) sink(scores []float64, sink string, keep func(*Tool) bool, o Options) {
	o.NoSinks, o.NoSuppliers = true, true
	r := readRequest(sink)
	writers := ix.scores(r, keep, o)
	// A writer does what the sink says to what it says (write and file,
	// create and presentation, or their synonyms), not one of them.
	cs := queryConcepts(r, !o.NoSynonyms)
	does := ix.matchesAll(cs[:min(2, len(cs))])
	best, top := -1, 0.0
	for i, s := range writers {
		if s < MinScore || !does[i] || (best >= 0 && cmpHit(Hit{&ix.tools[i], s}, Hit{&ix.tools[best], writers[best]}) >= 0) {
			continue
		}
		if keep != nil && !keep(&ix.tools[i]) {
			continue
		}
		best = i
	}
	if best < 0 {
		return
	}
	for i, s := range scores {
		if s > top && (keep == nil || keep(&ix.tools[i])) {
			top = s
		}
	}
	scores[best] = max(scores[best], sinkShare*top)
}

// matchesAll reports, for each tool, whether it has a term of each of
// concepts.
func (ix *Index) matchesAll(concepts []concept) []bool {
	n := make([]int, len(ix.tools))
	for _, c := range concepts {
		seen := map[int32]bool{}
		for _, t := range c {
			for _, p := range ix.postings[t.term] {
				if !seen[p.tool] {
					seen[p.tool] = true
					n[p.tool]++
				}
			}
		}
	}
	out := make([]bool, len(ix.tools))
	for i, k := range n {
		out[i] = k == len(concepts)
	}
	return out
}

// supplyTop is how many of the best tools have their suppliers lifted.
const supplyTop = 5

// supplyShare is the share of its consumer's score a supplier is lifted
// to.
const supplyShare = 0.9

// genericParams are parameter names that say nothing of what a value is
// (an id of what? a query for what?), so that a tool mentioning them
// supplies nothing.
var genericParams = setOf(
	"id", "ids", "name", "names", "query", "q", "text", "type", "url", "uri", "path", "paths",
	"data", "file", "files", "content", "contents", "input", "value", "values", "key", "options",
	"params", "args", "arguments", "body", "string", "str", "code", "number", "num", "index",
)

// indexSuppliers finds each tool's suppliers.
func (ix *Index) indexSuppliers(terms [][nFields][]string, stems map[string]string) {
	ix.suppliers = make([][]int32, len(ix.tools))
	needs := make([][]string, len(ix.tools)) // the terms of each tool's required parameters
	for i, t := range ix.tools {
		for _, p := range t.Params {
			if !p.Required {
				continue
			}
			for _, w := range words(p.Name) {
				if genericParams[w] {
					continue
				}
				for _, term := range analyze(w, stems) {
					if !slices.Contains(needs[i], term) {
						needs[i] = append(needs[i], term)
					}
				}
			}
		}
	}
	byServer := map[int32][]int32{}
	for i, s := range ix.serverOf {
		byServer[s] = append(byServer[s], int32(i))
	}
	for i := range ix.tools {
		if len(needs[i]) == 0 {
			continue
		}
		for _, j := range byServer[ix.serverOf[i]] {
			if int(j) == i || slices.ContainsFunc(needs[j], func(t string) bool { return slices.Contains(needs[i], t) }) {
				continue
			}
			says := terms[j][fDescription]
			if !containsAll(says, needs[i]) {
				continue
			}
			ix.suppliers[i] = append(ix.suppliers[i], j)
		}
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// supply lifts the suppliers of the best supplyTop tools by scores (those
// keep allows) to supplyShare of their consumer's score.
func (ix *Index) supply(scores []float64, keep func(*Tool) bool) {
	var best []int // the best supplyTop tools, best first
	for i, s := range scores {
		if s < MinScore || (len(best) == supplyTop && s <= scores[best[len(best)-1]]) {
			continue
		}
		if keep != nil && !keep(&ix.tools[i]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, s, func(b int, s float64) int {
			if scores[b] >= s {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, at, i)
		if len(best) > supplyTop {
			best = best[:supplyTop]
		}
	}
	lifted := map[int32]float64{}
	for _, i := range best {
		for _, j := range ix.suppliers[i] {
			lifted[j] = max(lifted[j], supplyShare*scores[i])
		}
	}
	for j, s := range lifted {
		scores[j] = max(scores[j], s)
	}
}
