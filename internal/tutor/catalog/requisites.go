package catalog

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The operators of a requisite expression (Expr.Op).
const (
	// OpAll is met when every child is met.
	OpAll = "all"
	// OpAny is met when at least one child is met.
	OpAny = "any"
	// OpNOf is met when at least N children are met ("two of BPK 201, 205
	// and 207").
	OpNOf = "n_of"
	// OpCourse is a course (Expr.Course), with its minimum grade if the
	// text names one.
	OpCourse = "course"
	// OpOther is a condition that is not a course ("45 units", "permission
	// of the instructor", "Physics 12"): its text, unparsed.
	OpOther = "other"
)

// Requisite is a prerequisite or corequisite text and what was read from
// it. Text is the text as given, always kept; the rest is derived and may
// be partial: a condition the parser cannot read is an OpOther node
// holding its words.
type Requisite struct {
	// Text is the original text.
	Text string `json:"text"`
	// Expr is the requirement the text states; nil when the text is empty
	// or states only notes, recommendations or exclusions.
	Expr *Expr `json:"expr,omitempty"`
	// Corequisites is what a prerequisite text names as corequisite in a
	// sentence of its own ("CA 143. Corequisite: CA 146.").
	Corequisites *Expr `json:"corequisites,omitempty"`
	// Recommended are the courses the text recommends without requiring
	// them ("Recommended: BISC 300.", "CPSC 1181 is recommended.").
	Recommended []Ref `json:"recommended,omitempty"`
	// Antirequisites are the courses the text says exclude credit for
	// this one (see Antirequisites).
	Antirequisites []Ref `json:"antirequisites,omitempty"`
	// Notes are the sentences after the first that are remarks, not
	// requirements ("Prerequisites are valid for only three years.",
	// "Students may be required to complete a Criminal Record Check.").
	Notes []string `json:"notes,omitempty"`
}

// Unparsed lists the course codes that the requisite's text names but
// that none of its derived parts places: codes left in OpOther nodes of
// Expr and Corequisites, and codes in Notes.
func (r *Requisite) Unparsed() []string {
	out := r.Expr.Unparsed()
	if r.Corequisites != nil {
		out = append(out, r.Corequisites.Unparsed()...)
	}
	for _, n := range r.Notes {
		out = append(out, CourseCodes(n)...)
	}
	return out
}

// Expr is a node of a requisite expression: a course, a condition that is
// not a course, or the combination of its children by all, any or n_of.
type Expr struct {
	// Op is OpAll, OpAny, OpNOf, OpCourse or OpOther.
	Op string `json:"op"`
	// N is how many children an OpNOf node needs.
	N int `json:"n,omitempty"`
	// Course is the course of an OpCourse node; its institution is the one
	// the text was parsed for.
	Course *Ref `json:"course,omitempty"`
	// MinGrade is the minimum grade an OpCourse node asks for ("C-", "B",
	// "S" for satisfactory, "70%"), empty if the text names none.
	MinGrade string `json:"minGrade,omitempty"`
	// Concurrent says the course may also be taken in the same term
	// ("JOUR 2380 may be taken concurrently", "or corequisite EDUC 403").
	Concurrent bool `json:"concurrent,omitempty"`
	// Children are the operands of OpAll, OpAny and OpNOf.
	Children []Expr `json:"children,omitempty"`
	// Text is the fragment of the original text the node was read from.
	Text string `json:"text,omitempty"`
}

// Courses lists the courses of the expression's course nodes, in order,
// without repeats.
func (e *Expr) Courses() []Ref {
	if e == nil {
		return nil
	}
	var out []Ref
	e.Walk(func(n *Expr) {
		if n.Op == OpCourse && n.Course != nil && !slices.Contains(out, *n.Course) {
			out = append(out, *n.Course)
		}
	})
	return out
}

// Walk calls f on e and every node below it, parents before children.
func (e *Expr) Walk(f func(*Expr)) {
	if e == nil {
		return
	}
	f(e)
	for i := range e.Children {
		e.Children[i].Walk(f)
	}
}

// Unparsed lists the course codes ("CMPT 120") that the text of an
// OpOther node of the expression still holds: what the parser saw but
// could not place.
func (e *Expr) Unparsed() []string {
	if e == nil {
		return nil
	}
	var out []string
	e.Walk(func(n *Expr) {
		if n.Op == OpOther {
			out = append(out, CourseCodes(n.Text)...)
		}
	})
	return out
}

// CourseCodes lists the full course codes ("CMPT 120", "MATH 1153") found
// in a text, in order, normalized to "SUBJECT NUMBER". Non-course codes of
// the same shape (test scores such as "LET 4" or "MDT 85" have fewer
// digits and do not match) are left out.
func CourseCodes(text string) []string {
	var out []string
	for _, m := range codeRe.FindAllStringSubmatchIndex(text, -1) {
		subject, number := text[m[2]:m[3]], text[m[4]:m[5]]
		if notSubject[subject] || (m[1] < len(text) && text[m[1]] == '-') {
			// "HSCI 200-level courses" names no course.
			continue
		}
		out = append(out, subject+" "+number)
	}
	return out
}

