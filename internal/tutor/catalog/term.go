package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// Season is the part of the academic year a term falls in. Its value is
// the last two digits of a Langara term code divided by ten: spring 1,
// summer 2, fall 3, so seasons order as they do within a year.
type Season int

// The seasons of an academic year, in order.
const (
	Spring Season = 1
	Summer Season = 2
	Fall   Season = 3
)

// seasonNames are the names of the seasons, indexed by Season.
var seasonNames = [...]string{Spring: "Spring", Summer: "Summer", Fall: "Fall"}

// String is the season's name, "Spring", "Summer" or "Fall" ("Season(n)"
// for a value that is not one).
func (s Season) String() string {
	if s >= Spring && s <= Fall {
		return seasonNames[s]
	}
	return fmt.Sprintf("Season(%d)", int(s))
}

// Term is an academic term: a year and a season. Its code is Langara's,
// YYYY followed by 10 (spring), 20 (summer) or 30 (fall), as the term
// files of the shared data write it ("202330", with top-level year 2023
// and semester 30); its name is "Fall 2023", as SFU outlines' offerings
// write it. The zero Term is not a valid term.
type Term struct {
	Year   int
	Season Season
}

// TermError says why a text is not a term.
type TermError struct {
	Input  string
	Reason string
}

// Error says which text is not a term, why, and what a term looks like.
func (e *TermError) Error() string {
	return fmt.Sprintf("term %q: %s; write a code such as 202330 or a name such as Fall 2023", e.Input, e.Reason)
}

// ParseTerm reads a term from its code ("202330": YYYY then 10, 20 or 30)
// or its name: a season (spring, summer or fall, in any case) and a
// four-digit year, in either order and separated by white space ("Fall
// 2023", "fall 2023", "2023 Fall"). Surrounding white space is ignored.
// Anything else is a *TermError naming what is wrong.
func ParseTerm(s string) (Term, error) {
	f := strings.Fields(s)
	switch len(f) {
	case 0:
		return Term{}, &TermError{s, "empty"}
	case 1:
		return parseTermCode(s, f[0])
	case 2:
		season, year := f[0], f[1]
		if isDigits(season) {
			season, year = year, season
		}
		se, ok := parseSeason(season)
		if !ok {
			return Term{}, &TermError{s, fmt.Sprintf("unknown season %q (spring, summer or fall)", season)}
		}
		y, err := parseYear(year)
		if err != nil {
			return Term{}, &TermError{s, err.Error()}
		}
		return Term{Year: y, Season: se}, nil
	default:
		return Term{}, &TermError{s, fmt.Sprintf("%d words where a season and a year were expected", len(f))}
	}
}

// parseTermCode reads a six-digit term code.
func parseTermCode(input, code string) (Term, error) {
	if !isDigits(code) {
		if _, ok := parseSeason(code); ok {
			return Term{}, &TermError{input, "a season without a year"}
		}
		return Term{}, &TermError{input, "neither a six-digit code nor a season and year"}
	}
	if len(code) != 6 {
		return Term{}, &TermError{input, fmt.Sprintf("a code has six digits (YYYY then 10, 20 or 30), not %d", len(code))}
	}
	y, err := parseYear(code[:4])
	if err != nil {
		return Term{}, &TermError{input, err.Error()}
	}
	switch code[4:] {
	case "10":
		return Term{Year: y, Season: Spring}, nil
	case "20":
		return Term{Year: y, Season: Summer}, nil
	case "30":
		return Term{Year: y, Season: Fall}, nil
	}
	return Term{}, &TermError{input, fmt.Sprintf("the code ends in %s, not 10 (spring), 20 (summer) or 30 (fall)", code[4:])}
}

// parseSeason reads a season's name in any case.
func parseSeason(s string) (Season, bool) {
	switch strings.ToLower(s) {
	case "spring":
		return Spring, true
	case "summer":
		return Summer, true
	case "fall":
		return Fall, true
	}
	return 0, false
}

// parseYear reads a four-digit year.
func parseYear(s string) (int, error) {
	if len(s) != 4 || !isDigits(s) || s[0] == '0' {
		return 0, fmt.Errorf("year %q is not four digits", s)
	}
	y, _ := strconv.Atoi(s)
	return y, nil
}

// isDigits says whether s is non-empty and all ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Valid says whether t is a term: a four-digit year and a known season.
func (t Term) Valid() bool {
	return t.Year >= 1000 && t.Year <= 9999 && t.Season >= Spring && t.Season <= Fall
}

// Code is the term's Langara code, "202330" for Fall 2023.
func (t Term) Code() string { return fmt.Sprintf("%04d%d0", t.Year, int(t.Season)) }

// String is the term's name, "Fall 2023".
func (t Term) String() string { return fmt.Sprintf("%s %d", t.Season, t.Year) }

// Compare orders terms in time: -1 if t is before u, 0 if they are the
// same term, +1 if t is after u. It fits slices.SortFunc.
func (t Term) Compare(u Term) int {
	switch {
	case t.Year != u.Year:
		if t.Year < u.Year {
			return -1
		}
		return 1
	case t.Season < u.Season:
		return -1
	case t.Season > u.Season:
		return 1
	}
	return 0
}

// Before says whether t comes before u.
func (t Term) Before(u Term) bool { return t.Compare(u) < 0 }

// Next is the term after t (Fall 2023 is followed by Spring 2024).
func (t Term) Next() Term {
	if t.Season >= Fall {
		return Term{Year: t.Year + 1, Season: Spring}
	}
	return Term{Year: t.Year, Season: t.Season + 1}
}

// MarshalText writes the term's name, "Fall 2023".
func (t Term) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("term %d/%d is not a valid term", t.Year, int(t.Season))
	}
	return []byte(t.String()), nil
}

// UnmarshalText reads a term as ParseTerm does.
func (t *Term) UnmarshalText(b []byte) error {
	u, err := ParseTerm(string(b))
	if err != nil {
		return err
	}
	*t = u
	return nil
}
