package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/users"
)

// issuer is a real authorization server for tests: RFC 8414 metadata and a
// JWKS endpoint, keys it signs with, and counts of what was fetched.
type issuer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	keys     map[string]any // kid -> private key
	fetches  atomic.Int32
	down     atomic.Bool
	metadata atomic.Int32
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{keys: map[string]any{}}
	is.addRSA(t, "r1")
	is.addEC(t, "e1")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		is.metadata.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		is.mu.Lock()
		var set jose.JSONWebKeySet
		for kid, k := range is.keys {
			var pub any
			switch k := k.(type) {
			case *rsa.PrivateKey:
				pub = &k.PublicKey
			case *ecdsa.PrivateKey:
				pub = &k.PublicKey
			}
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: kid, Use: "sig"})
		}
		is.mu.Unlock()
		json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) addRSA(t *testing.T, kid string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.keys[kid] = k
	is.mu.Unlock()
}

func (is *issuer) addEC(t *testing.T, kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.keys[kid] = k
	is.mu.Unlock()
}

func (is *issuer) drop(kid string) {
	is.mu.Lock()
	delete(is.keys, kid)
	is.mu.Unlock()
}

// sign signs claims with key kid (the claims' defaults: this issuer, the
// audience, a subject and an hour's validity).
func (is *issuer) sign(t *testing.T, kid string, claims map[string]any) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[kid]
	is.mu.Unlock()
	alg := jose.RS256
	if _, ok := k.(*ecdsa.PrivateKey); ok {
		alg = jose.ES256
	}
	if k == nil { // a key the issuer never published
		k, _ = rsa.GenerateKey(rand.Reader, 2048)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"iss": is.srv.URL, "aud": audience, "sub": "s-1", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		if v == nil {
			delete(all, k)
		} else {
			all[k] = v
		}
	}
	tok, err := jwt.Signed(signer).Claims(all).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const audience = "https://nexus.example.edu/mcp"