var (
	// codeRe is a course code: 2 to 5 capitals, an optional space, 3 or 4
	// digits and an optional capital suffix ("CMPT 105W").
	codeRe = regexp.MustCompile(`\b([A-Z]{2,5}) ?([0-9]{3,4}[A-Z]?)\b`)
	// bareRe is a course number alone.
	bareRe = regexp.MustCompile(`^[0-9]{3,4}[A-Z]?$`)
	// subjRe is a subject alone.
	subjRe = regexp.MustCompile(`^[A-Z]{2,5}$`)
	// prefixGradeRe is Langara's grade before the courses: `a minimum "C-"
	// grade in`, `an "S" grade in`, `a minimum 70% in`.
	prefixGradeRe = regexp.MustCompile(`(?i)^(?:an? )?(?:minimum ?)?(?:of )?(?:an? )?(?:grade of )?"?` + gradePattern + `"? ?(?:grade |standing )?(?:or (?:better|higher) )?(?:in|on|for) (?:(?:each|all|both) of )?`)
	// anyGradeRe finds grade phrases, to count them.
	anyGradeRe = regexp.MustCompile(`(?i)(?:an? (?:minimum )?"?` + gradePattern + `"? (?:grade )?(?:in|on)\b|with an? (?:minimum )?(?:grade of |final grade of )?"?` + gradePattern + `"?)`)
	// suffixGradeRe is SFU's grade after the courses: `with a minimum
	// grade of C-`, `both with a grade of C- or better`, `with a C- or
	// better`.
	suffixGradeRe = regexp.MustCompile(`(?i),? ?(?:(?:both|all|each|either),? )?with (?:an? )?(?:minimum )?(?:of )?(?:final )?(?:grades? )?(?:of )?(?:at least )?(?:an? )?"?` + gradePattern + `"?(?: grade)?(?: or (?:better|higher|above))?(?: in (?:each|all|both)(?: of them)?)?\.?$`)
	// gradeItemRe is a grade standing alone, perhaps followed by another
	// condition: "all with a minimum grade of C- and 45 units".
	gradeItemRe = regexp.MustCompile(`(?i)^(?:(?:both|all|each|either),? )?with (?:an? )?(?:minimum )?(?:of )?(?:final )?(?:grades? )?(?:of )?(?:at least )?(?:an? )?"?` + gradePattern + `"?(?: grade)?(?: or (?:better|higher|above))?(?: and (.+))?$`)
	// groupRe is a lead-in that makes what follows a group: "one of the
	// following:", "two of", "either", "all of".
	groupRe = regexp.MustCompile(`(?i)^(?:any |at least )?(?:(one|two|three|four|five|six|seven|eight|all|both|each|any) (?:of|from)(?: the following)?(?: (?:courses|prerequisite combinations))?(?: \(?or more\)?)?|(either)|(all|both) the following(?: courses)?)\s*:?\s+`)
	// midGroupRe finds a group starting inside a segment: "X and one of
	// the following: A, B or C", "X or either A or B".
	midGroupRe = regexp.MustCompile(`(?i)[,]? (and|or|plus) ((?:any |at least )?(?:one|two|three|four|five|six) (?:of|from)(?: the following)?(?: courses)?:?|either) `)
	// leadInRe is wording before a course that does not change it.
	leadInRe = regexp.MustCompile(`(?i)^(?:(?:the )?(?:successfull? )?completion of|credit (?:in|for)|completed|complete|students complete|students must (?:have )?complete(?:d)?|a grade in|at least|prior|previous|including|plus|both|all of)\s+`)
	// concurrentLeadRe makes the course that follows concurrent.
	concurrentLeadRe = regexp.MustCompile(`(?i)^(?:co-?requisites?(?: of)?:?|concurrent (?:enrol(?:l)?ment|registration) in)\s+`)
	// orParenRe is a course with an alternative in parentheses: "HSCI 230
	// (or 330)", "STAT 203 (formerly 103)".
	orParenRe = regexp.MustCompile(`^(.+?) ?\((?i:or|formerly|or formerly|previously)\s+([^()]+)\)$`)
	// subjAltRe is "CA (or FPA) 123".
	subjAltRe = regexp.MustCompile(`^([A-Z]{2,5}) \((?i:or) ([A-Z]{2,5})\) ([0-9]{3,4}[A-Z]?)$`)
	// noteParenRe is a course followed by a parenthetical note.
	noteParenRe = regexp.MustCompile(`^(.+?) ?\(([^()]*)\)$`)
	// labelRe is a requisite label at the start of a text.
	labelRe = regexp.MustCompile(`(?i)^(?:or )?(pre|co)-?requisi?tes?\s*(?:\(s\)?|s\(s\))?\s*:\s*`)
	// recommendRe marks a sentence of recommendations.
	recommendRe = regexp.MustCompile(`(?i)^(?:strongly |highly )?recommended\b|\brecommended\b|\brecommendation to\b|\b(?:strongly )?(?:advised|encouraged) to\b`)
	// recommendLabelRe is a recommendation label inside a sentence.
	recommendLabelRe = regexp.MustCompile(`(?i)[;,.]?\s*(?:strongly |highly )?recommended:\s*`)
	// proseRe marks a sentence that is a note, not a requirement list.
	proseRe = regexp.MustCompile(`(?i)^(?:students|those|must|in order|this|these|it |no |note|if |other|participation|prerequisites? (?:are|is|may|waived)|a proficiency|a criminal|a course|course participants|majors|only|also|please|reserved|open|enrol|registration|priority|may not|cannot|graded|approval of|applicants)|\b(?:prerequisites|requirements) (?:are|is) (?:only )?valid|\bmay be (?:required|substituted)|\bmay substitute\b|\bmay use\b`)
)

// gradePattern matches a grade: a letter grade, SR or S (satisfactory),
// P, F, or a percentage.
const gradePattern = `([A-D][+-]?|SR|[FPS]|[0-9]{1,3}%)`

// notSubject are capitals that look like subjects but are not ones.
var notSubject = map[string]bool{
	"LET": true, "LEAP": true, "MDT": true, "LPI": true, "IELTS": true, "TOEFL": true,
	"GPA": true, "CGPA": true, "UDGPA": true, "SFU": true, "UBC": true, "BC": true,
	"OR": true, "AND": true, "ONE": true, "TWO": true, "THE": true, "ALL": true,
}

// reqParser reads one text for one institution; subject is the last
// subject read, which a bare number carries ("MATH 150, 151").
type reqParser struct {
	inst    string
	subject string
	// alt is the alternative subject of "INDG (or FNST) 101", which a
	// bare number that follows carries too ("INDG (or FNST) 101 or 201W").
	alt string
}

