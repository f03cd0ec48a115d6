package catalog

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseTerm(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Term
		code string
		name string
	}{
		{"202330", Term{2023, Fall}, "202330", "Fall 2023"},
		{"202310", Term{2023, Spring}, "202310", "Spring 2023"},
		{"202320", Term{2023, Summer}, "202320", "Summer 2023"},
		{" 202330 ", Term{2023, Fall}, "202330", "Fall 2023"},
		{"Fall 2023", Term{2023, Fall}, "202330", "Fall 2023"},
		{"fall 2023", Term{2023, Fall}, "202330", "Fall 2023"},
		{"FALL  2023", Term{2023, Fall}, "202330", "Fall 2023"},
		{"2023 Fall", Term{2023, Fall}, "202330", "Fall 2023"},
		{"Spring 2025", Term{2025, Spring}, "202510", "Spring 2025"},
		{"Summer 2024", Term{2024, Summer}, "202420", "Summer 2024"},
		{"summer 2025", Term{2025, Summer}, "202520", "Summer 2025"},
	} {
		got, err := ParseTerm(c.in)
		if err != nil {
			t.Errorf("ParseTerm(%q): %v", c.in, err)
			continue
		}
		if got != c.want || got.Code() != c.code || got.String() != c.name || !got.Valid() {
			t.Errorf("ParseTerm(%q) = %+v (%s, %s), want %+v (%s, %s)", c.in, got, got.Code(), got, c.want, c.code, c.name)
		}
	}
}

func TestParseTermErrors(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"", "empty"},
		{"   ", "empty"},
		{"202340", "ends in 40"},
		{"202300", "ends in 00"},
		{"20233", "six digits"},
		{"2023300", "six digits"},
		{"Fall", "season without a year"},
		{"Winter 2024", `unknown season "Winter"`},
		{"Autumn 2024", `unknown season "Autumn"`},
		{"Fall 23", `year "23"`},
		{"Fall twenty", `year "twenty" is not four digits`},
		{"Fall 2023 extra", "3 words"},
		{"2023", "six digits"},
		{"Fa11 2023", `unknown season "Fa11"`},
		{"F2023", "neither a six-digit code"},
		{"Fall 0999", `year "0999"`},
	} {
		_, err := ParseTerm(c.in)
		var te *TermError
		if !errors.As(err, &te) {
			t.Errorf("ParseTerm(%q) error = %v, want a *TermError", c.in, err)
			continue
		}
		if !strings.Contains(err.Error(), c.says) || te.Input != c.in {
			t.Errorf("ParseTerm(%q) error = %q, want it to say %q", c.in, err, c.says)
		}
	}
}

func TestTermOrder(t *testing.T) {
	in := []string{"Fall 2024", "202310", "Summer 2023", "Spring 2024", "202330", "Spring 2023"}
	var terms []Term
	for _, s := range in {
		tm, err := ParseTerm(s)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, tm)
	}
	slices.SortFunc(terms, Term.Compare)
	var got []string
	for _, tm := range terms {
		got = append(got, tm.Code())
	}
	want := []string{"202310", "202310", "202320", "202330", "202410", "202430"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v, want %v", got, want)
	}
	a, b := Term{2023, Fall}, Term{2024, Spring}
	if !a.Before(b) || b.Before(a) || a.Before(a) || a.Compare(a) != 0 {
		t.Error("Before/Compare disagree with time order")
	}
	if a.Next() != b || (Term{2024, Spring}).Next() != (Term{2024, Summer}) {
		t.Error("Next is wrong")
	}
}

func TestTermJSON(t *testing.T) {
	b, err := json.Marshal(map[string]Term{"term": {2025, Summer}})
	if err != nil || string(b) != `{"term":"Summer 2025"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var v map[string]Term
	if err := json.Unmarshal([]byte(`{"a":"202330","b":"spring 2024"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v["a"] != (Term{2023, Fall}) || v["b"] != (Term{2024, Spring}) {
		t.Errorf("Unmarshal = %v", v)
	}
	if err := json.Unmarshal([]byte(`{"a":"Winter 2024"}`), &v); err == nil {
		t.Error("Unmarshal accepted Winter 2024")
	}
	if _, err := json.Marshal(Term{}); err == nil {
		t.Error("Marshal accepted the zero Term")
	}
}

func TestLevel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"1150", 1}, {"2150", 2}, {"120", 1}, {"310", 3}, {"110W", 1}, {"2XX", 2},
		{"1XXX", 1}, {"1st", 1}, {"2nd", 2}, {"499", 4}, {"880", 8}, {" 225 ", 2},
		{"X99", 0}, {"0999", 0}, {"", 0}, {"ABC", 0},
	} {
		if got := Level(c.in); got != c.want {
			t.Errorf("Level(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if !LowerDivision("2150") || LowerDivision("310") || LowerDivision("X99") {
		t.Error("LowerDivision is wrong")
	}
}
