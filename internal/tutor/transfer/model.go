// Package transfer holds the BC Transfer Guide (BCTG) rule model of the
// tutor, the parser of BCTG's credit text and transfer resolution (SPEC
// section 3, ADR-012 "Transfer resolution").
//
// A Rule is one BCTG agreement row made structured: the source side is a
// list of groups that must all be satisfied (Group: required, or_group,
// n_of), the right side is one or more alternative target sets (each a
// conjunction of course, generic or elective targets with their credits),
// plus the outcome (credit, no credit, exemption, individual assessment),
// waived courses, designations, trailing conditions, the effective range,
// the evidence (BC Transfer Guide is the source and is credited) and a
// confidence. Parse reads one row; a row it cannot structure is kept
// verbatim (Raw) with Parsed false and a ParseProblem, never dropped.
//
// Resolve (and Index.Resolve, its indexed form) answers which rules a set
// of source courses satisfies at a date: exact matches, partial matches
// with the courses still missing, and the courses no rule in force names.
//
// The package is pure: no database, no I/O beyond reading a rows file, no
// global mutable state.
package transfer

import (
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Row is one record of the BC Transfer Guide export (the shared data's
// langara/transfers.json): the source course (Source institution code,
// Subject, CourseCode), the Destination institution code, BCTG's credit
// text and the effective range as "Mon/YY" or "present".
type Row struct {
	Subject        string `json:"subject"`
	CourseCode     int    `json:"course_code"`
	Source         string `json:"source"`
	Destination    string `json:"destination"`
	Credit         string `json:"credit"`
	EffectiveStart string `json:"effective_start"`
	EffectiveEnd   string `json:"effective_end"`
}

// GroupKind says how many courses of a source group are needed.
type GroupKind string

// The kinds of source group.
const (
	// GroupRequired needs every course of the group ("A & B").
	GroupRequired GroupKind = "required"
	// GroupOr needs any one course of the group ("A or B", "one of A, B").
	GroupOr GroupKind = "or_group"
	// GroupNOf needs at least N courses of the group ("Any 2 of A or B or C").
	GroupNOf GroupKind = "n_of"
)

// Group is one source group of a rule; every group of a rule must be
// satisfied.
type Group struct {
	// Kind is required, or_group or n_of.
	Kind GroupKind `json:"kind"`
	// N is how many courses of the group are needed: the number of
	// courses for required, 1 for or_group, the stated N for n_of.
	N int `json:"n"`
	// Courses are the group's source courses.
	Courses []SourceCourse `json:"courses"`
}

// SourceCourse is a course of the source side.
type SourceCourse struct {
	// Course is the source course (institution "langara" in the shared data).
	Course catalog.Ref `json:"course"`
	// Credits are the course's credits as the credit text states them; nil
	// when the text does not (a row that names only its targets).
	Credits *float64 `json:"credits,omitempty"`
}

// TargetKind says what a target grants.
type TargetKind string

// The kinds of target.
const (
	// TargetCourse is a specific course ("SFU CMPT 120").
	TargetCourse TargetKind = "course"
	// TargetGeneric is generic credit in a subject at a level: a number
	// with X's ("MATH 2XX", "1XXX", "XXX"), an ordinal year ("ARTS 1st",
	// "CPSC 2nd"), a level ("AHIS 100 lev", kept as "100LEV") or a named
	// bucket code ("CA 1ARTHIS").
	TargetGeneric TargetKind = "generic"
	// TargetElective is generic credit in a subject that is an elective
	// bucket rather than a discipline ("UNSP 1XXX", "OPEN 200 lev", "UNCR 1XX").
	TargetElective TargetKind = "elective"
)

// Target is one course (or generic or elective credit) granted at the
// destination.
type Target struct {
	// Kind is course, generic or elective.
	Kind TargetKind `json:"kind"`
	// Course names it; its institution is where the credit is granted
	// (the destination, or the institution the text names).
	Course catalog.Ref `json:"course"`
	// Credits granted; nil when the text gives none ("(-)" or no parenthesis).
	Credits *float64 `json:"credits,omitempty"`
	// Designations of this target, as written (normalized spacing):
	// "Q/B-Sci", "B-Soc", "Q", "W", "W/B-Hum", "OL" (TRU Open Learning).
	Designations []string `json:"designations,omitempty"`
	// Exemption is true when the target grants no credit but exempts the
	// student from the course: its credits are (0), or the text marks it
	// "Exemption".
	Exemption bool `json:"exemption,omitempty"`
}

// TargetSet is one alternative of the right side: a conjunction of
// targets, all granted together ("X & Y").
type TargetSet struct {
	// Targets are granted together.
	Targets []Target `json:"targets"`
}

// Credits is the sum of the set's known target credits.
func (s TargetSet) Credits() float64 {
	var c float64
	for _, t := range s.Targets {
		if t.Credits != nil {
			c += *t.Credits
		}
	}
	return c
}

// Outcome is what a rule grants.
type Outcome string

// The outcomes of a rule.
const (
	// OutcomeCredit grants the targets.
	OutcomeCredit Outcome = "credit"
	// OutcomeNoCredit says the source courses transfer for no credit
	// ("No credit"): an answer, kept and reported.
	OutcomeNoCredit Outcome = "no_credit"
	// OutcomeExemption grants only exemptions: every target is (0) credits
	// or marked Exemption.
	OutcomeExemption Outcome = "exemption"
	// OutcomeAssessment says credit is decided case by case ("Individual
	// assessment", "Credit to be determined when student applies.").
	OutcomeAssessment Outcome = "individual_assessment"
)

// Evidence says where a rule comes from.
type Evidence struct {
	// Source is "BC Transfer Guide".
	Source string `json:"source"`
	// URL is the BC Transfer Guide's address.
	URL string `json:"url"`
	// Reference identifies the agreement: source institution, subject and
	// course, destination and effective start, e.g.
	// "LANG CPSC 1150 to SFU, effective May/03".
	Reference string `json:"reference"`
	// Accessed is when the data was read (given to the parser; zero when
	// unknown).
	Accessed time.Time `json:"accessed,omitzero"`
	// Lookup says how a person finds the agreement at URL (see
	// Followable); empty when the evidence was not made followable.
	Lookup string `json:"lookup,omitempty"`
}

// The evidence source and address of every rule.
const (
	EvidenceSource = "BC Transfer Guide"
	EvidenceURL    = "https://www.bctransferguide.ca/"
)

// Rule is one BC Transfer Guide agreement, structured.
type Rule struct {
	// Course is the source course the agreement is listed under.
	Course catalog.Ref `json:"course"`
	// Destination is the destination institution's directory key ("sfu").
	Destination string `json:"destination"`
	// Source lists the groups of source courses; every group must be
	// satisfied. A row whose text names only targets has one required
	// group holding Course.
	Source []Group `json:"source"`
	// Targets are the alternatives of the right side ("X or Y" gives two
	// sets); empty for no_credit and individual_assessment rules.
	Targets []TargetSet `json:"targets,omitempty"`
	// Outcome is credit, no_credit, exemption or individual_assessment.
	Outcome Outcome `json:"outcome"`
	// Waives are courses the notes say are waived or exempted ("Waive TWU
	// MATH 330 (3)", "Exempt UBCV CPSC 110", "Exemption VIU CSCI 311"): no
	// credit, the requirement is lifted. The clause itself stays in
	// Conditions, which say when it applies.
	Waives []Target `json:"waives,omitempty"`
	// Designations that apply to the whole rule ("Q/B-Sci" after a
	// conjunction of targets; "OL").
	Designations []string `json:"designations,omitempty"`
	// Conditions are the trailing notes of the credit text, verbatim
	// ("Precludes credit for UBCV ARTH 251.", "Must have C or better to
	// transfer."). Designations read from their start are not repeated.
	Conditions []string `json:"conditions,omitempty"`
	// Notes are the Conditions made structured, where the text can be
	// read as data: an alternative or conditional target, a preclusion.
	// Each keeps its text verbatim; a condition of Conditions that no Note
	// covers stays text only.
	Notes []Note `json:"notes,omitempty"`
	// EffectiveStart is the first day the rule is in force ("May/03" is
	// 2003-05-01); zero when unknown.
	EffectiveStart time.Time `json:"effectiveStart,omitzero"`
	// EffectiveEnd is the last day the rule is in force ("Apr/99" is
	// 1999-04-30); zero for "present" (open end).
	EffectiveEnd time.Time `json:"effectiveEnd,omitzero"`
	// Evidence credits the BC Transfer Guide and identifies the agreement.
	Evidence Evidence `json:"evidence"`
	// Confidence is how far the rule can be trusted as structured: 1.0
	// for a row parsed with no repair; 0.1 less for each kind of repair
	// the parser made (see Repairs), down to 0.5; 0 when not Parsed.
	// Review lowers it further for each doubt (see Doubts), to no less
	// than 0.1; rounded to 2 decimals.
	Confidence float64 `json:"confidence"`
	// Doubts say why Confidence is below what the repairs alone give: the
	// text is ambiguous or implausible ("8 target credits for one 4-credit
	// source course", "or-list whose courses earn a whole semester each
	// elsewhere"). Each lowers Confidence.
	Doubts []string `json:"doubts,omitempty"`
	// Repairs name what the parser had to assume or mend in the text
	// (a missing parenthesis, a course without institution, ...).
	Repairs []string `json:"repairs,omitempty"`
	// Raw is the credit text, verbatim.
	Raw string `json:"raw"`
	// Parsed is true when the credit text was structured (source, targets
	// and outcome); trailing notes may remain text in Conditions.
	Parsed bool `json:"parsed"`
	// ParseProblem says why the row is not Parsed.
	ParseProblem string `json:"parseProblem,omitempty"`
}

// InForce says whether the rule is in force at t: on or after the first
// day of EffectiveStart and before the end of the day EffectiveEnd.
func (r *Rule) InForce(t time.Time) bool {
	if !r.EffectiveStart.IsZero() && t.Before(r.EffectiveStart) {
		return false
	}
	if !r.EffectiveEnd.IsZero() && !t.Before(r.EffectiveEnd.AddDate(0, 0, 1)) {
		return false
	}
	return true
}

// SourceCourses lists the rule's source courses, group by group.
func (r *Rule) SourceCourses() []catalog.Ref {
	var out []catalog.Ref
	for _, g := range r.Source {
		for _, c := range g.Courses {
			out = append(out, c.Course)
		}
	}
	return out
}

// NoteKind says what a structured note of a rule's credit text is.
type NoteKind string

// The kinds of structured note.
const (
	// NoteAlternative offers another target set besides the rule's own, at
	// the student's (or the destination's) choice: "…; or UBCV BIOL 2nd (3)".
	NoteAlternative NoteKind = "alternative_target"
	// NoteConditional offers a target set that applies only under a
	// condition (When): "UBCV BIOL 201 (3), if Organic Chemistry taken as a
	// co-requisite; or UBCV BIOL 2nd (3) if taken alone".
	NoteConditional NoteKind = "conditional_target"
	// NotePreclusion limits credit: "Credit for only one of LANG PSYC 1195
	// or PSYC 2329" (OnlyOneOf, source courses), "Precludes credit for UBCV
	// ARTH 251" (Precludes, destination courses).
	NotePreclusion NoteKind = "preclusion"
)

// Note is one condition of a rule's credit text, structured.
type Note struct {
	// Kind is alternative_target, conditional_target or preclusion.
	Kind NoteKind `json:"kind"`
	// Text is the condition as the credit text words it, verbatim.
	Text string `json:"text"`
	// Targets is the target set an alternative or conditional note offers.
	Targets *TargetSet `json:"targets,omitempty"`
	// AppliesToMain is true for a conditional note whose condition governs
	// the rule's own Targets rather than Targets of the note ("UBCV BIOL
	// 201 (3), if Organic Chemistry taken as a co-requisite"): the rule's
	// targets hold only when the condition does.
	AppliesToMain bool `json:"appliesToMain,omitempty"`
	// When is the condition in words ("Organic Chemistry taken as a
	// co-requisite", "taken alone"); empty for alternatives and preclusions.
	When string `json:"when,omitempty"`
	// With are source courses the condition names as taken alongside
	// ("if taken with LANG CHEM 2316"); empty when it names none.
	With []catalog.Ref `json:"with,omitempty"`
	// Alone is true when the condition is that the course is taken alone
	// (without the courses or subject the other condition names): the
	// default when the request holds nothing that meets the other.
	Alone bool `json:"alone,omitempty"`
	// OnlyOneOf are source courses of which credit is granted for only one
	// (this rule's course among them).
	OnlyOneOf []catalog.Ref `json:"onlyOneOf,omitempty"`
	// Precludes are destination courses that cannot also be credited
	// alongside this rule's targets.
	Precludes []catalog.Ref `json:"precludes,omitempty"`
}