// ParseRequisites reads a prerequisite or corequisite text of an
// institution (its directory key, "sfu", "langara") into a Requisite.
// The text is kept as given; a leading label ("Prerequisite(s):") is
// skipped.
//
// How the text is read (from the shapes of the shared data's Langara and
// SFU texts):
//   - Sentences: the requirement sentences are combined with all. A
//     sentence "Corequisite: ..." fills Corequisites (its courses
//     Concurrent); "Prerequisite or Corequisite: ..." is a requirement whose
//     courses are Concurrent; "Recommended: ..." or "... is recommended"
//     (also in parentheses) fills Recommended; one about "further credit"
//     or "credit for only one of" fills Antirequisites; "X may be taken
//     concurrently" (also in parentheses) marks X Concurrent; "An
//     alternative to the above prerequisite is ..." makes the sentences
//     before it and it alternatives; "All with a grade of C- or better"
//     grades every course before it; a later sentence that is a remark
//     ("Students who ...", "Prerequisites are valid for only three
//     years") goes to Notes; "None" states nothing.
//   - Within a sentence, semicolons separate the widest parts, then
//     commas, then the words "or" and "and" ("or" binds looser than
//     "and"). A list's conjunction is the one before its last item, as in
//     English: "MATH 150, 151, 154 or 157" is any of four courses,
//     "ECON 302, 305 and 331" all three; a list with none is all
//     ("PSYC 201, 260"), or any after "one of the following:". When
//     "; and" and "; or" are mixed, "or" separates groups of "and".
//   - A bare number carries the last subject ("MATH 150, 151"); "CA (or
//     FPA) 123", "MBB/HSCI 426", "HSCI 230 (or 330)" and "STAT 203
//     (formerly 103)" are alternatives. A slash between numbers is a pair
//     taken together when both are of one subject and one
//     level ("MATH 1173/1183", "EDUC 401/402") and alternatives otherwise
//     ("BISC 331/MBB 331", "ARCH 272/272W", "ENSC 495/851").
//   - Grades: `a minimum "C-" grade in ...` (Langara, before the courses)
//     and "..., with a minimum grade of C-" (SFU, after them) set MinGrade
//     on the courses of their part of the text.
//   - "one of", "two of", "either", "all of" open a group: any, n_of,
//     any, all. "30 credits including X" (also "which must include") is
//     the condition and X; "A or B and 75 units" is (A or B) and 75
//     units; "X such as A, B" is X or A or B.
//   - Anything without a course ("45 units", "permission of the
//     department", "Physics 12", "LET 4") is an OpOther node with its
//     words.
func ParseRequisites(institution, text string) Requisite {
	r := Requisite{Text: text}
	p := &reqParser{inst: strings.ToLower(strings.TrimSpace(institution))}
	var main, co []Expr
	var concurrent []string
	body := labelRe.ReplaceAllString(normalizeSpace(text), "")
	// Recommendations in parentheses inside a requirement: "LET 4 (or LET
	// 3 with a strong recommendation of concurrent registration in ENGL
	// 1121)", "(CPSC 2150 recommended.)".
	body = parenRe.ReplaceAllStringFunc(body, func(g string) string {
		l := strings.ToLower(g)
		switch {
		case strings.Contains(l, "recommend"):
			r.Recommended = appendRefs(r.Recommended, p.refs(g)...)
			return ""
		case strings.Contains(l, "concurrent") && !strings.Contains(l, "not"):
			// "(MATH 1252 or 2362 may be taken concurrently)"; a note
			// without a course ("(may be taken concurrently)") is about
			// the course before it.
			if len(CourseCodes(g)) > 0 || subjCoursesRe.MatchString(g) {
				concurrent = append(concurrent, g)
				return ""
			}
			return " " + concurrentMark
		}
		return g
	})
	body = normalizeSpace(body)
	for _, s := range splitSentences(body) {
		low := strings.ToLower(s)
		switch {
		case s == "" || strings.EqualFold(s, "none"):
		case preOrCoRe.MatchString(s):
			// "Prerequisite or Corequisite: One of GEOG 311, 313 or 319."
			e := p.list(s[len(preOrCoRe.FindString(s)):], OpAll)
			markConcurrent(&e)
			main = append(main, e)
		case len(main) > 0 && alternativeRe.MatchString(s):
			// "An alternative to the above prerequisite is ..."
			e := p.list(s[len(alternativeRe.FindString(s)):], OpAll)
			main[len(main)-1] = node(OpAny, 0, []Expr{main[len(main)-1], e}, "")
		case labelRe.MatchString(s):
			m := labelRe.FindStringSubmatch(s)
			rest := strings.TrimSpace(s[len(m[0]):])
			if rest == "" {
				continue
			}
			e := p.list(rest, OpAll)
			if strings.EqualFold(m[1], "co") {
				markConcurrent(&e)
				co = append(co, e)
				if l := strings.ToLower(rest); strings.Contains(l, "concurrent") || strings.Contains(l, "as a corequisite") {
					// "Corequisite: STAT 201 may be taken concurrently"
					// speaks of a prerequisite too.
					concurrent = append(concurrent, rest)
				}
			} else {
				main = append(main, e)
			}
		case recommendLabelRe.MatchString(s):
			// "CMPT 225. Strongly Recommended: CMPT 295" within a sentence.
			loc := recommendLabelRe.FindStringIndex(s)
			if before := strings.TrimSpace(strings.TrimRight(s[:loc[0]], " ;,")); before != "" {
				main = append(main, p.list(before, OpAll))
			}
			r.Recommended = appendRefs(r.Recommended, p.refs(s[loc[1]:])...)
		case recommendRe.MatchString(s):
			r.Recommended = appendRefs(r.Recommended, p.refs(s)...)
		case isAntirequisiteSentence(low):
			r.Antirequisites = appendRefs(r.Antirequisites, antirequisites(p, s)...)
		case strings.Contains(low, "concurrent") && !strings.Contains(low, "not") && len(main) > 0:
			concurrent = append(concurrent, s)
		case len(main) > 0 && gradeItemRe.MatchString(s) && !p.hasCourse(s):
			// "EASC 205 and 208. All with a grade of C- or better."
			m := gradeItemRe.FindStringSubmatch(s)
			for i := range main {
				setGrade(&main[i], m[1])
			}
			if m[2] != "" {
				main = append(main, other(m[2]))
			}
		case len(main) > 0 && proseRe.MatchString(s):
			r.Notes = append(r.Notes, s)
		default:
			main = append(main, p.list(s, OpAll))
		}
	}
	if len(main) > 0 {
		e := combineAll(main)
		for _, s := range concurrent {
			p.applyConcurrent(&e, s)
		}
		r.Expr = &e
	}
	if len(co) > 0 {
		e := combineAll(co)
		r.Corequisites = &e
	}
	return r
}

// concurrentMark replaces a parenthetical "(may be taken concurrently)"
// after a course, read by atom.
const concurrentMark = "may be taken concurrently"

// concurrentTailRe ends a course that may be taken in the same term.
var concurrentTailRe = regexp.MustCompile(`(?i)\s+(?:(?:must|may|can|should|to) be (?:taken|completed) (?:concurrently|at the same time|as a co-?requisite)|as (?:a )?(?:pre-?requisite or )?co-?requisite)\b.*$`)

