package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/users"
)

// tokens authenticates a fixed table of tokens.
type tokens map[string]*users.User

func (ts tokens) Authenticate(_ context.Context, token string) (*users.User, error) {
	if u, ok := ts[token]; ok {
		return u, nil
	}
	return nil, errors.New("unknown token")
}

// TestAuthentication: with an Authenticator, a request needs a bearer token
// (beyond loopback) and a bad one is 401 with the MCP authorization
// specification's WWW-Authenticate; tokens in URLs are refused; the user
// reaches the handler in the request's context.
func TestAuthentication(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	var seen *users.User
	routes := map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = users.FromContext(r.Context())
		w.Write([]byte(`{}`))
	})}
	for _, loopback := range []bool{false, true} {
		ts := serve(t, httpapi.Options{Auth: tokens{"good": alice}, Loopback: loopback, Routes: routes})
		cases := []struct {
			name, method, path string
			hdr                map[string]string
			status             int
			challenge          string // the WWW-Authenticate error, "-" for none expected
			user               string
		}{
			{"no token", "GET", "/api/x", nil, map[bool]int{false: 401, true: 200}[loopback], map[bool]string{false: "", true: "-"}[loopback], map[bool]string{false: "", true: "local"}[loopback]},
			{"good token", "GET", "/api/x", map[string]string{"Authorization": "Bearer good"}, 200, "-", "alice"},
			{"scheme in any case", "GET", "/api/x", map[string]string{"Authorization": "bearer good"}, 200, "-", "alice"},
			{"bad token", "GET", "/api/x", map[string]string{"Authorization": "Bearer nope"}, 401, "invalid_token", ""},
			{"bad token on loopback too", "POST", "/mcp", map[string]string{"Authorization": "Bearer nope"}, 401, "invalid_token", ""},
			{"basic auth", "GET", "/api/x", map[string]string{"Authorization": "Basic Zm9vOmJhcg=="}, 401, "invalid_request", ""},
			{"empty bearer", "GET", "/api/x", map[string]string{"Authorization": "Bearer "}, 401, "invalid_request", ""},
			{"token in the URL", "GET", "/api/x?access_token=good", nil, 400, "-", ""},
			{"health needs none", "GET", "/healthz", nil, 200, "-", ""},
			{"metadata needs none", "GET", "/.well-known/oauth-protected-resource", nil, 200, "-", ""},
		}
		for _, tc := range cases {
			seen = nil
			resp, body := do(t, ts, tc.method, tc.path, "", tc.hdr)
			if resp.StatusCode != tc.status {
				t.Errorf("loopback=%v %s: %d %s, want %d", loopback, tc.name, resp.StatusCode, body, tc.status)
				continue
			}
			wa := resp.Header.Get("WWW-Authenticate")
			switch {
			case tc.challenge == "-" && wa != "":
				t.Errorf("loopback=%v %s: WWW-Authenticate %q", loopback, tc.name, wa)
			case tc.challenge != "-" && (!strings.Contains(wa, `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource"`) ||
				(tc.challenge != "" && !strings.Contains(wa, `error="`+tc.challenge+`"`))):
				t.Errorf("loopback=%v %s: WWW-Authenticate %q", loopback, tc.name, wa)
			}
			if resp.StatusCode == 401 && !strings.Contains(body, `"UNAUTHORIZED"`) {
				t.Errorf("loopback=%v %s: body %s", loopback, tc.name, body)
			}
			if tc.user != "" && (seen == nil || seen.Name != tc.user) {
				t.Errorf("loopback=%v %s: handler saw %+v, want %s", loopback, tc.name, seen, tc.user)
			}
			if strings.Contains(body, "good") {
				t.Errorf("loopback=%v %s: the token is in the answer: %s", loopback, tc.name, body)
			}
		}
		resp, body := do(t, ts, "GET", "/.well-known/oauth-protected-resource", "", nil)
		var meta map[string]any
		if err := json.Unmarshal([]byte(body), &meta); err != nil || resp.StatusCode != 200 || meta["resource"] != ts.URL+"/mcp" {
			t.Fatalf("metadata: %d %s", resp.StatusCode, body)
		}
	}
}

