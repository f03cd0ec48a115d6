package transfer

import (
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// The wordings of the notes read as data, as surveyed on the shared data
// (625 rows with notes; the clauses are split at ". ", "; " and ".,"):
//
//	alternative  = "or" [student "may request" ["credit for"]] targets ["instead"]
//	             | student "may request" ["credit for"] targets ["instead"]
//	conditional  = "or" targets ("if" | "for") WHEN        (the note's targets)
//	             | WHO "may" ("request" ["credit for"] | "be granted") targets
//	             | "If" WHEN ", credit will be" targets
//	             | "if" WHEN                 (first clause: the rule's targets)
//	preclusion   = ONLYONE courses           (source courses: OnlyOneOf;
//	             | PRECLUDES courses [SUFFIX] destination courses: Precludes)
//	courses      = course {("," | "or" | "&" | "and") course}, a course
//	               without institution taking the one before it (the rule's
//	               source when it is the rule's course, else the
//	               destination) and a bare number the subject before it
//
// A clause that none of these read whole stays text only, in Conditions.

var (
	// clauseEndRe ends a clause of the notes: ". ", "; ", ".," (a closing
	// quote may follow the period).
	clauseEndRe = lazyRegexp(`(?:\.,|[.;]"?)\s+`)
	// notePrefixRe is what may open a clause before its wording ("Note:", "*").
	notePrefixRe = lazyRegexp(`^(?:(?i:note)\s*:\s*|\*\s*)`)
	// onlyOneRe opens a list of courses of which only one earns credit.
	onlyOneRe = lazyRegexp(`(?i)^(?:students? )?(?:credit|(?:may|can) receive credit)(?: (?:is permitted|granted|awarded|will (?:only |oly )?be granted))? for (?:only (?:one|1) of|one only|one of) `)
	// precludesRe opens a list of courses that cannot also be credited.
	precludesRe = lazyRegexp(`(?i)^(?:precludes?(?: additional)?(?: credit fore?)?(?: for)?|credit cannot also be obtained for|may not (?:take|receive(?: additional)? credit for)|no further credit for|cannot take|exclud(?:e|es|ing)|students? (?:are )?precluded from taking|students? may not receive credit for both) `)
	// precludesEndRe is what may follow a preclusion's list.
	precludesEndRe = lazyRegexp(`(?i)^(?:\s*(?:for|from) (?:further |additional )?credit|\s*duplicate (?:credit|content))?(?:, ?OL)?[\s."]*$`)
	// orRe opens an alternative target in the notes.
	orRe = lazyRegexp(`(?i)^or (?:students? may request (?:credit for )?)?`)
	// requestRe opens targets someone may request or be granted; group 1 is who.
	requestRe = lazyRegexp(`(?i)^(.*?)\s*\bmay (?:request(?: credit for)?|be granted) `)
	// whoRe says who may request or be granted a note's targets: nobody
	// named, or students (of a program).
	whoRe = lazyRegexp(`(?i)^(?:students?\b.*)?$`)
	// insteadRe ends a clause offering its targets instead of the rule's.
	insteadRe = lazyRegexp(`(?i),?\s*\binstead[\s."]*$`)
	// creditWillBeRe reads "If WHEN, credit will be"; group 1 is WHEN.
	creditWillBeRe = lazyRegexp(`(?i)^if (.+?), credit will be `)
	// ifMainRe reads a clause "if WHEN" governing the rule's targets: lower
	// case, the sentence of the targets going on.
	ifMainRe = lazyRegexp(`^if ([^,]+?)[.;"\s]*$`)
	// afterTargetsRe is what may follow a note's targets: "instead", or a
	// condition "if WHEN" / "for WHEN" (group 1 the word, 2 WHEN).
	afterTargetsRe = lazyRegexp(`(?i)^,?\s*(?:instead\b|(if|for) (.+?))?[\s."]*$`)
	// aloneRe says a condition is that the course is taken alone.
	aloneRe = lazyRegexp(`(?i)\b(?:taken alone|by itself)\b`)
	// noteCourseRe reads "[INST ]SUBJ NUM" in a note (upper-case subject).
	noteCourseRe = lazyRegexp(`^(?:([A-Z]{2,5}) )?([A-Z]{2,5}) ?([0-9]{3,4}[A-Z]?)\b`)
	// noteNumberRe reads a bare course number that takes the subject before it.
	noteNumberRe = lazyRegexp(`^([0-9]{3,4}[A-Z]?)\b`)
	// noteSkipRe skips credits or a remark in parentheses after a course
	// ("(3)", "(Fall 2019)").
	noteSkipRe = lazyRegexp(`^ ?\([^()]{0,20}\)`)
	// noteSepRe separates the courses of a list.
	noteSepRe = lazyRegexp(`(?i)^(?:\s*,\s*(?:(?:or|and|&)\s+)?|\s+(?:or|and|&)\s+|\s*/\s*)`)
	// withCourseRe finds source courses a condition names.
	withCourseRe = lazyRegexp(`\b([A-Z]{2,5}) ([A-Z]{2,5}) ([0-9]{3,4}[A-Z]?)\b`)
)

// clauses splits notes into clauses, each verbatim but for the trailing
// ";" or "," that ends it and surrounding spaces. A clause ends at "; ",
// ".," and at ". " before a capital (so "B.F.A. or B.A." and "dept. lev."
// stay whole).
func clauses(notes string) []string {
	var out []string
	start := 0
	for _, m := range clauseEndRe().FindAllStringIndex(notes, -1) {
		if notes[m[0]] == '.' && notes[m[0]:m[0]+2] != ".," && (m[1] == len(notes) || !isUpper(notes[m[1]])) {
			continue
		}
		out = appendClause(out, notes[start:m[1]])
		start = m[1]
	}
	return appendClause(out, notes[start:])
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

func appendClause(out []string, c string) []string {
	c = strings.TrimRight(strings.TrimSpace(c), ";,")
	if strings.TrimSpace(c) == "" {
		return out
	}
	return append(out, strings.TrimSpace(c))
}

// noteReader reads the notes of one rule.
type noteReader struct {
	p *parser // the rule's parser (directory, destination, repairs)
	r *Rule
}

// notes reads the clauses of the rule's notes that it can into Notes; it
// reports the clauses left text only.
func (p *parser) notes(r *Rule, rest string) (textOnly []string) {
	nr := noteReader{p: p, r: r}
	for i, c := range clauses(rest) {
		ns := nr.clause(c, i == 0)
		if len(ns) == 0 {
			textOnly = append(textOnly, c)
			continue
		}
		r.Notes = append(r.Notes, ns...)
	}
	return textOnly
}

// clause reads one clause (first: the clause that follows the rule's
// targets) into notes; none when it is not read whole.
func (nr noteReader) clause(c string, first bool) []Note {
	body := c[len(notePrefixRe().FindString(c)):]
	if m := onlyOneRe().FindStringIndex(body); m != nil {
		return nr.preclusion(c, body[m[1]:], true)
	}
	if m := precludesRe().FindStringIndex(body); m != nil {
		return nr.preclusion(c, body[m[1]:], false)
	}
	if m := orRe().FindStringIndex(body); m != nil {
		return nr.targets(c, body[m[1]:], "")
	}
	if m := creditWillBeRe().FindStringSubmatchIndex(body); m != nil {
		return nr.targets(c, body[m[1]:], body[m[2]:m[3]])
	}
	if m := requestRe().FindStringSubmatchIndex(body); m != nil {
		who := body[m[2]:m[3]]
		if !whoRe().MatchString(who) {
			return nil
		}
		if strings.EqualFold(who, "student") || strings.EqualFold(who, "students") {
			who = ""
		}
		return nr.targets(c, body[m[1]:], who)
	}
	if m := ifMainRe().FindStringSubmatch(body); m != nil && first {
		return nr.main(c, m[1])
	}
	return nil
}

// main reads "if WHEN" after the rule's targets: the condition governs
// them. It is read only when the rule has one target set (after "X, or Y"
// it may govern Y alone).
func (nr noteReader) main(text, when string) []Note {
	if len(nr.r.Targets) != 1 {
		return nil
	}
	n := Note{Kind: NoteConditional, Text: text, AppliesToMain: true}
	nr.condition(&n, when)
	return []Note{n}
}

// condition fills a conditional note's When, With and Alone.
func (nr noteReader) condition(n *Note, when string) {
	n.When = strings.TrimSpace(when)
	n.Alone = aloneRe().MatchString(when)
	src := nr.r.Course.Institution
	for _, m := range withCourseRe().FindAllStringSubmatch(when, -1) {
		in, ok := nr.p.dir.Lookup(m[1])
		if !ok || in.Key != src {
			continue
		}
		ref := catalog.Ref{Institution: in.Key, Subject: m[2], Number: m[3]}
		if !slices.Contains(n.With, ref) {
			n.With = append(n.With, ref)
		}
	}
}

// targets reads the target sets of a note from s (the clause from where
// its targets start) and what follows them: "instead" or nothing (an
// alternative, unless who names a condition), "if WHEN" or "for WHEN" (a
// conditional). who is the condition said before the targets ("Students
// in non-BEng program", "credit already received for SFU CMPT 102").
func (nr noteReader) targets(text, s, who string) []Note {
	if m := insteadRe().FindStringIndex(s); m != nil {
		s = s[:m[0]]
	}
	q := &parser{s: s, dir: nr.p.dir, dest: nr.p.dest}
	sets, ok := q.targets()
	if !ok {
		return nil
	}
	if trailing := q.tailDesignations(); len(trailing) > 0 {
		last := &q.atoms[len(q.atoms)-1]
		last.desig = append(last.desig, trailing...)
	}
	ts := q.materialize(sets)
	if q.tooMany || len(ts) == 0 {
		return nil
	}
	for _, set := range ts {
		for _, t := range set.Targets {
			if t.Course.Institution != nr.p.dest {
				return nil
			}
		}
	}
	m := afterTargetsRe().FindStringSubmatch(q.rest())
	if m == nil {
		return nil
	}
	when := who
	if m[2] != "" {
		if who != "" {
			return nil // two conditions: not read
		}
		when = m[2]
	}
	nr.p.repairs = append(nr.p.repairs, q.repairs...)
	out := make([]Note, 0, len(ts))
	for _, set := range ts {
		n := Note{Kind: NoteAlternative, Text: text, Targets: &set}
		if when != "" {
			n.Kind = NoteConditional
			nr.condition(&n, when)
		}
		out = append(out, n)
	}
	return out
}

// preclusion reads the courses of a preclusion from s and what may follow
// them. Courses at the rule's source give OnlyOneOf (the rule's course
// among them); courses at the destination give Precludes, less the rule's
// own targets. An "only one of" list at the destination that names none of
// the rule's targets says nothing of this rule and is not read; nor is a
// list at both institutions.
func (nr noteReader) preclusion(text, s string, onlyOne bool) []Note {
	refs, n := nr.courseList(s)
	if len(refs) == 0 || !precludesEndRe().MatchString(s[n:]) {
		return nil
	}
	src, dst := nr.r.Course.Institution, nr.r.Destination
	atSrc, atDst := 0, 0
	for _, ref := range refs {
		switch ref.Institution {
		case src:
			atSrc++
		case dst:
			atDst++
		}
	}
	note := Note{Kind: NotePreclusion, Text: text}
	switch {
	case atSrc == len(refs):
		if !slices.Contains(refs, nr.r.Course) {
			refs = append([]catalog.Ref{nr.r.Course}, refs...)
		}
		note.OnlyOneOf = refs
	case atDst == len(refs):
		own := 0
		for _, ref := range refs {
			if nr.isTarget(ref) {
				own++
				continue
			}
			note.Precludes = append(note.Precludes, ref)
		}
		if len(note.Precludes) == 0 || onlyOne && own == 0 {
			return nil
		}
	default:
		return nil
	}
	return []Note{note}
}

// isTarget says whether ref is a course of one of the rule's target sets.
func (nr noteReader) isTarget(ref catalog.Ref) bool {
	for _, s := range nr.r.Targets {
		for _, t := range s.Targets {
			if t.Course == ref {
				return true
			}
		}
	}
	return false
}

// courseList reads courses from the start of s; it returns them and how
// much of s they take. A course without institution takes the one of the
// course before it; the first takes the rule's source institution when it
// is one of the rule's source courses, else the destination. A bare number
// takes the institution and subject before it ("LANG STAT 1123, 1124").
func (nr noteReader) courseList(s string) ([]catalog.Ref, int) {
	var out []catalog.Ref
	i, end := 0, 0
	var last catalog.Ref
	for {
		rest := s[i:]
		var ref catalog.Ref
		if m := noteCourseRe().FindStringSubmatch(rest); m != nil {
			ref = catalog.Ref{Subject: m[2], Number: m[3]}
			switch {
			case m[1] != "":
				in, ok := nr.p.dir.Lookup(m[1])
				if !ok {
					return out, end
				}
				ref.Institution = in.Key
			case last.Institution != "":
				ref.Institution = last.Institution
			default:
				ref.Institution = nr.r.Destination
				for _, c := range nr.r.SourceCourses() {
					if c.Subject == ref.Subject && c.Number == ref.Number {
						ref.Institution = c.Institution
					}
				}
			}
			i += len(m[0])
		} else if m := noteNumberRe().FindString(rest); m != "" && last.Subject != "" {
			ref = catalog.Ref{Institution: last.Institution, Subject: last.Subject, Number: m}
			i += len(m)
		} else {
			return out, end
		}
		for {
			sk := noteSkipRe().FindString(s[i:])
			if sk == "" {
				break
			}
			i += len(sk)
		}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
		last, end = ref, i
		sep := noteSepRe().FindString(s[i:])
		if sep == "" {
			return out, end
		}
		i += len(sep)
	}
}

// The rough categories of a clause of the notes left text only.
const (
	textAlternative = "alternative-looking"
	textConditional = "conditional-looking"
	textPreclusion  = "preclusion-looking"
	textWaiver      = "waiver (read into Waives)"
	textLabel       = "label"
	textRestriction = "program or use restriction"
	textOther       = "grade/other"
)

var (
	// lookPreclusionRe, lookConditionalRe and lookAlternativeRe say what a
	// clause left text only looks like.
	lookPreclusionRe  = lazyRegexp(`(?i)preclu|only (?:one|1) of|one only|not receive|may not take|cannot take|exclu|(?:further|additional|duplicate) (?:credit|content)|maximum (?:of|credit)|credit for both|cannot also|\bpr [A-Z]{2,5} `)
	lookConditionalRe = lazyRegexp(`(?i)\bif\b|\bwhen taken\b|\bprovided\b|\bunless\b|\balone\b|\bby itself\b|\bwill get credit\b|\bstudents (?:in|entering)\b`)
	lookAlternativeRe = lazyRegexp(`(?i)^or\b|\binstead\b|\bmay (?:request|be (?:granted|assigned))\b|\bcredit will be\b|\bin lieu\b|=`)
	lookRestrictionRe = lazyRegexp(`(?i)not (?:for|open for) credit|can ?not be used|not suitable|not be counted|does not (?:qualify|satisfy|meet)|\bno credit for\b|\bmajors?\b|\bstudents\b|\bprogram\b|\bfaculty\b|\brequirement\b`)
)

// textCategory is the rough category of a clause of the notes left text
// only; waived is whether the rule has Waives (a waive or exempt clause is
// then read, into Waives).
func textCategory(clause string, waived bool) string {
	switch {
	case waived && waiveRe().MatchString(clause):
		return textWaiver
	case lookPreclusionRe().MatchString(clause):
		return textPreclusion
	case lookConditionalRe().MatchString(clause):
		return textConditional
	case lookAlternativeRe().MatchString(clause):
		return textAlternative
	case lookRestrictionRe().MatchString(clause):
		return textRestriction
	case len(strings.Fields(clause)) <= 4 && !strings.ContainsAny(clause, "0123456789"):
		return textLabel
	}
	return textOther
}

// textOnly lists the clauses of the rule's Conditions that no Note holds.
func (r *Rule) textOnly() []string {
	var out []string
	for _, c := range r.Conditions {
		for _, cl := range clauses(c) {
			if !slices.ContainsFunc(r.Notes, func(n Note) bool { return n.Text == cl }) {
				out = append(out, cl)
			}
		}
	}
	return out
}