// titledRe is a course followed by its title: "BUS 790 Lab to Market".
var titledRe = regexp.MustCompile(`^([A-Z]{2,5} [0-9]{3,4}[A-Z]?) [A-Z][A-Za-z&:' -]*$`)

// qualifiedCourseRe is a course followed by a condition on it.
var qualifiedCourseRe = regexp.MustCompile(`^([A-Z]{2,5} [0-9]{3,4}[A-Z]?) ((?:for|if|when|taken|completed|within) [^()]*)$`)

// bareRunRe is course numbers alone: "1108", "1108 or 1110".
var bareRunRe = regexp.MustCompile(`^[0-9]{3,4}[A-Z]?(?: (?:or|and) [0-9]{3,4}[A-Z]?)*$`)

// trailingCourseRe is words ending in a course after a preposition.
var trailingCourseRe = regexp.MustCompile(`^([^()]*\S) (?:with|in|of|for|plus) ([A-Z]{2,5} [0-9]{3,4}[A-Z]?)$`)

var parenGradeRe = regexp.MustCompile(`(?i)^(?:with )?(?:an? )?(?:minimum )?grade of "?` + gradePattern + `"?`)

// preOrCoRe labels a requirement that may be met in the same term.
var preOrCoRe = regexp.MustCompile(`(?i)^(?:pre-?(?:requisites?)? or co-?requisites?|co-?(?:requisites?)? or pre-?requisites?)\s*:\s*`)

// alternativeRe opens a sentence that is an alternative to the one
// before.
var alternativeRe = regexp.MustCompile(`(?i)^(?:an alternative(?: to the above(?: prerequisites?)?)? is|alternatively,?)\s+`)

var parenRe = regexp.MustCompile(`\(([^()]*)\)`)

// combineAll is the one expression or all of them.
func combineAll(es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	return node(OpAll, 0, es, "")
}

