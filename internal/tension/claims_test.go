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
