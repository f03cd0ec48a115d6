package transfer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// The grammar of BCTG's credit text, as surveyed on the shared data
// (11,882 rows, 407 shapes once codes and numbers are abstracted):
//
//	credit   = "No credit" [tail]
//	         | "Individual assessment" ["."] | "Credit to be determined ..."
//	         | [source "="] targets [tail]
//	source   = "Any" N "of" course {("or"|",") course}
//	         | course {"&" course} ["&" "one of" course {(","|"or") course}]
//	         | course {"or" course}
//	targets  = segment {(", or" | ", &" | "," ) segment}   (", or" adds
//	           alternatives; ", &" and a bare comma before a destination
//	           course conjoin, distributing over alternatives)
//	segment  = atom {("&" | "or") atom}                   ("&" binds tighter)
//	atom     = ["Exemption"] course [designation | "Exemption"]...
//	course   = [INST] SUBJ NUM ["(" credits ")"]          (INST defaults to
//	           the destination; "GEOG/EESC 1XX" is GEOG 1XX or EESC 1XX)
//	tail     = {designation ","} notes                    (notes are kept
//	           verbatim; Waive/Exempt clauses in them are read into Waives)

var (
	// courseRe reads "[INST ]SUBJ NUM", the subject possibly glued to the
	// number ("FINA2120") or two subjects joined by a slash.
	courseRe = lazyRegexp(`^(?:([A-Z]{2,5}) )?([A-Za-z]{2,8}(?:/[A-Za-z]{2,8})?) ?([0-9X][0-9A-Za-z]{0,8}(?: lev\b)?)`)
	// creditsRe reads " (3)", "(1.5)", "(-)", and "(3" at the end of the text.
	creditsRe = lazyRegexp(`^ ?\( ?([0-9]+(?:\.[0-9]+)?|\.[0-9]+|-) ?(\)|$)`)
	// desigRe reads a designation: SFU's breadth and skills designations
	// (Q, W, B-Hum, B-Soc, B-Sci and their slash combinations) and OL.
	desigRe = lazyRegexp(`^(?:OL|(?:Q|W|B ?- ?(?:Hum|Soc|Sci))(?: ?/ ?(?:Q|W|B ?- ?(?:Hum|Soc|Sci)|Hum|Soc|Sci))*)`)
	// waiveRe finds a waive or exemption clause in the notes.
	waiveRe = lazyRegexp(`(?i)\b(?:waives?|exempt(?:ion)?(?: from| credit for)?)\s+`)
	// spaceRe collapses white space.
	spaceRe = lazyRegexp(`\s+`)
	// genericNumberRe says a course number is generic credit.
	genericNumberRe = lazyRegexp(`X|^[0-9](?:st|nd|rd|th)$|LEV$|^[0-9][A-Z]{3,}$`)
)

// electiveSubjects are subject codes that name an elective bucket rather
// than a discipline (read-only).
var electiveSubjects = map[string]bool{"UNSP": true, "OPEN": true, "ELEC": true, "UNCR": true}

// defaultDirectory is the BC Transfer Guide directory used when none is
// given: built once, never modified (read only).
var defaultDirectory = sync.OnceValue(func() *catalog.Directory { return catalog.NewDirectory() })

// Parser parses BCTG rows with a directory of institutions and the date
// the data was accessed (the rules' Evidence.Accessed).
type Parser struct {
	// Dir finds institutions by BCTG code; nil means the BC Transfer Guide
	// directory (catalog.NewDirectory(), built once per process).
	Dir *catalog.Directory
	// Accessed is when the rows were read from the BC Transfer Guide.
	Accessed time.Time
}

// Parse reads one BCTG row into a Rule with the BC Transfer Guide
// directory dir (nil for catalog.NewDirectory(), built once) and no
// accessed date.
// A row it cannot structure is returned with Parsed false, its credit text
// in Raw and the reason in ParseProblem.
func Parse(row Row, dir *catalog.Directory) Rule {
	return Parser{Dir: dir}.Parse(row)
}