// normalizeSpace makes quotes straight and white space single spaces.
func normalizeSpace(s string) string {
	s = strings.NewReplacer("“", `"`, "”", `"`, "‘", "'", "’", "'", "\u00a0", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// splitSentences cuts a text at periods outside parentheses that end it
// or are followed by a space and a capital, digit or parenthesis. The
// final period is dropped.
func splitSentences(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
			if depth == 0 && i > 0 && s[i-1] == '.' && i+2 < len(s) && s[i+1] == ' ' && isSentenceStart(s[i+2]) {
				out = append(out, strings.TrimSpace(s[start:i+1]))
				start = i + 1
			}
		case '.':
			if depth > 0 {
				continue
			}
			if i == len(s)-1 || (s[i+1] == ' ' && i+2 < len(s) && isSentenceStart(s[i+2])) {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

func isSentenceStart(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '(' || c == '"'
}

// splitTop cuts s at sep outside parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// splitWord cuts s at the word w (" or ", " and ") outside parentheses.
func splitWord(s, w string) []string {
	var out []string
	depth, start := 0, 0
	ls := strings.ToLower(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth == 0 && strings.HasPrefix(ls[i:], w) {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + len(w)
				i = start - 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// leadingConn splits a leading "and", "or", "and/or" from s: the
// operator (OpAll, OpAny or "") and the rest.
func leadingConn(s string) (string, string) {
	l := strings.ToLower(s)
	for _, c := range []struct{ w, op string }{{"and/or ", OpAny}, {"or ", OpAny}, {"and ", OpAll}, {"plus ", OpAll}} {
		if strings.HasPrefix(l, c.w) {
			return c.op, strings.TrimSpace(s[len(c.w):])
		}
	}
	return "", s
}

// hasCourse says whether s names a course: a full code, or a bare number
// when a subject is known.
func (p *reqParser) hasCourse(s string) bool {
	if len(CourseCodes(s)) > 0 || subjAltInRe.MatchString(s) {
		return true
	}
	if p.subject == "" {
		return false
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '/' || r == '(' || r == ')' }) {
		if bareRe.MatchString(f) {
			return true
		}
	}
	return false
}

// list reads a sentence or part of one: its semicolon-separated parts.
func (p *reqParser) list(s, def string) Expr {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if !p.hasCourse(s) {
		return other(s)
	}
	if op, n, rest, ok := groupLead(s); ok && len(splitTop(rest, ';')) > 1 {
		e := p.list(rest, op)
		return withN(e, op, n)
	}
	segs := nonEmpty(splitTop(s, ';'))
	// A part that is a grade ("; both with a minimum grade of C-; 60
	// units") grades the parts before it.
	grade := ""
	for i, seg := range segs {
		if m := gradeItemRe.FindStringSubmatch(seg); m != nil && i > 0 && grade == "" {
			grade = m[1]
			if m[2] != "" {
				segs[i] = "and " + m[2]
			} else {
				segs = append(segs[:i], segs[i+1:]...)
			}
			break
		}
	}
	var e Expr
	if len(segs) == 1 {
		e = p.segment(segs[0], def)
	} else {
		e = p.combine(segs, def, p.segment)
	}
	if grade != "" {
		setGrade(&e, grade)
	}
	return e
}

// withN makes e an n_of node of n when the group asked for it.
func withN(e Expr, op string, n int) Expr {
	if op == OpNOf && (e.Op == OpAny || e.Op == OpAll || e.Op == OpNOf) {
		e.Op, e.N = OpNOf, n
	}
	return e
}

// groupLead reads a group lead-in at the start of s.
func groupLead(s string) (op string, n int, rest string, ok bool) {
	m := groupRe.FindStringSubmatch(s)
	if m == nil {
		return "", 0, s, false
	}
	rest = s[len(m[0]):]
	word := strings.ToLower(m[1] + m[2] + m[3])
	switch word {
	case "one", "either", "any":
		return OpAny, 1, rest, true
	case "all", "both", "each":
		return OpAll, 0, rest, true
	}
	return OpNOf, slices.Index(numberWords, word), rest, true
}

// numberWords are the counts of "two of", indexed by their value.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight"}

// countOfRe finds "one of" inside a lead-in before a colon: "Students
// complete one of:".
var countOfRe = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|either|all|both|each) (?:of|from)\b`)

// combine joins parts, each with an optional leading connector, by the
// conjunction of the list (see ParseRequisites).
func (p *reqParser) combine(parts []string, def string, f func(string, string) Expr) Expr {
	conns := make([]string, len(parts))
	hasAny, hasAll := false, false
	for i, s := range parts {
		conns[i], parts[i] = leadingConn(s)
		hasAny = hasAny || conns[i] == OpAny
		hasAll = hasAll || conns[i] == OpAll
	}
	text := strings.Join(parts, "; ")
	if n := len(parts); hasAny && hasAll && conns[n-1] == OpAll && !p.hasCourse(parts[n-1]) {
		// "ARCH 101 or ARCH 201; or any two of ...; and 45 units": a
		// closing condition without a course holds for all before it.
		head := make([]string, n-1)
		for i := range head {
			head[i] = parts[i]
			if conns[i] != "" {
				head[i] = map[string]string{OpAny: "or ", OpAll: "and "}[conns[i]] + parts[i]
			}
		}
		return node(OpAll, 0, []Expr{p.combine(head, def, f), f(parts[n-1], OpAll)}, text)
	}
	if hasAny && hasAll {
		// "A; and B; or C": or separates groups of and.
		var groups []Expr
		var cur []Expr
		for i, s := range parts {
			if conns[i] == OpAny && len(cur) > 0 {
				groups = append(groups, flat(OpAll, cur))
				cur = nil
			}
			cur = append(cur, f(s, OpAll))
		}
		groups = append(groups, flat(OpAll, cur))
		return node(OpAny, 0, groups, text)
	}
	op := def
	if hasAny {
		op = OpAny
	} else if hasAll {
		op = OpAll
	}
	var kids []Expr
	for _, s := range parts {
		kids = append(kids, f(s, OpAll))
	}
	return node(op, 0, kids, text)
}

// flat is the one expression or op over all of them.
func flat(op string, es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	return node(op, 0, es, "")
}

// segment reads a part without top-level semicolons.
func (p *reqParser) segment(s, def string) Expr {
	s = strings.TrimSpace(s)
	if !p.hasCourse(s) {
		return other(s)
	}
	orig := s
	grade := ""
	if len(anyGradeRe.FindAllString(s, -1)) <= 1 {
		if m := prefixGradeRe.FindStringSubmatch(s); m != nil {
			grade, s = m[1], s[len(m[0]):]
		} else if m := suffixGradeRe.FindStringSubmatch(s); m != nil {
			grade, s = m[1], strings.TrimSpace(s[:len(s)-len(m[0])])
		}
	}
	e := p.segmentBody(s, def)
	if grade != "" {
		setGrade(&e, grade)
	}
	if e.Text == "" || e.Text == s {
		e.Text = orig
	}
	return e
}

// segmentBody reads a segment whose grade phrase is gone: group lead-ins,
// a group starting inside it, a colon, then the comma list.
func (p *reqParser) segmentBody(s, def string) Expr {
	if e, ok := p.including(s, p.segment); ok {
		return e
	}
	if op, n, rest, ok := groupLead(s); ok {
		return withN(p.segmentBody(rest, op), op, n)
	}
	if loc := findTop(midGroupRe, s); loc != nil && loc[0] > 0 {
		left, conn, lead, right := s[:loc[0]], strings.ToLower(s[loc[2]:loc[3]]), s[loc[4]:loc[5]], s[loc[1]:]
		op := OpAll
		if conn == "or" {
			op = OpAny
		}
		l := p.segment(left, OpAll)
		gop, n, _, _ := groupLead(lead + " ")
		r := withN(p.segment(right, gop), gop, n)
		return node(op, 0, []Expr{l, r}, s)
	}
	if before, after, ok := strings.Cut(s, ":"); ok && !p.hasCourse(before) && p.hasCourse(after) {
		if m := countOfRe.FindString(before); m != "" {
			if op, n, _, ok := groupLead(m + " "); ok {
				return withN(p.commas(strings.TrimSpace(after), op), op, n)
			}
		}
		return p.commas(strings.TrimSpace(after), OpAll)
	}
	return p.commas(s, def)
}

// commas reads a comma list.
func (p *reqParser) commas(s, def string) Expr {
	items := nonEmpty(splitTop(s, ','))
	// A grade that follows the list as an item of its own.
	grade := ""
	if n := len(items); n > 1 {
		if m := suffixGradeRe.FindStringSubmatch(", " + items[n-1]); m != nil && len(m[0]) >= len(items[n-1]) {
			grade, items = m[1], items[:n-1]
		}
	}
	if len(items) == 1 {
		e := p.words(items[0], def)
		if grade != "" {
			setGrade(&e, grade)
		}
		return e
	}
	// English lists put the conjunction before the last item only: "A, B
	// or C". Split it out of the last item.
	last := items[len(items)-1]
	if c, _ := leadingConn(last); c == "" {
		for _, w := range []string{" and/or ", " or ", " and "} {
			if parts := splitWord(last, w); len(parts) > 1 {
				first := parts[0]
				rest := strings.TrimSpace(last[len(first)+len(w)-1:])
				items = append(items[:len(items)-1], first, strings.TrimSpace(w)+" "+rest)
				break
			}
		}
	}
	// An item that is a grade ("all with a minimum grade of C- and 45
	// units") grades the courses of the list; what follows "and" stays.
	for i, it := range items {
		if m := gradeItemRe.FindStringSubmatch(it); m != nil && i > 0 {
			grade = m[1]
			if m[2] != "" {
				items[i] = "and " + m[2]
			} else {
				items = append(items[:i], items[i+1:]...)
			}
			break
		}
	}
	// Items that only qualify the one before them join it.
	var merged []string
	for _, it := range items {
		l := strings.ToLower(it)
		if len(merged) > 0 && !p.hasCourse(it) && (strings.HasPrefix(l, "including") || strings.HasPrefix(l, "which") || strings.HasPrefix(l, "taken")) {
			merged[len(merged)-1] += ", " + it
			continue
		}
		merged = append(merged, it)
	}
	// `an "S" grade in ENGL 1107, 1108, or 1110`: a grade before the
	// first item of a run of numbers holds for the run.
	carry := ""
	words := func(item, d string) Expr {
		e := p.words(item, d)
		_, body := leadingConn(item)
		if m := prefixGradeRe.FindStringSubmatch(body); m != nil {
			carry = m[1]
		} else if carry != "" && bareRunRe.MatchString(body) {
			setGrade(&e, carry)
		} else {
			carry = ""
		}
		return e
	}
	e := p.combine(merged, def, words)
	e.Text = s
	if grade != "" {
		setGrade(&e, grade)
	}
	return e
}

// words reads an item without top-level semicolons or commas: "or" then
// "and", then a course.
func (p *reqParser) words(s, def string) Expr {
	_, s = leadingConn(strings.TrimSpace(s))
	if !p.hasCourse(s) {
		return other(s)
	}
	orig := s
	grade := ""
	if m := prefixGradeRe.FindStringSubmatch(s); m != nil && len(anyGradeRe.FindAllString(s, -1)) <= 1 {
		grade, s = m[1], s[len(m[0]):]
	} else if m := suffixGradeRe.FindStringSubmatch(s); m != nil && len(anyGradeRe.FindAllString(s, -1)) <= 1 {
		grade, s = m[1], strings.TrimSpace(s[:len(s)-len(m[0])])
	}
	var e Expr
	if inc, ok := p.including(s, p.words); ok {
		e = inc
	} else if op, n, rest, ok := groupLead(s); ok {
		e = withN(p.words(rest, op), op, n)
	} else if loc := findTop(midGroupRe, s); loc != nil && loc[0] > 0 {
		e = p.segmentBody(s, def)
	} else if before, after, ok := strings.Cut(s, " such as "); ok && !p.hasCourse(before) && depthAt(s, len(before)) == 0 {
		// "equivalent course such as CMPT 102": the examples are
		// alternatives.
		e = node(OpAny, 0, []Expr{other(before), p.words(after, OpAny)}, s)
	} else if head, last, ok := p.closing(s); ok {
		e = node(OpAll, 0, []Expr{p.words(head, OpAll), other(last)}, s)
	} else if mixed, ok := p.bound(s); ok {
		e = mixed
	} else if parts := splitWord(s, " and/or "); len(parts) > 1 {
		e = p.join(OpAny, parts)
	} else if parts := p.mergeWording(splitWord(s, " or "), " or "); len(parts) > 1 {
		e = p.join(OpAny, parts)
	} else if parts := p.mergeWording(splitWord(s, " and "), " and "); len(parts) > 1 {
		e = p.join(OpAll, parts)
	} else if parts := splitWord(s, " plus "); len(parts) > 1 {
		e = p.join(OpAll, parts)
	} else {
		e = p.atom(s)
	}
	if grade != "" {
		setGrade(&e, grade)
	}
	if e.Op != OpCourse || e.Text == s {
		e.Text = orig
	}
	return e
}

// including reads "30 credits including a minimum "C" grade in BUSM
// 1100": the condition before "including" (no course in it) and what it
// includes, both required.
func (p *reqParser) including(s string, f func(string, string) Expr) (Expr, bool) {
	loc := findTop(includingRe, s)
	if loc == nil || p.hasCourse(s[:loc[0]]) {
		return Expr{}, false
	}
	before := strings.TrimRight(s[:loc[0]], " ,")
	rest := strings.TrimSpace(s[loc[1]:])
	return node(OpAll, 0, []Expr{other(before), f(rest, OpAll)}, s), true
}

// hasBare says whether s holds a course number standing alone.
func hasBare(s string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '/' || r == '(' || r == ')' }) {
		if bareRe.MatchString(f) {
			return true
		}
	}
	return false
}

// bound reads an item mixing "and" and "or" where a bare number binds to
// the course before it: "HSCI 312 and HSCI 319 or 327" is HSCI 312 and
// (HSCI 319 or 327), "CPSC 1401 and CPSC 1150 or 1155" CPSC 1401 and
// (CPSC 1150 or 1155). Between the groups so bound, "or" binds looser
// than "and".
func (p *reqParser) bound(s string) (Expr, bool) {
	ops, conns := splitConns(s)
	hasAny, hasAll, bare, full := false, false, false, false
	for i, c := range conns {
		hasAny = hasAny || c == OpAny
		hasAll = hasAll || c == OpAll
		bare = bare || bareRe.MatchString(ops[i+1])
		full = full || !bareRe.MatchString(ops[i+1])
	}
	// A chain of bare numbers alone ("MATH 1171 or 1173 and 1183", where
	// 1173 and 1183 are a pair, but "MATH 2362 or 1252 and 2371", where
	// 2362 and 1252 are alternatives) cannot be told apart: it keeps the
	// usual reading, "or" looser than "and".
	if !hasAny || !hasAll || !bare || !full {
		return Expr{}, false
	}
	// Units: a course and the bare numbers after it, joined by one
	// connector.
	type unit struct {
		parts []string
		op    string // the connector inside the unit
		conn  string // the connector before the unit
	}
	units := []unit{{parts: []string{ops[0]}}}
	for i, c := range conns {
		u := &units[len(units)-1]
		if bareRe.MatchString(ops[i+1]) && (u.op == "" || u.op == c) {
			u.parts, u.op = append(u.parts, ops[i+1]), c
			continue
		}
		units = append(units, unit{parts: []string{ops[i+1]}, conn: c})
	}
	exprs := make([]Expr, len(units))
	for i, u := range units {
		// Read as one text, so that a grade before the course holds for
		// the numbers after it: `a minimum "C" grade in CPSC 1150 or 1155`.
		w := map[string]string{OpAny: " or ", OpAll: " and ", "": " "}[u.op]
		exprs[i] = p.words(strings.Join(u.parts, w), OpAll)
	}
	var groups []Expr
	var cur []Expr
	for i, u := range units {
		if u.conn == OpAny && len(cur) > 0 {
			groups = append(groups, flat(OpAll, cur))
			cur = nil
		}
		cur = append(cur, exprs[i])
	}
	groups = append(groups, flat(OpAll, cur))
	return node(OpAny, 0, groups, s), true
}

// splitConns cuts s at the words "or", "and" and "and/or" outside
// parentheses: the operands and the connectors between them (OpAny for
// "or" and "and/or", OpAll for "and").
func splitConns(s string) (ops, conns []string) {
	depth, start := 0, 0
	ls := strings.ToLower(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ' ':
			if depth != 0 {
				continue
			}
			for _, c := range []struct{ w, op string }{{" and/or ", OpAny}, {" or ", OpAny}, {" and ", OpAll}} {
				if strings.HasPrefix(ls[i:], c.w) {
					ops = append(ops, strings.TrimSpace(s[start:i]))
					conns = append(conns, c.op)
					start = i + len(c.w)
					i = start - 1
					break
				}
			}
		}
	}
	return append(ops, strings.TrimSpace(s[start:])), conns
}

// closing splits "MSE 393 or 394 and a minimum of 75 units" into the
// alternatives and the closing condition without a course that holds for
// them all.
func (p *reqParser) closing(s string) (head, last string, ok bool) {
	parts := splitWord(s, " and ")
	if len(parts) < 2 {
		return "", "", false
	}
	last = parts[len(parts)-1]
	head = strings.TrimSpace(s[:len(s)-len(last)-len(" and ")])
	if p.hasCourse(last) || hasBare(last) || !p.hasCourse(head) || len(splitWord(head, " or ")) < 2 || !endsInCourse(head) {
		return "", "", false
	}
	return head, last, true
}

// mergeWording joins a part without a course to the part before it when
// that one does not end in a course: "six credits of English or
// communications" is one condition, "CMPT 120 or permission of the
// instructor" two.
func (p *reqParser) mergeWording(parts []string, w string) []string {
	var out []string
	for _, s := range parts {
		l := strings.ToLower(s)
		qualifier := strings.HasPrefix(l, "better") || strings.HasPrefix(l, "higher") || strings.HasPrefix(l, "above")
		if n := len(out); n > 0 && !p.hasCourse(s) && !hasBare(s) && (qualifier || !endsInCourse(out[n-1]) && !strings.HasPrefix(l, "permission")) {
			out[n-1] += w + s
			continue
		}
		out = append(out, s)
	}
	return out
}

// endsInCourse says whether s ends in a course number, perhaps followed
// by a parenthetical.
func endsInCourse(s string) bool {
	s = strings.TrimSpace(s)
	if m := suffixGradeRe.FindStringIndex(s); m != nil {
		s = strings.TrimSpace(s[:m[0]])
	}
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, "("); i >= 0 && len(CourseCodes(s[i:])) > 0 {
			return true
		}
		if i := strings.LastIndex(s, " ("); i > 0 {
			s = s[:i]
		}
	}
	f := strings.Fields(s)
	return len(f) > 0 && bareRe.MatchString(strings.Trim(f[len(f)-1], ".,;"))
}

// includingRe is where what a condition includes starts.
var includingRe = regexp.MustCompile(`(?i),? (?:including|which (?:must )?includes?|that (?:must )?includes?) `)

// join reads each part and combines them by op.
func (p *reqParser) join(op string, parts []string) Expr {
	var kids []Expr
	for _, s := range parts {
		kids = append(kids, p.words(s, OpAll))
	}
	return node(op, 0, kids, strings.Join(parts, " "))
}

// atom reads one course, with its alternatives, or a parenthesized group.
func (p *reqParser) atom(s string) Expr {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	orig := s
	concurrent := false
	if m := concurrentLeadRe.FindString(s); m != "" {
		concurrent, s = true, s[len(m):]
	}
	for {
		m := leadInRe.FindString(s)
		if m == "" {
			break
		}
		s = s[len(m):]
	}
	if m := findTop(concurrentTailRe, s); m != nil {
		concurrent, s = true, strings.TrimSpace(s[:m[0]])
	}
	e := p.atomBody(s)
	if concurrent {
		markConcurrent(&e)
	}
	if e.Op != OpCourse {
		e.Text = orig
	}
	return e
}

func (p *reqParser) atomBody(s string) Expr {
	if ref, ok := p.course(s); ok {
		if bareRe.MatchString(s) && p.alt != "" {
			alt := courseNode(Ref{p.inst, p.alt, ref.Number}, s)
			return node(OpAny, 0, []Expr{courseNode(ref, s), alt}, s)
		}
		return courseNode(ref, s)
	}
	if m := titledRe.FindStringSubmatch(s); m != nil {
		if ref, ok := p.course(m[1]); ok {
			return courseNode(ref, s)
		}
	}
	if m := qualifiedCourseRe.FindStringSubmatch(s); m != nil {
		// "CMPT 102 for students in an Applied Physics program".
		if ref, ok := p.course(m[1]); ok {
			return node(OpAll, 0, []Expr{courseNode(ref, m[1]), other(m[2])}, s)
		}
	}
	if m := trailingCourseRe.FindStringSubmatch(s); m != nil && !p.hasCourse(m[1]) {
		// "data science majors with BUS 343": a condition and a course.
		if ref, ok := p.course(m[2]); ok {
			return node(OpAll, 0, []Expr{other(m[1]), courseNode(ref, m[2])}, s)
		}
	}
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && balanced(s[1:len(s)-1]) {
		return p.list(s[1:len(s)-1], OpAll)
	}
	if m := subjAltRe.FindStringSubmatch(s); m != nil && !notSubject[m[1]] && !notSubject[m[2]] {
		p.subject, p.alt = m[1], m[2]
		a := courseNode(Ref{p.inst, m[1], m[3]}, s)
		b := courseNode(Ref{p.inst, m[2], m[3]}, s)
		return node(OpAny, 0, []Expr{a, b}, s)
	}
	if m := orParenRe.FindStringSubmatch(s); m != nil {
		a := p.atomBody(strings.TrimSpace(m[1]))
		b := p.list(m[2], OpAll)
		if a.Op != OpOther {
			return node(OpAny, 0, []Expr{a, b}, s)
		}
	}
	if m := noteParenRe.FindStringSubmatch(s); m != nil {
		// "CMPT 419 (Machine Learning)": the note does not change the
		// course; "BPK 491 (minimum grade of B)" gives its grade.
		if a := p.atomBody(strings.TrimSpace(m[1])); a.Op != OpOther {
			if g := parenGradeRe.FindStringSubmatch(m[2]); g != nil {
				setGrade(&a, g[1])
			}
			if l := strings.ToLower(m[2]); strings.Contains(l, "concurrent") && !strings.Contains(l, "not") {
				markConcurrent(&a)
			}
			return a
		}
	}
	if a, b, ok := strings.Cut(s, "/"); ok && !strings.Contains(b, "/") {
		// "MATH 1173/1183", "BISC 331/MBB 331", "MBB/HSCI 426".
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if subjRe.MatchString(a) && !notSubject[a] {
			if ref, ok := p.course(b); ok {
				first := courseNode(Ref{p.inst, a, ref.Number}, s)
				return node(OpAny, 0, []Expr{first, courseNode(ref, s)}, s)
			}
		}
		if ra, ok := p.course(a); ok {
			if rb, ok := p.course(b); ok {
				return node(slashOp(ra, rb), 0, []Expr{courseNode(ra, a), courseNode(rb, b)}, s)
			}
		}
	}
	return other(s)
}

// slashOp reads "A/B": a pair taken together (all) when both are of one
// subject and one level ("MATH 1173/1183", "EDUC 401/402"), else
// alternatives (any): cross-listed courses ("BISC 331/MBB 331"), a number
// and its suffixed form ("ARCH 272/272W"), an undergraduate course and
// its graduate twin ("ENSC 495/851").
func slashOp(a, b Ref) string {
	if a.Subject != b.Subject || Level(a.Number) != Level(b.Number) ||
		strings.HasPrefix(a.Number, b.Number) || strings.HasPrefix(b.Number, a.Number) {
		return OpAny
	}
	return OpAll
}

// course reads "SUBJECT NUMBER" or a bare number carrying the last
// subject.
func (p *reqParser) course(s string) (Ref, bool) {
	s = strings.TrimSpace(s)
	if bareRe.MatchString(s) {
		if p.subject == "" {
			return Ref{}, false
		}
		return Ref{p.inst, p.subject, s}, true
	}
	m := codeRe.FindStringSubmatch(s)
	if m == nil || len(m[0]) != len(s) || notSubject[m[1]] {
		return Ref{}, false
	}
	p.subject, p.alt = m[1], ""
	return Ref{p.inst, m[1], m[2]}, true
}

// refs lists the courses named in s, with bare numbers carrying the last
// subject.
func (p *reqParser) refs(s string) []Ref {
	var out []Ref
	for _, tok := range tokenRe.FindAllString(s, -1) {
		tok = strings.TrimLeft(tok, " ,/(")
		if m := codeRe.FindStringSubmatch(tok); m != nil && len(m[0]) == len(tok) {
			if notSubject[m[1]] {
				continue
			}
			p.subject, p.alt = m[1], ""
			out = appendRefs(out, Ref{p.inst, m[1], m[2]})
		} else if bareRe.MatchString(tok) && p.subject != "" {
			out = appendRefs(out, Ref{p.inst, p.subject, tok})
		}
	}
	return out
}

// tokenRe finds course codes and bare numbers that are not part of a
// range, a decimal or a longer number.
var tokenRe = regexp.MustCompile(`\b[A-Z]{2,5} ?[0-9]{3,4}[A-Z]?\b|(?:^|[ ,/(])[0-9]{3,4}[A-Z]?\b`)

// appendRefs appends the refs not already in list.
func appendRefs(list []Ref, refs ...Ref) []Ref {
	for _, r := range refs {
		r.Number = strings.TrimLeft(r.Number, " ,/(")
		if !slices.Contains(list, r) {
			list = append(list, r)
		}
	}
	return list
}

// applyConcurrent marks Concurrent the course nodes that a concurrency
// note names, by code or, for "MATH courses may be taken concurrently", by
// subject.
func (p *reqParser) applyConcurrent(e *Expr, note string) {
	if i := strings.Index(strings.ToLower(note), "concurrent"); i >= 0 {
		note = note[:i]
	}
	q := &reqParser{inst: p.inst}
	refs := q.refs(note)
	var subjects []string
	for _, m := range subjCoursesRe.FindAllStringSubmatch(note, -1) {
		subjects = append(subjects, m[1])
	}
	e.Walk(func(n *Expr) {
		if n.Op == OpCourse && n.Course != nil && (slices.Contains(refs, *n.Course) || slices.Contains(subjects, n.Course.Subject)) {
			n.Concurrent = true
		}
	})
}

var subjCoursesRe = regexp.MustCompile(`\b([A-Z]{2,5}) courses?\b`)

// markConcurrent marks every course node of e Concurrent.
func markConcurrent(e *Expr) {
	e.Walk(func(n *Expr) {
		if n.Op == OpCourse {
			n.Concurrent = true
		}
	})
}

// setGrade gives grade to the course nodes of e that have none.
func setGrade(e *Expr, grade string) {
	grade = strings.ToUpper(grade)
	e.Walk(func(n *Expr) {
		if n.Op == OpCourse && n.MinGrade == "" {
			n.MinGrade = grade
		}
	})
}

// findTop is the submatch indexes of the first match of re in s that
// starts outside parentheses.
func findTop(re *regexp.Regexp, s string) []int {
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		if depthAt(s, loc[0]) == 0 {
			return loc
		}
	}
	return nil
}

// depthAt is the parenthesis depth at byte i of s.
func depthAt(s string, i int) int {
	depth := 0
	for _, c := range s[:i] {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return depth
}

// balanced says whether the parentheses of s pair up.
func balanced(s string) bool {
	depth := 0
	for _, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// nonEmpty drops empty strings.
func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// node builds an operator node; children of the same operator (all in
// all, any in any) are flattened into it, and a single child is returned
// as itself.
func node(op string, n int, kids []Expr, text string) Expr {
	var flatKids []Expr
	for _, k := range kids {
		if k.Op == op && (op == OpAll || op == OpAny) {
			flatKids = append(flatKids, k.Children...)
		} else {
			flatKids = append(flatKids, k)
		}
	}
	if len(flatKids) == 1 && op != OpNOf {
		return flatKids[0]
	}
	return Expr{Op: op, N: n, Children: flatKids, Text: text}
}

func courseNode(r Ref, text string) Expr {
	return Expr{Op: OpCourse, Course: &r, Text: strings.TrimSpace(text)}
}

func other(s string) Expr {
	return Expr{Op: OpOther, Text: strings.TrimSpace(s)}
}

// String is a compact form of the expression, for reading and tests:
// courses as "MATH 150" with "[C-]" for a minimum grade and "~" when they
// may be concurrent, other conditions quoted, and groups as
// all(...), any(...) and 2of(...).
func (e *Expr) String() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	switch e.Op {
	case OpCourse:
		if e.Course != nil {
			b.WriteString(e.Course.Code())
		}
		if e.MinGrade != "" {
			b.WriteString("[" + e.MinGrade + "]")
		}
		if e.Concurrent {
			b.WriteString("~")
		}
		return
	case OpOther:
		b.WriteString(strconv.Quote(e.Text))
		return
	case OpNOf:
		b.WriteString(strconv.Itoa(e.N) + "of(")
	default:
		b.WriteString(e.Op + "(")
	}
	for i := range e.Children {
		if i > 0 {
			b.WriteString(", ")
		}
		e.Children[i].write(b)
	}
	b.WriteString(")")
}
