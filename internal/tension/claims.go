package tension

// Claims (issue 23): questions and social talk make no claim, so they are
// never in tension with anything. A belief loaded from a conversation
// ("Melanie: Can't wait too!", "Caroline: Have a great day!", "John: Did
// you go?") keeps only its claim sentences for analysis.

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

var (
	// socialWords are the words of social talk (vocab/social.txt).
	socialWords = sync.OnceValue(func() map[string]bool { return loadSet("social.txt") })
	// socialFunction are the function words a social sentence may hold
	// (vocab/social_function.txt): the detector's own list.
	socialFunction = sync.OnceValue(func() map[string]bool { return loadSet("social_function.txt") })
	// reactionVerbs open a reaction (vocab/reaction_verbs.txt).
	reactionVerbs = sync.OnceValue(func() map[string]bool { return loadSet("reaction_verbs.txt") })
)

// deictics are the subjects that point at what the other person just said
// or showed ("That's a great photo!", "This sounds fun").
var deictics = map[string]bool{"that": true, "this": true, "that's": true, "this's": true}

// greetings are the words after which a capitalised word is a name
// addressed.
var greetings = map[string]bool{"hey": true, "hi": true, "hello": true, "thanks": true, "thank": true, "bye": true, "congrats": true, "congratulations": true, "dear": true}

// HasClaim reports whether content states anything that could be in
// tension with another belief: it is not only questions, social talk and
// annotations. A belief without a claim needs no tension candidates.
func HasClaim(content string) bool { return claimText(content) != "" }

// maxLabel is the most bytes a leading speaker label ("Caroline: ") spans.
const maxLabel = 40

// claimText returns content without its questions and social sentences.
// A leading speaker label ("Name: ", one or two capitalised words) is kept
// when a claim follows it: who says "I moved" matters. The result is ""
// when content holds no claim at all.
func claimText(content string) string {
	label, body := speakerLabel(content)
	body = dropAnnotations(body)
	if !hasNonClaim(body) && len(body)+len(label) == len(content) {
		return content
	}
	var b strings.Builder
	for s := range sentences(body) {
		if claimSentence(s) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strings.TrimSpace(s))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return label + b.String()
}

// hasNonClaim is a cheap test that body might hold a question or a social
// sentence, so that most beliefs are not rewritten.
func hasNonClaim(body string) bool {
	if strings.ContainsAny(body, "?!") {
		return true
	}
	for s := range sentences(body) {
		if !claimSentence(s) {
			return true
		}
	}
	return false
}

// speakerLabel splits off a leading "Name: " or "First Last: " label.
func speakerLabel(content string) (label, body string) {
	i := strings.Index(content, ": ")
	if i <= 0 || i > maxLabel {
		return "", content
	}
	words := strings.Fields(content[:i])
	if len(words) == 0 || len(words) > 2 {
		return "", content
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			return "", content
		}
		for _, c := range w {
			if !unicode.IsLetter(c) && c != '\'' && c != '-' && c != '.' {
				return "", content
			}
		}
	}
	return content[:i+2], content[i+2:]
}

// sentences yields the sentences of s, each with its final punctuation.
// A sentence ends at '.', '!', '?' or '…' followed by a space or the end,
// or at a line break.
func sentences(s string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(s); {
			r, w := utf8.DecodeRuneInString(s[i:])
			end := i + w
			if r == '\n' || (r == '.' || r == '!' || r == '?' || r == '…') && (end >= len(s) || s[end] == ' ' || s[end] == '\n' || s[end] == '"') {
				for end < len(s) && (s[end] == '!' || s[end] == '?' || s[end] == '.') {
					end++
				}
				if strings.TrimSpace(s[start:end]) != "" && !yield(s[start:end]) {
					return
				}
				start = end
			}
			i = max(end, i+w)
		}
		if strings.TrimSpace(s[start:]) != "" {
			yield(s[start:])
		}
	}
}

