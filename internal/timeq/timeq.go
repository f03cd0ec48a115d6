// Package timeq reads the dates a search query names ("in June 2023",
// "on 9 October 2022", "last week", "3 days ago") relative to a given now,
// as a window of time [From, To), and returns the query without those
// words, so that they do not count as search terms.
//
// The grammar is small and closed (see [Parse]); anything else is left in
// the query. Weeks start on Monday; all arithmetic is in now's location.
package timeq

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Window is a span of time [From, To).
type Window struct {
	From, To time.Time
}

// Contains reports whether t is in the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

// IsZero reports whether the window is unset.
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// Parse reads the date expressions of query relative to now. It returns the
// window they cover (the smallest window holding all of them, when there
// are several), the query with them (and a preposition before them: "in",
// "on", "during") removed, and whether it found any. The
// forms, case-insensitive:
//
//   - a day: "2022-10-09", "9 October 2022", "9th of Oct, 2022",
//     "October 9, 2022", "yesterday", "today", "last Tuesday" (the most
//     recent Tuesday before today), "N days ago"; "9 October" without a
//     year is the most recent 9 October not after now;
//   - a week (Monday to Monday): "this week", "last week", "N weeks ago";
//   - a month: "June 2023", "this month", "last month", "N months ago",
//     "in June" (the most recent June not after now: this June when now is
//     in June); a bare month name without "in" or "during" before it counts
//     only when it is not also a common word (not "may", "march");
//   - a year: "in 2023" (a bare number is not read as a year), "this year",
//     "last year", "N years ago".
//
// N is a number (1 to 9999) or a word (a, an, one ... twelve).
func Parse(query string, now time.Time) (w Window, rest string, ok bool) {
	toks := tokenize(query)
	var cut [][2]int // byte spans removed
	for i := 0; i < len(toks); {
		prev := ""
		if i > 0 {
			prev = toks[i-1].lower
		}
		win, n, found := match(toks[i:], prev, now)
		if !found {
			i++
			continue
		}
		start := i
		if i > 0 && prepositions[toks[i-1].lower] && (len(cut) == 0 || cut[len(cut)-1][1] <= toks[i-1].start) {
			start = i - 1
		}
		cut = append(cut, [2]int{toks[start].start, toks[i+n-1].end})
		if !ok {
			w, ok = win, true
		} else {
			if win.From.Before(w.From) {
				w.From = win.From
			}
			if win.To.After(w.To) {
				w.To = win.To
			}
		}
		i += n
	}
	if !ok {
		return Window{}, query, false
	}
	var b strings.Builder
	prev := 0
	for _, c := range cut {
		b.WriteString(query[prev:c[0]])
		b.WriteByte(' ')
		prev = c[1]
	}
	b.WriteString(query[prev:])
	return w, strings.Join(strings.Fields(b.String()), " "), true
}

// token is a word of the query: a run of letters and digits (and the
// hyphens of an ISO date), with its byte span.
type token struct {
	lower      string
	start, end int
}

// maxTokens bounds the words examined, whatever the query's length.
const maxTokens = 256

func tokenize(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' && start >= 0
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			out = appendToken(out, s, start, i)
			start = -1
			if len(out) >= maxTokens {
				return out
			}
		}
	}
	if start >= 0 {
		out = appendToken(out, s, start, len(s))
	}
	return out
}

func appendToken(out []token, s string, start, end int) []token {
	// A trailing hyphen ("well-") is not part of the word.
	for end > start && s[end-1] == '-' {
		end--
	}
	if end == start {
		return out
	}
	return append(out, token{lower: strings.ToLower(s[start:end]), start: start, end: end})
}

var prepositions = map[string]bool{"in": true, "on": true, "during": true}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

// bareMonths are the month names read without a preposition or a day or
// year beside them: full names that are not also common words.
var bareMonths = map[string]bool{"january": true, "february": true, "april": true, "june": true, "july": true,
	"september": true, "october": true, "november": true, "december": true}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

