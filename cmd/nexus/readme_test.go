package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEPromises checks what a newcomer reads first: every environment
// variable the commands read and every command is documented in the README
// and in "nexus --help"; the README links nowhere outside the repository and
// uses no internal shorthand (seed, ADR or issue numbers).
func TestREADMEPromises(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, f := range sources {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range regexp.MustCompile(`"(NEXUS_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
			vars[v[1]] = true
		}
	}
	if len(vars) < 10 {
		t.Fatalf("found only %d NEXUS_ variables in the sources: %v", len(vars), vars)
	}
	help, _, _ := runNexus(t, "", "--help")
	for v := range vars {
		if !strings.Contains(text, v) {
			t.Errorf("README does not mention %s", v)
		}
		if !strings.Contains(help, v) {
			t.Errorf("nexus --help does not mention %s", v)
		}
	}
	for _, cmd := range []string{"nexus serve", "nexus stdio", "nexus tools list", "nexus call", "nexus maintenance", "nexus version"} {
		if !strings.Contains(text, cmd) {
			t.Errorf("README does not mention %q", cmd)
		}
	}
	for _, link := range regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(text, -1) {
		target := link[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "..") {
			t.Errorf("README links outside the repository: %s", target)
			continue
		}
		path, _, _ := strings.Cut(target, "#")
		if _, err := os.Stat(filepath.Join("..", "..", path)); err != nil {
			t.Errorf("README links to a missing file: %s", target)
		}
	}
	if m := regexp.MustCompile(`(?i)\b(seed \d+|ADR-\d+|issue \d+)`).FindAllString(text, -1); len(m) > 0 {
		t.Errorf("README uses internal shorthand: %q", m)
	}
	if strings.Contains(text, "go install github.com/") {
		t.Error("README offers go install ...@latest, which does not work: the module is not published")
	}
}
