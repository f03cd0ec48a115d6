package pipeline

import "testing"

// TestBoundMessage: the validator's numeric bounds read as numbers, not
// as fractions and six-decimal floats.
func TestBoundMessage(t *testing.T) {
	for in, want := range map[string]string{
		"maximum: 1000/1 is greater than 100.000000":                 "maximum: 1000 is greater than 100",
		"minimum: -3/1 is less than 1.000000":                        "minimum: -3 is less than 1",
		"maximum: 5/2 is greater than 2.000000":                      "maximum: 2.5 is greater than 2",
		"exclusiveMinimum: 0/1 is less than or equal to 0.000000":    "exclusiveMinimum: 0 is less than or equal to 0",
		"exclusiveMaximum: 3/1 is greater than or equal to 2.500000": "exclusiveMaximum: 3 is greater than or equal to 2.5",
		"minItems: array length 0 is less than 1":                    "minItems: array length 0 is less than 1",
		`type: "x" has type "string", want "integer"`:                `type: "x" has type "string", want "integer"`,
	} {
		if got := boundMessage(in); got != want {
			t.Errorf("boundMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
