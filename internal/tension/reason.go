package tension

// Reasons: the human sentence of a finding.

import (
	"sort"
	"strings"
)

// scopeNote names the differing scopes of a scope conflict.
func scopeNote(x, y *belief, ev *evidence, typ string) string {
	if typ != TypeScopeConflict {
		return ""
	}
	sa, sb := strings.Join(x.scopes, "+"), strings.Join(y.scopes, "+")
	if sa == sb {
		sa, sb = "domain "+x.top, "domain "+y.top
	}
	if sa == "" {
		sa = "unscoped"
	}
	if sb == "" {
		sb = "unscoped"
	}
	return "scope " + sa + " vs " + sb + "; "
}

// conflictReason names the first conflicting pair of values: a date pair
// for the date rule, another pair otherwise.
func conflictReason(p *pair, dates bool) string {
	name := "different values: "
	if dates {
		name = "different dates: "
	}
	// Prefer the pair in corresponding places: the k-th unmatched value of
	// the class on each side ("(1) & ... (2)" vs "(3) & ... (2)" names 1 vs
	// 3, not 1 vs 2).
	first := -1
	for k, c := range p.ev.conflicts {
		if isDateClass(p.x.seq[c.a].class) != dates {
			continue
		}
		if first < 0 {
			first = k
		}
		cl := p.x.seq[c.a].class
		if unmatchedRank(p.x, p.ev.matchedA, c.a, cl) == unmatchedRank(p.y, p.ev.matchedB, c.b, cl) {
			return name + quote(p.x.seq[c.a].disp) + " vs " + quote(p.y.seq[c.b].disp)
		}
	}
	if first >= 0 {
		c := p.ev.conflicts[first]
		return name + quote(p.x.seq[c.a].disp) + " vs " + quote(p.y.seq[c.b].disp)
	}
	return "tension"
}

// unmatchedRank returns how many unmatched values of class cl precede seq
// index i in x.
func unmatchedRank(x *belief, matched []bool, i int, cl valueClass) int {
	n := 0
	for _, k := range x.core {
		if k >= i {
			break
		}
		if t := &x.seq[k]; t.kind == valueTerm && t.class == cl && !matched[k] && !t.negged && !t.tq {
			n++
		}
	}
	return n
}

// slotNamed reports whether every word in core range s of x belongs to
// one of x's linked entity names.
func slotNamed(x *belief, s [2]int) bool {
	for k := s[0]; k <= s[1]; k++ {
		t := &x.seq[x.core[k]]
		if t.kind != wordTerm || !hasSorted(x.ents, t.key) {
			return false
		}
	}
	return true
}

func quote(s string) string { return `"` + s + `"` }

func slotText(x *belief, s [2]int) string {
	parts := make([]string, 0, s[1]-s[0]+1)
	for k := s[0]; k <= s[1]; k++ {
		parts = append(parts, x.seq[x.core[k]].disp)
	}
	return strings.Join(parts, " ")
}

// dispOf returns the surface form of word key in x.
func dispOf(x *belief, key string) string {
	for i := range x.seq {
		if x.seq[i].kind == wordTerm && x.seq[i].key == key {
			return x.seq[i].disp
		}
	}
	return key
}

// sharedList lists up to maxReasonTerms shared terms, sorted.
func sharedList(x *belief, shared []string) string {
	out := make([]string, 0, min(len(shared), maxReasonTerms))
	for _, k := range shared {
		out = append(out, dispOf(x, k))
	}
	sort.Strings(out)
	if len(out) > maxReasonTerms {
		out = append(out[:maxReasonTerms], "…")
	}
	return strings.Join(out, ", ")
}

func windowText(in Input) string {
	f, u := "open", "open"
	if in.ValidFrom != nil {
		f = in.ValidFrom.UTC().Format("2006-01-02")
	}
	if in.ValidUntil != nil {
		u = in.ValidUntil.UTC().Format("2006-01-02")
	}
	return f + ".." + u
}

func hasWindow(in Input) bool { return in.ValidFrom != nil || in.ValidUntil != nil }

// disjoint reports whether the validity windows of a and b do not
// overlap; ValidUntil is exclusive, so a window ending when the other
// starts is disjoint.
func disjoint(a, b Input) bool {
	if a.ValidUntil != nil && b.ValidFrom != nil && !a.ValidUntil.After(*b.ValidFrom) {
		return true
	}
	return b.ValidUntil != nil && a.ValidFrom != nil && !b.ValidUntil.After(*a.ValidFrom)
}
