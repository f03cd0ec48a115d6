package tutor

import (
	"slices"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// courseQuery is a search query read for the course index: its concepts
// and the year level it asks for (0: none).
type courseQuery struct {
	concepts []queryConcept
	level    int
	// sequel is set when the query names a course of a sequence past the
	// first ("calculus 2", "french ii"): then titles numbered II, III or
	// IV are not ranked down.
	sequel bool
}

// sequelWords are the words of a query or title that make a course one
// past the first of a sequence: numbers, and "intermediate" and
// "advanced" courses that follow an introductory one.
var sequelWords = map[string]bool{
	"2": true, "3": true, "4": true, "ii": true, "iii": true, "iv": true, "second": true, "third": true, "fourth": true,
	"intermediate": true, "advanced": true, "adv": true,
}

// queryConcept is one thing a query asks for: the stems that say it, each
// with its weight (1 for the word typed, rankParams.expansion for what an
// abbreviation stands for), and the concept's own weight.
type queryConcept struct {
	variants []queryVariant
	weight   float64
}

type queryVariant struct {
	stem   string
	weight float64
}

// addVariant adds stem to the concept with weight w, or raises the weight
// of a stem it has.
func (c *queryConcept) addVariant(stem string, w float64) {
	for i := range c.variants {
		if c.variants[i].stem == stem {
			c.variants[i].weight = max(c.variants[i].weight, w)
			return
		}
	}
	c.variants = append(c.variants, queryVariant{stem, w})
}

// parseCourseQuery reads a query into concepts (see courseIndex): level
// words, two-word abbreviations, then each word and its expansions. Stop
// words are dropped; a concept whose stem an earlier one has is not
// repeated. At most textsearch.MaxTerms concepts are kept.
func parseCourseQuery(query string, p rankParams) courseQuery {
	var q courseQuery
	toks := textsearch.Tokens(query)
	has := map[string]bool{} // stems that head a concept already
	add := func(c queryConcept) {
		if len(c.variants) == 0 || has[c.variants[0].stem] || len(q.concepts) == textsearch.MaxTerms {
			return
		}
		has[c.variants[0].stem] = true
		q.concepts = append(q.concepts, c)
	}
	// expand adds the concepts of expansions: the first word of each joins
	// c (when c is not nil), the others are concepts of their own.
	expand := func(c *queryConcept, expansions []string, w float64) {
		for _, e := range expansions {
			for i, word := range textsearch.Tokens(e) {
				if i == 0 && c != nil {
					c.addVariant(stem(word), w)
					continue
				}
				if textsearch.IsStopWord(word) {
					continue
				}
				add(queryConcept{variants: []queryVariant{{stem(word), 1}}, weight: w})
			}
		}
	}
	for i := 0; i < len(toks); i++ {
		if i+1 < len(toks) {
			two := toks[i] + " " + toks[i+1]
			if l, ok := searchLevels[two]; ok {
				q.level = l
				i++
				continue
			}
			if e, ok := searchPhrases[two]; ok {
				expand(nil, e, 1)
				i++
				continue
			}
		}
		t := toks[i]
		if l, ok := searchLevels[t]; ok {
			q.level = l
			continue
		}
		e, abbrev := searchAbbrevs[t]
		if !abbrev && (textsearch.IsStopWord(t) || len(t) > 64) {
			continue
		}
		c := queryConcept{variants: []queryVariant{{stem(t), 1}}, weight: 1}
		expand(&c, e, p.expansion)
		for _, v := range slices.Clone(c.variants) {
			for _, r := range searchRelated[v.stem] {
				c.addVariant(stem(r), p.related)
			}
		}
		if sequelWords[t] {
			q.sequel = true
		}
		add(c)
	}
	return q
}
