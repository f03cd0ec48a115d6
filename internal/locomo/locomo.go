// Package locomo reads the LoCoMo benchmark (snap-research/LoCoMo,
// "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL
// 2024; the shared data's locomo/locomo10.json) and scores retrieval on it
// as evidence recall@k: the share of a question's evidence turns among the
// first k results, averaged over the questions.
//
// The data is for research and benchmarking only (CC BY-NC 4.0): read it
// from the shared data, never copy it into the repository.
package locomo

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// File is the path of the benchmark under the shared data directory.
const File = "locomo/locomo10.json"

// Categories names LoCoMo's question categories by number.
var Categories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// Conversation is one long two-person conversation and its questions.
type Conversation struct {
	// ID is the sample id ("conv-26").
	ID string
	// SpeakerA and SpeakerB are the two people.
	SpeakerA, SpeakerB string
	// Sessions are the conversation's sessions in order.
	Sessions []Session
	// Questions are asked of the whole conversation.
	Questions []Question
}

// Session is one sitting of a conversation, at a date and time.
type Session struct {
	// N is the session's number (1, 2, ...).
	N int
	// At is when it took place (LoCoMo's "1:56 pm on 8 May, 2023", UTC).
	At time.Time
	// Turns are its dialog turns in order.
	Turns []Turn
}

// Turn is one dialog turn.
type Turn struct {
	// DiaID identifies the turn in its conversation ("D1:3").
	DiaID string
	// Speaker says it.
	Speaker string
	// Text is what is said.
	Text string
	// Caption describes an image the speaker shares (BLIP's caption); empty
	// when none.
	Caption string
}

// Content is the turn as one memory: "Speaker: text", and " [shares
// caption]" when the speaker shares an image.
func (t Turn) Content() string {
	s := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		s += " [shares " + t.Caption + "]"
	}
	return s
}

// Question is one question with the turns that answer it.
type Question struct {
	// Text is the question.
	Text string
	// Category is 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop or
	// 5 adversarial (see Categories).
	Category int
	// Evidence are the DiaIDs of the turns that answer it.
	Evidence []string
}

// Load reads the benchmark from path (the shared data's File). Questions
// without evidence (4 of 1,986) are left out.
func Load(path string) ([]Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string          `json:"question"`
			Evidence []string        `json:"evidence"`
			Category int             `json:"category"`
			Answer   json.RawMessage `json:"answer"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("locomo %s: %w", path, err)
	}
	out := make([]Conversation, 0, len(raw))
	for _, r := range raw {
		c := Conversation{ID: r.SampleID}
		_ = json.Unmarshal(r.Conversation["speaker_a"], &c.SpeakerA)
		_ = json.Unmarshal(r.Conversation["speaker_b"], &c.SpeakerB)
		for n := 1; ; n++ {
			turnsRaw, ok := r.Conversation["session_"+strconv.Itoa(n)]
			if !ok {
				break
			}
			var when string
			_ = json.Unmarshal(r.Conversation["session_"+strconv.Itoa(n)+"_date_time"], &when)
			at, err := ParseDateTime(when)
			if err != nil {
				return nil, fmt.Errorf("locomo %s session %d: %w", c.ID, n, err)
			}
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(turnsRaw, &turns); err != nil {
				return nil, fmt.Errorf("locomo %s session %d: %w", c.ID, n, err)
			}
			s := Session{N: n, At: at}
			for _, t := range turns {
				s.Turns = append(s.Turns, Turn{DiaID: t.DiaID, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
			}
			c.Sessions = append(c.Sessions, s)
		}
		for _, q := range r.QA {
			if len(q.Evidence) == 0 {
				continue
			}
			c.Questions = append(c.Questions, Question{Text: q.Question, Category: q.Category, Evidence: evidenceIDs(q.Evidence)})
		}
		out = append(out, c)
	}
	return out, nil
}

// evidenceIDs normalizes evidence ids: a few are written "D8:6; D9:17" in
// one string, or with spaces.
func evidenceIDs(in []string) []string {
	var out []string
	for _, e := range in {
		for _, f := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			if f != "" && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

var dateTime = regexp.MustCompile(`^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\w+),? (\d{4})$`)

// ParseDateTime reads LoCoMo's session time ("1:56 pm on 8 May, 2023") as
// UTC.
func ParseDateTime(s string) (time.Time, error) {
	m := dateTime.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, fmt.Errorf("session time %q is not like \"1:56 pm on 8 May, 2023\"", s)
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	if h == 12 {
		h = 0
	}
	if m[3] == "pm" {
		h += 12
	}
	d, _ := time.Parse("2 January 2006", m[4]+" "+m[5]+" "+m[6])
	if d.IsZero() {
		return time.Time{}, fmt.Errorf("session time %q: unknown date", s)
	}
	return d.Add(time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute), nil
}

// Recall is evidence recall@k over a set of questions.
type Recall struct {
	// Ks are the cut-offs.
	Ks []int
	// sum[i] adds up each question's recall at Ks[i]; n counts questions,
	// overall and by category.
	sum   map[int][]float64 // category (0: all) -> sums per k
	count map[int]int
}

// NewRecall scores at the cut-offs ks.
func NewRecall(ks ...int) *Recall {
	return &Recall{Ks: ks, sum: map[int][]float64{}, count: map[int]int{}}
}

// Add scores one question: ranked are the DiaIDs of the results in rank
// order (a result counts for its own turn only).
func (r *Recall) Add(q Question, ranked []string) {
	for _, cat := range []int{0, q.Category} {
		if r.sum[cat] == nil {
			r.sum[cat] = make([]float64, len(r.Ks))
		}
		r.count[cat]++
		for i, k := range r.Ks {
			found := 0
			for _, e := range q.Evidence {
				if slices.Contains(ranked[:min(k, len(ranked))], e) {
					found++
				}
			}
			r.sum[cat][i] += float64(found) / float64(len(q.Evidence))
		}
	}
}

// At is the recall (in %) at Ks[i] over category cat (0: all).
func (r *Recall) At(cat, i int) float64 {
	if r.count[cat] == 0 {
		return 0
	}
	return 100 * r.sum[cat][i] / float64(r.count[cat])
}

// Table writes the recall overall and by category, one row each.
func (r *Recall) Table() string {
	var b strings.Builder
	b.WriteString("| questions |")
	for _, k := range r.Ks {
		fmt.Fprintf(&b, " R@%d |", k)
	}
	b.WriteString(" n |\n|---|")
	for range r.Ks {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, cat := range []int{0, 1, 2, 3, 4, 5} {
		if r.count[cat] == 0 {
			continue
		}
		name := "all"
		if cat > 0 {
			name = Categories[cat]
		}
		fmt.Fprintf(&b, "| %s |", name)
		for i := range r.Ks {
			fmt.Fprintf(&b, " %.1f |", r.At(cat, i))
		}
		fmt.Fprintf(&b, " %d |\n", r.count[cat])
	}
	return b.String()
}
