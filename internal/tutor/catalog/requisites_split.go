package catalog

import (
	"slices"
	"strings"
)

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
	ls := asciiLower(s)
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

// asciiLower lowers the ASCII letters of s and keeps every other byte,
// so that byte offsets into the result are offsets into s
// (strings.ToLower replaces invalid UTF-8 by longer runes).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
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
	if len(CourseCodes(s)) > 0 || subjAltInRe().MatchString(s) {
		return true
	}
	if p.subject == "" {
		return false
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '/' || r == '(' || r == ')' }) {
		if bareRe().MatchString(f) {
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
	segs := nonEmpty(splitTop(s, ';'))
	// A part that is a grade ("; both with a minimum grade of C-; 60
	// units") grades the parts before it.
	grade := ""
	for i, seg := range segs {
		if m := gradeItemRe().FindStringSubmatch(seg); m != nil && i > 0 && grade == "" {
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
		e = p.semis(segs, def)
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
	m := groupRe().FindStringSubmatch(s)
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
var countOfRe = lazyRegexp(`(?i)\b(one|two|three|four|five|six|seven|eight|either|all|both|each) (?:of|from)\b`)

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
		return otherAlt(s)
	}
	if head, tail, ok := p.splitOverride(s); ok {
		return node(OpAny, 0, []Expr{p.segment(head, def), other(tail)}, s)
	}
	orig := s
	grade := ""
	if len(anyGradeRe().FindAllString(s, -1)) <= 1 {
		if m := prefixGradeRe().FindStringSubmatch(s); m != nil {
			grade, s = m[1], s[len(m[0]):]
		} else if m := suffixGradeRe().FindStringSubmatch(s); m != nil {
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
	if loc := findTop(midGroupRe(), s); loc != nil && loc[0] > 0 {
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
		if m := countOfRe().FindString(before); m != "" {
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
	if e, ok := p.concurrentList(s, def, p.commas); ok {
		return e
	}
	items := nonEmpty(splitTop(s, ','))
	if n := len(items); n > 1 {
		// "ARCH 450, ENV 402 or GEOG 402 and readmission into ...": a
		// closing condition without a course holds for the whole list.
		if head, cond, ok := p.closing(items[n-1]); ok {
			e := p.commas(strings.Join(append(slices.Clone(items[:n-1]), head), ", "), def)
			return node(OpAll, 0, []Expr{e, other(cond)}, s)
		}
	}
	// A grade that follows the list as an item of its own.
	grade := ""
	if n := len(items); n > 1 {
		if m := suffixGradeRe().FindStringSubmatch(", " + items[n-1]); m != nil && len(m[0]) >= len(items[n-1]) {
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
				if strings.HasSuffix(rest, " "+concurrentMark) && w == " or " && len(parts) == 2 {
					// "Pre-Calculus 12, MATH 100 or MATH 110 (either may
					// be taken concurrently)": the note is of both.
					first += " " + concurrentMark
				}
				items = append(items[:len(items)-1], first, strings.TrimSpace(w)+" "+rest)
				break
			}
		}
	}
	// An item that is a grade ("all with a minimum grade of C- and 45
	// units") grades the courses of the list; what follows "and" stays.
	for i, it := range items {
		if m := gradeItemRe().FindStringSubmatch(it); m != nil && i > 0 {
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
		if m := prefixGradeRe().FindStringSubmatch(body); m != nil {
			carry = m[1]
		} else if carry != "" && bareRunRe().MatchString(body) {
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
		return otherAlt(s)
	}
	orig := s
	grade := ""
	if m := prefixGradeRe().FindStringSubmatch(s); m != nil && len(anyGradeRe().FindAllString(s, -1)) <= 1 {
		grade, s = m[1], s[len(m[0]):]
	} else if m := suffixGradeRe().FindStringSubmatch(s); m != nil && len(anyGradeRe().FindAllString(s, -1)) <= 1 {
		grade, s = m[1], strings.TrimSpace(s[:len(s)-len(m[0])])
	}
	var e Expr
	if c, ok := p.concurrentList(s, def, p.words); ok {
		e = c
	} else if inc, ok := p.including(s, p.words); ok {
		e = inc
	} else if op, n, rest, ok := groupLead(s); ok {
		e = withN(p.words(rest, op), op, n)
	} else if loc := findTop(midGroupRe(), s); loc != nil && loc[0] > 0 {
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
	loc := findTop(includingRe(), s)
	if loc == nil || p.hasCourse(s[:loc[0]]) {
		return Expr{}, false
	}
	before := strings.TrimRight(s[:loc[0]], " ,")
	rest := strings.TrimSpace(s[loc[1]:])
	return node(OpAll, 0, []Expr{other(before), f(rest, OpAll)}, s), true
}

// concurrentList reads "MATH 1271, 1273, 1274, or 2371 (may be taken
// concurrently)" and "MATH 100 or MATH 110 (either may be taken
// concurrently)": a note after a list of alternative courses speaks of
// the requirement they meet, so every course of it may be concurrent.
// After a list of courses all required, or of other conditions, the note
// stays with the last item.
func (p *reqParser) concurrentList(s, def string, f func(string, string) Expr) (Expr, bool) {
	body, ok := strings.CutSuffix(s, " "+concurrentMark)
	if !ok || !p.hasCourse(body) {
		return Expr{}, false
	}
	e := f(body, def)
	if e.Op != OpAny {
		return Expr{}, false
	}
	for _, k := range e.Children {
		if k.Op != OpCourse && !(k.Op == OpOther && strings.EqualFold(k.Text, "equivalent")) {
			// "Physics 11 with a "B" or higher, ..., or MATH 1170 "C-" or
			// higher (concurrent)": a long list of mixed conditions; the
			// note stays with its last item.
			return Expr{}, false
		}
	}
	markConcurrent(&e)
	e.Text = s
	return e, true
}

// hasBare says whether s holds a course number standing alone.
func hasBare(s string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '/' || r == '(' || r == ')' }) {
		if bareRe().MatchString(f) {
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
		bare = bare || bareRe().MatchString(ops[i+1])
		full = full || !bareRe().MatchString(ops[i+1])
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
		if bareRe().MatchString(ops[i+1]) && (u.op == "" || u.op == c) {
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
	ls := asciiLower(s)
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
	if m := suffixGradeRe().FindStringIndex(s); m != nil {
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
	return len(f) > 0 && bareRe().MatchString(strings.Trim(f[len(f)-1], ".,;"))
}

// includingRe is where what a condition includes starts.
var includingRe = lazyRegexp(`(?i),? (?:including|which (?:must )?includes?|that (?:must )?includes?) `)

// join reads each part and combines them by op.
func (p *reqParser) join(op string, parts []string) Expr {
	var kids []Expr
	for _, s := range parts {
		kids = append(kids, p.words(s, OpAll))
	}
	return node(op, 0, kids, strings.Join(parts, " "))
}
