package tension

import (
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// The vocabulary lives in vocab/*.txt: one entry a line, fields separated by
// blanks, '#' starting a comment line. It is read once at init and only read
// afterwards; vocab_test.go checks it (no duplicates, no self-antonyms).

//go:embed vocab/*.txt
var vocabFS embed.FS

// vocabLines returns the fields of each entry of vocab/name. The files are
// embedded, so an unreadable one is a build defect and panics.
func vocabLines(name string) [][]string {
	data, err := vocabFS.ReadFile("vocab/" + name)
	if err != nil {
		panic(fmt.Errorf("tension vocabulary: %w", err))
	}
	var out [][]string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Fields(line))
	}
	return out
}

// vocabError reports a malformed entry of an embedded file.
func vocabError(name string, f []string, want string) error {
	return fmt.Errorf("tension vocabulary %s: entry %q: want %s", name, strings.Join(f, " "), want)
}

// loadSet reads a file of single words.
func loadSet(name string) map[string]bool {
	m := map[string]bool{}
	for _, f := range vocabLines(name) {
		if len(f) != 1 {
			panic(vocabError(name, f, "one word"))
		}
		m[f[0]] = true
	}
	return m
}

// loadStemSet reads a file of words, canonicalised as content words are.
func loadStemSet(name string) map[string]bool {
	m := map[string]bool{}
	for w := range loadSet(name) {
		m[stemKey(w)] = true
	}
	return m
}

// loadMap reads a file of "word value" entries.
func loadMap(name string) map[string]string {
	m := map[string]string{}
	for _, f := range vocabLines(name) {
		if len(f) != 2 {
			panic(vocabError(name, f, "a word and its value"))
		}
		m[f[0]] = f[1]
	}
	return m
}

// loadNumbers reads a file of "word number" entries.
func loadNumbers(name string) map[string]float64 {
	m := map[string]float64{}
	for k, v := range loadMap(name) {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			panic(fmt.Errorf("tension vocabulary %s: %q: %w", name, k, err))
		}
		m[k] = n
	}
	return m
}

// unitDef is a unit a number may carry.
type unitDef struct {
	class  valueClass
	factor float64 // to the class's base unit
}

// unitClasses names the value classes units.txt may use.
var unitClasses = map[string]valueClass{"num": classNum, "duration": classDur, "size": classSize, "percent": classPct, "distance": classDist}

// loadUnits reads units.txt: "class factor name...".
func loadUnits(name string) map[string]unitDef {
	m := map[string]unitDef{}
	for _, f := range vocabLines(name) {
		if len(f) < 3 {
			panic(vocabError(name, f, "a class, a factor and names"))
		}
		c, ok := unitClasses[f[0]]
		factor, err := strconv.ParseFloat(f[1], 64)
		if !ok || err != nil {
			panic(vocabError(name, f, "a known class and a numeric factor"))
		}
		for _, n := range f[2:] {
			m[n] = unitDef{c, factor}
		}
	}
	return m
}

// loadAntonyms reads antonyms.txt into a map from each canonical word to its
// canonical opposites.
func loadAntonyms(name string) map[string][]string {
	m := map[string][]string{}
	for _, f := range vocabLines(name) {
		if len(f) != 2 {
			panic(vocabError(name, f, "two opposed words"))
		}
		a, b := stemKey(f[0]), stemKey(f[1])
		if a == b {
			continue
		}
		if !contains(m[a], b) {
			m[a] = append(m[a], b)
		}
		if !contains(m[b], a) {
			m[b] = append(m[b], a)
		}
	}
	return m
}

// The vocabulary, by role. Built once at init, read-only afterwards.
var (
	// negWords negate the rest of their clause.
	negWords = loadSet("negators.txt")
	// breakWords end a clause (and so a negation's scope).
	breakWords = loadSet("breaks.txt")
	// stopWords carry no topic; they are kept for frames and qualifiers.
	// The list is the project's one list of stop words, textsearch's, and
	// the light words search keeps as content (light_words.txt).
	stopWords = func() map[string]bool {
		m := textsearch.StopWords()
		for w := range loadSet("light_words.txt") {
			m[w] = true
		}
		return m
	}()
	// afterParticle are the words after which "on" is a particle.
	afterParticle = loadSet("particle_after.txt")
	// conjunctions split a negation's scope into conjuncts.
	conjunctions = loadSet("conjunctions.txt")
	// copulas introduce a value in frames A and B.
	copulas = loadSet("copulas.txt")
	// timeScopeWords introduce a date that scopes a claim in time.
	timeScopeWords = loadSet("time_scope.txt")
	// qualifiers mark a number as a bound or an approximation; numbers
	// are only compared under equal qualifiers.
	qualifiers = loadMap("qualifiers.txt")
	// scopeWords qualify a statement with an environment.
	scopeWords = loadSet("scopes.txt")
	// synonyms canonicalise spellings before stemming.
	synonyms = loadMap("synonyms.txt")
	// cueWords name single-valued attributes (frame C).
	cueWords = loadStemSet("cues.txt")
	// cueVerbs are multi-valued verbs whose stem is a cue word.
	cueVerbs = loadSet("cue_verbs.txt")
	// dirCues are relations whose direction matters.
	dirCues = loadStemSet("directional.txt")
	// numberWords are spelled-out numbers.
	numberWords = loadNumbers("number_words.txt")
	// months are month names and their numbers.
	months = func() map[string]int {
		m := map[string]int{}
		for k, v := range loadNumbers("months.txt") {
			m[k] = int(v)
		}
		return m
	}()
	// weekdays map spellings to the day.
	weekdays = loadMap("weekdays.txt")
	// dayparts map spellings to the part of the day.
	dayparts = loadMap("dayparts.txt")
	// freqWords map bare time units to the period.
	freqWords = loadMap("frequencies.txt")
	// units are the units a number may carry.
	units = loadUnits("units.txt")
	// comparatives are skipped when looking for what is preferred.
	comparatives = loadSet("comparatives.txt")
	// preferWords are the words after which "to" orders a preference.
	preferWords = loadStemSet("prefer_words.txt")
	// startVerbs date a beginning ("joined in 2019").
	startVerbs = loadStemSet("start_verbs.txt")
	// prepositions are opposable prepositions: never modifiers.
	prepositions = loadSet("prepositions.txt")
	// identityNouns are nouns whose number names a thing ("course 74").
	identityNouns = loadSet("identity_nouns.txt")
	// antonyms maps a canonical word to its canonical opposites.
	antonyms = loadAntonyms("antonyms.txt")
)

// stemKey canonicalises a vocabulary word exactly as content words are.
func stemKey(w string) string {
	if c, ok := synonyms[w]; ok {
		w = c
	}
	if scopeWords[w] {
		return w
	}
	return stem(w)
}