// ParseAll parses every row, in order.
func (p Parser) ParseAll(rows []Row) []Rule {
	if p.Dir == nil {
		p.Dir = defaultDirectory()
	}
	out := make([]Rule, len(rows))
	for i, r := range rows {
		out[i] = p.Parse(r)
	}
	return out
}

// Parse reads one BCTG row into a Rule (see the package function Parse).
func (p Parser) Parse(row Row) Rule {
	dir := p.Dir
	if dir == nil {
		dir = defaultDirectory()
	}
	r := Rule{
		Raw: row.Credit,
		Evidence: Evidence{
			Source:    EvidenceSource,
			URL:       EvidenceURL,
			Reference: fmt.Sprintf("%s %s %d to %s, effective %s", row.Source, row.Subject, row.CourseCode, row.Destination, row.EffectiveStart),
			Accessed:  p.Accessed,
		},
	}
	fail := func(format string, a ...any) Rule {
		r.Parsed, r.Confidence, r.Source, r.Targets, r.Waives = false, 0, nil, nil, nil
		r.Designations, r.Conditions, r.Notes, r.Doubts, r.Repairs, r.Outcome = nil, nil, nil, nil, nil, ""
		r.ParseProblem = fmt.Sprintf(format, a...)
		return r
	}
	src, ok := dir.Lookup(row.Source)
	if !ok {
		return fail("unknown source institution %q", row.Source)
	}
	dst, ok := dir.Lookup(row.Destination)
	if !ok {
		return fail("unknown destination institution %q", row.Destination)
	}
	r.Destination = dst.Key
	subject := strings.ToUpper(strings.TrimSpace(row.Subject))
	if subject == "" || row.CourseCode < 0 {
		return fail("source course %q %d is not SUBJECT NUMBER", row.Subject, row.CourseCode)
	}
	r.Course = catalog.Ref{Institution: src.Key, Subject: subject, Number: strconv.Itoa(row.CourseCode)}
	var err error
	if r.EffectiveStart, err = ParseMonth(row.EffectiveStart); err != nil {
		return fail("effective start: %v", err)
	}
	if r.EffectiveEnd, err = ParseEndMonth(row.EffectiveEnd); err != nil {
		return fail("effective end: %v", err)
	}

	ps := &parser{s: strings.TrimSpace(spaceRe().ReplaceAllString(row.Credit, " ")), dir: dir, dest: dst.Key}
	if ps.s == "" {
		return fail("empty credit text")
	}
	if problem := ps.rule(&r); problem != "" {
		return fail("%s", problem)
	}
	r.Parsed = true
	r.Repairs = slices.Compact(slices.Sorted(slices.Values(ps.repairs)))
	r.Confidence = repairConfidence(len(r.Repairs))
	return r
}

// parser holds the state of one credit text's parse.
type parser struct {
	s       string
	i       int
	dir     *catalog.Directory
	dest    string
	repairs []string // what was mended; a failed attempt drops its own
	atoms   []atom
	tooMany bool // the alternatives passed maxSets
}

// atom is one target as read, before the alternatives are expanded.
type atom struct {
	alts  []Target // one, or one per subject of "GEOG/EESC 1XX"
	desig []string
}

// rest is the text not yet read.
func (p *parser) rest() string { return p.s[p.i:] }

// repair notes something the parser had to mend or assume.
func (p *parser) repair(what string) { p.repairs = append(p.repairs, what) }

// mark is a position of the parse to come back to.
type mark struct{ i, repairs int }

// mark saves the position and the repairs so far.
func (p *parser) mark() mark { return mark{p.i, len(p.repairs)} }

// reset goes back to m, dropping the repairs made since.
func (p *parser) reset(m mark) { p.i, p.repairs = m.i, p.repairs[:m.repairs] }

