package catalog

import (
	"slices"
	"strings"
)

// The semicolon level of a sentence, where Langara's long requirements
// live: "A minimum "C" grade in CPSC 1150 or 1155; and one of the
// following: a minimum "B" grade in Precalculus 12; or a minimum "C"
// grade in MATH 1170, 1171, 1173, or 1174; or MDT 85."

// colonGroupRe opens a group whose items follow a colon: "one of the
// following:", `a minimum "C-" grade in all of the following:`, "any two
// of the following with a minimum "C-" grade:", "one of the following
// prerequisite combinations:". Submatches: a grade before, the count, a
// grade after.
var colonGroupRe = lazyRegexp(`(?i)^(?:(?:an? )?(?:minimum )?"?` + gradePattern + `"? (?:grade )?in )?(?:any |at least )?(one|two|three|four|five|six|seven|eight|all|both|each|either) (?:of|from)(?: the following)?(?: (?:courses|prerequisite combinations))?(?: with an? (?:minimum )?"?` + gradePattern + `"? grade)?\s*:\s*`)

// overrideRe is a condition that stands in for the whole requirement:
// "permission of the department", "approval of the coordinator".
var overrideRe = lazyRegexp(`(?i)^(?:by |with )?(?:the )?(?:written |special )?(?:permission|approval|consent)\b`)

// numberedRe starts a numbered alternative: "1) ", "(2) ".
var numberedRe = lazyRegexp(`^\(?[1-9]\)\s+`)

// numberedSplitRe is where a numbered alternative after the first
// starts: "; or 2) ".
var numberedSplitRe = lazyRegexp(`(?i);\s*(?:(?:or|and/or)\s+)?\(?[2-9]\)\s+`)

// isOverride says whether s, a part without a course, is a condition that
// stands in for the whole requirement.
func (p *reqParser) isOverride(s string) bool {
	return overrideRe().MatchString(s) && !p.hasCourse(s)
}

// colonGroup reads a group opened at the start of s (see colonGroupRe):
// its operator (OpAny, OpAll, OpNOf), count, grade and the text of its
// first item. At the start of a sentence (first) a lead-in without a
// colon opens a group too ("Either ...; ...").
func (p *reqParser) colonGroup(s string, first bool) (op string, n int, grade, rest string, ok bool) {
	if m := colonGroupRe().FindStringSubmatch(s); m != nil {
		op, n, _, _ = groupLead(m[2] + " of ")
		return op, n, m[1] + m[3], s[len(m[0]):], op != ""
	}
	if first {
		if op, n, rest, ok := groupLead(s); ok {
			return op, n, "", rest, true
		}
	}
	return "", 0, "", s, false
}

// semis reads the semicolon-separated parts of a sentence, each with an
// optional leading connector ("and", "or").
//
//   - A part that opens a group with a colon ("and one of the following:
//     a; or b; or c") takes the parts after it that do not start with
//     "and": they are the group's items. A group of all ("All of the
//     following: a; b; and one of the following: ...") takes every part
//     after it. Numbered items ("1) ...; or 2) ...") are read each as a
//     list of its own.
//   - Closing parts that stand in for the whole requirement ("; or
//     permission of the department") are alternatives to all before them
//     when the parts before them are joined by "and" somewhere.
//   - "and" binds looser than "or": "A; or B; and C" is (A or B) and C.
//     Parts joined by "or" or by nothing form a list whose conjunction is
//     the one before its last part ("A; B; or C" is any), or def when
//     there is none.
func (p *reqParser) semis(parts []string, def string) Expr {
	text := strings.Join(parts, "; ")
	conns := make([]string, len(parts))
	bodies := make([]string, len(parts))
	for i, s := range parts {
		conns[i], bodies[i] = leadingConn(s)
	}
	n := len(parts)
	var overrides []Expr
	if slices.Contains(conns[1:], OpAll) {
		for n > 1 && conns[n-1] == OpAny && p.isOverride(bodies[n-1]) {
			overrides = append([]Expr{other(bodies[n-1])}, overrides...)
			n--
		}
	}
	type unit struct {
		conn string
		e    Expr
	}
	var units []unit
	for i := 0; i < n; i++ {
		op, count, grade, first, ok := p.colonGroup(bodies[i], i == 0)
		if !ok {
			units = append(units, unit{conns[i], p.segment(bodies[i], def)})
			continue
		}
		j := i + 1
		var e Expr
		if numberedRe().MatchString(first) {
			// "One of the following prerequisite combinations: 1) ...;
			// and ...; or 2) ...": every part to the end.
			rest := []string{numberedRe().ReplaceAllString(first, "")}
			for ; j < n; j++ {
				rest = append(rest, parts[j])
			}
			var kids []Expr
			for _, item := range numberedSplitRe().Split(strings.Join(rest, "; "), -1) {
				kids = append(kids, p.list(item, OpAll))
			}
			e = node(groupNode(op), 0, kids, "")
		} else {
			items := []string{first}
			closed := p.closedList(first)
			for ; j < n && p.takes(op, closed, conns[j], bodies[j]); j++ {
				items = append(items, parts[j])
			}
			d := OpAny
			if op == OpAll {
				d = OpAll
			}
			if len(items) == 1 {
				e = p.segment(first, d)
			} else {
				e = p.semis(items, d)
			}
		}
		e = withN(e, op, count)
		if grade != "" {
			setGrade(&e, grade)
		}
		if e.Op != OpCourse && e.Op != OpOther {
			e.Text = strings.Join(parts[i:j], "; ")
		}
		units = append(units, unit{conns[i], e})
		i = j - 1
	}
	// "and" binds looser than "or".
	var ands []Expr
	var cur []Expr
	hasOr := false
	flush := func() {
		op := def
		if hasOr {
			op = OpAny
		}
		ands = append(ands, node(op, 0, cur, ""))
		cur, hasOr = nil, false
	}
	for i, u := range units {
		if u.conn == OpAll && i > 0 {
			flush()
		}
		hasOr = hasOr || u.conn == OpAny && i > 0
		cur = append(cur, u.e)
	}
	flush()
	e := node(OpAll, 0, ands, text)
	if len(overrides) > 0 {
		e = node(OpAny, 0, append([]Expr{e}, overrides...), text)
	}
	if e.Text == "" {
		e.Text = text
	}
	return e
}

