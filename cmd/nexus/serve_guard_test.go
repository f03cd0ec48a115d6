package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue 7: serve beyond loopback without --allow-hosts refuses to start,
// saying what to set, before it creates anything.
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
		for _, want := range []string{"serve on " + addr, "needs --allow-hosts", "NEXUS_ALLOW_HOSTS", "user's token"} {
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
		{"POST", "/mcp"}, {"POST", "/mcp/agents"}, {"POST", "/mcp/bounded"}, {"GET", "/api/tools"}, {"GET", "/healthz"}, {"GET", "/readyz"},
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
		"/api/tools", "/api/tools/{name}:call", "/api/traces", "/openapi.json", "/healthz", "/readyz"} {
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

// TestServeRefusesMalformedAddrHostsAndOrigins: serve checks --addr,
// --allow-hosts and --allow-origins before anything else (before the
// --allow-hosts requirement, before it listens or creates anything) and
// names the flag, its variable and the bad entry.
func TestServeRefusesMalformedAddrHostsAndOrigins(t *testing.T) {
	for _, k := range []string{"NEXUS_ADDR", "NEXUS_ALLOW_HOSTS", "NEXUS_ALLOW_ORIGINS", "NEXUS_DB", "NEXUS_TRACE_RETENTION", "NEXUS_MAX_SESSIONS"} {
		t.Setenv(k, "")
	}
	addrErr := `--addr (env NEXUS_ADDR): %q is not HOST:PORT`
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"addr without a port", []string{"--addr", "nonsense"}, []string{fmt.Sprintf(addrErr, "nonsense"), "e.g. 127.0.0.1:7777"}},
		{"addr with a port too large", []string{"--addr", "127.0.0.1:65536"}, []string{fmt.Sprintf(addrErr, "127.0.0.1:65536"), "0-65535"}},
		{"addr with a named port", []string{"--addr", "127.0.0.1:http"}, []string{fmt.Sprintf(addrErr, "127.0.0.1:http")}},
		{"addr with no port", []string{"--addr", "127.0.0.1:"}, []string{fmt.Sprintf(addrErr, "127.0.0.1:")}},
		{"addr with a negative port", []string{"--addr", "127.0.0.1:-1"}, []string{fmt.Sprintf(addrErr, "127.0.0.1:-1")}},
		{"public addr with a bad host", []string{"--addr", "0.0.0.0:0", "--allow-hosts", "ok.example,https://nexus.example.com"}, []string{`"https://nexus.example.com"`, "--allow-hosts (env NEXUS_ALLOW_HOSTS)"}},
		{"host with a path", []string{"--allow-hosts", "nexus.example.com/mcp"}, []string{`"nexus.example.com/mcp"`, "--allow-hosts (env NEXUS_ALLOW_HOSTS)"}},
		{"host with a space", []string{"--allow-hosts", "nexus example"}, []string{`"nexus example"`, "--allow-hosts (env NEXUS_ALLOW_HOSTS)"}},
		{"origin that is no URL", []string{"--allow-origins", "https://app.example/,not a url"}, []string{`"not a url"`, "--allow-origins (env NEXUS_ALLOW_ORIGINS)"}},
		{"origin with a path", []string{"--allow-origins", "https://app.example/app"}, []string{`"https://app.example/app"`, "--allow-origins (env NEXUS_ALLOW_ORIGINS)"}},
		{"origin with a query", []string{"--allow-origins", "https://app.example?x=1"}, []string{`"https://app.example?x=1"`}},
		{"origin with a fragment", []string{"--allow-origins", "https://app.example/#x"}, []string{`"https://app.example/#x"`}},
		{"origin of another scheme", []string{"--allow-origins", "ftp://app.example"}, []string{`"ftp://app.example"`}},
		{"origin without a scheme", []string{"--allow-origins", "app.example"}, []string{`"app.example"`}},
		{"origin with a user", []string{"--allow-origins", "https://me@app.example"}, []string{`"https://me@app.example"`}},
		{"origin with a bad port", []string{"--allow-origins", "https://app.example:99999"}, []string{`"https://app.example:99999"`}},
		{"origin of the wildcard", []string{"--allow-origins", "*"}, []string{`"*"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stdout, stderr strings.Builder
			args := append([]string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0"}, tt.args...)
			if code := run(ctx, args, strings.NewReader(""), &stdout, &stderr); code != 1 {
				t.Errorf("exit %d, want 1 (stderr %q)", code, stderr.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q does not say %q", stderr.String(), want)
				}
			}
			if strings.Contains(stderr.String(), "needs --allow-hosts") {
				t.Errorf("reported the --allow-hosts requirement rather than the malformed flag: %q", stderr.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("created %s in the data directory", entries[0].Name())
			}
		})
	}
}
