package catalog

import (
	"strings"
)

// antiLeadRe is where the excluding courses start in a sentence about
// further credit: "Students with credit for", "Students who have taken".
var antiLeadRe = lazyRegexp(`(?i)\b(?:with credits? (?:for|in)|who (?:have |has )?(?:previously |already )?(?:taken|took|completed|obtained credit for|received credit for|credit for)(?: this topic under)?|credit for only one of|only receive credit for one of|receive credit for one of|credit for one of)\s+(?:either\s+)?`)

// antiEndRe is where they end: the verb, or a qualifier after the courses.
var antiEndRe = lazyRegexp(`(?i)\s+(?:may not|cannot|can not|will not|are not|first\b|under\b|prior to\b|in (?:spring|summer|fall)\b|with this topic|before\b)`)

// isAntirequisiteSentence says whether a lower-cased sentence is about
// credit excluded by other courses.
func isAntirequisiteSentence(low string) bool {
	return (strings.Contains(low, "for further credit") && (strings.Contains(low, "may not") || strings.Contains(low, "cannot"))) ||
		strings.Contains(low, "credit for only one of") || strings.Contains(low, "receive credit for one of")
}

// Antirequisites lists the courses that a note of an institution says
// exclude credit for the course it describes, in order, without repeats:
// SFU's "Students with credit for CMPT 102 may not take this course for
// further credit." (also "cannot take", "who have taken ... first", "with
// credit for either MATH 150, 151 or 154 may not take MATH 157") and
// Langara's "Students will receive credit for only one of CPSC 1150 or
// 1155." Langara's lists name the described course too: a caller drops it.
// Sentences that allow repeating a course for further credit name none.
func Antirequisites(institution, text string) []Ref {
	p := &reqParser{inst: strings.ToLower(strings.TrimSpace(institution))}
	var out []Ref
	for _, s := range splitSentences(normalizeSpace(text)) {
		if isAntirequisiteSentence(strings.ToLower(s)) {
			out = appendRefs(out, antirequisites(p, s)...)
		}
	}
	return out
}

// antirequisites reads the excluding courses of one sentence.
func antirequisites(p *reqParser, s string) []Ref {
	loc := antiLeadRe().FindStringIndex(s)
	if loc == nil {
		return nil
	}
	span := s[loc[1]:]
	if end := antiEndRe().FindStringIndex(span); end != nil {
		span = span[:end[0]]
	}
	// "CA (or FPA) 319": both subjects.
	var out []Ref
	for _, m := range subjAltInRe().FindAllStringSubmatch(span, -1) {
		out = appendRefs(out, Ref{p.inst, m[1], m[3]}, Ref{p.inst, m[2], m[3]})
	}
	return appendRefs(out, p.refs(span)...)
}

var subjAltInRe = lazyRegexp(`\b([A-Z]{2,5}) \((?i:or) ([A-Z]{2,5})\) ([0-9]{3,4}[A-Z]?)\b`)
