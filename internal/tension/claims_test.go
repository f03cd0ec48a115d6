package tension

import "testing"

// TestIssue23Precision: the issue's false tensions, as general cases, and
// the true ones that must survive the new rules.
func TestIssue23Precision(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		// Identity numbers: different subjects, never a value conflict.
		{"Course SUBJ 74 transfers to institution 0 as course 74", "Course SUBJ 99 transfers to institution 0 as course 99", false},
		{"Room 12 has 40 seats", "Room 14 has 45 seats", false},
		{"Ticket #4471 is assigned to team 3", "Ticket #4472 is assigned to team 5", false},
		{"Order 1201 shipped 3 items to customer 40", "Order 1202 shipped 5 items to customer 41", false},
		// ... while one subject's values still conflict.
		{"Room 12 has 40 seats", "Room 12 has 45 seats", true},
		{"The API rate limit is 100 requests per minute", "The API rate limit is 500 requests per minute", true},
		// Questions and social talk are no claims.
		{"Gina: Can't wait to see the vid!", "Gina: Can't wait too!", false},
		{"Jolene: Have a great day!", "Jolene: I got her last year, she's a great pet.", false},
		{"Maria: No way, John! That's really cool.", "Maria: Way to go, John!", false},
		{"Is autovacuum enabled on the production database?", "Autovacuum is disabled on the production database", false},
		{"Thanks, Maria! Autovacuum is enabled on the production database.", "Autovacuum is disabled on the production database", true},
		// Opposed terms must attach to one thing.
		{"Caroline: My friends help me come up with ideas", "Caroline: My friends are good at calming us down", false},
		{"I'm trying to eat less processed food and sugary snacks", "I'm cutting down on sugary snacks and eating more veggies", false},
		{"Debug logging is enabled in production", "Debug logging is disabled in production", true},
		{"The editor uses dark mode", "The editor uses light mode", true},
		// Captions describe attachments, each its own thing.
		{"Audrey: Look! [shares a photo of three dogs on a floor]", "Audrey: So adorable! [shares a photo of two dogs in a field]", false},
	} {
		f, ok := Detect(Input{Content: c.a}, Input{Content: c.b})
		if ok != c.want {
			t.Errorf("%q vs %q: tension %v (%s), want %v", c.a, c.b, ok, f.Reason, c.want)
		}
	}
}

func TestClaimText(t *testing.T) {
	for in, want := range map[string]string{
		"Gina: Can't wait too!":                        "",
		"Hey Sam! Long time no talk!":                  "",
		"Did you go to the concert?":                   "",
		"Melanie: Thanks, Caroline! I moved to Paris.": "Melanie: I moved to Paris.",
		"Nexus stores beliefs in PostgreSQL":           "Nexus stores beliefs in PostgreSQL",
		"John: Wow! [shares a photo of a cat]":         "",
	} {
		if got := claimText(in); got != want {
			t.Errorf("claimText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConversationPrecision: classes of conversational text that made
// false tensions on a load of conversation turns, as general cases written
// for the test, and the true tensions of the same shapes that must survive.
func TestConversationPrecision(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		// Reactions to what the other person said or showed claim nothing.
		{"Omar: Wow, that's a great jacket!", "Omar: Wow, that's a great photo!", false},
		{"Lena: Sounds like a blast!", "Lena: Sounds like the trip went well.", false},
		{"Lena: Wow, looking sharp!", "Lena: Wow, looks scary!", false},
		{"Lena: Oh, that sounds like a relaxing hobby.", "Lena: That sounds like a tiring hobby.", false},
		// Utterances addressed to the listener differ in a detail without
		// being one claim with two details.
		{"Omar: I'll let you know when I'm in Denver. See you!", "Omar: I'll let you know when I'm back. Bye!", false},
		{"Ana: Believe in yourself and keep climbing.", "Ana: Believe in yourself and keep trying.", false},
		{"Ana: Right, I remember you mentioning the lake.", "Ana: Right, I remember you mentioning the bridge.", false},
		// ... while a partial overlap about the world stays.
		{"Nexus stores belief embeddings in pgvector", "Nexus stores belief embeddings in Qdrant", true},
		// A denial with a pronoun object is about that referent: "it" (one
		// thing) and "them" (others) differ, and a noun elsewhere may be
		// anything.
		{"Omar: I'll check it out, I have watched a few of his films.", "Omar: No, I haven't watched them yet.", false},
		{"Sam returned them last week", "Sam has not returned it", false},
		{"Sam returned it last week", "Sam has not returned it", true},
		// An infinitive names an act without asserting it.
		{"Priya bought a novel to read on the train", "Priya has not read the novel", false},
		{"Priya has read the novel", "Priya has not read the novel", true},
		// Values in a hypothetical clause are not claimed.
		{"Omar: It would be nice to go sailing with you one day.", "Omar: I'm going sailing, I have been tired for two days.", false},
		{"The migration could take 2 days", "The migration takes 5 days", false},
		{"The migration takes 2 days", "The migration takes 5 days", true},
	} {
		f, ok := Detect(Input{Content: c.a}, Input{Content: c.b})
		if ok != c.want {
			t.Errorf("%q vs %q: tension %v (%s), want %v", c.a, c.b, ok, f.Reason, c.want)
		}
	}
}

func TestReaction(t *testing.T) {
	for s, want := range map[string]bool{
		"Sounds like a dream!":            true,
		"Wow, looks intense!":             true,
		"That's a great necklace!":        true,
		"What a view!":                    true,
		"This seems like a good plan":     true,
		"That's where I grew up.":         false,
		"The build looks broken on main":  false,
		"Nexus seems slow on large loads": false,
		"Look at the logs first":          false,
		"I moved to Paris!":               false,
	} {
		if got := reaction(s); got != want {
			t.Errorf("reaction(%q) = %v, want %v", s, got, want)
		}
	}
}
