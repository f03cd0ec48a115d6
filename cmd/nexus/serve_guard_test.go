package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue 7: until authentication lands, serve beyond loopback without
// --allow-hosts refuses to start, saying what to set, before it creates
// anything.
func TestServeRefusesPublicAddrWithoutAllowHosts(t *testing.T) {
	t.Setenv("NEXUS_ALLOW_HOSTS", "")
	t.Setenv("NEXUS_DB", "")
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stdout, stderr strings.Builder
		code := run(ctx, []string{"serve", "--addr", addr, "--data-dir", dir}, strings.NewReader(""), &stdout, &stderr)
		cancel()
		if code != 1 {
			t.Errorf("serve --addr %s: exit %d, want 1 (stderr %q)", addr, code, stderr.String())
		}
		for _, want := range []string{"serve on " + addr, "needs --allow-hosts", "NEXUS_ALLOW_HOSTS", "no authentication"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("serve --addr %s: stderr %q does not say %q", addr, stderr.String(), want)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("serve --addr %s created %d entries in the data directory (%s ...)", addr, len(entries), entries[0].Name())
		}
	}
}

// Issue 6: --allow-hosts is honoured on every route of the real server.
func TestServeAllowHostsOnEveryRoute(t *testing.T) {
	base := startServe(t, "--allow-hosts", "nexus.internal")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct{ method, path string }{
		{"POST", "/mcp"}, {"POST", "/mcp/agents"}, {"POST", "/mcp/bounded"}, {"GET", "/api/tools"}, {"GET", "/healthz"},
	} {
		var body io.Reader
		if tt.method == "POST" {
			body = strings.NewReader(init)
		}
		req, _ := http.NewRequest(tt.method, base+tt.path, body)
		req.Host = "nexus.internal:7777"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s %s with an allowed Host: %d %s", tt.method, tt.path, resp.StatusCode, b)
		}
	}
}

// Issue 17: GET / points to the endpoints.
func TestServeIndex(t *testing.T) {
	base := startServe(t)
	code, body := getJSON(t, "GET", base+"/", "")
	if code != 200 {
		t.Fatalf("GET /: %d %v", code, body)
	}
	var paths []string
	eps, _ := body["endpoints"].([]any)
	for _, e := range eps {
		m, _ := e.(map[string]any)
		p, _ := m["path"].(string)
		paths = append(paths, p)
	}
	for _, want := range []string{"/mcp", "/mcp/agents", "/mcp/bounded", "/mcp/servers/{toolbox}/{server}",
		"/api/tools", "/api/tools/{name}:call", "/api/traces", "/openapi.json", "/healthz"} {
		found := false
		for _, p := range paths {
			found = found || strings.HasSuffix(p, want)
		}
		if !found {
			t.Errorf("GET / does not list %s: %v", want, paths)
		}
	}
	if code, _ := getJSON(t, "GET", base+"/nope", ""); code != 404 {
		t.Errorf("GET /nope: %d", code)
	}
}