// takes says whether a group opened by a colon (see semis) takes the
// next part, of connector conn and text body, as an item. A closing "or
// permission of ..." is an alternative to a group of all or of two or
// more, not one of its items. Else a group of all takes every part; a
// group of alternatives those led by "or", and those without a connector
// unless the group's first item is a list of courses closed by its own
// conjunction ("one of the following: AHIS 1112, 1114, or 1302; FINA
// 1111, 1120, and 1161" is two requirements).
func (p *reqParser) takes(op string, closed bool, conn, body string) bool {
	switch {
	case op != OpAny && conn == OpAny && p.isOverride(body):
		return false
	case op == OpAll || conn == OpAny:
		return true
	}
	return conn == "" && !closed
}

// closedList says whether s is a comma list naming courses whose last
// item starts with its conjunction: "AHIS 1112, 1114, or 1302".
func (p *reqParser) closedList(s string) bool {
	items := splitTop(s, ',')
	if len(items) < 2 || !p.hasCourse(s) {
		return false
	}
	c, _ := leadingConn(items[len(items)-1])
	return c != ""
}

// groupNode is the operator that joins a group's items before withN.
func groupNode(op string) string {
	if op == OpAll {
		return OpAll
	}
	return OpAny
}

// splitOverride cuts a closing alternative that stands in for the whole
// requirement from a comma list: "30 units, including HSCI 130 with a
// minimum grade of C-, or permission of the instructor", "CRIM 485, a
// minimum of 90 units and CGPA of 2.75, and/or permission of the
// school". It does so only when the list before it joins its own items
// ("including", or a conjunction in its last item), so that "MATH 150,
// 151, or permission of the department" stays a list of three
// alternatives.
func (p *reqParser) splitOverride(s string) (head, tail string, ok bool) {
	items := splitTop(s, ',')
	n := len(items)
	if n < 3 {
		return "", "", false
	}
	conn, last := leadingConn(items[n-1])
	if conn != OpAny || !p.isOverride(last) {
		return "", "", false
	}
	before := items[:n-1]
	joined := findTop(includingRe(), strings.Join(before, ", ")) != nil
	if _, ops := splitConns(before[len(before)-1]); len(ops) > 0 {
		joined = true
	}
	if !joined || !p.hasCourse(strings.Join(before, ", ")) {
		return "", "", false
	}
	return strings.Join(before, ", "), last, true
}

// orRecommendRe is an alternative with a recommendation in parentheses:
// "(or LET 3 with a strong recommendation of concurrent registration in
// ENGL 1121)".
var orRecommendRe = lazyRegexp(`(?i)^\(or ([^()]+?),? with an? (?:strong |strongly )?recommend(?:ation|ed)\b([^()]*)\)$`)

// recommendedParts splits "BISC 101; MATH 12 or equivalent is
// recommended" into the requirement and the recommendation; a
// recommending part led by a connector ("MATH 1271; or MATH 1273 and
// 1283 is recommended") recommends the parts before it too.
func recommendedParts(s string) (req, rec string) {
	parts := splitTop(s, ';')
	for k := 1; k < len(parts); k++ {
		low := strings.ToLower(parts[k])
		if !strings.Contains(low, "recommend") {
			continue
		}
		if c, _ := leadingConn(parts[k]); c != "" {
			return "", s
		}
		for _, q := range parts[:k] {
			if strings.Contains(strings.ToLower(q), "recommend") {
				return "", s
			}
		}
		req = strings.Join(parts[:k], "; ")
		if strings.EqualFold(strings.TrimSpace(req), "none") {
			// "None; basic computer literacy is recommended."
			req = ""
		}
		return req, strings.Join(parts[k:], "; ")
	}
	return "", s
}

// testResultRe marks words about a test result rather than a course: "CDT
// results for CHEM 1120".
var testResultRe = lazyRegexp(`(?i)\b(?:results?|score|placement)\b`)

// otherAltRe is a condition with an alternative in parentheses: "LET 4
// (or LET 3)".
var otherAltRe = lazyRegexp(`(?i)^([^()]+?) ?\(or ([^()]+)\)$`)

// otherAlt is the condition s, without a course, as an other node, or the
// two alternatives of "LET 4 (or LET 3)". "(or equivalent)" and "(or LPI
// equivalent)" qualify the condition before them and stay in its text.
func otherAlt(s string) Expr {
	if m := otherAltRe().FindStringSubmatch(s); m != nil && !strings.HasSuffix(strings.ToLower(m[2]), "equivalent") {
		return node(OpAny, 0, []Expr{other(m[1]), other(m[2])}, s)
	}
	return other(s)
}
