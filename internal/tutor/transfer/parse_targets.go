package transfer

import (
	"slices"
	"strings"
)

// targets parses the right side into alternatives of atom indices.
func (p *parser) targets() ([][]int, bool) {
	dnf, ok := p.segment()
	if !ok {
		return nil, false
	}
	for {
		save := p.mark()
		switch {
		case p.comma() && p.word("or"):
			p.space()
			alt, ok := p.segment()
			if !ok {
				p.reset(save)
				return dnf, true
			}
			dnf = append(dnf, alt...)
		case p.restore(save) && p.comma() && p.word("&"):
			p.space()
			conj, ok := p.segment()
			if !ok {
				p.reset(save)
				return dnf, true
			}
			dnf = p.product(dnf, conj)
		case p.restore(save) && p.comma() && p.destCourseNext():
			conj, ok := p.segment()
			if !ok {
				p.reset(save)
				return dnf, true
			}
			p.repair("targets joined by a comma read as &")
			dnf = p.product(dnf, conj)
		default:
			p.reset(save)
			return dnf, true
		}
	}
}

// restore goes back to save and reports true (for use in switch cases
// that try alternatives).
func (p *parser) restore(save mark) bool { p.reset(save); return true }

// destCourseNext says whether a course at the destination, named with its
// institution and followed by credits, comes next (not a new equation).
func (p *parser) destCourseNext() bool {
	save := p.mark()
	defer p.reset(save)
	c, ok := p.course(false)
	if !ok || !c.inst || c.refs[0].Institution != p.dest || c.credits == nil {
		return false
	}
	p.space()
	return !strings.HasPrefix(p.rest(), "=")
}

// segment parses atoms joined by "&" (tighter) and "or".
func (p *parser) segment() ([][]int, bool) {
	first, ok := p.atom()
	if !ok {
		return nil, false
	}
	var done [][]int
	cur := [][]int{{first}}
	for {
		save := p.mark()
		isOr := false
		switch {
		case p.op("&"):
		case p.op("or"):
			isOr = true
		default:
			return append(done, cur...), true
		}
		a, ok := p.atom()
		if !ok {
			p.reset(save)
			return append(done, cur...), true
		}
		if isOr {
			done = append(done, cur...)
			cur = [][]int{{a}}
		} else {
			cur = p.conjoin(cur, a)
		}
	}
}

// conjoin adds atom a (its index) to each alternative of cur.
func (p *parser) conjoin(cur [][]int, a int) [][]int {
	if len(cur) == 1 {
		cur[0] = append(cur[0], a) // the only alternative is this segment's own
		return cur
	}
	return p.product(cur, [][]int{{a}})
}

// maxSets bounds the alternatives a credit text may expand to (the real
// data needs 14); beyond it the row is not parsed.
const maxSets = 256

// product distributes two alternatives lists: (A|B)&(C|D) = AC|AD|BC|BD.
// Past maxSets alternatives it marks the parse too complex and keeps a.
func (p *parser) product(a, b [][]int) [][]int {
	if len(a)*len(b) > maxSets {
		p.tooMany = true
		return a
	}
	out := make([][]int, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, append(slices.Clone(x), y...))
		}
	}
	return out
}

// atom parses one target with its designations; it returns its index.
func (p *parser) atom() (int, bool) {
	save := p.mark()
	exempt := false
	if p.word("Exemption") {
		p.space()
		exempt = true
	}
	c, ok := p.course(true)
	if !ok {
		p.reset(save)
		return 0, false
	}
	a := atom{}
	for {
		s := p.mark()
		if d, ok := p.designation(); ok {
			a.desig = append(a.desig, d)
			continue
		}
		p.reset(s)
		p.comma()
		p.space()
		if p.word("Exemption") && p.boundary() {
			exempt = true
			continue
		}
		p.reset(s)
		break
	}
	for _, ref := range c.refs {
		t := Target{Kind: targetKind(ref), Course: ref, Credits: c.credits}
		if exempt || (c.credits != nil && *c.credits == 0) {
			t.Exemption = true
		}
		if ref.Institution != p.dest {
			p.repair("target at another institution than the destination")
		}
		a.alts = append(a.alts, t)
	}
	p.atoms = append(p.atoms, a)
	return len(p.atoms) - 1, true
}

