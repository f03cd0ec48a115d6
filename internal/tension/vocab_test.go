package tension

import (
	"io/fs"
	"strings"
	"testing"
)

// TestVocabNoDuplicates fails on an entry listed twice in one file: a
// repeated word, or a repeated key of a "word value" file, or a unit
// spelling listed under two units.
func TestVocabNoDuplicates(t *testing.T) {
	files, err := fs.Glob(vocabFS, "vocab/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d vocabulary files embedded", len(files))
	}
	for _, path := range files {
		name := strings.TrimPrefix(path, "vocab/")
		seen := map[string]bool{}
		for _, f := range vocabLines(name) {
			var keys []string
			switch name {
			case "antonyms.txt":
				continue // TestVocabAntonyms
			case "units.txt":
				keys = f[2:]
			default:
				keys = f[:1]
			}
			for _, k := range keys {
				if seen[k] {
					t.Errorf("%s: %q listed twice", name, k)
				}
				seen[k] = true
			}
		}
	}
}

// TestVocabAntonyms fails on a word opposed to itself and on a pair listed
// twice, in either order, once both words are canonicalised as the
// detector canonicalises content words ("enable/disable" and
// "enabled/disabled" are one pair).
func TestVocabAntonyms(t *testing.T) {
	seen := map[[2]string]string{}
	for _, f := range vocabLines("antonyms.txt") {
		line := strings.Join(f, " ")
		if len(f) != 2 {
			t.Errorf("antonyms.txt: %q is not a pair", line)
			continue
		}
		a, b := stemKey(f[0]), stemKey(f[1])
		if a == b {
			t.Errorf("antonyms.txt: %q opposes %q to itself", line, a)
			continue
		}
		k := [2]string{min(a, b), max(a, b)}
		if prev, ok := seen[k]; ok {
			t.Errorf("antonyms.txt: %q repeats %q", line, prev)
		}
		seen[k] = line
	}
	for w, opp := range antonyms() {
		for _, o := range opp {
			if !contains(antonyms()[o], w) {
				t.Errorf("antonyms: %s -> %s is not symmetric", w, o)
			}
		}
	}
}

// TestVocabRoles checks that words with a grammatical role are not also
// content vocabulary that the role would hide.
func TestVocabRoles(t *testing.T) {
	for w := range negWords() {
		if stopWords()[w] || breakWords()[w] {
			t.Errorf("negator %q is also a stop or break word", w)
		}
	}
	for w := range antonyms() {
		// "on" is a stop word that the lexer makes a content word when it
		// stands alone as a particle ("logging is on"), opposed to "off".
		if stopWords()[w] && w != "on" {
			t.Errorf("antonym %q is a stop word: it would never be compared", w)
		}
	}
}
