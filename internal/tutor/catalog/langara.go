package catalog

import (
	"strings"
)

// langaraLabelRe is a Langara requisite paragraph's label, with the
// spellings of the catalogue ("Prerequisite(s):", "Prerequisites:",
// "Prerequisites(s):", "Prerequisite(s:", "Corequisites:").
var langaraLabelRe = lazyRegexp(`(?i)^(pre|co)-?requisi?tes?\s*(?:\(s\)?|s\(s\))?\s*:\s*`)

// continuationRe is a paragraph that continues a requisite paragraph:
// "or", "and", "2) One of the following: ...".
var continuationRe = lazyRegexp(`(?i)^(?:or|and|and/or)$|^[0-9]\)\s`)

// ExtractLangara splits a Langara catalogue description into the course
// description and its prerequisite and corequisite texts. Langara writes
// them as paragraphs (separated by blank lines) labelled
// "Prerequisite(s):" and "Corequisite(s):"; the label is dropped from the
// texts returned. A requisite text goes on over the paragraphs that
// continue it: a paragraph that is only "or" or "and", one numbered
// "2) ...", and any after a paragraph ending in "or", "and", ";" or ":".
// Other paragraphs, before or after, are the description, joined by blank
// lines. A text Langara does not give is "".
func ExtractLangara(description string) (desc, prereq, coreq string) {
	paras := splitParagraphs(description)
	var d, pre, co []string
	var cur *[]string
	for _, para := range paras {
		flatPara := strings.Join(strings.Fields(para), " ")
		if m := langaraLabelRe().FindStringSubmatch(flatPara); m != nil {
			cur = &pre
			if strings.EqualFold(m[1], "co") {
				cur = &co
			}
			*cur = append(*cur, strings.TrimSpace(flatPara[len(m[0]):]))
			continue
		}
		if cur != nil && len(*cur) > 0 && (continuationRe().MatchString(flatPara) || continues((*cur)[len(*cur)-1])) {
			(*cur)[len(*cur)-1] += " " + flatPara
			continue
		}
		cur = nil
		d = append(d, para)
	}
	return strings.Join(d, "\n\n"), strings.Join(pre, "\n\n"), strings.Join(co, "\n\n")
}

// continues says whether a requisite text is left open for the next
// paragraph.
func continues(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	return strings.HasSuffix(l, ";") || strings.HasSuffix(l, ":") || strings.HasSuffix(l, " or") ||
		strings.HasSuffix(l, " and") || l == "or" || l == "and"
}

// splitParagraphs cuts a text at blank lines, trimming each paragraph and
// dropping empty ones.
func splitParagraphs(s string) []string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	var cur []string
	flush := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = nil
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}