// space skips one optional space.
func (p *parser) space() {
	if p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// word consumes w (case-insensitive) when it is followed by a non-letter.
func (p *parser) word(w string) bool {
	rest := p.rest()
	if len(rest) < len(w) || !strings.EqualFold(rest[:len(w)], w) {
		return false
	}
	if len(rest) > len(w) && isLetter(rest[len(w)]) {
		return false
	}
	p.i += len(w)
	return true
}

// op consumes " & ", " or ", "&", with optional spaces around.
func (p *parser) op(o string) bool {
	save := p.mark()
	p.space()
	if p.word(o) {
		p.space()
		return true
	}
	p.reset(save)
	return false
}

func isLetter(b byte) bool { return b < 0x80 && unicode.IsLetter(rune(b)) }

// rule parses the whole credit text into r; it returns a problem or "".
func (p *parser) rule(r *Rule) string {
	own := []Group{{Kind: GroupRequired, N: 1, Courses: []SourceCourse{{Course: r.Course}}}}
	switch {
	case p.word("No credit"):
		r.Outcome, r.Source = OutcomeNoCredit, own
		p.tail(r)
		return ""
	case p.word("Individual assessment"):
		r.Outcome, r.Source = OutcomeAssessment, own
		p.tail(r)
		return ""
	case p.word("Credit to be determined"):
		r.Outcome, r.Source = OutcomeAssessment, own
		r.Conditions = []string{p.s}
		return ""
	}
	start := p.mark()
	if src, ok := p.source(); ok && p.equals() {
		r.Source = src
	} else {
		p.reset(start)
		r.Source = own
	}
	p.atoms = nil
	sets, ok := p.targets()
	if !ok {
		return fmt.Sprintf("no target course at %q", clip(p.rest()))
	}
	// Trailing designations: on the only target, else the whole rule
	// unless earlier targets carry their own.
	last := len(p.atoms) - 1
	trailing := p.tailDesignations()
	others := false
	for _, a := range p.atoms[:last] {
		others = others || len(a.desig) > 0
	}
	switch {
	case last == 0:
		p.atoms[0].desig = append(p.atoms[0].desig, trailing...)
	case !others:
		r.Designations = append(p.atoms[last].desig, trailing...)
		p.atoms[last].desig = nil
	default:
		r.Designations = trailing
	}
	r.Targets = p.materialize(sets)
	if p.tooMany || len(r.Targets) > maxSets {
		return fmt.Sprintf("more than %d alternative target sets", maxSets)
	}
	r.Outcome = OutcomeExemption
	for _, s := range r.Targets {
		for _, t := range s.Targets {
			if !t.Exemption {
				r.Outcome = OutcomeCredit
			}
		}
	}
	p.tail(r)
	return ""
}

// equals consumes "=" with optional spaces around.
func (p *parser) equals() bool {
	save := p.mark()
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '=' {
		if p.i > 0 && p.s[p.i-1] != ' ' || p.i+1 < len(p.s) && p.s[p.i+1] != ' ' {
			p.repair("missing space around =")
		}
		p.i++
		p.space()
		return true
	}
	p.reset(save)
	return false
}

// source parses the source side of "source = targets".
func (p *parser) source() ([]Group, bool) {
	sc := func(c course) SourceCourse { return SourceCourse{Course: c.refs[0], Credits: c.credits} }
	if p.word("Any") {
		p.space()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil || n < 1 {
			return nil, false
		}
		p.i = j
		p.space()
		if !p.word("of") {
			return nil, false
		}
		p.space()
		g := Group{Kind: GroupNOf, N: n}
		for {
			c, ok := p.course(false)
			if !ok {
				return nil, false
			}
			g.Courses = append(g.Courses, sc(c))
			if !p.op("or") && !p.comma() {
				break
			}
		}
		if n > len(g.Courses) {
			return nil, false
		}
		return []Group{g}, true
	}
	c, ok := p.course(false)
	if !ok {
		return nil, false
	}
	courses := []SourceCourse{sc(c)}
	switch {
	case p.peekOp("or"):
		for p.op("or") {
			c, ok := p.course(false)
			if !ok {
				return nil, false
			}
			courses = append(courses, sc(c))
		}
		return []Group{{Kind: GroupOr, N: 1, Courses: courses}}, true
	default:
		var groups []Group
		for p.op("&") {
			if p.word("one of") {
				p.space()
				g := Group{Kind: GroupOr, N: 1}
				for {
					c, ok := p.course(false)
					if !ok {
						return nil, false
					}
					g.Courses = append(g.Courses, sc(c))
					if !p.comma() && !p.op("or") {
						break
					}
				}
				groups = append(groups, g)
				continue
			}
			c, ok := p.course(false)
			if !ok {
				return nil, false
			}
			courses = append(courses, sc(c))
		}
		return append([]Group{{Kind: GroupRequired, N: len(courses), Courses: courses}}, groups...), true
	}
}

// peekOp says whether op o comes next, without consuming it.
func (p *parser) peekOp(o string) bool {
	save := p.mark()
	ok := p.op(o)
	p.reset(save)
	return ok
}

// comma consumes ", " (or ",").
func (p *parser) comma() bool {
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		p.space()
		return true
	}
	return false
}