func newVerifier(t *testing.T, is *issuer, st *store.Store, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{Issuer: is.srv.URL, Audience: audience, UserClaim: "preferred_username",
		RoleClaim: "groups", AdminValues: []string{"nexus-admins"},
		TierClaim: "groups", TierValues: map[string][]string{"paid": {"staff"}, "free": {"students"}}}
	if mod != nil {
		mod(&cfg)
	}
	v, err := New(cfg, users.New(st))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify(t *testing.T) {
	is := newIssuer(t)
	v := newVerifier(t, is, storetest.OpenTestSQLite(t), nil)
	ctx := context.Background()
	hour := time.Hour
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+is.srv.URL+`","aud":"`+audience+`","sub":"x","exp":9999999999}`)) + "."
	// HS256 "signed" with the RSA public key's bytes: the classic confusion.
	pub := is.keys["r1"].(*rsa.PrivateKey).PublicKey.N.Bytes()
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithHeader("kid", "r1"))
	hsTok, _ := jwt.Signed(hs).Claims(map[string]any{"iss": is.srv.URL, "aud": audience, "sub": "x", "exp": time.Now().Add(hour).Unix()}).Serialize()
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"rsa", is.sign(t, "r1", map[string]any{"preferred_username": "alice"}), nil},
		{"ec", is.sign(t, "e1", map[string]any{"preferred_username": "alice"}), nil},
		{"audience list", is.sign(t, "r1", map[string]any{"aud": []string{"https://other", audience}}), nil},
		{"expired", is.sign(t, "r1", map[string]any{"exp": time.Now().Add(-2 * hour).Unix()}), ErrExpired},
		{"not yet valid", is.sign(t, "r1", map[string]any{"nbf": time.Now().Add(hour).Unix()}), ErrNotYetValid},
		{"no expiry", is.sign(t, "r1", map[string]any{"exp": nil}), ErrNoExpiry},
		{"foreign issuer", is.sign(t, "r1", map[string]any{"iss": "https://evil.example"}), ErrIssuer},
		{"wrong audience", is.sign(t, "r1", map[string]any{"aud": "https://other.example/mcp"}), ErrAudience},
		{"unpublished key", is.sign(t, "zz", nil), ErrUnknownKey},
		{"alg none", none, ErrMalformed},
		{"hs256 with the public key", hsTok, ErrMalformed},
		{"garbage", "not.a.jwt", ErrMalformed},
		{"empty", "", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(ctx, tc.token)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestUsersFromClaims: a token's identity becomes a user once, named from
// the user claim, with role and tier from the claims, following them when
// they change.
func TestUsersFromClaims(t *testing.T) {
	is := newIssuer(t)
	st := storetest.OpenTestSQLite(t)
	v := newVerifier(t, is, st, nil)
	ctx := context.Background()
	u, err := v.Authenticate(ctx, is.sign(t, "r1", map[string]any{"sub": "42", "preferred_username": "Alice Smith", "groups": []string{"students"}}))
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "alice-smith" || u.Role != principal.Member || u.Tier != users.Free {
		t.Fatalf("first sight: %+v", u)
	}
	again, err := v.Authenticate(ctx, is.sign(t, "e1", map[string]any{"sub": "42", "preferred_username": "alice smith", "groups": []string{"staff", "nexus-admins"}}))
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != u.ID || again.Role != principal.Admin || again.Tier != users.Paid {
		t.Fatalf("second token: %+v (first %+v)", again, u)
	}
	// Another identity with the same name gets a name of its own.
	other, err := v.Authenticate(ctx, is.sign(t, "r1", map[string]any{"sub": "43", "preferred_username": "alice smith"}))
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == u.ID || other.Name == u.Name {
		t.Fatalf("another identity: %+v", other)
	}
	if _, err := v.Authenticate(ctx, is.sign(t, "r1", map[string]any{"sub": "44"})); !errors.Is(err, ErrNoUser) {
		t.Fatalf("no user claim: %v", err)
	}
	// Disabled by an admin: refused however valid the token.
	d := true
	if _, err := users.New(st).Set(ctx, other.Name, users.Change{Disabled: &d}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authenticate(ctx, is.sign(t, "e1", map[string]any{"sub": "43", "preferred_username": "alice smith"})); !errors.Is(err, users.ErrDisabled) {
		t.Fatalf("disabled: %v", err)
	}
}

// TestKeys: the keys are fetched once, not per request; a rotation is
// followed; a flood of unknown key ids fetches at most once per 30 s; a
// provider that is down is a clear error, and its keys known still verify.
func TestKeys(t *testing.T) {
	is := newIssuer(t)
	v := newVerifier(t, is, storetest.OpenTestSQLite(t), nil)
	now := time.Now()
	v.now = func() time.Time { return now }
	ctx := context.Background()
	for i := range 50 {
		if _, err := v.Verify(ctx, is.sign(t, "r1", map[string]any{"jti": string(rune('a' + i))})); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("50 tokens fetched the keys %d times, want 1", n)
	}
	// Rotation: r2 is added, r1 dropped.
	is.addRSA(t, "r2")
	is.drop("r1")
	old := is.fetches.Load()
	now = now.Add(minKeyFetchGap)
	if _, err := v.Verify(ctx, is.sign(t, "r2", nil)); err != nil {
		t.Fatalf("a token of the new key: %v", err)
	}
	if is.fetches.Load() != old+1 {
		t.Fatalf("the new key id fetched the keys %d times", is.fetches.Load()-old)
	}
	// A flood of unknown key ids: no more fetches within the gap.
	old = is.fetches.Load()
	for i := range 20 {
		if _, err := v.Verify(ctx, is.sign(t, "bogus"+string(rune('a'+i)), nil)); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("bogus kid: %v", err)
		}
	}
	if n := is.fetches.Load() - old; n != 0 {
		t.Fatalf("20 bogus key ids fetched the keys %d times within the gap", n)
	}
	// Refreshed on the period: the provider down, the known key still works.
	is.down.Store(true)
	now = now.Add(11 * time.Minute)
	if _, err := v.Verify(ctx, is.sign(t, "r2", nil)); err != nil {
		t.Fatalf("a known key while the provider is down: %v", err)
	}
	// A new verifier with the provider down: a clear error, no hang.
	v2 := newVerifier(t, is, storetest.OpenTestSQLite(t), nil)
	start := time.Now()
	if _, err := v2.Verify(ctx, is.sign(t, "r2", nil)); !errors.Is(err, ErrKeysFetching) {
		t.Fatalf("provider down: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
}

// TestFirstSightsAtOnce: many first requests of one identity make one user,
// on both stores.
func TestFirstSightsAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		us := users.New(st)
		ctx := context.Background()
		var wg sync.WaitGroup
		ids := make([]string, 20)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u, err := us.EnsureExternal(ctx, "https://idp", "same", "bob", "", "")
				if err != nil {
					t.Errorf("EnsureExternal: %v", err)
					return
				}
				ids[i] = u.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("one identity made several users: %v", ids)
			}
		}
	})
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{Issuer: "", Audience: audience},
		{Issuer: "http://idp.example", Audience: audience},
		{Issuer: "https://idp.example", Audience: "nexus"},
		{Issuer: "https://idp.example", Audience: audience, TierValues: map[string][]string{"gold": {"x"}}},
		{Issuer: "https://idp.example?x=1", Audience: audience},
	} {
		if _, err := New(c, nil); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	if _, err := New(Config{Issuer: "http://127.0.0.1:9", Audience: audience}, nil); err != nil {
		t.Errorf("a loopback issuer over http: %v", err)
	}
}

