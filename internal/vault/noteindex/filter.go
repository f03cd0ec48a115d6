package noteindex

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// maxPhrase is the most tokens a query's phrase may have; a longer query
// is not looked for as a phrase.
const maxPhrase = 32

// maxFuzzy is the longest query (in letters, spaces left out) matched
// fuzzily against titles.
const maxFuzzy = 128

// parsed is a Query made ready to search.
type parsed struct {
	// terms are the query's distinct stemmed terms (no stop words).
	terms []string
	// termHashes are the terms' hashes, as in a note's seq.
	termHashes []uint32
	// phrase is the hash of each token of the query's words (stop words
	// included), when there are at least two and a term among them.
	phrase []uint32
	// fz is the words as a fuzzy query of the titles.
	fz    fuzzyQuery
	tags  []string // lower case, without '#'
	props []prop   // key lower case, value lower case ("" for any)
	paths []pathFilter
}

// pathFilter is one of Query.Paths: a prefix, or a glob.
type pathFilter struct {
	prefix string
	glob   *glob // nil for a prefix
	bad    bool  // a glob of too many alternatives: it matches nothing
}

// hasWords reports whether the query has anything to rank by.
func (pq *parsed) hasWords() bool { return len(pq.terms) > 0 || len(pq.fz.q) > 0 }

// hasFilters reports whether the query restricts the notes.
func (pq *parsed) hasFilters() bool {
	return len(pq.tags) > 0 || len(pq.props) > 0 || len(pq.paths) > 0
}

// parseQuery reads q: its text's "#tag" and "key:value" tokens become
// filters, the rest its words.
func parseQuery(q Query) *parsed {
	pq := &parsed{}
	var words []string
	for _, tok := range strings.Fields(q.Text) {
		if t, ok := tagToken(tok); ok {
			pq.tags = append(pq.tags, t)
			continue
		}
		if p, ok := propToken(tok); ok {
			pq.props = append(pq.props, p)
			continue
		}
		words = append(words, tok)
	}
	for _, t := range q.Tags {
		if t = normTag(t); t != "" {
			pq.tags = append(pq.tags, t)
		}
	}
	for k, v := range q.Properties {
		if k = normKey(k); k != "" {
			pq.props = append(pq.props, prop{key: k, value: strings.ToLower(strings.TrimSpace(v))})
		}
	}
	slices.SortFunc(pq.props, func(a, b prop) int { // the map's order is random
		return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.value, b.value))
	})
	for _, p := range q.Paths {
		pq.paths = append(pq.paths, newPathFilter(p))
	}

	text := strings.Join(words, " ")
	for _, t := range textsearch.Terms(text) {
		e := analyzeToken(t)
		if !e.index || slices.Contains(pq.terms, e.stem) {
			continue
		}
		pq.terms = append(pq.terms, e.stem)
		pq.termHashes = append(pq.termHashes, e.hash)
	}
	if len(pq.terms) > 0 {
		var phrase []uint32
		eachToken(text, nil, func(tok []byte, _, _ int) {
			if len(phrase) <= maxPhrase {
				phrase = append(phrase, analyzeToken(string(tok)).hash)
			}
		})
		if len(phrase) >= 2 && len(phrase) <= maxPhrase {
			pq.phrase = phrase
		}
	}
	if pq.fz = newFuzzyQuery(text); len(pq.fz.q) > maxFuzzy {
		pq.fz = fuzzyQuery{}
	}
	return pq
}

// tagToken reads a "#tag" token of a query's text.
func tagToken(tok string) (string, bool) {
	if len(tok) < 2 || tok[0] != '#' || tok[1] == '#' {
		return "", false
	}
	t := normTag(strings.TrimRight(tok, ",;.!?"))
	return t, t != ""
}

// propToken reads a "key:value" token of a query's text: a key that starts
// with a letter and holds letters, digits, '_', '-' and '.', and a value
// (quotes around it dropped). "http://..." is not one.
func propToken(tok string) (prop, bool) {
	i := strings.IndexByte(tok, ':')
	if i <= 0 || i == len(tok)-1 {
		return prop{}, false
	}
	key, value := tok[:i], tok[i+1:]
	if strings.HasPrefix(value, "//") {
		return prop{}, false
	}
	for j, r := range key {
		if !unicode.IsLetter(r) && (j == 0 || !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.') {
			return prop{}, false
		}
	}
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	return prop{key: normKey(key), value: strings.ToLower(value)}, true
}

// match reports whether n passes the query's filters.
func (pq *parsed) match(n *note) bool {
	for _, t := range pq.tags {
		if !hasTag(n.tags, t) {
			return false
		}
	}
	for _, p := range pq.props {
		if !hasProp(n.props, p) {
			return false
		}
	}
	if len(pq.paths) == 0 {
		return true
	}
	for i := range pq.paths {
		if pq.paths[i].match(n.doc.Path) {
			return true
		}
	}
	return false
}

// hasTag reports whether tags hold t or a tag nested under it.
func hasTag(tags []string, t string) bool {
	for _, have := range tags {
		if have == t || len(have) > len(t) && have[len(t)] == '/' && strings.HasPrefix(have, t) {
			return true
		}
	}
	return false
}

// hasProp reports whether props have p's key with a value holding p's.
func hasProp(props []prop, p prop) bool {
	for _, have := range props {
		if have.key == p.key && strings.Contains(have.value, p.value) {
			return true
		}
	}
	return false
}

// newPathFilter reads a path filter: a glob (glob.go) when it holds one
// of * ? [ ] { }, else a prefix. A leading "/" or "./" is dropped (paths are
// vault-relative).
func newPathFilter(p string) pathFilter {
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimLeft(p, "/")
	if !hasGlobMeta(p) {
		return pathFilter{prefix: p}
	}
	g, ok := compileGlob(p)
	return pathFilter{glob: g, bad: !ok}
}

func (f *pathFilter) match(path string) bool {
	switch {
	case f.bad:
		return false
	case f.glob != nil:
		return f.glob.match(path)
	}
	return strings.HasPrefix(path, f.prefix)
}

// classEnd is the index of the ']' closing the class that opens at g[i]
// ('['), or -1. A ']' first in the class (after any '!' or '^') is
// literal; an empty class is none.
func classEnd(g string, i int) int {
	j := i + 1
	if j < len(g) && (g[j] == '!' || g[j] == '^') {
		j++
	}
	if j < len(g) && g[j] == ']' {
		j++
	}
	for ; j < len(g); j++ {
		if g[j] == ']' {
			if j == i+1 {
				return -1
			}
			return j
		}
	}
	return -1
}