// match reads one date expression at the start of t (prev is the word
// before it): its window and the number of tokens it takes.
func match(t []token, prev string, now time.Time) (Window, int, bool) {
	at := func(i int) string {
		if i < len(t) {
			return t[i].lower
		}
		return ""
	}
	loc := now.Location()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	first := at(0)
	switch first {
	case "today":
		return day(today), 1, true
	case "yesterday":
		return day(today.AddDate(0, 0, -1)), 1, true
	case "this", "last":
		back := 0
		if first == "last" {
			back = 1
		}
		switch at(1) {
		case "week":
			return week(today, -back), 2, true
		case "month":
			return month(today.Year(), today.Month()-time.Month(back), loc), 2, true
		case "year":
			return year(today.Year()-back, loc), 2, true
		}
		if wd, ok := weekdays[at(1)]; ok && first == "last" {
			d := int(today.Weekday()-wd+7) % 7
			if d == 0 {
				d = 7
			}
			return day(today.AddDate(0, 0, -d)), 2, true
		}
		return Window{}, 0, false
	}
	if y, m, d, ok := isoDate(first); ok {
		return day(time.Date(y, m, d, 0, 0, 0, 0, loc)), 1, true
	}
	// N units ago.
	if n, ok := count(first); ok && at(2) == "ago" {
		switch strings.TrimSuffix(at(1), "s") {
		case "day":
			return day(today.AddDate(0, 0, -n)), 3, true
		case "week":
			return week(today, -n), 3, true
		case "month":
			return month(today.Year(), today.Month()-time.Month(n), loc), 3, true
		case "year":
			return year(today.Year()-n, loc), 3, true
		}
	}
	// 9 October 2022, 9th of Oct 2022, 9 October.
	if d, ok := dayOfMonth(first); ok {
		i := 1
		if at(i) == "of" {
			i++
		}
		if m, ok := months[at(i)]; ok {
			if y, ok := yearNumber(at(i + 1)); ok {
				if dt, ok := date(y, m, d, loc); ok {
					return day(dt), i + 2, true
				}
				return Window{}, 0, false
			}
			if dt, ok := mostRecentDay(today, m, d); ok {
				return day(dt), i + 1, true
			}
		}
		return Window{}, 0, false
	}
	if m, ok := months[first]; ok {
		// October 9, 2022; October 9th.
		if d, ok := dayOfMonth(at(1)); ok {
			if y, ok := yearNumber(at(2)); ok {
				if dt, ok := date(y, m, d, loc); ok {
					return day(dt), 3, true
				}
				return Window{}, 0, false
			}
			if dt, ok := mostRecentDay(today, m, d); ok {
				return day(dt), 2, true
			}
			return Window{}, 0, false
		}
		// June 2023.
		if y, ok := yearNumber(at(1)); ok {
			return month(y, m, loc), 2, true
		}
		// June: the most recent June not after now.
		if bareMonths[first] || prev == "in" || prev == "during" {
			y := today.Year()
			if m > today.Month() {
				y--
			}
			return month(y, m, loc), 1, true
		}
		return Window{}, 0, false
	}
	// in 2023.
	if y, ok := yearNumber(first); ok && (prev == "in" || prev == "during") {
		return year(y, loc), 1, true
	}
	return Window{}, 0, false
}

func isoDate(s string) (int, time.Month, int, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	y, e1 := strconv.Atoi(s[:4])
	m, e2 := strconv.Atoi(s[5:7])
	d, e3 := strconv.Atoi(s[8:])
	if e1 != nil || e2 != nil || e3 != nil || y < 1 {
		return 0, 0, 0, false
	}
	dt, ok := date(y, time.Month(m), d, time.UTC)
	if !ok {
		return 0, 0, 0, false
	}
	return dt.Year(), dt.Month(), dt.Day(), true
}

// date is y-m-d when that is a real date.
func date(y int, m time.Month, d int, loc *time.Location) (time.Time, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if t.Month() != m || t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

// mostRecentDay is the most recent m/d not after today.
func mostRecentDay(today time.Time, m time.Month, d int) (time.Time, bool) {
	for y := today.Year(); y >= today.Year()-8; y-- { // 29 February: within 8 years
		if t, ok := date(y, m, d, today.Location()); ok && !t.After(today) {
			return t, true
		}
	}
	return time.Time{}, false
}

func count(s string) (int, bool) {
	if n, ok := numberWords[s]; ok {
		return n, true
	}
	if len(s) == 0 || len(s) > 4 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1
}

// dayOfMonth reads "9", "09", "9th", "1st", "2nd", "3rd".
func dayOfMonth(s string) (int, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if strings.HasSuffix(s, suf) {
			s = s[:len(s)-2]
			break
		}
	}
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 31
}

// yearNumber reads a four-digit year from 1000 to 2999.
func yearNumber(s string) (int, bool) {
	if len(s) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1000 && n <= 2999
}

func day(d time.Time) Window { return Window{From: d, To: d.AddDate(0, 0, 1)} }

// week is the Monday-to-Monday week of d, shifted by n weeks.
func week(d time.Time, n int) Window {
	monday := d.AddDate(0, 0, -(int(d.Weekday())+6)%7+7*n)
	return Window{From: monday, To: monday.AddDate(0, 0, 7)}
}

// month normalizes m (0 is December of the year before, and so on).
func month(y int, m time.Month, loc *time.Location) Window {
	from := time.Date(y, m, 1, 0, 0, 0, 0, loc)
	return Window{From: from, To: from.AddDate(0, 1, 0)}
}

func year(y int, loc *time.Location) Window {
	from := time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	return Window{From: from, To: from.AddDate(1, 0, 0)}
}
