package tension

// Lexing: raw text to tokens.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexeme is one raw token.
type lexeme struct {
	s     string // lower-cased; joined hyphenated words lose their hyphens
	caps  bool   // every letter is upper-case in the source (2+ letters)
	num   bool   // starts with a digit
	brk   bool   // clause boundary
	neg   bool   // "not" split off a contraction
	poss  bool   // possessive 's
	slash bool   // directly after a slash ("Sep/13")
	upper bool   // the word starts with an upper-case letter
	paren bool   // a clause break made only of parentheses
	hash  bool   // a number written directly after '#' ("#12")
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lexText splits src into tokens. Numbers keep decimal points, version
// dots, thousands separators, clock colons and ISO date hyphens; words keep
// inner apostrophes (then split into contractions) and join hyphens.
func lexText(src string) []lexeme {
	out := make([]lexeme, 0, 24)
	brk := func(paren bool) {
		switch {
		case len(out) == 0:
		case out[len(out)-1].brk:
			// Merged breaks are a parenthesis only if all are.
			out[len(out)-1].paren = out[len(out)-1].paren && paren
		default:
			out = append(out, lexeme{brk: true, paren: paren})
		}
	}
	n := len(src)
	for i := 0; i < n; {
		r, w := utf8.DecodeRuneInString(src[i:])
		switch {
		case r < utf8.RuneSelf && isDigit(byte(r)):
			j := i + 1
			for j < n {
				c := src[j]
				switch {
				case isDigit(c):
					j++
					continue
				case (c == '.' || c == ':') && j+1 < n && isDigit(src[j+1]):
					j++
					continue
				case c == ',' && thousands(src, j):
					j++
					continue
				case c == '-' && (j-i == 4 || j-i == 7) && allDigits(src[i:i+4]) && isoPart(src, j):
					j++
					continue
				}
				break
			}
			out = append(out, lexeme{s: src[i:j], num: true, slash: i > 0 && src[i-1] == '/', hash: i > 0 && src[i-1] == '#'})
			if j < n && src[j] == '%' {
				out = append(out, lexeme{s: "%"})
				j++
			} else if j < n {
				// Letters glued to a number are a unit or ordinal suffix
				// ("16GB", "3rd", "9pm"); any other glued letters make the
				// whole run an identifier ("1XX", "2X11", "2FA").
				k := j
				for k < n {
					r2, w2 := utf8.DecodeRuneInString(src[k:])
					if !unicode.IsLetter(r2) {
						break
					}
					k += w2
				}
				if k > j {
					suf := strings.ToLower(src[j:k])
					if _, unit := units()[suf]; (unit || numberSuffixes[suf]) && (k >= n || !isWordRune(src, k)) {
						out = append(out, lexeme{s: suf})
						j = k
					} else {
						for k < n && isWordRune(src, k) {
							_, w2 := utf8.DecodeRuneInString(src[k:])
							k += w2
						}
						out[len(out)-1] = lexeme{s: strings.ToLower(src[i:k])}
						j = k
					}
				}
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i + w
			for j < n {
				r2, w2 := utf8.DecodeRuneInString(src[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) {
					j += w2
					continue
				}
				if r2 == '\'' || r2 == '’' || r2 == '-' || r2 == '.' {
					if j+w2 < n {
						r3, _ := utf8.DecodeRuneInString(src[j+w2:])
						if unicode.IsLetter(r3) || (r2 == '-' || r2 == '.') && unicode.IsDigit(r3) {
							j += w2
							continue
						}
					}
				}
				break
			}
			out = appendWord(out, src[i:j])
			i = j
		default:
			switch r {
			case '(', ')':
				brk(true)
			case ',', ';', ':', '.', '!', '?', '[', ']', '{', '}', '"', '“', '”', '—', '–', '…', '|':
				brk(false)
			case '-':
				if i+1 < n && src[i+1] == ' ' && i > 0 && src[i-1] == ' ' {
					brk(false)
				}
			case '&':
				out = append(out, lexeme{s: "and"})
			case '~':
				out = append(out, lexeme{s: "about"})
			}
			i += w
		}
	}
	return eagerWait(out)
}

// eagerWait drops the negation of "can't wait", "cannot wait" and
// "couldn't wait" (issue 23): the idiom says someone looks forward to
// something, it denies nothing.
func eagerWait(lx []lexeme) []lexeme {
	out := lx[:0]
	for k, l := range lx {
		next := k+1 < len(lx) && lx[k+1].s == "wait"
		switch {
		case l.neg && next && len(out) > 0 && (out[len(out)-1].s == "can" || out[len(out)-1].s == "could"):
			continue
		case l.s == "cannot" && next:
			l.s = "can"
		}
		out = append(out, l)
	}
	return out
}

// numberSuffixes are letters glued to a number that are not units: ordinals
// and clock halves.
var numberSuffixes = map[string]bool{"st": true, "nd": true, "rd": true, "th": true, "am": true, "pm": true}

// isWordRune reports whether the rune at src[k] is a letter or digit.
func isWordRune(src string, k int) bool {
	r, _ := utf8.DecodeRuneInString(src[k:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// thousands reports whether src[j] is a comma followed by exactly three
// digits (a thousands separator such as 1,000).
func thousands(src string, j int) bool {
	if j+4 > len(src) || !isDigit(src[j+1]) || !isDigit(src[j+2]) || !isDigit(src[j+3]) {
		return false
	}
	return j+4 == len(src) || !isDigit(src[j+4])
}

// isoPart reports whether src[j] is a hyphen followed by exactly two
// digits, continuing an ISO date (2024-03 or 2024-03-01).
func isoPart(src string, j int) bool {
	if j+3 > len(src) || !isDigit(src[j+1]) || !isDigit(src[j+2]) {
		return false
	}
	return j+3 == len(src) || !isDigit(src[j+3])
}

// appendWord appends the tokens of one word, splitting contractions.
func appendWord(out []lexeme, raw string) []lexeme {
	caps := allCaps(raw)
	first, _ := utf8.DecodeRuneInString(raw)
	upper := unicode.IsUpper(first)
	low := strings.ToLower(raw)
	if strings.ContainsAny(low, "-.’") {
		// Join "read-only" and "node.js"; keep version dots ("v1.2.3").
		dots := strings.ContainsAny(low, "0123456789")
		low = strings.Map(func(r rune) rune {
			switch {
			case r == '-' || r == '.' && !dots:
				return -1
			case r == '’':
				return '\''
			}
			return r
		}, low)
	}
	idx := strings.IndexByte(low, '\'')
	if idx < 0 {
		return append(out, lexeme{s: low, caps: caps, upper: upper})
	}
	base, suf := low[:idx], low[idx+1:]
	switch {
	case suf == "t" && strings.HasSuffix(base, "n"):
		base = base[:len(base)-1]
		switch base {
		case "ca":
			base = "can"
		case "wo":
			base = "will"
		case "sha":
			base = "shall"
		case "ai":
			base = "is"
		}
		if base != "" {
			out = append(out, lexeme{s: base})
		}
		return append(out, lexeme{s: "not", neg: true})
	case suf == "s":
		return append(out, lexeme{s: base, caps: caps, upper: upper, poss: true})
	case suf == "re" || suf == "ll" || suf == "ve" || suf == "d" || suf == "m":
		return append(out, lexeme{s: base})
	}
	return append(out, lexeme{s: base + strings.ReplaceAll(suf, "'", ""), caps: caps, upper: upper})
}

// allCaps reports whether s has at least two letters, all upper-case.
func allCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if !unicode.IsUpper(r) {
				return false
			}
			letters++
		}
	}
	return letters >= 2
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
