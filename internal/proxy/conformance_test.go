package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/config"
)

// The conformance test runs every server scenario of the MCP conformance
// suite (npm @modelcontextprotocol/conformance, the version pinned in
// test/conformance/package.json, installed by scripts/install-test-tools.sh)
// against the Go SDK's conformance server ("everything-server") twice:
// directly, and through the proxy, with the server as a stdio child of the
// proxy. Every check that succeeds directly must succeed through the proxy.

// everythingServer is the SDK's conformance server package.
const everythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// conformanceTimeout bounds one run of the whole suite.
const conformanceTimeout = 5 * time.Minute

type conformanceTools struct{ node, cli string }

// repoRoot is the repository root; go test runs in internal/proxy.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// findConformanceTools locates Node 22 and the suite under NEXUS_TOOLS_DIR
// (default <repo>/.cache/tools; relative to the repo root). Missing tools
// skip the test, or fail it when CI is set.
func findConformanceTools(t testing.TB) conformanceTools {
	t.Helper()
	root := repoRoot(t)
	dir := os.Getenv("NEXUS_TOOLS_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "tools")
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	tools := conformanceTools{
		node: filepath.Join(dir, "node22", "node_modules", ".bin", "node"),
		cli:  filepath.Join(dir, "conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	if err := tools.check(root); err != nil {
		msg := fmt.Sprintf("MCP conformance tools unusable in %s: %v; run scripts/install-test-tools.sh", dir, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return tools
}

// check verifies that node is Node >= 22 and that the suite is the pinned
// version.
func (c conformanceTools) check(root string) error {
	for _, p := range []string{c.node, c.cli} {
		if _, err := os.Stat(p); err != nil {
			return err
		}
	}
	out, err := exec.Command(c.node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %v", c.node, err)
	}
	var major int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d.", &major); err != nil || major < 22 {
		return fmt.Errorf("%s is %s, need Node >= 22", c.node, strings.TrimSpace(string(out)))
	}
	var pin struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(root, "test", "conformance", "package.json"), &pin); err != nil {
		return err
	}
	var installed struct {
		Version string `json:"version"`
	}
	if err := readJSON(filepath.Join(filepath.Dir(filepath.Dir(c.cli)), "package.json"), &installed); err != nil {
		return err
	}
	if want := pin.Dependencies["@modelcontextprotocol/conformance"]; installed.Version != want {
		return fmt.Errorf("installed @modelcontextprotocol/conformance is %q, test/conformance/package.json pins %q", installed.Version, want)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// conformanceCheck is one entry of a scenario's checks.json.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// ansiEscape matches the colour codes the suite prints.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// runSuite runs every server scenario against url and returns the checks by
// scenario.
func (c conformanceTools) runSuite(t *testing.T, url string) (map[string][]conformanceCheck, string) {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.node, c.cli, "server", "--url", url, "--suite", "all", "--output-dir", outDir)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := ansiEscape.ReplaceAllString(out.String(), "")
	var ee *exec.ExitError
	if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
		t.Fatalf("conformance suite against %s: %v\n%s", url, err, text)
	}
	paths, err := filepath.Glob(filepath.Join(outDir, "server-*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)
	results := map[string][]conformanceCheck{}
	for _, p := range paths {
		scenario := stamp.ReplaceAllString(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "server-"), "")
		var checks []conformanceCheck
		if err := readJSON(p, &checks); err != nil {
			t.Fatal(err)
		}
		results[scenario] = checks
	}
	if len(results) == 0 {
		t.Fatalf("the suite against %s recorded no scenario:\n%s", url, text)
	}
	return results, text
}

// listScenarios returns the suite's server scenarios.
func (c conformanceTools) listScenarios(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(c.node, c.cli, "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --server: %v\n%s", err, out)
	}
	var names []string
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(string(out), ""), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			if f := strings.Fields(name); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	return names
}

// buildEverythingServer builds the SDK's conformance server from the module
// cache.
func buildEverythingServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	cmd := exec.Command("go", "build", "-o", bin, everythingServer)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", everythingServer, err, out)
	}
	return bin
}