// course is a course as read: its reference (two for "GEOG/EESC 1XX") and credits.
type course struct {
	refs    []catalog.Ref
	credits *float64
	inst    bool // the text named the institution
}

// course reads "[INST] SUBJ NUM [(credits)]". Without INST the course is
// at the destination when defaultDest (a repair), else it is not a course.
func (p *parser) course(defaultDest bool) (course, bool) {
	m := courseRe().FindStringSubmatchIndex(p.rest())
	if m == nil {
		return course{}, false
	}
	rest := p.rest()
	group := func(k int) string {
		if m[2*k] < 0 {
			return ""
		}
		return rest[m[2*k]:m[2*k+1]]
	}
	instText, subj, num := group(1), group(2), group(3)
	var c course
	inst := ""
	switch {
	case instText != "":
		in, ok := p.dir.Lookup(instText)
		if !ok {
			return course{}, false
		}
		inst, c.inst = in.Key, true
	default:
		// "SFUSTAT 205": an institution code glued to the subject.
		for n := 2; n <= 5 && n+2 <= len(subj); n++ {
			if in, ok := p.dir.Lookup(subj[:n]); ok && strings.ToUpper(subj[:n]) == subj[:n] && in.Code == subj[:n] {
				inst, subj, c.inst = in.Key, subj[n:], true
				p.repair("institution code glued to subject")
				break
			}
		}
		if inst == "" {
			if !defaultDest {
				return course{}, false
			}
			inst = p.dest
			p.repair("course without institution read at the destination")
		}
	}
	if strings.EqualFold(subj, "Any") || strings.EqualFold(subj, "of") {
		return course{}, false
	}
	end := m[1]
	if instText != "" && m[5] < len(rest) && m[5] == m[6] {
		p.repair("subject glued to number")
	}
	number := normalizeNumber(num)
	for _, s := range strings.Split(subj, "/") {
		c.refs = append(c.refs, catalog.Ref{Institution: inst, Subject: strings.ToUpper(s), Number: number})
	}
	if len(c.refs) > 1 {
		p.repair("subjects joined by a slash read as alternatives")
	}
	p.i += end
	if cm := creditsRe().FindStringSubmatch(p.rest()); cm != nil {
		if cm[2] == "" {
			p.repair("missing closing parenthesis")
		}
		if cm[1] == "-" {
			p.repair("credits not given")
		} else {
			v, err := strconv.ParseFloat(cm[1], 64)
			if err == nil {
				c.credits = &v
			}
		}
		if strings.HasPrefix(p.rest(), "(") {
			p.repair("no space before credits")
		}
		p.i += len(cm[0])
	} else {
		p.repair("credits not given")
	}
	return c, true
}

// normalizeNumber upper-cases a course number, keeps ordinals as BCTG
// writes them ("1st", "2nd") and joins a level ("100 lev" is "100LEV").
func normalizeNumber(n string) string {
	n = strings.ToUpper(strings.ReplaceAll(n, " ", ""))
	if len(n) == 3 && n[0] >= '0' && n[0] <= '9' {
		switch n[1:] {
		case "ST", "ND", "RD", "TH":
			return n[:1] + strings.ToLower(n[1:])
		}
	}
	return n
}

// targetKind classifies a target course.
func targetKind(ref catalog.Ref) TargetKind {
	if !genericNumberRe().MatchString(ref.Number) {
		return TargetCourse
	}
	if electiveSubjects[ref.Subject] {
		return TargetElective
	}
	return TargetGeneric
}
