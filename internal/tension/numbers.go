package tension

// Numbers, units, dates and times: values and how they compare.

import (
	"math"
	"strconv"
	"strings"
)

// fmtNum formats a number canonically.
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// parseNumber classifies the number at lx[i] and any unit after it. It returns
// the term and the index of the last token consumed.
func parseNumber(lx []lexeme, i int, prev []term) (term, int) {
	s := lx[i].s
	t := term{key: s, disp: s, kind: valueTerm, class: classNum}
	switch {
	case len(s) >= 7 && s[4] == '-':
		// ISO date (YYYY-MM or YYYY-MM-DD).
		t.class = classDate
		t.tq = timeScoped(prev)
		return t, i
	case strings.IndexByte(s, ':') >= 0:
		parts := strings.Split(s, ":")
		h, _ := strconv.Atoi(parts[0])
		m, _ := strconv.Atoi(parts[1])
		if i+1 < len(lx) && (lx[i+1].s == "pm" || lx[i+1].s == "am") {
			h = twelveHour(h, lx[i+1].s == "pm")
			t.disp += " " + lx[i+1].s
			i++
		}
		t.class = classClock
		t.num = float64(h*60 + m)
		t.key = fmtNum(t.num)
		return t, i
	}
	clean := strings.ReplaceAll(s, ",", "")
	if strings.Count(clean, ".") >= 2 {
		t.ver = true
		t.key = clean
		t.qual = qualifier(prev)
		return t, i
	}
	v, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(v, 0) {
		t.key = clean
		return t, i
	}
	t.num = v
	t.key = clean
	t.ver = strings.IndexByte(clean, '.') >= 0
	t.qual = qualifier(prev)
	next := i + 1
	if next < len(lx) && !lx[next].brk {
		u := lx[next].s
		if u == "am" || u == "pm" {
			if h := int(v); float64(h) == v && h >= 0 && h <= 12 {
				t.class = classClock
				t.num = float64(twelveHour(h, u == "pm") * 60)
				t.key = fmtNum(t.num)
				t.ver = false
				t.disp += " " + u
				return t, next
			}
		}
		if m, ok := months()[u]; ok && !t.ver && v >= 1 && v <= 31 && float64(int(v)) == v {
			t.class = classMonthDay
			t.key = strconv.Itoa(m) + "-" + strconv.Itoa(int(v))
			t.disp += " " + u
			t.tq = timeScoped(prev)
			return t, next
		}
	}
	before := i
	t, i = foldUnit(lx, i, t)
	if i == before && !t.ver && len(clean) == 4 && v >= 1900 && v <= 2100 && yearContext(lx, i) {
		t.class = classYear
		t.tq = timeScoped(prev)
	}
	return t, i
}

// twelveHour converts a 12-hour clock hour to 24-hour.
func twelveHour(h int, pm bool) int {
	h %= 12
	if pm {
		h += 12
	}
	return h
}

// yearContext reports whether a 4-digit number at lx[i] reads as a year:
// it is not directly followed by a content word ("2000 requests").
func yearContext(lx []lexeme, i int) bool {
	if i+1 >= len(lx) {
		return true
	}
	n := lx[i+1]
	if n.brk || n.num || n.neg {
		return true
	}
	if _, ok := months()[n.s]; ok {
		return true
	}
	return stopWords()[n.s] || breakWords()[n.s]
}

// foldUnit folds a unit after a numeric value at lx[i] into t.
func foldUnit(lx []lexeme, i int, t term) (term, int) {
	if i+1 >= len(lx) || lx[i+1].brk || lx[i+1].num {
		return t, i
	}
	u := lx[i+1].s
	if u == "st" || u == "nd" || u == "rd" || u == "th" {
		return t, i + 1
	}
	uu, ok := units()[u]
	if !ok || t.class != classNum {
		return t, i
	}
	if uu.class == classNum {
		t.num *= uu.factor
	} else {
		t.class = uu.class
		t.num *= uu.factor
	}
	t.ver = false
	t.key = fmtNum(t.num)
	t.disp += " " + u
	return t, i + 1
}

// qualifier returns the bound or approximation qualifier ("over 100",
// "about 5", "up to 10") in the last few terms before a value.
func qualifier(prev []term) string {
	for k, n := len(prev)-1, 0; k >= 0 && n < 3; k, n = k-1, n+1 {
		t := prev[k]
		if t.kind == breakTerm {
			break
		}
		if q, ok := qualifiers()[t.disp]; ok {
			return q
		}
	}
	return ""
}

// timeScoped reports whether a date is introduced by a time-scoping word
// ("from 2024-07-01", "since 2021", "until May 3").
func timeScoped(prev []term) bool {
	if len(prev) == 0 {
		return false
	}
	t := prev[len(prev)-1]
	return (t.kind == stopTerm || t.kind == wordTerm) && timeScopeWords()[t.disp]
}

// valueEqual reports whether two values denote the same thing.
func valueEqual(a, b *term) bool {
	if a.class != b.class || a.qual != b.qual {
		return false
	}
	switch a.class {
	case classNum:
		if a.key == b.key {
			return true
		}
		// A version refines a shorter one: "3.12" vs "3.12.4", "16" vs "16.2".
		if strings.HasPrefix(a.key, b.key+".") || strings.HasPrefix(b.key, a.key+".") {
			return true
		}
		if a.ver && strings.Count(a.key, ".") > 1 || b.ver && strings.Count(b.key, ".") > 1 {
			return false
		}
		return closeTo(a.num, b.num)
	case classDur, classSize, classPct, classClock, classDist:
		return closeTo(a.num, b.num)
	}
	return a.key == b.key
}

func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
