package timeq

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// now is Wednesday 15 March 2023, 14:30 UTC.
var now = time.Date(2023, 3, 15, 14, 30, 0, 0, time.UTC)

func d(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		q        string
		from, to time.Time
		rest     string
	}{
		{"What did Caroline do in June 2023?", d(2023, 6, 1), d(2023, 7, 1), "What did Caroline do ?"},
		{"June 2023 trip", d(2023, 6, 1), d(2023, 7, 1), "trip"},
		{"what happened on 9 October 2022", d(2022, 10, 9), d(2022, 10, 10), "what happened"},
		{"9 Oct 2022", d(2022, 10, 9), d(2022, 10, 10), ""},
		{"the 9th of October, 2022 party", d(2022, 10, 9), d(2022, 10, 10), "the party"},
		{"October 9, 2022", d(2022, 10, 9), d(2022, 10, 10), ""},
		{"notes from 2022-10-09", d(2022, 10, 9), d(2022, 10, 10), "notes from"},
		{"hikes in 2023", d(2023, 1, 1), d(2024, 1, 1), "hikes"},
		{"last week meeting", d(2023, 3, 6), d(2023, 3, 13), "meeting"},
		{"this week", d(2023, 3, 13), d(2023, 3, 20), ""},
		{"last month", d(2023, 2, 1), d(2023, 3, 1), ""},
		{"this month", d(2023, 3, 1), d(2023, 4, 1), ""},
		{"yesterday's call", d(2023, 3, 14), d(2023, 3, 15), "'s call"},
		{"today", d(2023, 3, 15), d(2023, 3, 16), ""},
		{"last year", d(2022, 1, 1), d(2023, 1, 1), ""},
		{"this year", d(2023, 1, 1), d(2024, 1, 1), ""},
		{"3 days ago", d(2023, 3, 12), d(2023, 3, 13), ""},
		{"two weeks ago", d(2023, 2, 27), d(2023, 3, 6), ""},
		{"a month ago", d(2023, 2, 1), d(2023, 3, 1), ""},
		{"5 months ago", d(2022, 10, 1), d(2022, 11, 1), ""},
		{"2 years ago", d(2021, 1, 1), d(2022, 1, 1), ""},
		{"When did she paint in June", d(2022, 6, 1), d(2022, 7, 1), "When did she paint"},
		{"in March", d(2023, 3, 1), d(2023, 4, 1), ""},
		{"during may", d(2022, 5, 1), d(2022, 6, 1), ""},
		{"what happened in July", d(2022, 7, 1), d(2022, 8, 1), "what happened"},
		{"last Tuesday", d(2023, 3, 14), d(2023, 3, 15), ""},
		{"last Wednesday", d(2023, 3, 8), d(2023, 3, 9), ""},
		{"last Thursday", d(2023, 3, 9), d(2023, 3, 10), ""},
		{"on 9 October", d(2022, 10, 9), d(2022, 10, 10), ""},
		{"on 1 March", d(2023, 3, 1), d(2023, 3, 2), ""},
		{"December 25th", d(2022, 12, 25), d(2022, 12, 26), ""},
		{"between June 2022 and August 2022", d(2022, 6, 1), d(2022, 9, 1), "between and"},
		{"IN JUNE 2023", d(2023, 6, 1), d(2023, 7, 1), ""},
	} {
		w, rest, ok := Parse(tc.q, now)
		if !ok || !w.From.Equal(tc.from) || !w.To.Equal(tc.to) || rest != tc.rest {
			t.Errorf("Parse(%q) = [%v, %v) %q %v; want [%v, %v) %q", tc.q, w.From, w.To, rest, ok, tc.from, tc.to, tc.rest)
		}
	}
}

func TestParseNone(t *testing.T) {
	for _, q := range []string{
		"", "what did she paint", "you may come", "march on", "2023 people", "2023-02-30",
		"last time", "this one", "0 days ago", "the 40th of", "well-", "days ago",
	} {
		if w, rest, ok := Parse(q, now); ok || rest != q {
			t.Errorf("Parse(%q) = %v %q %v; want nothing", q, w, rest, ok)
		}
	}
}

func TestWindowContains(t *testing.T) {
	w := Window{From: d(2023, 6, 1), To: d(2023, 7, 1)}
	if !w.Contains(d(2023, 6, 1)) || !w.Contains(d(2023, 6, 30).Add(23*time.Hour)) || w.Contains(d(2023, 7, 1)) || w.Contains(d(2023, 5, 31)) {
		t.Error("Contains is not [From, To)")
	}
	if !(Window{}).IsZero() || w.IsZero() {
		t.Error("IsZero")
	}
}

func TestParseLocation(t *testing.T) {
	loc := time.FixedZone("X", -8*3600)
	w, _, ok := Parse("yesterday", time.Date(2023, 3, 15, 1, 0, 0, 0, loc))
	if !ok || !w.From.Equal(time.Date(2023, 3, 14, 0, 0, 0, 0, loc)) {
		t.Errorf("yesterday in -08:00: %v", w)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"in June 2023", "on 9 October 2022", "2022-10-09", "last Tuesday", "3 weeks ago",
		"9th of Oct, 2022", "in may", "9999 years ago", "29 February", "in 2999"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, q string, sec int64) {
		n := time.Unix(sec%(1<<40), 0).UTC()
		w, rest, ok := Parse(q, n)
		if !ok {
			if rest != q || !w.IsZero() {
				t.Fatalf("no date but %v %q", w, rest)
			}
			return
		}
		if !w.From.Before(w.To) {
			t.Fatalf("empty window %v for %q", w, q)
		}
		if len(rest) > len(q) {
			t.Fatalf("rest %q longer than %q", rest, q)
		}
		if utf8.ValidString(q) && !utf8.ValidString(rest) {
			t.Fatalf("rest %q not UTF-8", rest)
		}
		if strings.Contains(rest, "  ") {
			t.Fatalf("rest %q has double spaces", rest)
		}
	})
}
