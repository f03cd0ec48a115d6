package transfer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// Result is the answer of a resolution: the rules the source courses
// satisfy, the rules they satisfy in part, and the courses no rule in
// force names.
type Result struct {
	// ExactMatches are rules whose every source group is satisfied,
	// including no_credit rules (an answer: the course transfers for no
	// credit) and individual_assessment rules.
	ExactMatches []Match `json:"exactMatches"`
	// PartialMatches are rules that use at least one of the courses but
	// have a group not yet satisfied; Progress says what is missing.
	PartialMatches []Match `json:"partialMatches"`
	// Unmatched are the courses (deduplicated, in the order given) that
	// no rule in force at the date (to the destination asked, if one was)
	// names.
	Unmatched []catalog.Ref `json:"unmatched"`
}

// Match is one rule that the source courses satisfy, wholly or in part.
// It embeds the rule (shared with the index: read only), so a match has
// the rule's Outcome, EffectiveStart and EffectiveEnd, Evidence and
// Confidence as its own fields, in Go and in JSON.
type Match struct {
	*Rule
	// Used are the courses of the request the rule names (read only: it
	// may share memory with other matches).
	Used []catalog.Ref `json:"used"`
	// SourceCredits is the sum of the credits the rule states for the
	// used courses; nil when the rule states none.
	SourceCredits *float64 `json:"sourceCredits,omitempty"`
	// TargetCredits are the credits of each target set (alternative), in
	// the rule's order; empty when the rule grants no targets.
	TargetCredits []float64 `json:"targetCredits,omitempty"`
	// Progress is set on partial matches: one entry per source group of
	// the rule, satisfied or not.
	Progress []GroupProgress `json:"progress,omitempty"`
}

// GroupProgress says how far the courses go towards one source group.
type GroupProgress struct {
	// Group is the index of the group in the rule's Source.
	Group int `json:"group"`
	// Kind is the group's kind.
	Kind GroupKind `json:"kind"`
	// Need is how many of the group's courses are needed; Have how many
	// the request holds.
	Need int `json:"need"`
	Have int `json:"have"`
	// Satisfied is Have >= Need.
	Satisfied bool `json:"satisfied"`
	// Missing are the group's courses the request does not hold: all of
	// them are needed for required, any (Need - Have) of them otherwise.
	Missing []catalog.Ref `json:"missing,omitempty"`
	// Summary says it in words: "group 0: have 1 of 2 required".
	Summary string `json:"summary"`
}

// posting is one rule under one of its source courses: what resolution
// reads to decide whether the rule is in force at the date and, for a
// rule with that course as its only source, the whole match. A course's
// postings are contiguous, so a request scans memory in order.
type posting struct {
	start, end int64   // effective range in Unix seconds, end exclusive
	credits    float64 // credits the rule states for this course; NaN when none
	comp       int32   // index in Index.comp
	dest       int32   // index in Index.dests
	single     bool    // the course is the rule's only source (one group, N=1)
}

// compiled is the rest of a rule that resolution reads, kept flat.
type compiled struct {
	rule    int32 // index of the rule in Index.rules
	src     int32 // first entry of the rule in Index.src
	nsrc    int32 // number of source entries
	need    int32 // first entry of the rule's groups in Index.need
	ngroups int32 // number of source groups
	tc, ntc int32 // the rule's target credits in Index.tcredits
}

// srcEntry is one source course of a compiled rule.
type srcEntry struct {
	course  int32   // index in Index.courses
	group   int32   // index of its group in the rule
	credits float64 // NaN when the text states none
}

// Index finds rules by source course. Build it once with NewIndex; it is
// read only afterwards and safe for concurrent use.
type Index struct {
	rules    []Rule
	comp     []compiled
	src      []srcEntry
	need     []int32   // courses needed per group, rule by rule
	tcredits []float64 // credits of each target set, rule by rule
	dests    []string
	courses  []catalog.Ref         // interned source courses
	courseID map[catalog.Ref]int32 // course -> index in courses
	bySource [][]posting           // course index -> its rules
}

