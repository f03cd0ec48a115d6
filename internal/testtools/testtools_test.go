package testtools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if wd, _ := os.Getwd(); wd != filepath.Join(root, "internal", "testtools") {
		t.Errorf("RepoRoot = %s from %s", root, wd)
	}
}

func TestDir(t *testing.T) {
	root := RepoRoot(t)
	for env, want := range map[string]string{
		"":             filepath.Join(root, ".cache", "tools"),
		"tools":        filepath.Join(root, "tools"),
		"/abs/tools":   "/abs/tools",
		"../elsewhere": filepath.Join(filepath.Dir(root), "elsewhere"),
	} {
		t.Setenv("NEXUS_TOOLS_DIR", env)
		if got := Dir(t); got != want {
			t.Errorf("NEXUS_TOOLS_DIR=%q: Dir = %s, want %s", env, got, want)
		}
	}
}

// writeChecks writes checks.json, as the suite does, in the directory run
// under outDir.
func writeChecks(t *testing.T, outDir, run, checks string) {
	t.Helper()
	dir := filepath.Join(outDir, run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checks.json"), []byte(checks), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadChecks(t *testing.T) {
	outDir := t.TempDir()
	if _, err := ReadChecks(outDir); err == nil {
		t.Error("ReadChecks of an empty directory succeeded")
	}
	writeChecks(t, outDir, "server-ping-2025-01-02T03-04-05-678Z",
		`[{"id":"a","name":"A","status":"SUCCESS"},{"id":"b","status":"FAILURE","errorMessage":"no","details":{"x":1}}]`)
	want := []Check{{ID: "a", Name: "A", Status: "SUCCESS"}, {ID: "b", Status: "FAILURE", ErrorMessage: "no", Details: json.RawMessage(`{"x":1}`)}}
	got, err := ReadChecks(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadChecks = %+v, want %+v", got, want)
	}
	writeChecks(t, outDir, "server-tools-list-2025-01-02T03-04-06-000Z", `[]`)
	if _, err := ReadChecks(outDir); err == nil {
		t.Error("ReadChecks of two runs succeeded")
	}
}

func TestReadResults(t *testing.T) {
	outDir := t.TempDir()
	writeChecks(t, outDir, "server-ping-2025-01-02T03-04-05-678Z", `[{"id":"ping","status":"SUCCESS"}]`)
	writeChecks(t, outDir, "server-tools-list-2025-01-02T03-04-06-000Z", `[{"id":"tools-list","status":"WARNING"}]`)
	got, err := ReadResults(outDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Check{
		"ping":       {{ID: "ping", Status: "SUCCESS"}},
		"tools-list": {{ID: "tools-list", Status: "WARNING"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadResults = %+v, want %+v", got, want)
	}
}

func TestDetailsSuffix(t *testing.T) {
	for raw, want := range map[string]string{
		"":                 "",
		"null":             "",
		"not json":         "",
		`{ "a" : [1, 2] }`: ` (details: {"a":[1,2]})`,
	} {
		if got := DetailsSuffix(json.RawMessage(raw)); got != want {
			t.Errorf("DetailsSuffix(%q) = %q, want %q", raw, got, want)
		}
	}
	long := DetailsSuffix(json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`))
	if want := " (details: \"" + strings.Repeat("x", 799) + "…)"; long != want {
		t.Errorf("DetailsSuffix of a long value = %q", long)
	}
}
