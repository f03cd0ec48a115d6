package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestHostIsNexusGuardsDecision: the proxy route leaves Host checks to
// Nexus's HTTP guard (--allow-hosts), so a host the guard allows reaches the
// downstream server instead of the SDK's own localhost-only check.
func TestHostIsNexusGuardsDecision(t *testing.T) {
	_, ts := startProxy(t, testConfig(downstreams[1].start(t)))
	req, _ := http.NewRequest("POST", ts.URL+"/mcp/servers/tb/s", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Host = "nexus.example.com:7777"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize with an allowed public Host: %s", resp.Status)
	}
	del, _ := http.NewRequest("DELETE", ts.URL+"/mcp/servers/tb/s", nil)
	del.Host = req.Host
	del.Header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	if r, err := http.DefaultClient.Do(del); err == nil {
		r.Body.Close()
	}
}
