package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

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

// TestConformanceThroughProxy compares the suite's results against the
// conformance server directly and through the proxy.
func TestConformanceThroughProxy(t *testing.T) {
	suite := testtools.Conformance(t)
	bin := testtools.BuildEverythingServer(t)

	directURL := testtools.StartEverythingServer(t, bin)
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

	dr := suite.RunAll(t, directURL)
	for _, server := range []string{"s", "h"} {
		name := map[string]string{"s": "stdio (SDK path)", "h": "streamable-http (raw passthrough)"}[server]
		t.Run(name, func(t *testing.T) {
			pr := suite.RunAll(t, ts.URL+"/mcp/servers/t/"+server)
			testtools.CompareRuns(t, suite, dr, pr, nil)
		})
	}
}
