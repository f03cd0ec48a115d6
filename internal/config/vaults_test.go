package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVaults: the vaults section, in file order, alone or beside
// toolboxes; relative paths are the configuration file's folder's; every
// mistake is named.
func TestVaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nexus.yaml")
	if err := os.WriteFile(file, []byte(`vaults:
  notes: {path: ./notes, description: My notes}
  archive: {path: /srv/archive, readOnly: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Vaults) != 2 || cfg.Vaults[0].Name != "notes" || cfg.Vaults[0].Path != filepath.Join(dir, "notes") ||
		cfg.Vaults[0].Description != "My notes" || cfg.Vaults[0].ReadOnly || cfg.Vaults[1].Name != "archive" || !cfg.Vaults[1].ReadOnly || cfg.Vaults[1].Path != "/srv/archive" {
		t.Errorf("vaults %+v %+v", cfg.Vaults[0], cfg.Vaults[1])
	}
	for body, want := range map[string]string{
		"vaults: {notes: {}}":                          "vaults.notes: a vault needs a path",
		"vaults: {'bad name': {path: x}}":              `"bad name" is not a vault name`,
		"vaults: {Notes: {path: a}, notes: {path: b}}": `"notes" is the vault "Notes" again`,
		"vaults: {notes: {path: a, readonly: true}}":   `unknown key "readonly" (did you mean "readOnly"?)`,
		"vaults: [a]": "a mapping of vault names",
		"vaults: {notes: {path: a, readOnly: sure}}":    "vaults.notes.readOnly",
		"toolboxes: {}\nvaults: {notes: {path: ./n}}\n": "",
	} {
		_, err := Parse("c.yaml", []byte(body), nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
}
