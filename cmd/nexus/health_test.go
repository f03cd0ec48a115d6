package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHealthCountsWhatSurfacesList: /healthz counts the tools each surface
// lists, and "nexus tools list" prints as many as the flat surface lists.
func TestHealthCountsWhatSurfacesList(t *testing.T) {
	base := startServe(t)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Tools    int            `json:"tools"`
		Surfaces map[string]int `json:"surfaces"`
	}
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	for path, name := range map[string]string{"/mcp": "flat", "/mcp/agents": "agents", "/mcp/bounded": "bounded"} {
		cs, _ := connect(t, base+path)
		if n := len(toolNames(t, cs)); n != h.Surfaces[name] {
			t.Errorf("%s lists %d tools; /healthz says %d", path, n, h.Surfaces[name])
		}
		if name == "flat" && h.Tools != h.Surfaces[name] {
			t.Errorf("/healthz tools %d, flat surface %d", h.Tools, h.Surfaces[name])
		}
	}
	out, stderr, code := runNexus(t, "", "tools", "list", "--data-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("tools list: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := len(lines) - 1; n != h.Tools { // minus the header
		t.Errorf("nexus tools list prints %d tools; /healthz and /mcp say %d", n, h.Tools)
	}
}
