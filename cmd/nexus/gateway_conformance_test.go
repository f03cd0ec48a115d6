package main

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestConformanceThroughFlat runs every server scenario of the MCP
// conformance suite against the Go SDK's conformance server
// ("everything-server") directly, and through /mcp of "nexus serve" with
// the server in a toolbox of plain naming (its tools and prompts keep their
// names), as a stdio child and over Streamable HTTP (issue 26): every check
// that succeeds directly succeeds through /mcp, and nothing fails through
// /mcp that does not fail directly.
func TestConformanceThroughFlat(t *testing.T) {
	suite := testtools.Conformance(t)
	bin := testtools.BuildEverythingServer(t)
	directURL := testtools.StartEverythingServer(t, bin)
	dr := suite.RunAll(t, directURL)
	for _, c := range []struct {
		name   string
		server map[string]any
		known  map[string]string
	}{
		{"stdio", map[string]any{"command": bin}, nil},
		{"streamable-http", map[string]any{"url": directURL, "transport": "http"}, map[string]string{
			// The server ends the call's stream before its result, for
			// the client to resume it (SEP-1699), but keeps no events to
			// resume from: directly the suite gets no result and records
			// no check; through Nexus the call's client gets an error
			// result saying the stream ended, which the suite records as
			// a failed call. (A server that keeps its events is resumed:
			// TestRawCallResumesAClosedStream.)
			"server-sse-polling": "the server cannot resume the stream it ends; Nexus answers the call with an error rather than never",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
				"everything": map[string]any{"naming": "plain", "mcpServers": map[string]any{"everything": c.server}},
			}})
			base := startServe(t, "--no-demo", "--config", cfg)
			pr := suite.RunAll(t, base+"/mcp")
			testtools.CompareRuns(t, suite, dr, pr, c.known)
		})
	}
}
