package catalog

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseRef(t *testing.T) {
	d := NewDirectory()
	for _, tc := range []struct{ in, want string }{
		{"sfu:CMPT 120", "sfu:CMPT 120"},
		{"  SFU :  cmpt   120 ", "sfu:CMPT 120"},
		{"langara:CPSC 1150", "langara:CPSC 1150"},
		{"LANG:cpsc1150", "langara:CPSC 1150"},
		{"Langara College:CPSC 1150", "langara:CPSC 1150"},
		{"ubc:PSYC 2nd", "ubcv:PSYC 2nd"},
		{"ubcv:psyc 2ND", "ubcv:PSYC 2nd"},
		{"kpu:JRNL 2XXX", "kpu:JRNL 2XXX"},
	} {
		got, err := d.ParseRef(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseRef(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"CPSC 1150", "nowhere:CPSC 1150", "sfu:", "sfu:120", "sfu:CMPT", "sfu:CM-PT 120", "sfu:CMPT 1-20"} {
		_, err := d.ParseRef(in)
		var re *RefError
		if !errors.As(err, &re) {
			t.Errorf("ParseRef(%q) = %v, want a RefError", in, err)
		}
	}
}

func TestDirectoryHasNoDuplicateNames(t *testing.T) {
	seen := map[string]string{}
	for _, in := range bctg {
		for _, n := range append([]string{in.Key, in.Code, in.Name}, in.Aliases...) {
			if k := fold(n); seen[k] != "" && seen[k] != in.Key {
				t.Errorf("%q names both %s and %s", n, seen[k], in.Key)
			} else {
				seen[k] = in.Key
			}
		}
	}
}

func TestRefJSON(t *testing.T) {
	r := Ref{Institution: "sfu", Subject: "CMPT", Number: "120"}
	b, err := json.Marshal(map[string]Ref{"course": r})
	if err != nil || string(b) != `{"course":"sfu:CMPT 120"}` {
		t.Fatalf("Marshal: %s, %v", b, err)
	}
	var back map[string]Ref
	if err := json.Unmarshal(b, &back); err != nil || back["course"] != r {
		t.Fatalf("Unmarshal: %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"course":"CMPT 120"}`), &back); err == nil {
		t.Fatal("a reference without an institution decoded")
	}
}
