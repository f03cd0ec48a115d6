package transfer

import "strings"

// EvidenceSearchURL is the BC Transfer Guide's course-to-course search
// ("Search Courses": by sending institution, subject and course), the most
// specific public page of the Guide that a person can open for one
// agreement.
//
// Why this form: the Guide publishes no address per agreement or per
// course. Its search page (this URL, seen as the search form's address in
// several public scrapers of the Guide) loads its results with a POST to a
// WordPress JSON API that needs a per-visit nonce, so a results page
// cannot be linked to; its help page (bctransferguide.ca/search/help/)
// describes the same steps: choose the sending institution, subject and
// course, then read the agreement for the receiving institution and its
// effective dates. An address with query parameters would be a scheme
// invented here, so none is made up: the evidence is this page plus
// Lookup, the values to enter and the agreement to read.
const EvidenceSearchURL = "https://www.bctransferguide.ca/transfer-options/search-courses/"

// Followable returns the evidence of r made followable by a person: its
// URL the Guide's course search (EvidenceSearchURL) and its Lookup the
// steps there, "Search Courses: sending institution LANG, subject CPSC,
// course 1150; read the agreement with SFU effective May/03 (to Dec/19)".
// sending and receiving are the BC Transfer Guide codes of r's source and
// destination institutions. Evidence of another source (the demo data's)
// is returned as it is.
func Followable(r *Rule, sending, receiving string) Evidence {
	e := r.Evidence
	if e.Source != EvidenceSource {
		return e
	}
	e.URL = EvidenceSearchURL
	var b strings.Builder
	b.WriteString("Search Courses: sending institution ")
	b.WriteString(sending)
	b.WriteString(", subject ")
	b.WriteString(r.Course.Subject)
	b.WriteString(", course ")
	b.WriteString(r.Course.Number)
	b.WriteString("; read the agreement with ")
	b.WriteString(receiving)
	if !r.EffectiveStart.IsZero() {
		b.WriteString(" effective ")
		b.WriteString(r.EffectiveStart.Format("Jan/06"))
	}
	if !r.EffectiveEnd.IsZero() {
		b.WriteString(" (to ")
		b.WriteString(r.EffectiveEnd.Format("Jan/06"))
		b.WriteString(")")
	}
	e.Lookup = b.String()
	return e
}
