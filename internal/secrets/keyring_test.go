package secrets_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/secrets"
)

func TestLoadOrCreateCreates0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "keyring.json")
	k, err := secrets.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if k.Current() != 1 || k.Versions() != 1 {
		t.Fatalf("new keyring: current %d, versions %d", k.Current(), k.Versions())
	}
	checkMode(t, path)
	var doc struct {
		Format  string
		Current int
		Keys    []struct {
			Version int
			Created string
			Key     string
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "nexus-keyring/1" || doc.Current != 1 || len(doc.Keys) != 1 || doc.Keys[0].Version != 1 ||
		len(doc.Keys[0].Key) != 44 || doc.Keys[0].Created == "" {
		t.Fatalf("keyring file: %+v", doc)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("files left beside the keyring: %v", entries)
	}

	// The second run loads the same keyring.
	s, _ := k.Seal([]byte("secret"), aad)
	again, err := secrets.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open(s, aad); err != nil || string(got) != "secret" {
		t.Fatalf("reloaded keyring: Open = %q, %v", got, err)
	}
}

func TestLoadRefusesReadableByOthers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o700 | 0o044} {
		path := filepath.Join(t.TempDir(), "keyring.json")
		if _, err := secrets.LoadOrCreate(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		for _, load := range []func(string) (*secrets.Keyring, error){secrets.Load, secrets.LoadOrCreate} {
			_, err := load(path)
			if !errors.Is(err, secrets.ErrInsecureFile) || !strings.Contains(err.Error(), "chmod 600 "+path) {
				t.Errorf("mode %04o: err = %v, want ErrInsecureFile saying chmod 600", mode, err)
			}
		}
		if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Load(path); err != nil {
			t.Errorf("mode 0400 refused: %v", err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := secrets.Load(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := secrets.Load(dir); !errors.Is(err, secrets.ErrBadKeyring) {
		t.Errorf("a directory: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format": "nexus-keyring/1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func(string) (*secrets.Keyring, error){secrets.Load, secrets.LoadOrCreate} {
		if _, err := load(bad); !errors.Is(err, secrets.ErrBadKeyring) {
			t.Errorf("invalid file: %v", err)
		}
	}
	if got := readFile(t, bad); got != `{"format": "nexus-keyring/1"}` {
		t.Errorf("LoadOrCreate overwrote an invalid file: %q", got)
	}
}

func TestSaveAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keyring.json")
	k, err := secrets.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := k.Seal([]byte("one"), aad)

	// Readers never see a partial file while the keyring is rotated and saved.
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := secrets.Load(path); err != nil {
				t.Errorf("Load during Save: %v", err)
				return
			}
		}
	})
	for range 50 {
		k.Rotate()
		if err := k.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()

	checkMode(t, path)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	loaded, err := secrets.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Current() != 51 || loaded.Versions() != 51 {
		t.Fatalf("saved keyring: current %d, versions %d", loaded.Current(), loaded.Versions())
	}
	s51, _ := loaded.Seal([]byte("fifty-one"), aad)
	if got, err := loaded.Open(s1, aad); err != nil || string(got) != "one" {
		t.Fatalf("version 1 after save: %q, %v", got, err)
	}
	if got, err := k.Open(s51, aad); err != nil || string(got) != "fifty-one" {
		t.Fatalf("the saved keyring is not the same: %q, %v", got, err)
	}

	// Saving over a file that others could read leaves a 0600 file.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := k.Save(path); err != nil {
		t.Fatal(err)
	}
	checkMode(t, path)

	// A failed save leaves nothing behind.
	if err := k.Save(filepath.Join(dir, "missing", "keyring.json")); err == nil {
		t.Fatal("Save into a missing directory succeeded")
	}
}

func TestConcurrentLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyring.json")
	const n = 8
	prints := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := secrets.LoadOrCreate(path)
			if err != nil {
				t.Error(err)
				return
			}
			prints[i] = k.Fingerprint([]byte("probe"))
		})
	}
	wg.Wait()
	for i := range n {
		if prints[i] != prints[0] {
			t.Fatalf("concurrent first runs got different keyrings: %v", prints)
		}
	}
}

