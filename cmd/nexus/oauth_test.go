package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// testIssuer is an OAuth authorization server for the binary's tests: RFC
// 8414 metadata, a JWKS, and tokens signed with its key.
type testIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Use: "sig"}}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"iss": is.srv.URL, "aud": "https://nexus.test/mcp", "sub": "u-1", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range claims {
		all[k] = v
	}
	tok, err := jwt.Signed(signer).Claims(all).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestServeWithOAuth: beyond loopback with only an identity provider
// configured (no API tokens), serve starts; the provider's tokens act as
// their users on REST and MCP; bad ones get 401 with the MCP
// authorization specification's challenge; the protected resource metadata
// names the provider.
func TestServeWithOAuth(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	is := newTestIssuer(t)
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(testtools.FreeAddr(t))
	base := startServeAt(t, dir, "0.0.0.0:"+port, "--allow-hosts", "nexus.test",
		"--oauth-issuer", is.srv.URL, "--oauth-audience", "https://nexus.test/mcp", "--oauth-user-claim", "email",
		"--oauth-role-claim", "groups", "--oauth-admin-values", "nexus-admins", "--oauth-tier-claim", "groups", "--oauth-tiers", "paid=staff")
	alice := is.token(t, map[string]any{"email": "alice@college.example", "groups": []string{"staff"}})
	code, body := restDo(t, "POST", base+"/api/tools/tn_user_quota:call", alice, "{}")
	if code != 200 || !strings.Contains(body, `"user":"alice@college.example"`) || !strings.Contains(body, `"max":500`) {
		t.Fatalf("alice's quota with her provider's token: %d %s", code, body)
	}
	for name, tok := range map[string]string{
		"expired":        is.token(t, map[string]any{"email": "x@y", "exp": time.Now().Add(-time.Hour).Unix()}),
		"wrong audience": is.token(t, map[string]any{"email": "x@y", "aud": "https://other.test/mcp"}),
		"garbage":        "eyJhbGciOiJub25lIn0.e30.",
	} {
		req, _ := http.NewRequest("GET", base+"/api/tools", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, "resource_metadata=") {
			t.Errorf("%s token: %d %q", name, resp.StatusCode, wa)
		}
	}
	// The metadata names the provider and the resource.
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Resource != "https://nexus.test/mcp" || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != is.srv.URL {
		t.Fatalf("protected resource metadata: %+v", meta)
	}
	// An MCP client with the provider's token.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{alice}}}, nil)
	if err != nil {
		t.Fatalf("MCP with an OAuth token: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tn_user_subscription", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(text(res), "paid") {
		t.Fatalf("tn_user_subscription over MCP: %v %s", err, text(res))
	}
	// The user exists now, made from the token's claims.
	out, _, _ := runNexus(t, "", "users", "list", "--data-dir", dir)
	if !strings.Contains(out, "alice@college.example") || !strings.Contains(out, "paid") {
		t.Fatalf("users list: %s", out)
	}
}

// TestServeOAuthFlags: OAuth settings that cannot work are refused at start,
// naming the flag.
func TestServeOAuthFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-issuer", "https://idp.example"}, "--oauth-issuer needs --oauth-audience"},
		{[]string{"--oauth-audience", "https://nexus.example/mcp"}, "--oauth-audience needs --oauth-issuer"},
		{[]string{"--oauth-issuer", "http://idp.example", "--oauth-audience", "https://n.example/mcp"}, "must be https"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-audience", "https://n.example/mcp", "--oauth-tiers", "paid=x"}, "--oauth-tiers needs --oauth-tier-claim"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-audience", "https://n.example/mcp", "--oauth-tier-claim", "g", "--oauth-tiers", "gold=x"}, `--oauth-* (env NEXUS_OAUTH_*): oauth tiers: tier: unknown tier "gold"`},
	} {
		_, errOut, code := runNexus(t, "", append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("serve %v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}
