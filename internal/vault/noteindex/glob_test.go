package noteindex

import (
	"strings"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "d/a.md", false},
		{"**", "d/e/a.md", true},
		{"**.md", "d/e/a.md", true},
		{"d/**", "d/e/a.md", true},
		{"d/**", "e/a.md", false},
		{"**/a.md", "a.md", true},
		{"**/a.md", "d/e/a.md", true},
		{"**/a.md", "d/ea.md", false},
		{"d/**/a.md", "d/a.md", true},
		{"d/*/a.md", "d/a.md", false},
		{"d/*/a.md", "d/e/a.md", true},
		{"?.md", "a.md", true},
		{"?.md", "ab.md", false},
		{"d?a.md", "d/a.md", false},
		{"[ab].md", "b.md", true},
		{"[!ab].md", "b.md", false},
		{"[^ab].md", "c.md", true},
		{"d[!x]a.md", "d/a.md", false},
		{"[a-c]*", "bee", true},
		{"[a-c]*", "dee", false},
		{"[]]x", "]x", true},
		{"[z-a]*", "a", false},
		{"[", "[", true},
		{"a[b", "a[b", true},
		{`\*.md`, "*.md", true},
		{`\*.md`, "a.md", false},
		{"{a,b}.md", "b.md", true},
		{"{a,b}.md", "c.md", false},
		{"{a,b{c,d}}.md", "bd.md", true},
		{"{a,{b,c}/x}/*.md", "c/x/y.md", true},
		{"{a,b", "{a,b", true},
		{"a}", "a}", true},
		{"{,x}a", "a", true},
		{"[{]a", "{a", true},
		{"mathé/*", "mathé/ü.md", true},
		{"m?thé", "mäthé", true},
		{strings.Repeat("*a", 20) + "b", strings.Repeat("a", 200), false},
		{strings.Repeat("**a", 20) + "b", strings.Repeat("a/", 100), false},
	} {
		start := time.Now()
		g, ok := compileGlob(tc.glob)
		if !ok {
			t.Errorf("%q does not compile", tc.glob)
			continue
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("%q matches %q: %v, want %v", tc.glob, tc.path, got, tc.want)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%q on %q took %v", tc.glob, tc.path, d)
		}
	}
	if _, ok := compileGlob(strings.Repeat("{a,b}", 10)); ok {
		t.Errorf("1024 alternatives compile")
	}
}
