package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/users"
)

// TestServeBeyondLoopbackNeedsTokens: serve on a public address refuses to
// start while no user has a token; once one has, every request needs it
// (401 with the MCP authorization specification's WWW-Authenticate
// otherwise) and a revoked token stops working within users.CacheFor.
func TestServeBeyondLoopbackNeedsTokens(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	dir := t.TempDir()
	addr := testtools.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	public := "0.0.0.0:" + port
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"serve", "--addr", public, "--allow-hosts", "nexus.test", "--data-dir", dir}, strings.NewReader(""), &stdout, &stderr)
	cancel()
	if code != 1 || !strings.Contains(stderr.String(), "no user has a token") || !strings.Contains(stderr.String(), "nexus users add NAME") {
		t.Fatalf("serve beyond loopback without users: exit %d %s", code, stderr.String())
	}
	out, _, code := runNexus(t, "", "users", "add", "alice", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("users add: %d %s", code, out)
	}
	token := strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	out, _, _ = runNexus(t, "", "users", "add", "root", "--role", "admin", "--data-dir", dir)
	rootToken := strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	base := startServeAt(t, dir, public, "--allow-hosts", "nexus.test")
	get := func(path, auth string) (int, string, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
	}
	if code, wa, body := get("/api/tools", ""); code != 401 || !strings.Contains(wa, `resource_metadata="`+base+`/.well-known/oauth-protected-resource"`) || !strings.Contains(body, "UNAUTHORIZED") {
		t.Fatalf("no token: %d %q %s", code, wa, body)
	}
	if code, wa, _ := get("/api/tools", "Bearer nxs_"+strings.Repeat("A", 43)); code != 401 || !strings.Contains(wa, `error="invalid_token"`) {
		t.Fatalf("unknown token: %d %q", code, wa)
	}
	if code, _, body := get("/api/tools", "Bearer "+token); code != 200 || !strings.Contains(body, "belief_query") {
		t.Fatalf("alice's token: %d %s", code, body)
	}
	// Tools see who calls: alice's quota, not the local admin's.
	req, _ := http.NewRequest("POST", base+"/api/tools/tn_user_quota:call", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"user":"alice"`) || !strings.Contains(string(b), `"max":100`) {
		t.Fatalf("alice's quota over REST: %d %s", resp.StatusCode, b)
	}
	// Traces: alice sees her own calls, the admin everyone's.
	req, _ = http.NewRequest("POST", base+"/api/tools/tn_user_subscription:call", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+rootToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("root's call: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	traces := func(tok string) map[string]int {
		var users map[string]int
		testtools.EventuallyErr(t, 10*time.Second, "the calls to be traced", func() error {
			code, _, body := get("/api/traces", "Bearer "+tok)
			var page struct {
				Traces []struct {
					Tool   string `json:"tool"`
					UserID string `json:"userId"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(body), &page); err != nil || code != 200 {
				return fmt.Errorf("GET /api/traces: %d %s", code, body)
			}
			users = map[string]int{}
			for _, tr := range page.Traces {
				users[tr.UserID]++
			}
			if len(page.Traces) == 0 {
				return fmt.Errorf("no traces yet")
			}
			return nil
		})
		return users
	}
	if seen := traces(token); len(seen) != 1 {
		t.Fatalf("alice sees the calls of %d users: %v", len(seen), seen)
	}
	testtools.EventuallyErr(t, 10*time.Second, "root's call to be traced", func() error {
		if seen := traces(rootToken); len(seen) < 2 {
			return fmt.Errorf("the admin sees the calls of %d users: %v", len(seen), seen)
		}
		return nil
	})
	if code, _, _ := get("/api/tools?access_token="+token, ""); code != 400 {
		t.Fatalf("token in the URL: %d", code)
	}
	if code, _, _ := get("/healthz", ""); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	// Revoked: the token stops working at once.
	out, _, _ = runNexus(t, "", "tokens", "list", "alice", "--json", "--data-dir", dir)
	id := out[strings.Index(out, `"id": "`)+7:]
	id = id[:strings.Index(id, `"`)]
	if _, errOut, code := runNexus(t, "", "tokens", "revoke", id, "--data-dir", dir); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	// The server trusts a token it authenticated for users.CacheFor (5 s).
	testtools.EventuallyErr(t, 3*users.CacheFor, "the revoked token to stop working", func() error {
		if code, wa, _ := get("/api/tools", "Bearer "+token); code != 401 || !strings.Contains(wa, "invalid_token") {
			return fmt.Errorf("revoked token: %d %q", code, wa)
		}
		return nil
	})
}
