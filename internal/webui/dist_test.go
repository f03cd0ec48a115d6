package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestWebDistIsFresh checks that the committed build (dist/) is what web/
// builds to now: npm ci (only when web/node_modules does not hold exactly
// what web/package-lock.json pins) and npm run build into a temporary
// directory, then the two trees compared file by file. Without node and
// npm it fails under CI and is skipped loudly elsewhere (scripts/install-
// test-tools.sh installs web/'s packages).
func TestWebDistIsFresh(t *testing.T) {
	root := testtools.RepoRoot(t)
	web := filepath.Join(root, "web")
	path := os.Getenv("PATH")
	if node22 := filepath.Join(testtools.Dir(t), "node22", "node_modules", ".bin"); isDir(node22) {
		path = node22 + string(os.PathListSeparator) + path
	}
	env := append(os.Environ(), "PATH="+path, "NO_UPDATE_NOTIFIER=1", "npm_config_fund=false", "npm_config_audit=false")
	npm, err := lookPath("npm", path)
	if err != nil {
		msg := "SKIPPED: node and npm are needed to build web/ and compare it with the committed dist/ (" + err.Error() + "); run scripts/install-test-tools.sh"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(npm, args...)
		cmd.Dir, cmd.Env = web, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %s in web/: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := installed(web); err != nil {
		t.Logf("web/node_modules: %v; running npm ci", err)
		run("ci", "--no-audit", "--no-fund", "--loglevel=error")
	}
	out := t.TempDir()
	run("run", "build", "--silent", "--", "--outDir", out, "--emptyOutDir", "--logLevel", "warn")
	want, err := tree(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tree(filepath.Join(root, "internal", "webui", "dist"))
	if err != nil {
		t.Fatal(err)
	}
	const fix = "; rebuild with: cd web && npm ci && npm run build, and commit internal/webui/dist"
	for name, b := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("dist/%s is missing%s", name, fix)
		case !bytes.Equal(g, b):
			t.Errorf("dist/%s differs from a fresh build%s", name, fix)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("dist/%s is not in a fresh build%s", name, fix)
		}
	}
}

// TestWebDistHasNoInlineCode checks that the committed page loads only files
// under Prefix and has no inline script or style, which the
// Content-Security-Policy would refuse.
func TestWebDistHasNoInlineCode(t *testing.T) {
	page, err := dist.ReadFile("dist/index.html")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, bad := range []string{"<style", "style=", "<script>", "javascript:"} {
		if strings.Contains(s, bad) {
			t.Errorf("dist/index.html contains %q", bad)
		}
	}
	for _, attr := range []string{`src="`, `href="`} {
		for rest := s; ; {
			i := strings.Index(rest, attr)
			if i < 0 {
				break
			}
			rest = rest[i+len(attr):]
			url := rest[:strings.IndexByte(rest, '"')]
			if !strings.HasPrefix(url, Prefix) {
				t.Errorf("dist/index.html refers to %q, outside %s", url, Prefix)
			}
		}
	}
	if !strings.Contains(s, `<script type="module" crossorigin src="/ui/assets/`) {
		t.Errorf("dist/index.html loads no script from /ui/assets/:\n%s", s)
	}
}

// installed reports (as an error) whether web/node_modules holds every
// package web/package-lock.json pins at its version, as npm's record of
// what it installed (node_modules/.package-lock.json) says.
func installed(web string) error {
	type lock struct {
		Packages map[string]struct {
			Version  string `json:"version"`
			Optional bool   `json:"optional"`
		} `json:"packages"`
	}
	read := func(name string) (lock, error) {
		var l lock
		b, err := os.ReadFile(name)
		if err != nil {
			return l, err
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return l, fmt.Errorf("%s: %w", name, err)
		}
		return l, nil
	}
	want, err := read(filepath.Join(web, "package-lock.json"))
	if err != nil {
		return err
	}
	have, err := read(filepath.Join(web, "node_modules", ".package-lock.json"))
	if err != nil {
		return err
	}
	for name, p := range want.Packages {
		if name == "" || p.Optional {
			continue
		}
		if h, ok := have.Packages[name]; !ok || h.Version != p.Version {
			return fmt.Errorf("%s is not installed at %s", name, p.Version)
		}
	}
	return nil
}

// tree reads every file under dir, by slash-separated relative name.
func tree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return files, nil
}

// lookPath finds file in the directories of path.
func lookPath(file, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH", file)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
