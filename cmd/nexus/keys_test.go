package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/secrets"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestKeysRotate: nexus keys rotate makes a new key version current and
// rewraps every credential under it; the credentials still open, and a
// second run is as good as the first.
func TestKeysRotate(t *testing.T) {
	dir := t.TempDir()
	const key = "sk-proj-rotate-0123456789abcdefghijKLMN"
	var ids []string
	for _, label := range []string{"one", "two", "three"} {
		out, errOut, code := runNexus(t, "", "call", "--data-dir", dir, "--no-demo", "tn_user_byok_add",
			`{"provider":"openai","label":"`+label+`","apiKey":"`+key+label+`"}`)
		if code != 0 {
			t.Fatalf("add %s: %d %s %s", label, code, out, errOut)
		}
		var cr struct{ ID string }
		if err := json.Unmarshal([]byte(out), &cr); err != nil || cr.ID == "" {
			t.Fatalf("add %s: %v %s", label, err, out)
		}
		ids = append(ids, cr.ID)
	}
	if _, _, code := runNexus(t, "", "call", "--data-dir", dir, "tn_user_byok_add", `{"provider":"ollama","label":"none","baseUrl":"https://93.184.216.34"}`); code != 0 {
		t.Fatal("add an ollama credential (no key)")
	}
	sealedBefore := sealedValues(t, dir)
	if len(sealedBefore) != 3 {
		t.Fatalf("%d sealed keys, want 3", len(sealedBefore))
	}
	before, err := os.ReadFile(filepath.Join(dir, "keyring.json"))
	if err != nil {
		t.Fatal(err)
	}
	for run := 2; run <= 3; run++ {
		out, errOut, code := runNexus(t, "", "keys", "rotate", "--data-dir", dir)
		if code != 0 || !strings.Contains(out, "rewrapped 3 credentials in ") || !strings.Contains(out, "version "+string(rune('0'+run))+" is current") {
			t.Fatalf("rotate (run %d): %d %q %q", run-1, code, out, errOut)
		}
		if strings.Contains(out+errOut, "rotate-0123456789") {
			t.Fatal("rotate printed a key")
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "keyring.json"))
	if string(after) == string(before) {
		t.Fatal("the keyring file did not change")
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Keyring.Current() != 3 {
		t.Fatalf("keyring at version %d, want 3", a.Keyring.Current())
	}
	for id, s := range sealedValues(t, dir) {
		if s.KeyVersion != 3 || string(s.Ciphertext) != string(sealedBefore[id].Ciphertext) || string(s.WrappedKey) == string(sealedBefore[id].WrappedKey) {
			t.Fatalf("credential %s: version %d, ciphertext kept %v, key rewrapped %v", id, s.KeyVersion,
				string(s.Ciphertext) == string(sealedBefore[id].Ciphertext), string(s.WrappedKey) != string(sealedBefore[id].WrappedKey))
		}
	}
	for i, label := range []string{"one", "two", "three"} {
		got, err := a.Tutor.OpenCredentialKey(context.Background(), principal.Local.ID, ids[i])
		if err != nil || string(got) != key+label {
			t.Fatalf("credential %s after rotation: %v", label, err)
		}
	}
	if _, errOut, code := runNexus(t, "", "keys", "spin", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "nexus keys rotate") {
		t.Fatalf("keys spin: %d %s", code, errOut)
	}
}

// sealedValues reads the sealed keys of the credentials in dir's database.
func sealedValues(t *testing.T, dir string) map[string]secrets.Sealed {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rows, err := a.Store.DB().Query(`SELECT id, sealed FROM tn_credentials WHERE sealed IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]secrets.Sealed{}
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			t.Fatal(err)
		}
		s, err := secrets.ParseSealed(text)
		if err != nil {
			t.Fatal(err)
		}
		m[id] = s
	}
	return m
}

// TestKeysPostgres: on PostgreSQL without a data directory there is no
// keyring until NEXUS_KEYRING gives one: the BYOK tools say so and Nexus
// still runs; a keyring from the environment is not rotated here.
func TestKeysPostgres(t *testing.T) {
	db := storetest.PostgresURL(t)
	add := `{"provider":"anthropic","label":"pg","apiKey":"sk-ant-postgres-0123456789abcdef"}`
	t.Setenv("NEXUS_KEYRING", "")
	out, errOut, code := runNexus(t, "", "call", "--db", db, "tn_user_byok_add", add)
	if code == 0 || !strings.Contains(out+errOut, "SERVICE_UNAVAILABLE") || !strings.Contains(out+errOut, "NEXUS_KEYRING") {
		t.Fatalf("add without a keyring: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := runNexus(t, "", "keys", "rotate", "--db", db); code == 0 || !strings.Contains(errOut, "no keyring") {
		t.Fatalf("rotate without a keyring: %d %s", code, errOut)
	}
	kr, err := os.CreateTemp(t.TempDir(), "keyring")
	if err != nil {
		t.Fatal(err)
	}
	kr.Close()
	os.Remove(kr.Name())
	if err := secrets.New().Save(kr.Name()); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(kr.Name())
	t.Setenv("NEXUS_KEYRING", string(text))
	if out, errOut, code := runNexus(t, "", "call", "--db", db, "tn_user_byok_add", add); code != 0 || strings.Contains(out, "0123456789abcdef") {
		t.Fatalf("add with NEXUS_KEYRING: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := runNexus(t, "", "keys", "rotate", "--db", db); code == 0 || !strings.Contains(errOut, "NEXUS_KEYRING") {
		t.Fatalf("rotate a keyring from NEXUS_KEYRING: %d %s", code, errOut)
	}
}