// freeAddr returns a loopback address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// startDirect runs the conformance server on Streamable HTTP, stateful like
// the proxy (its default, stateless, cannot make server-to-client requests).
func startDirect(t *testing.T, bin string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "-http", addr, "-stateless=false")
	cmd.Stderr = devNull(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	url := "http://" + addr + "/"
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conformance server did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConformanceThroughProxy compares the suite's results against the
// conformance server directly and through the proxy.
func TestConformanceThroughProxy(t *testing.T) {
	tools := findConformanceTools(t)
	bin := buildEverythingServer(t)

	directURL := startDirect(t, bin)
	p := New(&config.Config{Toolboxes: map[string]*config.Toolbox{"t": {
		Name:    "t",
		Servers: map[string]*config.Server{"s": {Transport: config.Stdio, Command: bin}},
	}}}, Options{Logger: testLogger(t), Stderr: devNull(t)})
	ts := httptest.NewServer(p)
	defer func() {
		p.Close()
		ts.Close()
	}()
	proxyURL := ts.URL + "/mcp/servers/t/s"

	type run struct {
		results map[string][]conformanceCheck
		out     string
	}
	var dr, pr run
	dr.results, dr.out = tools.runSuite(t, directURL)
	pr.results, pr.out = tools.runSuite(t, proxyURL)

	scenarios := tools.listScenarios(t)
	for s := range dr.results {
		if !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	var summary strings.Builder
	fmt.Fprintf(&summary, "%-32s %-24s %-24s\n", "scenario", "direct", "through the proxy")
	for _, s := range scenarios {
		d, pc := dr.results[s], pr.results[s]
		fmt.Fprintf(&summary, "%-32s %-24s %-24s\n", s, tally(d), tally(pc))
		if d == nil {
			t.Errorf("%s: no result directly", s)
			continue
		}
		if pc == nil {
			t.Errorf("%s: no result through the proxy", s)
			continue
		}
		for _, c := range d {
			if c.Status == "FAILURE" {
				t.Logf("%s: check %s fails directly too (a gap of the SDK's server): %s", s, c.ID, c.ErrorMessage)
			}
		}
		// Every check that succeeds directly succeeds through the proxy
		// (as many times, for checks recorded more than once).
		for _, id := range checkIDs(d) {
			if want, got := count(d, id, "SUCCESS"), count(pc, id, "SUCCESS"); got < want {
				for _, c := range pc {
					if c.ID == id && c.Status != "SUCCESS" {
						t.Errorf("%s: check %s is %s through the proxy, SUCCESS directly: %s%s", s, id, c.Status, c.ErrorMessage, detailsSuffix(c.Details))
					}
				}
				if count(pc, id, "") == 0 {
					t.Errorf("%s: check %s succeeds directly but is missing through the proxy", s, id)
				}
			}
		}
		// Nothing fails through the proxy that does not fail directly.
		for _, c := range pc {
			if c.Status == "FAILURE" && count(d, c.ID, "FAILURE") == 0 {
				t.Errorf("%s: check %s FAILS through the proxy only: %s%s", s, c.ID, c.ErrorMessage, detailsSuffix(c.Details))
			}
			if c.Status == "WARNING" {
				t.Logf("%s: check %s WARNING through the proxy: %s", s, c.ID, c.ErrorMessage)
			}
		}
	}
	t.Logf("conformance results (SUCCESS/FAILURE/WARNING/other):\n%s", summary.String())
	if t.Failed() {
		t.Logf("suite output through the proxy:\n%s", pr.out)
	}
}

func checkIDs(checks []conformanceCheck) []string {
	var ids []string
	for _, c := range checks {
		if !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// count counts the checks with id and status ("" for any status).
func count(checks []conformanceCheck, id, status string) int {
	n := 0
	for _, c := range checks {
		if c.ID == id && (status == "" || c.Status == status) {
			n++
		}
	}
	return n
}

func tally(checks []conformanceCheck) string {
	if checks == nil {
		return "-"
	}
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d/%d/%d/%d", n["SUCCESS"], n["FAILURE"], n["WARNING"], len(checks)-n["SUCCESS"]-n["FAILURE"]-n["WARNING"])
}

// detailsSuffix renders a check's details compactly.
func detailsSuffix(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return ""
	}
	s := b.String()
	if len(s) > 800 {
		s = s[:800] + "…"
	}
	return " (details: " + s + ")"
}
