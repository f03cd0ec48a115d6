package substrate

import (
	"strings"
	"unicode"
)

// maxQueryTerms bounds the terms a search uses, whatever the query's length.
const maxQueryTerms = 32

// stopWords are dropped from search queries: they match nearly everything
// and carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can do does for from has have how i in is it its
		me my of on or our so than that the their them then there these they this to was we were what when where which
		who why will with would you your about into over also any all`) {
		m[w] = true
	}
	return m
}()

// queryTerms extracts the search terms of a natural-language query: runs of
// letters and digits, lower-cased, without stop words or duplicates, at most
// [maxQueryTerms]. Only letters and digits survive, so terms are safe to
// place in FTS5 and tsquery expressions.
func queryTerms(q string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		t := strings.ToLower(f)
		if len(t) > 64 || stopWords[t] || seen[t] {
			continue
		}
		seen[t] = true
		terms = append(terms, t)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return terms
}

// ftsMatch is an SQLite FTS5 MATCH expression matching any of the terms.
func ftsMatch(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(t)
		b.WriteByte('"')
	}
	return b.String()
}

// tsQuery is a PostgreSQL to_tsquery expression matching any of the terms.
func tsQuery(terms []string) string { return strings.Join(terms, " | ") }