func TestFromEnv(t *testing.T) {
	k := secrets.New()
	k.Rotate()
	k.Rotate()
	doc := saved(t, k)
	fromEnv, err := secrets.FromEnv(doc)
	if err != nil {
		t.Fatal(err)
	}
	if fromEnv.Current() != 3 || fromEnv.Versions() != 3 {
		t.Fatalf("FromEnv: current %d, versions %d", fromEnv.Current(), fromEnv.Versions())
	}
	s, _ := k.Seal([]byte("replica"), aad)
	if got, err := fromEnv.Open(s, aad); err != nil || string(got) != "replica" {
		t.Fatalf("FromEnv keyring: Open = %q, %v", got, err)
	}

	key1 := `"` + between(doc, `"key": "`, `"`) + `"`
	zero := `"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="`
	one := `{"format":"nexus-keyring/1","current":1,"keys":[{"version":1,"created":"2026-01-01T00:00:00Z","key":` + key1 + `}]}`
	if _, err := secrets.FromEnv("  \n" + one + "\n"); err != nil {
		t.Fatalf("minimal keyring with spaces: %v", err)
	}
	withCurrent := func(c string) string { return strings.Replace(one, `"current":1`, `"current":`+c, 1) }
	withKey := func(key string) string { return strings.Replace(one, key1, key, 1) }
	for _, tc := range []struct{ name, value, want string }{
		{"empty", "", "empty"},
		{"blank", " \n\t", "empty"},
		{"not JSON", "NEXUS", "not valid JSON"},
		{"a file name", "/var/lib/nexus/keyring.json", "not valid JSON"},
		{"array", "[]", "wrong type"},
		{"truncated", one[:len(one)-3], "truncated"},
		{"two documents", one + one, "content after"},
		{"no format", strings.Replace(one, `"format":"nexus-keyring/1",`, "", 1), "format"},
		{"other format", strings.Replace(one, "nexus-keyring/1", "nexus-keyring/2", 1), "format"},
		{"unknown field", strings.Replace(one, `"current":1`, `"curent":1`, 1), `unknown field "curent"`},
		{"no keys", `{"format":"nexus-keyring/1","current":1,"keys":[]}`, "no keys"},
		{"current 0", withCurrent("0"), "current version 0"},
		{"current too high", withCurrent("2"), "current version 2"},
		{"current a string", withCurrent(`"1"`), `field "current"`},
		{"version 0", strings.Replace(one, `"version":1`, `"version":0`, 1), "found 0"},
		{"gap", strings.Replace(one, `"version":1`, `"version":2`, 1), "found 2"},
		{"repeat", strings.Replace(one, "}]}", "},"+one[strings.Index(one, `{"version"`):len(one)-2]+"]}", 1), "found 1"},
		{"key not base64", withKey(`"not base64!"`), "not base64"},
		{"key too short", withKey(`"AAEC"`), "not base64 of 32 bytes"},
		{"key url alphabet", withKey(`"` + strings.Repeat("_", 43) + `="`), "not base64"},
		{"key all zeros", withKey(zero), "all zeros"},
		{"key a number", withKey("12"), `field "keys.key"`},
		{"bad time", strings.Replace(one, "2026-01-01T00:00:00Z", "yesterday", 1), "not a keyring document"},
		{"too large", one + strings.Repeat(" ", 1<<20), "larger than"},
	} {
		_, err := secrets.FromEnv(tc.value)
		if !errors.Is(err, secrets.ErrBadKeyring) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrBadKeyring mentioning %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), strings.Trim(key1, `"`)[:8]) {
			t.Errorf("%s: error quotes the key: %v", tc.name, err)
		}
	}
}

func TestKeyringVersionsInAnyOrder(t *testing.T) {
	k := secrets.New()
	k.Rotate()
	var doc map[string]any
	if err := json.Unmarshal([]byte(saved(t, k)), &doc); err != nil {
		t.Fatal(err)
	}
	keys := doc["keys"].([]any)
	keys[0], keys[1] = keys[1], keys[0]
	swapped, _ := json.Marshal(doc)
	fromEnv, err := secrets.FromEnv(string(swapped))
	if err != nil {
		t.Fatal(err)
	}
	if fromEnv.Fingerprint([]byte("x")) != k.Fingerprint([]byte("x")) {
		t.Fatal("key order changed version 1")
	}
}

// saved returns the keyring's file content.
func saved(t testing.TB, k *secrets.Keyring) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keyring.json")
	if err := k.Save(path); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

// cloneKeyring returns an independent copy of k, through its file.
func cloneKeyring(t testing.TB, k *secrets.Keyring) *secrets.Keyring {
	t.Helper()
	c, err := secrets.FromEnv(saved(t, k))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkMode(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %04o, want 0600", path, info.Mode().Perm())
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
