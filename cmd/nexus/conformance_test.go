package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
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

// TestConformance runs the MCP conformance suite's protocol-level server
// scenarios against a fresh "nexus serve" each. Any check with status
// FAILURE fails the scenario with the check's name and error message.
func TestConformance(t *testing.T) {
	suite := testtools.Conformance(t)
	for _, path := range []string{"/mcp", "/mcp/agents", "/mcp/bounded"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) { runConformance(t, suite, path) })
	}
}

// runConformance runs every protocol scenario against one surface's path.
func runConformance(t *testing.T, suite *testtools.Suite, path string) {
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			base := startServe(t)
			outDir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
			defer cancel()
			start := time.Now()
			out, code, err := suite.Run(ctx, "server", "--url", base+path, "--scenario", scenario, "--output-dir", outDir)
			if err != nil {
				t.Fatalf("%s: %v\noutput:\n%s", scenario, err, out)
			}
			checks, err := testtools.ReadChecks(outDir)
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
					t.Errorf("%s: check %s (%s) FAILED: %s%s", scenario, c.Name, c.ID, msg, testtools.DetailsSuffix(c.Details))
				case "WARNING":
					t.Logf("%s: check %s (%s) WARNING: %s%s", scenario, c.Name, c.ID, c.ErrorMessage, testtools.DetailsSuffix(c.Details))
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

// TestConformanceScenarioListIsComplete guards against a suite upgrade that
// renames or drops a scenario listed in conformanceScenarios, which would
// otherwise surface only as a confusing "Unknown scenario" run failure.
func TestConformanceScenarioListIsComplete(t *testing.T) {
	suite := testtools.Conformance(t)
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	offered, err := suite.ServerScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range conformanceScenarios {
		if !slices.Contains(offered, s) {
			t.Errorf("scenario %q is not offered by the installed conformance suite", s)
		}
	}
}