// FuzzVerify: whatever a client sends as a token, verification answers an
// error or claims, never panics.
func FuzzVerify(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.e30.sig")
	f.Add("a.b.c")
	f.Add("")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	v, err := New(Config{Issuer: "http://127.0.0.1:1", Audience: audience, JWKSURL: "http://127.0.0.1:1/jwks",
		HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	v.keys = &jose.JSONWebKeySet{}
	v.fetchedAt, v.tried = time.Now(), time.Now()
	f.Fuzz(func(t *testing.T, token string) {
		v.Verify(context.Background(), token)
	})
}

// FuzzClaims: whatever the claims hold, mapping them to a user's name, role
// and tier never panics, and a name it gives is a valid user name.
func FuzzClaims(f *testing.F) {
	f.Add(`{"sub":"1","preferred_username":"Alice","groups":["staff","nexus-admins"]}`)
	f.Add(`{"sub":"1","preferred_username":"  ","groups":"students staff"}`)
	f.Add(`{"sub":1,"preferred_username":["x"],"groups":{"a":1}}`)
	v := &Verifier{cfg: Config{UserClaim: "preferred_username", RoleClaim: "groups", AdminValues: []string{"nexus-admins"},
		TierClaim: "groups", TierValues: map[string][]string{"paid": {"staff"}}, DefaultTier: "free"}}
	f.Fuzz(func(t *testing.T, raw string) {
		c := &Claims{}
		if json.Unmarshal([]byte(raw), &c.All) != nil {
			return
		}
		c.Subject, _ = c.All["sub"].(string)
		name, _, _, err := v.identity(c)
		if err == nil {
			if err := users.CheckName(users.UserName(name)); err != nil {
				t.Fatalf("name %q gives %q: %v", name, users.UserName(name), err)
			}
		}
	})
}

// TestDisabledWithinSeconds: a verified token is trusted for
// users.CacheFor only, so disabling its user takes effect as soon as for an
// API token.
func TestDisabledWithinSeconds(t *testing.T) {
	is := newIssuer(t)
	st := storetest.OpenTestSQLite(t)
	v := newVerifier(t, is, st, nil)
	now := time.Now()
	v.now = func() time.Time { return now }
	ctx := context.Background()
	tok := is.sign(t, "r1", map[string]any{"sub": "9", "preferred_username": "carol"})
	if _, err := v.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	d := true
	if _, err := users.New(st).Set(ctx, "carol", users.Change{Disabled: &d}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authenticate(ctx, tok); err != nil {
		t.Fatalf("within the cache time the token still works (as an API token's): %v", err)
	}
	now = now.Add(users.CacheFor)
	if _, err := v.Authenticate(ctx, tok); !errors.Is(err, users.ErrDisabled) {
		t.Fatalf("after %s the disabled user is refused: %v", users.CacheFor, err)
	}
}
