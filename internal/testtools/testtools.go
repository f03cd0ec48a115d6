// Package testtools is test support, imported by tests only. It holds the
// helpers many packages' tests share (Eventually and EventuallyErr, which
// wait for a condition instead of sleeping; Golden; FreeAddr; Percentile),
// and it finds the tools that scripts/install-test-tools.sh installs for the
// end-to-end tests (Node 22, the MCP conformance suite, npm MCP servers) and
// runs the conformance suite.
//
// The tools live in NEXUS_TOOLS_DIR, by default <repo>/.cache/tools. When a
// tool is missing or stale the test is skipped, or failed when the
// environment variable CI is set, so that CI never silently skips.
package testtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// conformancePackage is the npm package of the MCP conformance suite, whose
// version test/conformance/package.json pins.
const conformancePackage = "@modelcontextprotocol/conformance"

// RepoRoot returns the repository root: the nearest directory at or above
// the working directory that holds go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod at or above %s", wd)
		}
		dir = parent
	}
}

// Dir returns the directory the tools are installed in: NEXUS_TOOLS_DIR,
// taken from the repository root when relative (the install script is
// normally run there), or <repo>/.cache/tools when unset.
func Dir(tb testing.TB) string {
	tb.Helper()
	root := RepoRoot(tb)
	dir := os.Getenv("NEXUS_TOOLS_DIR")
	switch {
	case dir == "":
		return filepath.Join(root, ".cache", "tools")
	case !filepath.IsAbs(dir):
		return filepath.Join(root, dir)
	}
	return dir
}

// require stops tb because a tool is unusable, for the reason msg: it skips
// the test, or fails it when CI is set.
func require(tb testing.TB, msg string) {
	tb.Helper()
	msg += "; run scripts/install-test-tools.sh"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// Node returns the path of the Node binary, checked to be Node >= 22.
func Node(tb testing.TB) string {
	tb.Helper()
	dir := Dir(tb)
	node := filepath.Join(dir, "node22", "node_modules", ".bin", "node")
	if err := checkNode(node); err != nil {
		require(tb, fmt.Sprintf("Node 22 unusable in %s: %v", dir, err))
	}
	return node
}

// checkNode verifies that node is Node >= 22.
func checkNode(node string) error {
	if _, err := os.Stat(node); err != nil {
		return err
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %v", node, err)
	}
	version := strings.TrimSpace(string(out))
	var major int
	if _, err := fmt.Sscanf(version, "v%d.", &major); err != nil || major < 22 {
		return fmt.Errorf("%s is %s, need Node >= 22", node, version)
	}
	return nil
}

// MemoryServer returns the command of the npm MCP server
// @modelcontextprotocol/server-memory: node runs script over stdio.
func MemoryServer(tb testing.TB) (node, script string) {
	tb.Helper()
	node = Node(tb)
	dir := Dir(tb)
	script = filepath.Join(dir, "peers", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		require(tb, fmt.Sprintf("npm MCP server @modelcontextprotocol/server-memory missing in %s: %v", dir, err))
	}
	return node, script
}

// Browser returns what the web UI's browser test needs: Node, the
// directory of playwright-core's node_modules, and Debian's Chromium.
func Browser(tb testing.TB) (node, modules, chromium string) {
	tb.Helper()
	node = Node(tb)
	modules = filepath.Join(Dir(tb), "browser", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "playwright-core", "package.json")); err != nil {
		require(tb, fmt.Sprintf("playwright-core missing in %s: %v", modules, err))
	}
	chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		require(tb, "Debian's chromium is missing (apt-get install chromium)")
	}
	return node, modules, chromium
}

// Suite is the MCP conformance suite's command-line interface.
type Suite struct {
	node, cli string
}

// Conformance returns the MCP conformance suite, checked to be the version
// pinned in test/conformance/package.json.
func Conformance(tb testing.TB) *Suite {
	tb.Helper()
	s := &Suite{node: Node(tb)}
	dir := Dir(tb)
	s.cli = filepath.Join(dir, "conformance", "node_modules", conformancePackage, "dist", "index.js")
	if err := checkPin(RepoRoot(tb), s.cli); err != nil {
		require(tb, fmt.Sprintf("MCP conformance tools unusable in %s: %v", dir, err))
	}
	return s
}

// checkPin verifies that the suite whose entry point is cli is the version
// pinned in test/conformance/package.json under root.
func checkPin(root, cli string) error {
	if _, err := os.Stat(cli); err != nil {
		return err
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
	if err := readJSON(filepath.Join(filepath.Dir(filepath.Dir(cli)), "package.json"), &installed); err != nil {
		return err
	}
	if want := pin.Dependencies[conformancePackage]; installed.Version != want {
		return fmt.Errorf("installed %s is %q, test/conformance/package.json pins %q", conformancePackage, installed.Version, want)
	}
	return nil
}

// ansiEscape matches the terminal colour codes the suite prints even when
// its output is not a terminal.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Run runs the suite's CLI with args and returns its combined output, without
// colour codes, and its exit code. The exit code is -1, and err non-nil, when
// the CLI could not run to completion (ctx ended, or it did not start).
func (s *Suite) Run(ctx context.Context, args ...string) (output string, exitCode int, err error) {
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.cli}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	OwnGroup(cmd) // cancelled, all of it ends
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	output = ansiEscape.ReplaceAllString(out.String(), "")
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return output, -1, fmt.Errorf("conformance CLI: %v", ctx.Err())
	case errors.As(err, &ee):
		return output, ee.ExitCode(), nil
	case err != nil:
		return output, -1, err
	}
	return output, 0, nil
}

// ServerScenarios returns the names of the suite's server scenarios
// ("conformance list --server"). It fails when the suite lists none.
func (s *Suite) ServerScenarios(ctx context.Context) ([]string, error) {
	out, code, err := s.Run(ctx, "list", "--server")
	if err != nil || code != 0 {
		return nil, fmt.Errorf("conformance list --server: exit %d, %v\n%s", code, err, out)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// "  - server-initialize [2025-06-18,2025-11-25]"
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			if f := strings.Fields(name); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("conformance list --server listed no scenarios:\n%s", out)
	}
	return names, nil
}

// Check is one entry of the checks.json the suite writes for a scenario.
type Check struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// ReadChecks reads the checks.json the suite wrote for a run of a single
// scenario with --output-dir outDir.
func ReadChecks(outDir string) ([]Check, error) {
	paths, err := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) != 1 {
		return nil, fmt.Errorf("want one checks.json under %s, found %d", outDir, len(paths))
	}
	var checks []Check
	if err := readJSON(paths[0], &checks); err != nil {
		return nil, err
	}
	return checks, nil
}

// runStamp matches the time the suite appends to a scenario's directory.
var runStamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// ReadResults reads the checks.json files the suite wrote for a run of
// server scenarios with --output-dir outDir (one in a directory named
// server-<scenario>-<time> for each scenario) and returns the checks by
// scenario.
func ReadResults(outDir string) (map[string][]Check, error) {
	paths, err := filepath.Glob(filepath.Join(outDir, "server-*", "checks.json"))
	if err != nil {
		return nil, err
	}
	results := make(map[string][]Check, len(paths))
	for _, p := range paths {
		scenario := runStamp.ReplaceAllString(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "server-"), "")
		var checks []Check
		if err := readJSON(p, &checks); err != nil {
			return nil, err
		}
		results[scenario] = checks
	}
	return results, nil
}

// DetailsSuffix renders a check's details compactly for a failure message:
// " (details: …)", cut at 800 bytes, or "" when there are none.
func DetailsSuffix(raw json.RawMessage) string {
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
