package noteindex

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// genVault is a deterministic generated vault: titles, headings, tags,
// properties and bodies drawn from a vocabulary of made-up words with
// Zipf-like frequencies, as a language's are.
type genVault struct {
	vocab []string
	r     *rand.Rand
	zipf  *rand.Zipf
}

// vocabSize is the number of distinct words of a generated vault.
const vocabSize = 4000

func newGenVault(seed uint64) *genVault {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &genVault{r: r}
	onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "cl", "st", "tr", "pl", "gr", "sh", "th"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ou", "ea"}
	codas := []string{"", "", "", "n", "r", "l", "s", "t", "m", "nd", "st", "ng"}
	seen := map[string]bool{}
	for len(g.vocab) < vocabSize {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
			b.WriteString(codas[r.IntN(len(codas))])
		}
		if w := b.String(); len(w) > 2 && !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(r, 1.1, 8, vocabSize-1)
	return g
}

// word is a word drawn by frequency.
func (g *genVault) word() string { return g.vocab[g.zipf.Uint64()] }

// rareWord is a word drawn uniformly: titles and headings name topics,
// which are rarer words than the body's.
func (g *genVault) rareWord() string { return g.vocab[100+g.r.IntN(vocabSize-100)] }

func (g *genVault) words(n int, draw func() string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = draw()
	}
	return out
}

func title(w []string) string {
	for i, s := range w {
		w[i] = strings.ToUpper(s[:1]) + s[1:]
	}
	return strings.Join(w, " ")
}

// docs generates n notes with bodies of bodyWords words.
func (g *genVault) docs(n, bodyWords int) []Doc {
	genFolders := []string{"courses", "courses/math", "courses/cs", "projects/alpha", "projects/beta", "journal", "reading", "people", "ideas", "archive/2023"}
	genTags := []string{"math", "math/algebra", "math/analysis", "cs", "cs/systems", "course/bc", "course/ubc", "project", "todo", "idea", "reading/book", "reading/paper", "person", "journal/daily"}
	genStatus := []string{"draft", "in progress", "done", "archived"}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	out := make([]Doc, 0, n)
	for len(out) < n {
		path := genFolders[g.r.IntN(len(genFolders))] + "/" + title(g.words(2+g.r.IntN(3), g.rareWord)) + ".md"
		if seen[path] {
			continue
		}
		seen[path] = true
		d := Doc{Path: path, BodyLine: 1, Modified: base.Add(time.Duration(g.r.IntN(500*24*60)) * time.Minute)}
		for range 1 + g.r.IntN(4) {
			d.Headings = append(d.Headings, title(g.words(2+g.r.IntN(2), g.rareWord)))
		}
		for range 1 + g.r.IntN(3) {
			d.Tags = append(d.Tags, genTags[g.r.IntN(len(genTags))])
		}
		d.Properties = map[string]string{
			"status": genStatus[g.r.IntN(len(genStatus))],
			"topic":  g.rareWord() + ", " + g.rareWord(),
			"year":   fmt.Sprint(2020 + g.r.IntN(5)),
		}
		if g.r.IntN(2) == 0 {
			d.Properties["course"] = fmt.Sprintf("MATH %d", 100+g.r.IntN(300))
			d.BodyLine = 6
		}
		var b strings.Builder
		h := 0
		for i := 0; i < bodyWords; {
			if i > 0 && g.r.IntN(4) == 0 && h < len(d.Headings) {
				fmt.Fprintf(&b, "\n## %s\n\n", d.Headings[h])
				h++
			}
			line := min(6+g.r.IntN(16), bodyWords-i)
			b.WriteString(strings.Join(g.words(line, g.word), " "))
			b.WriteString(".\n")
			i += line
		}
		d.Body = b.String()
		d.Size = int64(len(d.Body))
		out = append(out, d)
	}
	return out
}

// queries generates n queries of one, two and three words, in turn: a
// word of a note (Zipf-drawn, as people ask about what notes say) or a
// title's word.
func (g *genVault) queries(n int) []string {
	out := make([]string, n)
	for i := range out {
		w := make([]string, 1+i%3)
		for j := range w {
			if g.r.IntN(3) == 0 {
				w[j] = g.rareWord()
			} else {
				w[j] = g.word()
			}
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}
