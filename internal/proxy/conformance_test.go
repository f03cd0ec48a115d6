package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// The conformance test runs every server scenario of the MCP conformance
// suite (npm @modelcontextprotocol/conformance, the version pinned in
// test/conformance/package.json, installed by scripts/install-test-tools.sh)
// against the Go SDK's conformance server ("everything-server") twice:
// directly, and through the proxy twice: with the server as a stdio child of
// the proxy (the SDK path) and with the same server over Streamable HTTP (the
// raw passthrough). Every check that succeeds directly must succeed through
// the proxy.

// everythingServer is the SDK's conformance server package.
const everythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// conformanceTimeout bounds one run of the whole suite.
const conformanceTimeout = 5 * time.Minute

// runSuite runs every server scenario against url and returns the checks by
// scenario, and the suite's output.
func runSuite(t *testing.T, suite *testtools.Suite, url string) (map[string][]testtools.Check, string) {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	out, _, err := suite.Run(ctx, "server", "--url", url, "--suite", "all", "--output-dir", outDir)
	if err != nil {
		t.Fatalf("conformance suite against %s: %v\n%s", url, err, out)
	}
	results, err := testtools.ReadResults(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatalf("the suite against %s recorded no scenario:\n%s", url, out)
	}
	return results, out
}

// buildEverythingServer builds the SDK's conformance server from the module
// cache.
func buildEverythingServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	cmd := exec.Command("go", "build", "-o", bin, everythingServer)
	cmd.Dir = testtools.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", everythingServer, err, out)
	}
	return bin
}

// startDirect runs the conformance server on Streamable HTTP, stateful like
// the proxy (its default, stateless, cannot make server-to-client requests).
func startDirect(t *testing.T, bin string) string {
	t.Helper()
	addr := testtools.FreeAddr(t)
	cmd := exec.Command(bin, "-http", addr, "-stateless=false")
	cmd.Stderr = devNull(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testtools.EventuallyErr(t, 10*time.Second, "the conformance server to listen on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	return "http://" + addr + "/"
}

// TestConformanceThroughProxy compares the suite's results against the
// conformance server directly and through the proxy.
func TestConformanceThroughProxy(t *testing.T) {
	suite := testtools.Conformance(t)
	bin := buildEverythingServer(t)

	directURL := startDirect(t, bin)
	p := New(&config.Config{Toolboxes: map[string]*config.Toolbox{"t": {
		Name: "t",
		Servers: map[string]*config.Server{
			"s": {Transport: config.Stdio, Command: bin},
			"h": {Transport: config.StreamableHTTP, URL: directURL},
		},
	}}}, Options{Logger: testLogger(t), Stderr: devNull(t)})
	// As "nexus serve" mounts it: behind the HTTP front, whose guard
	// decides Host and Origin for every route.
	ts := httptest.NewServer(httpapi.Handler(httpapi.Options{Loopback: true, SessionRoutes: map[string]http.Handler{"/mcp/servers/": p}}))
	defer func() {
		p.Close()
		ts.Close()
	}()

	var dr run
	dr.results, dr.out = runSuite(t, suite, directURL)
	for _, server := range []string{"s", "h"} {
		name := map[string]string{"s": "stdio (SDK path)", "h": "streamable-http (raw passthrough)"}[server]
		t.Run(name, func(t *testing.T) {
			var pr run
			pr.results, pr.out = runSuite(t, suite, ts.URL+"/mcp/servers/t/"+server)
			compareRuns(t, suite, dr, pr)
		})
	}
}

type run struct {
	results map[string][]testtools.Check
	out     string
}

// compareRuns checks that every check that succeeds directly (dr) succeeds
// through the proxy (pr).
func compareRuns(t *testing.T, suite *testtools.Suite, dr, pr run) {
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	scenarios, err := suite.ServerScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
						t.Errorf("%s: check %s is %s through the proxy, SUCCESS directly: %s%s", s, id, c.Status, c.ErrorMessage, testtools.DetailsSuffix(c.Details))
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
				t.Errorf("%s: check %s FAILS through the proxy only: %s%s", s, c.ID, c.ErrorMessage, testtools.DetailsSuffix(c.Details))
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

func checkIDs(checks []testtools.Check) []string {
	var ids []string
	for _, c := range checks {
		if !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// count counts the checks with id and status ("" for any status).
func count(checks []testtools.Check, id, status string) int {
	n := 0
	for _, c := range checks {
		if c.ID == id && (status == "" || c.Status == status) {
			n++
		}
	}
	return n
}

func tally(checks []testtools.Check) string {
	if checks == nil {
		return "-"
	}
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d/%d/%d/%d", n["SUCCESS"], n["FAILURE"], n["WARNING"], len(checks)-n["SUCCESS"]-n["FAILURE"]-n["WARNING"])
}
