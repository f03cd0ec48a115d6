package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestNginxExample runs docs/deploy/nginx.conf, the balancer configuration
// the README shows, in front of two replicas (its upstream addresses
// replaced by theirs, TLS by a loopback port) and uses one MCP session
// through it on the flat and bounded surfaces. nginx must be installed in
// CI (scripts/install-test-tools.sh installs it).
func TestNginxExample(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("nginx is not installed: scripts/install-test-tools.sh installs it")
			}
			t.Skip("nginx is not installed")
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile("../../docs/deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	site := string(conf)
	if _, body, ok := strings.Cut(site, "upstream nexus"); !ok || !strings.Contains(string(readme), "upstream nexus"+body) {
		t.Fatal("the README's nginx configuration differs from docs/deploy/nginx.conf")
	}

	reps, _ := startReplicas(t, 2, "--no-demo")
	addr := testtools.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	// Three upstream lines, two replicas: the third points at the first.
	site = strings.Replace(site, "10.0.0.11:7777", reps[0].addr, 1)
	site = strings.Replace(site, "10.0.0.12:7777", reps[1].addr, 1)
	site = strings.Replace(site, "10.0.0.13:7777", reps[0].addr, 1)
	site = strings.Replace(site, "listen 443 ssl;", "listen 127.0.0.1:"+port+";", 1)
	dir := t.TempDir()
	// worker_shutdown_timeout: a graceful quit waits for the requests in
	// flight, and an MCP GET stream is one for up to proxy_read_timeout (1h);
	// past the timeout nginx closes what is left and exits (as the README
	// advises). Without it the quit waited out the test's 30 s now and then.
	main := fmt.Sprintf(`daemon off;
worker_shutdown_timeout 5s;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events {}
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
%[2]s
}
`, dir, site)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	out, _ := os.Create(filepath.Join(dir, "out.log"))
	cmd.Stdout, cmd.Stderr = out, out
	testtools.OwnGroup(cmd) // its workers with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// As nginx is stopped: SIGQUIT to the master, which closes its
		// listeners, lets its workers finish and waits for them before it
		// exits. Then nothing of its group may be left.
		if graceful, err := testtools.Stop(t, cmd, syscall.SIGQUIT, 30*time.Second); !graceful || err != nil {
			t.Errorf("nginx did not quit on SIGQUIT (graceful %v): %v", graceful, err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			o, _ := os.ReadFile(filepath.Join(dir, "out.log"))
			t.Logf("nginx:\n%s%s", o, b)
		}
	})
	front := "http://127.0.0.1:" + port
	testtools.EventuallyErr(t, 15*time.Second, "nginx to serve /readyz", func() error { return ready(front) })

	cs, _ := connect(t, front+"/mcp")
	var sessions []string
	for range 4 {
		if names := toolNames(t, cs); !slices.Contains(names, "belief_query") {
			t.Fatalf("tools/list through nginx lacks belief_query")
		}
		res := call(t, cs, "belief_query", map[string]any{"query": "nginx"})
		if res.IsError {
			t.Fatalf("belief_query through nginx: %+v", res.Content)
		}
		sessions = append(sessions, res.Meta[mcpkit.MetaSession].(string))
	}
	for _, s := range sessions[1:] {
		if s != sessions[0] {
			t.Errorf("one MCP session's calls through nginx got conversations %v", sessions)
			break
		}
	}
	bcs, _ := connect(t, front+"/mcp/bounded")
	if res := call(t, bcs, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_query"}}}); res.IsError {
		t.Fatalf("get_tools: %+v", res.Content)
	}
	for range 3 {
		if res := call(t, bcs, "substrate_belief_query", map[string]any{"query": "nginx"}); res.IsError {
			t.Fatalf("a discovered tool through nginx: %+v", res.Content)
		}
	}
}
