package testtools

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Running the MCP conformance suite's server scenarios against a server
// directly and through Nexus, and comparing the two.

// EverythingServer is the Go SDK's conformance server package.
const EverythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// SuiteTimeout bounds one run of the whole suite.
const SuiteTimeout = 5 * time.Minute

// SuiteRun is the outcome of one run of every server scenario: the checks
// by scenario, and the suite's output.
type SuiteRun struct {
	Results map[string][]Check
	Out     string
}

// RunAll runs every server scenario of the suite against url.
func (s *Suite) RunAll(t *testing.T, url string) SuiteRun {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), SuiteTimeout)
	defer cancel()
	out, _, err := s.Run(ctx, "server", "--url", url, "--suite", "all", "--output-dir", outDir)
	if err != nil {
		t.Fatalf("conformance suite against %s: %v\n%s", url, err, out)
	}
	results, err := ReadResults(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatalf("the suite against %s recorded no scenario:\n%s", url, out)
	}
	return SuiteRun{Results: results, Out: out}
}

// BuildEverythingServer builds the SDK's conformance server from the module
// cache.
func BuildEverythingServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	cmd := exec.Command("go", "build", "-o", bin, EverythingServer)
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", EverythingServer, err, out)
	}
	return bin
}

// StartEverythingServer runs the conformance server bin on Streamable HTTP,
// stateful (its default, stateless, cannot make server-to-client
// requests), until the test ends, and returns its URL.
func StartEverythingServer(t *testing.T, bin string) string {
	t.Helper()
	addr := FreeAddr(t)
	cmd := exec.Command(bin, "-http", addr, "-stateless=false")
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devNull.Close() })
	cmd.Stderr = devNull
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	EventuallyErr(t, 10*time.Second, "the conformance server to listen on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	return "http://" + addr + "/"
}

// CompareRuns checks that every check that succeeds directly (dr) succeeds
// through Nexus (pr), and that nothing fails through Nexus that does not
// fail directly, except in the scenarios of known, each with its reason
// (logged).
func CompareRuns(t *testing.T, suite *Suite, dr, pr SuiteRun, known map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), SuiteTimeout)
	defer cancel()
	scenarios, err := suite.ServerScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for s := range dr.Results {
		if !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	var summary strings.Builder
	fmt.Fprintf(&summary, "%-32s %-24s %-24s\n", "scenario", "direct", "through Nexus")
	passed, total := 0, 0
	for _, s := range scenarios {
		d, pc := dr.Results[s], pr.Results[s]
		fmt.Fprintf(&summary, "%-32s %-24s %-24s\n", s, tally(d), tally(pc))
		if d == nil {
			t.Errorf("%s: no result directly", s)
			continue
		}
		if pc == nil {
			t.Errorf("%s: no result through Nexus", s)
			continue
		}
		total++
		if why, ok := known[s]; ok {
			t.Logf("%s: not compared: %s", s, why)
			continue
		}
		bad := false
		fail := func(format string, args ...any) {
			t.Helper()
			bad = true
			t.Errorf(format, args...)
		}
		for _, c := range d {
			if c.Status == "FAILURE" {
				t.Logf("%s: check %s fails directly too (a gap of the SDK's server): %s", s, c.ID, c.ErrorMessage)
			}
		}
		// Every check that succeeds directly succeeds through Nexus (as
		// many times, for checks recorded more than once).
		for _, id := range checkIDs(d) {
			if want, got := count(d, id, "SUCCESS"), count(pc, id, "SUCCESS"); got < want {
				for _, c := range pc {
					if c.ID == id && c.Status != "SUCCESS" {
						fail("%s: check %s is %s through Nexus, SUCCESS directly: %s%s", s, id, c.Status, c.ErrorMessage, DetailsSuffix(c.Details))
					}
				}
				if count(pc, id, "") == 0 {
					fail("%s: check %s succeeds directly but is missing through Nexus", s, id)
				}
			}
		}
		// Nothing fails through Nexus that does not fail directly.
		for _, c := range pc {
			if c.Status == "FAILURE" && count(d, c.ID, "FAILURE") == 0 {
				fail("%s: check %s FAILS through Nexus only: %s%s", s, c.ID, c.ErrorMessage, DetailsSuffix(c.Details))
			}
			if c.Status == "WARNING" {
				t.Logf("%s: check %s WARNING through Nexus: %s", s, c.ID, c.ErrorMessage)
			}
		}
		if !bad {
			passed++
		}
	}
	t.Logf("conformance results (SUCCESS/FAILURE/WARNING/other), %d of %d scenarios as direct:\n%s", passed, total, summary.String())
	if t.Failed() {
		t.Logf("suite output through Nexus:\n%s", pr.Out)
	}
}

func checkIDs(checks []Check) []string {
	var ids []string
	for _, c := range checks {
		if !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// count counts the checks with id and status ("" for any status).
func count(checks []Check, id, status string) int {
	n := 0
	for _, c := range checks {
		if c.ID == id && (status == "" || c.Status == status) {
			n++
		}
	}
	return n
}

func tally(checks []Check) string {
	if checks == nil {
		return "-"
	}
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d/%d/%d/%d", n["SUCCESS"], n["FAILURE"], n["WARNING"], len(checks)-n["SUCCESS"]-n["FAILURE"]-n["WARNING"])
}