// NewIndex indexes rules by their source courses. Rules that are the
// same agreement listed under each of its courses (same destination,
// source groups, credit text and range) are kept once, the first. Rules
// not Parsed have no source and are never matched. The index refers to
// rules (matches point into it): do not modify them afterwards.
func NewIndex(rules []Rule) *Index {
	ix := &Index{rules: rules, courseID: map[catalog.Ref]int32{}}
	destID := map[string]int32{}
	seen := make(map[string]bool, len(rules))
	var key strings.Builder
	for i := range rules {
		r := &rules[i]
		if !r.Parsed || len(r.Source) == 0 {
			continue
		}
		key.Reset()
		fmt.Fprintf(&key, "%s\x00%s\x00%d\x00%d", r.Destination, r.Raw, r.EffectiveStart.Unix(), r.EffectiveEnd.Unix())
		for _, g := range r.Source {
			fmt.Fprintf(&key, "\x00%s/%d", g.Kind, g.N)
			for _, c := range g.Courses {
				key.WriteString("\x00" + c.Course.String())
			}
		}
		if seen[key.String()] {
			continue
		}
		seen[key.String()] = true

		start, end := int64(math.MinInt64), int64(math.MaxInt64)
		if !r.EffectiveStart.IsZero() {
			start = r.EffectiveStart.Unix()
		}
		if !r.EffectiveEnd.IsZero() {
			end = r.EffectiveEnd.AddDate(0, 0, 1).Unix()
		}
		d, ok := destID[r.Destination]
		if !ok {
			d = int32(len(ix.dests))
			destID[r.Destination] = d
			ix.dests = append(ix.dests, r.Destination)
		}
		ci := int32(len(ix.comp))
		c := compiled{rule: int32(i), src: int32(len(ix.src)), need: int32(len(ix.need)), ngroups: int32(len(r.Source)), tc: int32(len(ix.tcredits))}
		for _, s := range r.Targets {
			ix.tcredits = append(ix.tcredits, s.Credits())
		}
		c.ntc = int32(len(ix.tcredits)) - c.tc
		single := len(r.Source) == 1 && len(r.Source[0].Courses) == 1 && r.Source[0].N == 1
		for gi, g := range r.Source {
			ix.need = append(ix.need, int32(g.N))
			for _, sc := range g.Courses {
				cid, ok := ix.courseID[sc.Course]
				if !ok {
					cid = int32(len(ix.courses))
					ix.courseID[sc.Course] = cid
					ix.courses = append(ix.courses, sc.Course)
					ix.bySource = append(ix.bySource, nil)
				}
				e := srcEntry{course: cid, group: int32(gi), credits: math.NaN()}
				if sc.Credits != nil {
					e.credits = *sc.Credits
				}
				ix.src = append(ix.src, e)
				if list := ix.bySource[cid]; len(list) == 0 || list[len(list)-1].comp != ci {
					ix.bySource[cid] = append(list, posting{start: start, end: end, credits: e.credits, comp: ci, dest: d, single: single})
				}
			}
		}
		c.nsrc = int32(len(ix.src)) - c.src
		ix.comp = append(ix.comp, c)
	}
	return ix
}

// Len is the number of rules indexed (after removing duplicates).
func (ix *Index) Len() int { return len(ix.comp) }

// Resolve indexes rules and resolves have against them at asOf (see
// Index.Resolve). To resolve many requests, build the Index once.
func Resolve(rules []Rule, have []catalog.Ref, asOf time.Time) Result {
	return NewIndex(rules).Resolve(have, asOf)
}

// Resolve finds the rules in force at asOf that the source courses have
// satisfy (ExactMatches) or use without satisfying (PartialMatches), to
// every destination. have is a set: order and duplicates do not matter.
// Courses are compared as normalized references (catalog.ParseRef's
// form). Matches come in the order of the first course of have each
// uses, then in the order of the rules.
func (ix *Index) Resolve(have []catalog.Ref, asOf time.Time) Result {
	return ix.ResolveTo("", have, asOf)
}

