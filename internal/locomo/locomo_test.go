package locomo

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

func TestParseDateTime(t *testing.T) {
	got, err := ParseDateTime("1:56 pm on 8 May, 2023")
	if want := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	got, err = ParseDateTime("12:09 am on 13 September, 2023")
	if want := time.Date(2023, 9, 13, 0, 9, 0, 0, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if _, err := ParseDateTime("yesterday"); err == nil {
		t.Error("no error for a bad time")
	}
}

func TestRecall(t *testing.T) {
	r := NewRecall(1, 2)
	r.Add(Question{Category: 1, Evidence: []string{"D1:1", "D1:2"}}, []string{"D1:2", "D1:9", "D1:1"})
	r.Add(Question{Category: 2, Evidence: []string{"D1:3"}}, nil)
	if r.At(0, 0) != 25 || r.At(0, 1) != 25 || r.At(1, 0) != 50 || r.At(2, 1) != 0 {
		t.Errorf("recall %v %v %v %v", r.At(0, 0), r.At(0, 1), r.At(1, 0), r.At(2, 1))
	}
}

// TestLoad reads the whole benchmark: 10 conversations, 5,882 turns,
// 1,982 questions with evidence.
func TestLoad(t *testing.T) {
	convs, err := Load(filepath.Join(testtools.SharedData(t), File))
	if err != nil {
		t.Fatal(err)
	}
	turns, questions := 0, 0
	for _, c := range convs {
		for _, s := range c.Sessions {
			turns += len(s.Turns)
			if s.At.IsZero() {
				t.Errorf("%s session %d has no time", c.ID, s.N)
			}
		}
		questions += len(c.Questions)
	}
	if len(convs) != 10 || turns != 5882 || questions != 1982 {
		t.Errorf("%d conversations, %d turns, %d questions; want 10, 5882, 1982", len(convs), turns, questions)
	}
}
