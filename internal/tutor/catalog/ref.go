// Package catalog holds what the tutor knows about institutions and their
// courses, independent of any store: the institution directory (BC Transfer
// Guide codes, names and aliases), course references and their
// normalization (SPEC section 3, ADR-012 "Course references"), terms, and
// the parsing of requisite text.
package catalog

import (
	"fmt"
	"strings"
	"unicode"
)

// Ref is a course reference: an institution (its directory key, such as
// "langara" or "sfu"), a subject ("CPSC") and a course number ("1150",
// "120", or a generic number such as "1XX"). Its canonical text is
// "institution:SUBJECT NUMBER", e.g. "sfu:CMPT 120".
type Ref struct {
	Institution string
	Subject     string
	Number      string
}

// String is the canonical form, "institution:SUBJECT NUMBER".
func (r Ref) String() string { return r.Institution + ":" + r.Code() }

// Code is the course code without the institution, "SUBJECT NUMBER".
func (r Ref) Code() string { return r.Subject + " " + r.Number }

// RefError says why a course reference is not one.
type RefError struct {
	Input  string
	Reason string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("course reference %q: %s; write institution:SUBJECT NUMBER, e.g. sfu:CMPT 120 or langara:CPSC 1150", e.Input, e.Reason)
}

// ParseRef reads a course reference "institution:course_code", normalized
// as SPEC section 3 says: surrounding and repeated white space is dropped,
// the institution may be its key, its BC Transfer Guide code or its name in
// any case ("langara", "LANG", "Langara College"), the subject is
// upper-cased, and subject and number may be written together ("cpsc1150").
// An institution the directory does not know is an error naming it.
func (d *Directory) ParseRef(s string) (Ref, error) {
	inst, code, ok := strings.Cut(s, ":")
	if !ok {
		return Ref{}, &RefError{s, "no institution before a colon"}
	}
	in, found := d.Lookup(inst)
	if !found {
		return Ref{}, &RefError{s, fmt.Sprintf("unknown institution %q (tn_course_institutions lists them)", strings.TrimSpace(inst))}
	}
	subject, number, err := SplitCode(code)
	if err != nil {
		return Ref{}, &RefError{s, err.Error()}
	}
	return Ref{Institution: in.Key, Subject: subject, Number: number}, nil
}

// SplitCode reads a course code "SUBJECT NUMBER" (white space optional
// between them, case-insensitive): the subject is letters (and may hold a
// space-free suffix such as "CPSC"), the number starts with a digit and is
// digits, letters or X's ("120", "1150", "1XX", "2nd", "110W").
func SplitCode(code string) (subject, number string, err error) {
	f := strings.Fields(code)
	joined := strings.Join(f, " ")
	if joined == "" {
		return "", "", fmt.Errorf("no course code after the colon")
	}
	// The subject is the leading letters; the number what follows.
	compact := strings.ReplaceAll(joined, " ", "")
	i := strings.IndexFunc(compact, unicode.IsDigit)
	if i <= 0 {
		return "", "", fmt.Errorf("course code %q is not SUBJECT NUMBER", joined)
	}
	subject, number = strings.ToUpper(compact[:i]), strings.ToUpper(compact[i:])
	for _, r := range subject {
		if r < 'A' || r > 'Z' {
			return "", "", fmt.Errorf("subject %q of course code %q holds a character that is not a letter", subject, joined)
		}
	}
	for _, r := range number {
		if !(r >= '0' && r <= '9') && !(r >= 'A' && r <= 'Z') {
			return "", "", fmt.Errorf("number %q of course code %q holds a character that is not a digit or letter", number, joined)
		}
	}
	if len(subject) > 8 || len(number) > 8 {
		return "", "", fmt.Errorf("course code %q is too long for SUBJECT NUMBER", joined)
	}
	// "2ND" reads better as BC Transfer Guide writes it.
	number = ordinals.Replace(number)
	return subject, number, nil
}

// ordinals writes generic levels as BC Transfer Guide does ("2nd").
var ordinals = strings.NewReplacer("ST", "st", "ND", "nd", "RD", "rd", "TH", "th")

// MarshalText writes the canonical form, so that a Ref is a string in JSON
// ("sfu:CMPT 120"), as a map key too.
func (r Ref) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads the canonical form back, as MarshalText wrote it:
// the institution before the colon, the subject up to the first space, the
// number after it, each as written (generic numbers such as "XXX" or
// "1st" included). Use [Directory.ParseRef] for what a person typed.
func (r *Ref) UnmarshalText(b []byte) error {
	inst, code, ok := strings.Cut(string(b), ":")
	if !ok || inst == "" {
		return &RefError{string(b), "no institution before a colon"}
	}
	subject, number, ok := strings.Cut(code, " ")
	if !ok || subject == "" || number == "" {
		return &RefError{string(b), "no SUBJECT NUMBER after the colon"}
	}
	*r = Ref{Institution: inst, Subject: subject, Number: number}
	return nil
}
