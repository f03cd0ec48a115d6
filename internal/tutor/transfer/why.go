package transfer

import (
	"slices"
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// UnmatchedReason says why no rule in force names a course.
type UnmatchedReason string

// The reasons a course is unmatched.
const (
	// ReasonNoRule: no rule names the course, at any date, to any
	// destination. (The tutor says unknown_course instead when a catalogue
	// of the course's institution is imported and does not hold it.)
	ReasonNoRule UnmatchedReason = "no_rule"
	// ReasonUnknownCourse: the course is not in the imported catalogue of
	// its institution (set by the caller that knows the catalogue).
	ReasonUnknownCourse UnmatchedReason = "unknown_course"
	// ReasonNoAgreement: rules name the course, but none ever to the
	// destination asked.
	ReasonNoAgreement UnmatchedReason = "no_agreement"
	// ReasonEnded: the course had agreements with the destination, and the
	// last ended before the date asked.
	ReasonEnded UnmatchedReason = "agreement_ended"
	// ReasonNotYet: the course's agreements with the destination start
	// after the date asked.
	ReasonNotYet UnmatchedReason = "not_yet_in_force"
)

// Why says why a course is unmatched.
type Why struct {
	// Course is the course.
	Course catalog.Ref
	// Reason is no_rule, no_agreement, agreement_ended or not_yet_in_force
	// (unknown_course is the caller's).
	Reason UnmatchedReason
	// Last is, for agreement_ended, the rule whose end is latest (the last
	// agreement), and for not_yet_in_force the one that starts first; nil
	// otherwise. It points into the index: read only.
	Last *Rule
}

// WhyUnmatched says why no rule in force at asOf (to destination, or to
// any when it is empty) names course c. It reads every rule of c whatever
// its dates, and is meant for the few courses Resolve leaves unmatched;
// for a course a rule in force names, Reason is empty.
func (ix *Index) WhyUnmatched(destination string, c catalog.Ref, asOf time.Time) Why {
	w := Why{Course: c}
	id, ok := ix.courseID[c]
	if !ok {
		w.Reason = ReasonNoRule
		return w
	}
	dest := int32(-1)
	if destination != "" {
		if dest = int32(slices.Index(ix.dests, destination)); dest < 0 {
			w.Reason = ReasonNoAgreement
			return w
		}
	}
	at := asOf.Unix()
	var ended, future *posting
	any := false
	for i := range ix.bySource[id] {
		p := &ix.bySource[id][i]
		if dest >= 0 && p.dest != dest {
			continue
		}
		any = true
		switch {
		case at >= p.start && at < p.end:
			return Why{Course: c} // in force: not unmatched
		case at >= p.end:
			if ended == nil || p.end > ended.end {
				ended = p
			}
		default:
			if future == nil || p.start < future.start {
				future = p
			}
		}
	}
	switch {
	case !any:
		w.Reason = ReasonNoAgreement
	case ended != nil:
		w.Reason, w.Last = ReasonEnded, &ix.rules[ix.comp[ended.comp].rule]
	default:
		w.Reason, w.Last = ReasonNotYet, &ix.rules[ix.comp[future.comp].rule]
	}
	return w
}
