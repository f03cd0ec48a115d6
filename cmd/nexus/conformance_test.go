package main

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

// conformanceScenarios are the protocol-level server scenarios of the MCP
// conformance suite (npm @modelcontextprotocol/conformance, pinned in
// test/conformance/package.json) that "nexus serve" must pass. The other
// scenarios of the suite exercise features of the suite's own reference
// server (fixed tools, resources, prompts, sampling...) that Nexus does not
// offer.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"logging-set-level",
	"dns-rebinding-protection",
}

// conformanceTimeout bounds one scenario run (the suite plus its server).
const conformanceTimeout = 60 * time.Second

// ansiEscape matches the terminal colour codes the suite prints even when
// its output is not a terminal.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// conformanceCheck is one entry of the checks.json the suite writes.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// conformanceTools are the Node 22 binary and the suite's CLI entry point
// installed by scripts/install-test-tools.sh.
type conformanceTools struct {
	node, cli string
}

// repoRoot is the repository root; go test runs in cmd/nexus.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// findConformanceTools locates the tools under NEXUS_TOOLS_DIR (default
// <repo>/.cache/tools; a relative value is taken from the repo root, where
// the install script is normally run). When they are missing or stale it
// skips the test, or fails it under CI so that CI never silently skips.
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

// check verifies that node is Node >= 22 and that the installed suite is the
// version pinned in test/conformance/package.json.
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
	version := strings.TrimSpace(string(out))
	var major int
	if _, err := fmt.Sscanf(version, "v%d.", &major); err != nil || major < 22 {
		return fmt.Errorf("%s is %s, need Node >= 22", c.node, version)
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

// run runs the suite's CLI with args and returns its combined output and exit
// code (-1 when it could not run to completion).
func (c conformanceTools) run(ctx context.Context, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, c.node, append([]string{c.cli}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := ansiEscape.ReplaceAllString(out.String(), "")
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return text, -1, fmt.Errorf("conformance CLI: %v", ctx.Err())
	case errors.As(err, &ee):
		return text, ee.ExitCode(), nil
	case err != nil:
		return text, -1, err
	}
	return text, 0, nil
}

// TestConformance runs the MCP conformance suite's protocol-level server
// scenarios against a fresh "nexus serve" each. Any check with status
// FAILURE fails the scenario with the check's name and error message.
func TestConformance(t *testing.T) {
	tools := findConformanceTools(t)
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) { runConformance(t, tools, path) })
	}
}

// runConformance runs every protocol scenario against one surface's path.
func runConformance(t *testing.T, tools conformanceTools, path string) {
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			base := startServe(t)
			outDir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
			defer cancel()
			start := time.Now()
			out, code, err := tools.run(ctx, "server", "--url", base+path, "--scenario", scenario, "--output-dir", outDir)
			if err != nil {
				t.Fatalf("%s: %v\noutput:\n%s", scenario, err, out)
			}
			checks, err := readConformanceChecks(outDir)
			if err != nil {
				t.Fatalf("%s: %v (exit code %d)\noutput:\n%s", scenario, err, code, out)
			}

			counts := map[string]int{}
			failed := 0
			for _, c := range checks {
				counts[c.Status]++
				switch c.Status {
				case "FAILURE":
					failed++
					msg := c.ErrorMessage
					if msg == "" {
						msg = c.Description
					}
					t.Errorf("%s: check %s (%s) FAILED: %s%s", scenario, c.Name, c.ID, msg, detailsSuffix(c.Details))
				case "WARNING":
					t.Logf("%s: check %s (%s) WARNING: %s%s", scenario, c.Name, c.ID, c.ErrorMessage, detailsSuffix(c.Details))
				}
			}
			t.Logf("%s: %d checks in %v: %d SUCCESS, %d WARNING, %d FAILURE, %d other",
				scenario, len(checks), time.Since(start).Round(time.Millisecond),
				counts["SUCCESS"], counts["WARNING"], counts["FAILURE"],
				len(checks)-counts["SUCCESS"]-counts["WARNING"]-counts["FAILURE"])
			switch {
			case len(checks) == 0:
				t.Errorf("%s: the suite recorded no checks", scenario)
			case counts["SUCCESS"] == 0 && failed == 0:
				t.Errorf("%s: no check succeeded", scenario)
			case code != 0 && failed == 0:
				// The CLI exits 1 exactly when a check failed; anything
				// else is the suite itself breaking.
				t.Errorf("%s: conformance CLI exited %d without a failed check", scenario, code)
			}
			if t.Failed() {
				t.Logf("%s: conformance output:\n%s", scenario, out)
			}
		})
	}
}

// readConformanceChecks reads the checks.json the CLI wrote for a single
// scenario under outDir (in a directory named server-<scenario>-<time>).
func readConformanceChecks(outDir string) ([]conformanceCheck, error) {
	paths, err := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) != 1 {
		return nil, fmt.Errorf("want one checks.json under %s, found %d", outDir, len(paths))
	}
	var checks []conformanceCheck
	if err := readJSON(paths[0], &checks); err != nil {
		return nil, err
	}
	return checks, nil
}

// detailsSuffix renders a check's details compactly for a failure message.
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

// TestConformanceScenarioListIsComplete guards against a suite upgrade that
// renames or drops a scenario listed in conformanceScenarios, which would
// otherwise surface only as a confusing "Unknown scenario" run failure.
func TestConformanceScenarioListIsComplete(t *testing.T) {
	tools := findConformanceTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	out, code, err := tools.run(ctx, "list", "--server")
	if err != nil || code != 0 {
		t.Fatalf("conformance list --server: exit %d, %v\n%s", code, err, out)
	}
	offered := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		// "  - server-initialize [2025-06-18,2025-11-25]"
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "- "); ok {
			if f := strings.Fields(name); len(f) > 0 {
				offered[f[0]] = true
			}
		}
	}
	if len(offered) == 0 {
		t.Fatalf("conformance list --server listed no scenarios:\n%s", out)
	}
	for _, s := range conformanceScenarios {
		if !offered[s] {
			t.Errorf("scenario %q is not offered by the installed conformance suite", s)
		}
	}
}
