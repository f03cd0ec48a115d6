package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestImportBeliefs: nexus import beliefs FILE.jsonl creates the good lines,
// reports each bad one by file and line (and exits 1), finds tensions
// within the file, and changes nothing when run again (external_id).
func TestImportBeliefs(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			args := []string{"--data-dir", t.TempDir()}
			if db == "postgres" {
				args = append(args, "--db", storetest.PostgresURL(t))
			}
			file := filepath.Join(t.TempDir(), "beliefs.jsonl")
			lines := []string{
				`{"content": "The default port of Nexus is 7777", "entities": [{"name": "Nexus"}], "external_id": "port-1"}`,
				``,
				`{"content": "The default port of Nexus is 8080", "entities": [{"name": "Nexus"}], "external_id": "port-2"}`,
				`{"content": "   ", "external_id": "blank"}`,
				`not json`,
				`{"content": "confidence out of range", "confidence": {"overall": 7}}`,
				`{"content": "Langara CPSC 1150 transfers to SFU as CMPT 120", "domain_path": ["transfer", "sfu"], "external_id": "t-1"}`,
				`{"content": "an unknown field", "colour": "blue"}`,
			}
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runNexus(t, "", append([]string{"import", "beliefs", file}, args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (bad lines)\n%s\n%s", code, out, errOut)
			}
			for _, want := range []string{
				"3 created, 0 already there (same external_id), 4 not imported",
				"tensions found: 1",
				"beliefs.jsonl line 4: content: must not be blank",
				"beliefs.jsonl line 5: not a JSON object",
				"beliefs.jsonl line 6: ",
				"beliefs.jsonl line 8: ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(out, "overall") || !strings.Contains(out, "colour") {
				t.Errorf("the schema's refusals do not name the field:\n%s", out)
			}
			// Again: the lines with an external_id are there already; the one
			// without is created again (nothing identifies it).
			out, _, _ = runNexus(t, "", append([]string{"import", "beliefs", file}, args...)...)
			if !strings.Contains(out, "0 created, 3 already there") {
				t.Fatalf("second import:\n%s", out)
			}
			got, _, code := runNexus(t, "", append([]string{"call", "tension_list", "{}"}, args...)...)
			var res struct{ Tensions []json.RawMessage }
			if code != 0 || json.Unmarshal([]byte(got), &res) != nil || len(res.Tensions) != 1 {
				t.Fatalf("tension_list after two imports (exit %d): %s", code, got)
			}
		})
	}
}
