package catalog

import (
	"slices"
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
	for _, m := range codeRe().FindAllStringSubmatchIndex(text, -1) {
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
	codeRe = lazyRegexp(`\b([A-Z]{2,5}) ?([0-9]{3,4}[A-Z]?)\b`)
	// bareRe is a course number alone.
	bareRe = lazyRegexp(`^[0-9]{3,4}[A-Z]?$`)
	// subjRe is a subject alone.
	subjRe = lazyRegexp(`^[A-Z]{2,5}$`)
	// prefixGradeRe is Langara's grade before the courses: `a minimum "C-"
	// grade in`, `an "S" grade in`, `a minimum 70% in`.
	prefixGradeRe = lazyRegexp(`(?i)^(?:an? )?(?:minimum ?)?(?:of )?(?:an? )?(?:grade of )?"?` + gradePattern + `"? ?(?:grade |standing )?(?:or (?:better|higher) )?(?:in|on|for) (?:(?:each|all|both) of )?`)
	// anyGradeRe finds grade phrases, to count them.
	anyGradeRe = lazyRegexp(`(?i)(?:an? (?:minimum )?"?` + gradePattern + `"? (?:grade )?(?:in|on)\b|with an? (?:minimum )?(?:grade of |final grade of )?"?` + gradePattern + `"?)`)
	// suffixGradeRe is SFU's grade after the courses: `with a minimum
	// grade of C-`, `both with a grade of C- or better`, `with a C- or
	// better`.
	suffixGradeRe = lazyRegexp(`(?i),? ?(?:(?:both|all|each|either),? )?with (?:an? )?(?:minimum )?(?:of )?(?:final )?(?:grades? )?(?:of )?(?:at least )?(?:an? )?"?` + gradePattern + `"?(?: grade)?(?: or (?:better|higher|above))?(?: in (?:each|all|both)(?: of them)?)?\.?$`)
	// gradeItemRe is a grade standing alone, perhaps followed by another
	// condition: "all with a minimum grade of C- and 45 units".
	gradeItemRe = lazyRegexp(`(?i)^(?:(?:both|all|each|either),? )?with (?:an? )?(?:minimum )?(?:of )?(?:final )?(?:grades? )?(?:of )?(?:at least )?(?:an? )?"?` + gradePattern + `"?(?: grade)?(?: or (?:better|higher|above))?(?: and (.+))?$`)
	// groupRe is a lead-in that makes what follows a group: "one of the
	// following:", "two of", "either", "all of".
	groupRe = lazyRegexp(`(?i)^(?:any |at least )?(?:(one|two|three|four|five|six|seven|eight|all|both|each|any) (?:of|from)(?: the following)?(?: (?:courses|prerequisite combinations))?(?: \(?or more\)?)?|(either)|(all|both) the following(?: courses)?)\s*:?\s+`)
	// midGroupRe finds a group starting inside a segment: "X and one of
	// the following: A, B or C", "X or either A or B".
	midGroupRe = lazyRegexp(`(?i)[,]? (and|or|plus) ((?:any |at least )?(?:one|two|three|four|five|six) (?:of|from)(?: the following)?(?: courses)?:?|either) `)
	// leadInRe is wording before a course that does not change it.
	leadInRe = lazyRegexp(`(?i)^(?:(?:the )?(?:successfull? )?completion of|credit (?:in|for)|completed|complete|students complete|students must (?:have )?complete(?:d)?|a grade in|at least|prior|previous|including|plus|both|all of)\s+`)
	// concurrentLeadRe makes the course that follows concurrent.
	concurrentLeadRe = lazyRegexp(`(?i)^(?:co-?requisites?(?: of)?:?|concurrent (?:enrol(?:l)?ment|registration) in)\s+`)
	// orParenRe is a course with an alternative in parentheses: "HSCI 230
	// (or 330)", "STAT 203 (formerly 103)".
	orParenRe = lazyRegexp(`^(.+?) ?\((?i:or|formerly|or formerly|previously)\s+([^()]+)\)$`)
	// subjAltRe is "CA (or FPA) 123".
	subjAltRe = lazyRegexp(`^([A-Z]{2,5}) \((?i:or) ([A-Z]{2,5})\) ([0-9]{3,4}[A-Z]?)$`)
	// noteParenRe is a course followed by a parenthetical note.
	noteParenRe = lazyRegexp(`^(.+?) ?\(([^()]*)\)$`)
	// labelRe is a requisite label at the start of a text.
	labelRe = lazyRegexp(`(?i)^(?:or )?(pre|co)-?requisi?tes?\s*(?:\(s\)?|s\(s\))?\s*:\s*`)
	// recommendRe marks a sentence of recommendations.
	recommendRe = lazyRegexp(`(?i)^(?:strongly |highly )?recommended\b|\brecommended\b|\brecommendation to\b|\b(?:strongly )?(?:advised|encouraged) to\b`)
	// recommendLabelRe is a recommendation label inside a sentence.
	recommendLabelRe = lazyRegexp(`(?i)[;,.]?\s*(?:strongly |highly )?recommended:\s*`)
	// proseRe marks a sentence that is a note, not a requirement list.
	proseRe = lazyRegexp(`(?i)^(?:students|those|must|in order|this|these|it |no |note|if |other|participation|prerequisites? (?:are|is|may|waived)|a proficiency|a criminal|a course|course participants|majors|only|also|please|reserved|open|enrol|registration|priority|may not|cannot|graded|approval of|applicants)|\b(?:prerequisites|requirements) (?:are|is) (?:only )?valid|\bmay be (?:required|substituted)|\bare required to take\b|\bmay substitute\b|\bmay use\b`)
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
//     ("PSYC 201, 260"), or any after "one of the following:". Between
//     semicolon parts "and" binds looser than "or" ("A; or B; and C" is
//     (A or B) and C), a part opening a group with a colon ("; and one
//     of the following: a; or b; or c") takes the parts after it as its
//     items, and a closing "; or permission of ..." is an alternative to
//     the whole requirement (see semis).
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
	body := labelRe().ReplaceAllString(normalizeSpace(text), "")
	// Recommendations in parentheses inside a requirement: "LET 4 (or LET
	// 3 with a strong recommendation of concurrent registration in ENGL
	// 1121)", "(CPSC 2150 recommended.)".
	body = parenRe().ReplaceAllStringFunc(body, func(g string) string {
		l := strings.ToLower(g)
		switch {
		case strings.Contains(l, "recommend"):
			if m := orRecommendRe().FindStringSubmatch(g); m != nil {
				// "LET 4 (or LET 3 with a strong recommendation of
				// concurrent registration in ENGL 1121)": the
				// alternative stays.
				r.Recommended = appendRefs(r.Recommended, p.refs(m[2])...)
				return "(or " + m[1] + ")"
			}
			r.Recommended = appendRefs(r.Recommended, p.refs(g)...)
			return ""
		case strings.Contains(l, "concurrent") && !strings.Contains(l, "not"):
			// "(MATH 1252 or 2362 may be taken concurrently)"; a note
			// without a course ("(may be taken concurrently)") is about
			// the course before it.
			if len(CourseCodes(g)) > 0 || subjCoursesRe().MatchString(g) {
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
		case preOrCoRe().MatchString(s):
			// "Prerequisite or Corequisite: One of GEOG 311, 313 or 319."
			e := p.list(s[len(preOrCoRe().FindString(s)):], OpAll)
			markConcurrent(&e)
			main = append(main, e)
		case len(main) > 0 && alternativeRe().MatchString(s):
			// "An alternative to the above prerequisite is ..."
			e := p.list(s[len(alternativeRe().FindString(s)):], OpAll)
			main[len(main)-1] = node(OpAny, 0, []Expr{main[len(main)-1], e}, "")
		case labelRe().MatchString(s):
			m := labelRe().FindStringSubmatch(s)
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
		case recommendLabelRe().MatchString(s):
			// "CMPT 225. Strongly Recommended: CMPT 295" within a sentence.
			loc := recommendLabelRe().FindStringIndex(s)
			if before := strings.TrimSpace(strings.TrimRight(s[:loc[0]], " ;,")); before != "" {
				main = append(main, p.list(before, OpAll))
			}
			r.Recommended = appendRefs(r.Recommended, p.refs(s[loc[1]:])...)
		case recommendRe().MatchString(s):
			// "BISC 101; MATH 12 or equivalent is recommended."
			req, rec := recommendedParts(s)
			if req != "" {
				main = append(main, p.list(req, OpAll))
			}
			r.Recommended = appendRefs(r.Recommended, p.refs(rec)...)
		case isAntirequisiteSentence(low):
			r.Antirequisites = appendRefs(r.Antirequisites, antirequisites(p, s)...)
		case strings.Contains(low, "concurrent") && !strings.Contains(low, "not") && len(main) > 0:
			concurrent = append(concurrent, s)
		case len(main) > 0 && gradeItemRe().MatchString(s) && !p.hasCourse(s):
			// "EASC 205 and 208. All with a grade of C- or better."
			m := gradeItemRe().FindStringSubmatch(s)
			for i := range main {
				setGrade(&main[i], m[1])
			}
			if m[2] != "" {
				main = append(main, other(m[2]))
			}
		case len(main) > 0 && proseRe().MatchString(s):
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
var concurrentTailRe = lazyRegexp(`(?i)\s+(?:(?:must|may|can|should|to) be (?:taken|completed) (?:concurrently|at the same time|as a co-?requisite)|as (?:a )?(?:pre-?requisite or )?co-?requisite)\b.*$`)

// titledRe is a course followed by its title: "BUS 790 Lab to Market".
var titledRe = lazyRegexp(`^([A-Z]{2,5} [0-9]{3,4}[A-Z]?) [A-Z][A-Za-z&:' -]*$`)

// qualifiedCourseRe is a course followed by a condition on it.
var qualifiedCourseRe = lazyRegexp(`^([A-Z]{2,5} [0-9]{3,4}[A-Z]?) ((?:for|if|when|taken|completed|within) [^()]*)$`)

// bareRunRe is course numbers alone: "1108", "1108 or 1110".
var bareRunRe = lazyRegexp(`^[0-9]{3,4}[A-Z]?(?: (?:or|and) [0-9]{3,4}[A-Z]?)*$`)

// trailingCourseRe is words ending in a course after a preposition.
var trailingCourseRe = lazyRegexp(`^([^()]*\S) (?:with|in|of|for|plus) ([A-Z]{2,5} [0-9]{3,4}[A-Z]?)$`)

var parenGradeRe = lazyRegexp(`(?i)^(?:with )?(?:an? )?(?:minimum )?grade of "?` + gradePattern + `"?`)

// preOrCoRe labels a requirement that may be met in the same term.
var preOrCoRe = lazyRegexp(`(?i)^(?:pre-?(?:requisites?)? or co-?requisites?|co-?(?:requisites?)? or pre-?requisites?)\s*:\s*`)

// alternativeRe opens a sentence that is an alternative to the one
// before.
var alternativeRe = lazyRegexp(`(?i)^(?:an alternative(?: to the above(?: prerequisites?)?)? is|alternatively,?)\s+`)

var parenRe = lazyRegexp(`\(([^()]*)\)`)