// ResolveTo is Resolve limited to one destination institution (its
// directory key, "sfu"); an empty destination means every destination.
func (ix *Index) ResolveTo(destination string, have []catalog.Ref, asOf time.Time) Result {
	uniq := make([]catalog.Ref, 0, len(have))
	for _, h := range have {
		if !slices.Contains(uniq, h) {
			uniq = append(uniq, h)
		}
	}
	// ids[k] is the interned index of uniq[k], -1 when no rule names it.
	ids := make([]int32, len(uniq))
	for k, h := range uniq {
		ids[k] = -1
		if id, ok := ix.courseID[h]; ok {
			ids[k] = id
		}
	}
	dest := int32(-1)
	if destination != "" {
		if dest = int32(slices.Index(ix.dests, destination)); dest < 0 {
			return Result{ExactMatches: []Match{}, PartialMatches: []Match{}, Unmatched: uniq}
		}
	}
	at := asOf.Unix()
	inForce := func(p *posting) bool { return at >= p.start && at < p.end && (dest < 0 || p.dest == dest) }

	// Size the results: a first, sequential pass counts the postings in
	// force (a rule under several of the courses is counted more than once).
	n := 0
	for _, id := range ids {
		if id < 0 {
			continue
		}
		for i := range ix.bySource[id] {
			if inForce(&ix.bySource[id][i]) {
				n++
			}
		}
	}
	used := make([]bool, len(uniq))
	// A match's Used is a window of uniq (one course) or of usedBuf
	// (several): should usedBuf grow, earlier windows keep the old array.
	matches := make([]Match, 0, n)
	credBuf := make([]float64, 0, n)
	partials := []Match{}
	var usedBuf []catalog.Ref
	var countBuf [8]int32
	var ksBuf [8]int
	for k, id := range ids {
		if id < 0 {
			continue
		}
		for i := range ix.bySource[id] {
			p := &ix.bySource[id][i]
			if !inForce(p) {
				continue
			}
			c := &ix.comp[p.comp]
			m := Match{Rule: &ix.rules[c.rule], TargetCredits: ix.tcredits[c.tc : c.tc+c.ntc : c.tc+c.ntc]}
			if p.single {
				// Most rules: this course alone, an exact match.
				used[k] = true
				m.Used = uniq[k : k+1 : k+1]
				if !math.IsNaN(p.credits) {
					credBuf = append(credBuf, p.credits)
					m.SourceCredits = &credBuf[len(credBuf)-1]
				}
				matches = append(matches, m)
				continue
			}
			counts := countBuf[:0]
			if c.ngroups > int32(len(countBuf)) {
				counts = make([]int32, 0, c.ngroups)
			}
			counts = counts[:c.ngroups]
			clear(counts)
			ks := ksBuf[:0] // indexes in uniq of the courses the rule uses
			var credits float64
			stated, earlier := false, false
			for _, e := range ix.src[c.src : c.src+c.nsrc] {
				j := slices.Index(ids, e.course)
				if j < 0 {
					continue
				}
				earlier = earlier || j < k
				counts[e.group]++
				if !slices.Contains(ks, j) {
					ks = append(ks, j)
					if !math.IsNaN(e.credits) {
						credits += e.credits
						stated = true
					}
				}
			}
			if earlier {
				continue // matched under an earlier course of the request
			}
			all := true
			for g, need := range ix.need[c.need : c.need+c.ngroups] {
				all = all && counts[g] >= need
			}
			from := len(usedBuf)
			for _, j := range ks {
				used[j] = true
				usedBuf = append(usedBuf, uniq[j])
			}
			m.Used = usedBuf[from:len(usedBuf):len(usedBuf)]
			if stated {
				credBuf = append(credBuf, credits)
				m.SourceCredits = &credBuf[len(credBuf)-1]
			}
			if !all {
				m.Progress = progress(m.Rule, uniq)
				partials = append(partials, m)
				continue
			}
			matches = append(matches, m)
		}
	}
	res := Result{ExactMatches: matches, PartialMatches: partials, Unmatched: []catalog.Ref{}}
	for k, h := range uniq {
		if !used[k] {
			res.Unmatched = append(res.Unmatched, h)
		}
	}
	return res
}

// progress reports each source group of r against have.
func progress(r *Rule, have []catalog.Ref) []GroupProgress {
	out := make([]GroupProgress, len(r.Source))
	for gi, g := range r.Source {
		p := GroupProgress{Group: gi, Kind: g.Kind, Need: g.N}
		for _, c := range g.Courses {
			if slices.Contains(have, c.Course) {
				p.Have++
			} else {
				p.Missing = append(p.Missing, c.Course)
			}
		}
		p.Satisfied = p.Have >= p.Need
		if p.Satisfied && g.Kind != GroupRequired {
			p.Missing = nil // nothing more is needed from an or/n-of group
		}
		b := make([]byte, 0, 48)
		b = append(b, "group "...)
		b = strconv.AppendInt(b, int64(gi), 10)
		b = append(b, ": have "...)
		b = strconv.AppendInt(b, int64(p.Have), 10)
		b = append(b, " of "...)
		b = strconv.AppendInt(b, int64(p.Need), 10)
		b = append(b, ' ')
		b = append(b, groupWords[g.Kind]...)
		p.Summary = string(b)
		out[gi] = p
	}
	return out
}

// groupWords name group kinds in summaries (read-only).
var groupWords = map[GroupKind]string{GroupRequired: "required", GroupOr: "needed (any one)", GroupNOf: "needed (any)"}
