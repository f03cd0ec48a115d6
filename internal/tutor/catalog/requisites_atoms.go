package catalog

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// atom reads one course, with its alternatives, or a parenthesized group.
func (p *reqParser) atom(s string) Expr {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	orig := s
	concurrent := false
	if m := concurrentLeadRe().FindString(s); m != "" {
		concurrent, s = true, s[len(m):]
	}
	for {
		m := leadInRe().FindString(s)
		if m == "" {
			break
		}
		s = s[len(m):]
	}
	if m := findTop(concurrentTailRe(), s); m != nil {
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
		if bareRe().MatchString(s) && p.alt != "" {
			alt := courseNode(Ref{p.inst, p.alt, ref.Number}, s)
			return node(OpAny, 0, []Expr{courseNode(ref, s), alt}, s)
		}
		return courseNode(ref, s)
	}
	if m := titledRe().FindStringSubmatch(s); m != nil {
		if ref, ok := p.course(m[1]); ok {
			return courseNode(ref, s)
		}
	}
	if m := qualifiedCourseRe().FindStringSubmatch(s); m != nil {
		// "CMPT 102 for students in an Applied Physics program".
		if ref, ok := p.course(m[1]); ok {
			return node(OpAll, 0, []Expr{courseNode(ref, m[1]), other(m[2])}, s)
		}
	}
	if m := trailingCourseRe().FindStringSubmatch(s); m != nil && !p.hasCourse(m[1]) && testResultRe().MatchString(m[1]) {
		// "CDT results for CHEM 1120": a placement, not the course.
		return other(s)
	}
	if m := trailingCourseRe().FindStringSubmatch(s); m != nil && !p.hasCourse(m[1]) {
		// "data science majors with BUS 343": a condition and a course.
		if ref, ok := p.course(m[2]); ok {
			return node(OpAll, 0, []Expr{other(m[1]), courseNode(ref, m[2])}, s)
		}
	}
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && balanced(s[1:len(s)-1]) {
		return p.list(s[1:len(s)-1], OpAll)
	}
	if m := subjAltRe().FindStringSubmatch(s); m != nil && !notSubject[m[1]] && !notSubject[m[2]] {
		p.subject, p.alt = m[1], m[2]
		a := courseNode(Ref{p.inst, m[1], m[3]}, s)
		b := courseNode(Ref{p.inst, m[2], m[3]}, s)
		return node(OpAny, 0, []Expr{a, b}, s)
	}
	if m := orParenRe().FindStringSubmatch(s); m != nil {
		a := p.atomBody(strings.TrimSpace(m[1]))
		b := p.list(m[2], OpAll)
		// "Biology 12 (or equivalent) with a minimum grade of C (or BISC
		// 100 with a minimum grade of C-, ...)": a condition with courses
		// as alternatives.
		if a.Op != OpOther || b.Op != OpOther && len(b.Courses()) > 0 {
			return node(OpAny, 0, []Expr{a, b}, s)
		}
	}
	if m := noteParenRe().FindStringSubmatch(s); m != nil {
		// "CMPT 419 (Machine Learning)": the note does not change the
		// course; "BPK 491 (minimum grade of B)" gives its grade.
		if a := p.atomBody(strings.TrimSpace(m[1])); a.Op != OpOther {
			if g := parenGradeRe().FindStringSubmatch(m[2]); g != nil {
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
		if subjRe().MatchString(a) && !notSubject[a] {
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
	if bareRe().MatchString(s) {
		if p.subject == "" {
			return Ref{}, false
		}
		return Ref{p.inst, p.subject, s}, true
	}
	m := codeRe().FindStringSubmatch(s)
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
	for _, tok := range tokenRe().FindAllString(s, -1) {
		tok = strings.TrimLeft(tok, " ,/(")
		if m := codeRe().FindStringSubmatch(tok); m != nil && len(m[0]) == len(tok) {
			if notSubject[m[1]] {
				continue
			}
			p.subject, p.alt = m[1], ""
			out = appendRefs(out, Ref{p.inst, m[1], m[2]})
		} else if bareRe().MatchString(tok) && p.subject != "" {
			out = appendRefs(out, Ref{p.inst, p.subject, tok})
		}
	}
	return out
}

// tokenRe finds course codes and bare numbers that are not part of a
// range, a decimal or a longer number.
var tokenRe = lazyRegexp(`\b[A-Z]{2,5} ?[0-9]{3,4}[A-Z]?\b|(?:^|[ ,/(])[0-9]{3,4}[A-Z]?\b`)

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
	if i := strings.Index(asciiLower(note), "concurrent"); i >= 0 {
		note = note[:i]
	}
	q := &reqParser{inst: p.inst}
	refs := q.refs(note)
	var subjects []string
	for _, m := range subjCoursesRe().FindAllStringSubmatch(note, -1) {
		subjects = append(subjects, m[1])
	}
	e.Walk(func(n *Expr) {
		if n.Op == OpCourse && n.Course != nil && (slices.Contains(refs, *n.Course) || slices.Contains(subjects, n.Course.Subject)) {
			n.Concurrent = true
		}
	})
}

var subjCoursesRe = lazyRegexp(`\b([A-Z]{2,5}) courses?\b`)

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
