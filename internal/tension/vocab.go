package tension

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

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

// The vocabulary, by role. Each list is read from its file on first use
// (not at start-up, which does not need it) and is read-only afterwards.
var (
	// negWords negate the rest of their clause.
	negWords = sync.OnceValue(func() map[string]bool { return loadSet("negators.txt") })
	// breakWords end a clause (and so a negation's scope).
	breakWords = sync.OnceValue(func() map[string]bool { return loadSet("breaks.txt") })
	// stopWords carry no topic; they are kept for frames and qualifiers.
	// The list is the project's one list of stop words, textsearch's, and
	// the light words search keeps as content (light_words.txt).
	stopWords = sync.OnceValue(func() map[string]bool {
		m := textsearch.StopWords()
		for w := range loadSet("light_words.txt") {
			m[w] = true
		}
		return m
	})
	// afterParticle are the words after which "on" is a particle.
	afterParticle = sync.OnceValue(func() map[string]bool { return loadSet("particle_after.txt") })
	// conjunctions split a negation's scope into conjuncts.
	conjunctions = sync.OnceValue(func() map[string]bool { return loadSet("conjunctions.txt") })
	// copulas introduce a value in frames A and B.
	copulas = sync.OnceValue(func() map[string]bool { return loadSet("copulas.txt") })
	// timeScopeWords introduce a date that scopes a claim in time.
	timeScopeWords = sync.OnceValue(func() map[string]bool { return loadSet("time_scope.txt") })
	// qualifiers mark a number as a bound or an approximation; numbers
	// are only compared under equal qualifiers.
	qualifiers = sync.OnceValue(func() map[string]string { return loadMap("qualifiers.txt") })
	// scopeWords qualify a statement with an environment.
	scopeWords = sync.OnceValue(func() map[string]bool { return loadSet("scopes.txt") })
	// synonyms canonicalise spellings before stemming.
	synonyms = sync.OnceValue(func() map[string]string { return loadMap("synonyms.txt") })
	// cueWords name single-valued attributes (frame C).
	cueWords = sync.OnceValue(func() map[string]bool { return loadStemSet("cues.txt") })
	// cueVerbs are multi-valued verbs whose stem is a cue word.
	cueVerbs = sync.OnceValue(func() map[string]bool { return loadSet("cue_verbs.txt") })
	// dirCues are relations whose direction matters.
	dirCues = sync.OnceValue(func() map[string]bool { return loadStemSet("directional.txt") })
	// numberWords are spelled-out numbers.
	numberWords = sync.OnceValue(func() map[string]float64 { return loadNumbers("number_words.txt") })
	// months are month names and their numbers.
	months = sync.OnceValue(func() map[string]int {
		m := map[string]int{}
		for k, v := range loadNumbers("months.txt") {
			m[k] = int(v)
		}
		return m
	})
	// weekdays map spellings to the day.
	weekdays = sync.OnceValue(func() map[string]string { return loadMap("weekdays.txt") })
	// dayparts map spellings to the part of the day.
	dayparts = sync.OnceValue(func() map[string]string { return loadMap("dayparts.txt") })
	// freqWords map bare time units to the period.
	freqWords = sync.OnceValue(func() map[string]string { return loadMap("frequencies.txt") })
	// units are the units a number may carry.
	units = sync.OnceValue(func() map[string]unitDef { return loadUnits("units.txt") })
	// comparatives are skipped when looking for what is preferred.
	comparatives = sync.OnceValue(func() map[string]bool { return loadSet("comparatives.txt") })
	// preferWords are the words after which "to" orders a preference.
	preferWords = sync.OnceValue(func() map[string]bool { return loadStemSet("prefer_words.txt") })
	// startVerbs date a beginning ("joined in 2019").
	startVerbs = sync.OnceValue(func() map[string]bool { return loadStemSet("start_verbs.txt") })
	// prepositions are opposable prepositions: never modifiers.
	prepositions = sync.OnceValue(func() map[string]bool { return loadSet("prepositions.txt") })
	// identityNouns are nouns whose number names a thing ("course 74").
	identityNouns = sync.OnceValue(func() map[string]bool { return loadSet("identity_nouns.txt") })
	// antonyms maps a canonical word to its canonical opposites.
	antonyms = sync.OnceValue(func() map[string][]string { return loadAntonyms("antonyms.txt") })
)

// stemKey canonicalises a vocabulary word exactly as content words are.
func stemKey(w string) string {
	if c, ok := synonyms()[w]; ok {
		w = c
	}
	if scopeWords()[w] {
		return w
	}
	return stem(w)
}