// designation reads ", D", " - D" or " D" where D is a designation
// followed by the end, punctuation, "&", "or" or "Exemption".
func (p *parser) designation() (string, bool) {
	save := p.mark()
	switch {
	case strings.HasPrefix(p.rest(), ", "), strings.HasPrefix(p.rest(), " - "):
		p.i += 2
		p.space()
	case strings.HasPrefix(p.rest(), " "):
		p.i++
	default:
		return "", false
	}
	m := desigRe().FindString(p.rest())
	if m == "" {
		p.reset(save)
		return "", false
	}
	p.i += len(m)
	if strings.HasPrefix(p.rest(), "or ") {
		// "B-Scior SFU GEOG 2XX (3)": the space before "or" is missing.
		p.s = p.s[:p.i] + " " + p.s[p.i:]
		p.repair("missing space before or")
	}
	if !p.boundary() {
		p.reset(save)
		return "", false
	}
	return strings.ReplaceAll(m, " ", ""), true
}

// boundary says whether a designation may end here.
func (p *parser) boundary() bool {
	rest := p.rest()
	if rest == "" || strings.ContainsRune(",.;", rune(rest[0])) {
		return true
	}
	for _, next := range []string{" & ", " or ", " Exemption"} {
		if strings.HasPrefix(rest, next) {
			return true
		}
	}
	return false
}

// tailDesignations reads designations at the start of the notes.
func (p *parser) tailDesignations() []string {
	var out []string
	for {
		save := p.mark()
		if !p.comma() {
			return out
		}
		m := desigRe().FindString(p.rest())
		if m == "" {
			p.reset(save)
			return out
		}
		p.i += len(m)
		if !p.boundary() {
			p.reset(save)
			return out
		}
		out = append(out, strings.ReplaceAll(m, " ", ""))
	}
}

// tail keeps the notes after the credit expression: leading designations
// go to the rule, the rest stays verbatim in Conditions, the clauses that
// offer an alternative or conditional target or a preclusion are read
// into Notes (see notes), and waive or exemption clauses are read into
// Waives.
func (p *parser) tail(r *Rule) {
	r.Designations = append(r.Designations, p.tailDesignations()...)
	rest := strings.TrimLeft(p.rest(), " ,;.")
	p.i = len(p.s)
	if rest == "" {
		return
	}
	r.Conditions = []string{rest}
	textOnly := p.notes(r, rest)
	if strings.HasPrefix(strings.ToLower(rest), "or ") && len(textOnly) > 0 && strings.HasPrefix(rest, textOnly[0]) {
		p.repair("alternative in the notes left as text")
	}
	for _, m := range waiveRe().FindAllStringIndex(rest, -1) {
		before := strings.ToLower(rest[:m[0]])
		if strings.HasSuffix(before, "for ") {
			continue // "For exemption from X, apply to ...": not a waiver
		}
		q := &parser{s: rest, i: m[1], dir: p.dir, dest: p.dest}
		for {
			c, ok := q.course(true)
			if !ok {
				break
			}
			for _, ref := range c.refs {
				r.Waives = append(r.Waives, Target{Kind: targetKind(ref), Course: ref, Credits: c.credits})
			}
			if !q.comma() && !q.op("or") && !q.op("and") && !q.op("&") {
				break
			}
		}
	}
}

// materialize turns alternatives of atom indices into target sets.
func (p *parser) materialize(sets [][]int) []TargetSet {
	var out []TargetSet
	for _, set := range sets {
		// An atom with several alternatives multiplies the set.
		partial := [][]Target{nil}
		for _, ai := range set {
			a := p.atoms[ai]
			var next [][]Target
			for _, prefix := range partial {
				for _, t := range a.alts {
					t.Designations = slices.Clone(a.desig)
					next = append(next, append(slices.Clone(prefix), t))
				}
			}
			partial = next
			if len(partial)+len(out) > maxSets {
				p.tooMany = true
				return out
			}
		}
		for _, ts := range partial {
			var uniq []Target
			for _, t := range ts {
				if k := slices.IndexFunc(uniq, func(u Target) bool { return sameTarget(u, t) }); k >= 0 {
					p.repair("target repeated in a set")
					for _, d := range t.Designations {
						if !slices.Contains(uniq[k].Designations, d) {
							uniq[k].Designations = append(uniq[k].Designations, d)
						}
					}
					continue
				}
				uniq = append(uniq, t)
			}
			out = append(out, TargetSet{Targets: uniq})
		}
	}
	return out
}

// sameTarget says whether two targets grant the same course and credits.
func sameTarget(a, b Target) bool {
	return a.Course == b.Course && (a.Credits == nil) == (b.Credits == nil) && (a.Credits == nil || *a.Credits == *b.Credits)
}

// clip shortens text for a problem message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