// claimSentence reports whether s states something: it is not a question
// and not made only of social words and function words.
func claimSentence(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "?") || strings.HasSuffix(t, "?!") || strings.HasSuffix(t, "?\"") {
		return false
	}
	t = dropVocatives(t)
	if reaction(t) {
		return false
	}
	// A name after a greeting ("Hey Sam!", "Thanks Deborah") is addressed.
	named := map[string]bool{}
	greeting := false
	prev := ""
	for _, w := range strings.Fields(t) {
		w = strings.Trim(w, ",.!?…\"'")
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && greetings[prev] {
			named[strings.ToLower(w)] = true
			greeting = true
		}
		prev = strings.ToLower(w)
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		w = strings.ReplaceAll(w, "’", "'")
		w = strings.Trim(w, "'")
		if w == "" {
			continue
		}
		if socialWords()[w] || socialFunction()[w] || greeting && named[w] {
			continue
		}
		base := w
		switch {
		case w == "can't" || w == "cannot":
			base = "can"
		case w == "won't":
			base = "will"
		case strings.HasSuffix(w, "n't"):
			base = strings.TrimSuffix(w, "n't")
		default:
			for _, suf := range []string{"'s", "'re", "'m", "'ll", "'ve", "'d"} {
				if strings.HasSuffix(w, suf) {
					base = strings.TrimSuffix(w, suf)
					break
				}
			}
		}
		if base != w && (socialWords()[base] || socialFunction()[base]) {
			continue
		}
		return true
	}
	return false
}

// dropVocatives removes the names a sentence addresses: a capitalised word
// (or two) right after a comma and before a comma or the sentence's end
// ("Thanks, Maria!", "No way, John, that's cool").
func dropVocatives(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, ", ")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		n := 0
		for k := 0; k < 2; k++ {
			r, _ := utf8.DecodeRuneInString(rest[n:])
			if !unicode.IsUpper(r) {
				break
			}
			j := n
			for j < len(rest) {
				c, w := utf8.DecodeRuneInString(rest[j:])
				if !unicode.IsLetter(c) {
					break
				}
				j += w
			}
			n = j
			if n < len(rest) && rest[n] == ' ' && k == 0 {
				if r2, _ := utf8.DecodeRuneInString(rest[n+1:]); unicode.IsUpper(r2) {
					n++
					continue
				}
			}
			break
		}
		end := strings.TrimRight(rest[:n], " ")
		if end != "" && (n == len(rest) || strings.ContainsRune(",.!?…", rune(rest[n]))) {
			s = rest[n:]
			continue
		}
		b.WriteString(", ")
		s = rest
	}
}

// dropAnnotations removes bracketed annotations ("[shares a photo of two
// dogs on a beach]"): they describe an attachment, each its own thing, and
// claim nothing two beliefs could disagree on.
func dropAnnotations(s string) string {
	if !strings.Contains(s, "[") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	return strings.TrimSpace(b.String())
}

// reaction reports whether sentence s reacts to what the other person said
// or showed rather than claiming anything: after any leading social words
// ("Wow,", "Oh yeah,") it opens with a verb of perception and no subject
// ("Sounds like a blast!", "Looking good!"), or with a deictic subject
// that points at the other's words followed by such a verb ("That sounds
// like a fun hobby"), or it is an exclamation about a deictic subject
// ("That's a great photo!", "What a view!"). Its referent is outside the
// belief, so two reactions never describe one thing. A subject that names
// something ("The build looks broken", "Nexus seems slow") keeps the
// sentence a claim.
func reaction(s string) bool {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	})
	i := 0
	for i < len(words) && socialWords()[strings.ReplaceAll(words[i], "’", "'")] && !reactionVerbs()[words[i]] {
		i++
	}
	if i >= len(words) {
		return false
	}
	w := strings.ReplaceAll(words[i], "’", "'")
	if reactionVerbs()[w] {
		return true
	}
	exclaimed := strings.HasSuffix(strings.TrimRight(s, "\"' "), "!")
	switch {
	case w == "what" && i+1 < len(words) && (words[i+1] == "a" || words[i+1] == "an"):
		return exclaimed
	case !deictics[w]:
		return false
	}
	if i+1 < len(words) && reactionVerbs()[words[i+1]] {
		return true
	}
	return exclaimed && (strings.HasSuffix(w, "'s") || i+1 < len(words) && (words[i+1] == "is" || words[i+1] == "was"))
}
