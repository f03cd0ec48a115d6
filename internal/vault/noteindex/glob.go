package noteindex

import (
	"strings"
	"unicode/utf8"
)

// maxGlobAlternatives bounds what a glob's braces expand to; a glob past
// it matches nothing.
const maxGlobAlternatives = 64

// glob is a compiled glob, anchored on the whole path: "**" matches
// anything, "**/" also nothing (so "**/x.md" finds a top-level x.md), "*"
// anything but '/', "?" one character but '/', "[...]" one of a class
// ("[!...]" or "[^...]": one not in it, nor '/'), "{a,b}" either, and "\"
// makes the next character literal. An unclosed "[" or "{" is literal.
type glob struct {
	alts [][]globTok // the globs its braces expand to
	memo []uint64    // failed (token, offset) pairs of the match running
}

type globTok struct {
	kind   globKind
	r      rune      // tLit
	neg    bool      // tClass
	ranges [][2]rune // tClass
}

type globKind uint8

const (
	tLit     globKind = iota
	tOne              // ?
	tClass            // [...]
	tStar             // *
	tAny              // **
	tAnyDirs          // **/
)

// compileGlob compiles g; ok is false when its braces expand to too many
// globs.
func compileGlob(g string) (*glob, bool) {
	alts := expandBraces(g, nil)
	if len(alts) > maxGlobAlternatives {
		return nil, false
	}
	out := &glob{}
	for _, a := range alts {
		out.alts = append(out.alts, globTokens(a))
	}
	return out, true
}

// expandBraces appends to out the globs g's first brace group expands to,
// each expanded further; it stops past maxGlobAlternatives.
func expandBraces(g string, out []string) []string {
	if len(out) > maxGlobAlternatives {
		return out
	}
	open, close := -1, -1
	var commas []int
	depth := 0
scan:
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '[':
			if j := classEnd(g, i); j > 0 {
				i = j
			}
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			if depth--; depth == 0 {
				close = i
				break scan
			}
		}
	}
	if close < 0 {
		return append(out, g) // no group, or an unclosed one: literal
	}
	prefix, suffix := g[:open], g[close+1:]
	start := open + 1
	for _, end := range append(commas, close) {
		out = expandBraces(prefix+g[start:end]+suffix, out)
		start = end + 1
	}
	return out
}

// globTokens reads a glob without braces.
func globTokens(g string) []globTok {
	var toks []globTok
	for i := 0; i < len(g); {
		switch c := g[i]; {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			i += 2
			if i < len(g) && g[i] == '/' {
				toks = append(toks, globTok{kind: tAnyDirs})
				i++
			} else {
				toks = append(toks, globTok{kind: tAny})
			}
			continue
		case c == '*':
			toks = append(toks, globTok{kind: tStar})
		case c == '?':
			toks = append(toks, globTok{kind: tOne})
		case c == '[' && classEnd(g, i) > 0:
			j := classEnd(g, i)
			toks = append(toks, classTok(g[i+1:j]))
			i = j + 1
			continue
		case c == '\\' && i+1 < len(g):
			r, size := utf8.DecodeRuneInString(g[i+1:])
			toks = append(toks, globTok{kind: tLit, r: r})
			i += 1 + size
			continue
		default:
			r, size := utf8.DecodeRuneInString(g[i:])
			toks = append(toks, globTok{kind: tLit, r: r})
			i += size
			continue
		}
		i++
	}
	return toks
}

// classTok reads the inside of a class: "!" or "^" first negates it, a
// "]" first is literal, "a-z" is a range.
func classTok(class string) globTok {
	t := globTok{kind: tClass}
	if class[0] == '!' || class[0] == '^' {
		t.neg, class = true, class[1:]
	}
	rs := []rune(class)
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			t.ranges = append(t.ranges, [2]rune{rs[i], rs[i+2]})
			i += 2
			continue
		}
		t.ranges = append(t.ranges, [2]rune{rs[i], rs[i]})
	}
	return t
}

// one reports whether single-character token t matches r.
func (t *globTok) one(r rune) bool {
	switch t.kind {
	case tLit:
		return r == t.r
	case tOne:
		return r != '/'
	}
	in := false
	for _, rg := range t.ranges {
		if rg[0] <= r && r <= rg[1] {
			in = true
			break
		}
	}
	if t.neg {
		return !in && r != '/'
	}
	return in
}

// match reports whether path matches the glob. Not for concurrent use (a
// glob belongs to one search).
func (g *glob) match(path string) bool {
	for _, toks := range g.alts {
		// The literal start, first: most paths fail there.
		i := 0
		for ; i < len(toks) && toks[i].kind == tLit; i++ {
		}
		rest := path
		ok := true
		for _, t := range toks[:i] {
			r, size := utf8.DecodeRuneInString(rest)
			if size == 0 || r != t.r {
				ok = false
				break
			}
			rest = rest[size:]
		}
		if !ok {
			continue
		}
		words := ((len(toks)-i+1)*(len(rest)+1) + 63) / 64
		if cap(g.memo) < words {
			g.memo = make([]uint64, words)
		}
		g.memo = g.memo[:words]
		clear(g.memo)
		if g.matchAt(toks[i:], rest, 0, 0) {
			return true
		}
	}
	return false
}

// matchAt reports whether toks[ti:] match s[si:], remembering the pairs
// that do not (g.memo) so that stars cost polynomial time.
func (g *glob) matchAt(toks []globTok, s string, ti, si int) bool {
	for ti < len(toks) {
		key := ti*(len(s)+1) + si
		if g.memo[key/64]&(1<<(key%64)) != 0 {
			return false
		}
		t := &toks[ti]
		switch t.kind {
		case tStar, tAny:
			for j := si; ; {
				if g.matchAt(toks, s, ti+1, j) {
					return true
				}
				if j == len(s) || t.kind == tStar && s[j] == '/' {
					break
				}
				_, size := utf8.DecodeRuneInString(s[j:])
				j += size
			}
			g.memo[key/64] |= 1 << (key % 64)
			return false
		case tAnyDirs:
			if g.matchAt(toks, s, ti+1, si) {
				return true
			}
			for j := si; j < len(s); j++ {
				if s[j] == '/' && g.matchAt(toks, s, ti+1, j+1) {
					return true
				}
			}
			g.memo[key/64] |= 1 << (key % 64)
			return false
		}
		r, size := utf8.DecodeRuneInString(s[si:])
		if size == 0 || !t.one(r) {
			return false
		}
		ti, si = ti+1, si+size
	}
	return si == len(s)
}

// hasGlobMeta reports whether p is a glob rather than a prefix.
func hasGlobMeta(p string) bool { return strings.ContainsAny(p, "*?[]{}") }