// TestPageLoadsWithoutToken: beyond loopback, a browser without a token gets
// the web UI's page and assets (to reach its sign-in screen), while the
// JSON index, the REST API and a POST to / still need one (before, the page
// answered 401 and the sign-in screen was unreachable).
func TestPageLoadsWithoutToken(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>Nexus</title>"))
	})
	routes := map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })}
	ts := serve(t, httpapi.Options{Auth: tokens{"good": alice}, UI: ui, Routes: routes})
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"the page", "GET", "/", html, 200},
		{"an asset", "GET", "/ui/assets/index.js", nil, 200},
		{"the JSON index", "GET", "/", nil, 401},
		{"the REST API", "GET", "/api/tools", nil, 401},
		{"a POST to /", "POST", "/", html, 401},
		{"the page with a bad token", "GET", "/", map[string]string{"Accept": "text/html", "Authorization": "Bearer nope"}, 401},
		{"the page with a good token", "GET", "/", map[string]string{"Accept": "text/html", "Authorization": "Bearer good"}, 200},
	} {
		resp, body := do(t, ts, tc.method, tc.path, "", tc.hdr)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.status)
		}
		if tc.status == 200 && !strings.Contains(body, "Nexus") {
			t.Errorf("%s: body %s", tc.name, body)
		}
	}
}

// TestTokenRateLimit: an authenticated user over the rate gets 429 with
// Retry-After; another user and the local user are not affected.
func TestTokenRateLimit(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice"}
	bob := &users.User{ID: "u2", Name: "bob"}
	// The limiter serve uses, on a store of its own.
	lim, err := quota.NewSharedLimiter(storetest.OpenTestSQLite(t), quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 0.01, Burst: 2}})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })}
	ts := serve(t, httpapi.Options{Auth: tokens{"a": alice, "b": bob}, TokenLimit: lim, Loopback: true, Routes: routes})
	for i, want := range []int{200, 200, 429} {
		resp, body := do(t, ts, "GET", "/api/x", "", map[string]string{"Authorization": "Bearer a"})
		if resp.StatusCode != want {
			t.Fatalf("alice's request %d: %d %s", i, resp.StatusCode, body)
		}
		if want == 429 && (resp.Header.Get("Retry-After") != "100" || !strings.Contains(body, "RATE_LIMITED") ||
			!strings.Contains(body, `"too many requests for this user: at most 0.01 a second; retry in 100 s"`)) {
			t.Fatalf("429 without Retry-After 100, the code or the message: %v %s", resp.Header, body)
		}
	}
	if resp, _ := do(t, ts, "GET", "/api/x", "", map[string]string{"Authorization": "Bearer b"}); resp.StatusCode != 200 {
		t.Fatalf("bob limited by alice's requests: %d", resp.StatusCode)
	}
	for range 5 {
		if resp, _ := do(t, ts, "GET", "/api/x", "", nil); resp.StatusCode != 200 {
			t.Fatalf("the local user limited: %d", resp.StatusCode)
		}
	}
}

// BenchmarkTokenRateLimit measures an authenticated request through the
// handler (in process, no network) without a rate limit and with the
// shared one on SQLite and on PostgreSQL: the difference is what the limit
// adds to every request (one round trip to the store).
func BenchmarkTokenRateLimit(b *testing.B) {
	alice := &users.User{ID: "u1", Name: "alice"}
	routes := map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })}
	for _, c := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"none", nil}, {"sqlite", storetest.OpenTestSQLite}, {"postgres", storetest.OpenTestPostgres}} {
		b.Run(c.name, func(b *testing.B) {
			o := httpapi.Options{MCP: testServer(nil), Agents: testServer(nil), Bounded: testServer(nil),
				Auth: tokens{"a": alice}, Loopback: true, Routes: routes}
			if c.open != nil {
				lim, err := quota.NewSharedLimiter(c.open(b), quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 1e6, Burst: 1 << 20}})
				if err != nil {
					b.Fatal(err)
				}
				o.TokenLimit = lim
			}
			h := httpapi.Handler(o)
			var ds []time.Duration
			for b.Loop() {
				req := httptest.NewRequest("GET", "http://127.0.0.1/api/x", nil)
				req.Header.Set("Authorization", "Bearer a")
				w := httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(w, req)
				ds = append(ds, time.Since(t0))
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			storetest.ReportLatencies(b, ds)
		})
	}
}
