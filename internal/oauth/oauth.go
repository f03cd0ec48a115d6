// Package oauth is Nexus's OAuth 2.1 resource-server mode (issue 10, the MCP
// authorization specification): organisations with an identity provider
// point Nexus at it, and Nexus validates the provider's JWT access tokens
// itself: the signature against the issuer's published keys (JWKS, fetched
// once, cached, refreshed on a period and when a token names a key it does
// not know), the issuer, the audience (this resource, RFC 8707), expiry and
// validity times. The token's claims name a Nexus user, created the first
// time it is seen, whose role and tier follow configured claims.
//
// JWS and JWK handling is github.com/go-jose/go-jose/v4: well kept, few
// dependencies, and what go-oidc and Kubernetes verify tokens with; this
// package never parses or verifies a signature itself.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Config says which provider's tokens Nexus accepts and how their claims
// map to users.
type Config struct {
	// Issuer is the provider's issuer identifier (https; http only for a
	// loopback host), compared exactly with a token's iss.
	Issuer string
	// Audience is this resource's canonical URL (RFC 8707), which a token's
	// aud must contain, e.g. https://nexus.example.edu/mcp.
	Audience string
	// JWKSURL is where the provider publishes its keys; empty: found in the
	// issuer's metadata (RFC 8414, then OpenID Connect discovery).
	JWKSURL string
	// UserClaim names the user (default "sub"); its value becomes the
	// user's name, made valid.
	UserClaim string
	// RoleClaim, when set, is a claim (a string or a list of strings) that
	// makes the user an admin when it holds one of AdminValues, else a
	// member.
	RoleClaim   string
	AdminValues []string
	// TierClaim, when set, is a claim (a string or list) whose values map to
	// tiers by TierValues (tier -> claim values; paid wins over free over
	// anonymous); DefaultTier otherwise (default "free").
	TierClaim   string
	TierValues  map[string][]string
	DefaultTier string
	// Leeway allows for clock skew in exp, nbf and iat (default 60 s).
	Leeway time.Duration
	// Refresh is how often the keys are fetched again (default 10 min).
	Refresh time.Duration
	// HTTPClient fetches metadata and keys (default: a client with a 10 s
	// timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Algorithms are the signature algorithms accepted: asymmetric only (never
// none, never HMAC, whose "key" would be the public key).
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// Errors of verification, told apart in logs; an HTTP client gets the same
// 401 for each.
var (
	ErrMalformed    = errors.New("not a signed JWT")
	ErrUnknownKey   = errors.New("signed with a key the issuer does not publish")
	ErrSignature    = errors.New("bad signature")
	ErrIssuer       = errors.New("issued by another issuer")
	ErrAudience     = errors.New("for another audience")
	ErrExpired      = errors.New("expired")
	ErrNotYetValid  = errors.New("not valid yet")
	ErrNoExpiry     = errors.New("no expiry (exp)")
	ErrNoUser       = errors.New("no user claim")
	ErrKeysFetching = errors.New("the issuer's keys cannot be fetched")
)

// maxCached bounds the verified tokens kept; cacheFor bounds how long one is
// trusted without verifying it again: as long as an API token
// (users.CacheFor), so that disabling a user takes effect as soon.
const (
	maxCached = 100_000
	cacheFor  = users.CacheFor
	// minKeyFetchGap is the least time between two fetches of the keys
	// caused by unknown key ids, so that a flood of tokens naming bogus keys
	// cannot make Nexus hammer the provider.
	minKeyFetchGap = 30 * time.Second
	maxBody        = 1 << 20
)

// Verifier validates access tokens and finds their users. It implements
// the HTTP front's Authenticator. It is safe for concurrent use.
type Verifier struct {
	cfg   Config
	users *users.Users
	now   func() time.Time
	log   *slog.Logger

	mu        sync.Mutex
	keys      *jose.JSONWebKeySet
	fetchedAt time.Time
	tried     time.Time // last fetch attempt
	jwksURL   string
	verified  map[[32]byte]verified
}

type verified struct {
	user  *users.User
	until time.Time
}

// New returns a verifier of cfg's tokens whose users are us's. Keys are
// fetched on first use.
func New(cfg Config, us *users.Users) (*Verifier, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = "sub"
	}
	if cfg.DefaultTier == "" {
		cfg.DefaultTier = users.Free
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = time.Minute
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 10 * time.Minute
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Verifier{cfg: cfg, users: us, now: time.Now, log: cfg.Logger, jwksURL: cfg.JWKSURL, verified: map[[32]byte]verified{}}, nil
}

// check reports what is wrong with a configuration, naming the setting.
func (c Config) check() error {
	if err := checkURL("issuer", c.Issuer); err != nil {
		return err
	}
	if err := checkURL("audience", c.Audience); err != nil {
		return err
	}
	if c.JWKSURL != "" {
		if err := checkURL("JWKS URL", c.JWKSURL); err != nil {
			return err
		}
	}
	for tier := range c.TierValues {
		if err := users.CheckTier(tier); err != nil {
			return fmt.Errorf("oauth tiers: %w", err)
		}
	}
	if c.DefaultTier != "" {
		if err := users.CheckTier(c.DefaultTier); err != nil {
			return fmt.Errorf("oauth default tier: %w", err)
		}
	}
	return nil
}

// checkURL refuses what is not an absolute https URL (http for a loopback
// host: a provider on this machine).
func checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oauth %s %q: not an absolute URL", what, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return fmt.Errorf("oauth %s %q: must be https (http only for a loopback host)", what, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("oauth %s %q: must have no query or fragment", what, raw)
	}
	return nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// Resource is the resource (audience) tokens must be for.
func (v *Verifier) Resource() string { return v.cfg.Audience }

// Issuer is the authorization server whose tokens are accepted.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// Authenticate returns the user of an access token, creating the user the
// first time the identity is seen. Any failure is an error (see the Err
// values) and nothing is told a client beyond "invalid token".
func (v *Verifier) Authenticate(ctx context.Context, token string) (*users.User, error) {
	h := sha256.Sum256([]byte(token))
	now := v.now()
	v.mu.Lock()
	if c, ok := v.verified[h]; ok && now.Before(c.until) {
		v.mu.Unlock()
		u := *c.user
		return &u, nil
	}
	v.mu.Unlock()
	claims, err := v.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	name, role, tier, err := v.identity(claims)
	if err != nil {
		return nil, err
	}
	u, err := v.users.EnsureExternal(ctx, v.cfg.Issuer, claims.Subject, name, tier, role)
	if err != nil {
		return nil, err
	}
	until := now.Add(cacheFor)
	if exp := claims.Expiry.Time(); exp.Before(until) {
		until = exp
	}
	v.mu.Lock()
	if len(v.verified) >= maxCached {
		clear(v.verified)
	}
	kept := *u
	v.verified[h] = verified{user: &kept, until: until}
	v.mu.Unlock()
	return u, nil
}

// Claims are a verified token's claims: the registered ones and all of
// them by name.
type Claims struct {
	jwt.Claims
	All map[string]any
}

// Verify checks a token's signature, issuer, audience and times, and
// returns its claims.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	tok, err := jwt.ParseSigned(token, Algorithms)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(tok.Headers) != 1 {
		return nil, ErrMalformed
	}
	kid := tok.Headers[0].KeyID
	key, err := v.key(ctx, kid, tok.Headers[0].Algorithm)
	if err != nil {
		return nil, err
	}
	c := &Claims{}
	if err := tok.Claims(key, &c.Claims, &c.All); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	if c.Expiry == nil {
		return nil, ErrNoExpiry
	}
	err = c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: v.now()}, v.cfg.Leeway)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, ErrIssuer
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, ErrAudience
	case errors.Is(err, jwt.ErrExpired):
		return nil, ErrExpired
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, ErrNotYetValid
	}
	return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
}

// identity maps claims to the user's name, role and tier. Role and tier are
// empty when no claim decides them (a new user gets the defaults; a known
// one keeps theirs).
func (v *Verifier) identity(c *Claims) (name, role, tier string, err error) {
	if c.Subject == "" {
		return "", "", "", fmt.Errorf("%w: sub", ErrNoUser)
	}
	name, _ = c.All[v.cfg.UserClaim].(string)
	if strings.TrimSpace(name) == "" {
		return "", "", "", fmt.Errorf("%w: %s", ErrNoUser, v.cfg.UserClaim)
	}
	if v.cfg.RoleClaim != "" {
		role = principal.Member
		if slices.ContainsFunc(claimValues(c.All[v.cfg.RoleClaim]), func(s string) bool { return slices.Contains(v.cfg.AdminValues, s) }) {
			role = principal.Admin
		}
	}
	if v.cfg.TierClaim != "" {
		tier = v.cfg.DefaultTier
		vals := claimValues(c.All[v.cfg.TierClaim])
		for _, t := range []string{users.Paid, users.Free, users.Anonymous} {
			if slices.ContainsFunc(vals, func(s string) bool { return slices.Contains(v.cfg.TierValues[t], s) }) {
				tier = t
				break
			}
		}
	}
	return name, role, tier, nil
}

// claimValues reads a claim that is a string, a list of strings, or a
// space-separated string (as OAuth's scope is).
func claimValues(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// key returns the issuer's key kid, fetching the keys when they are stale
// or do not have it (at most once per minKeyFetchGap for unknown ids).
func (v *Verifier) key(ctx context.Context, kid string, alg string) (*jose.JSONWebKey, error) {
	now := v.now()
	v.mu.Lock()
	keys, fetched, tried := v.keys, v.fetchedAt, v.tried
	v.mu.Unlock()
	if k := find(keys, kid, alg); k != nil && (now.Sub(fetched) < v.cfg.Refresh || now.Sub(tried) < minKeyFetchGap) {
		// Fresh, or being (or just) refreshed by another request: the
		// known key verifies meanwhile.
		return k, nil
	}
	stale := keys == nil || now.Sub(fetched) >= v.cfg.Refresh
	if !stale && now.Sub(tried) < minKeyFetchGap {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	if err := v.fetchKeys(ctx); err != nil {
		if keys != nil {
			// The provider is down: the keys known still verify.
			if k := find(keys, kid, alg); k != nil {
				v.log.Warn("oauth: refreshing the issuer's keys failed; using the known ones", "err", err)
				return k, nil
			}
		}
		return nil, err
	}
	v.mu.Lock()
	keys = v.keys
	v.mu.Unlock()
	if k := find(keys, kid, alg); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
}

// find returns the signing key kid of set (the only key when kid is empty
// and there is one).
func find(set *jose.JSONWebKeySet, kid, alg string) *jose.JSONWebKey {
	if set == nil {
		return nil
	}
	var match []jose.JSONWebKey
	if kid == "" {
		match = set.Keys
	} else {
		match = set.Key(kid)
	}
	var usable []jose.JSONWebKey
	for _, k := range match {
		if k.IsPublic() && (k.Use == "" || k.Use == "sig") && (k.Algorithm == "" || k.Algorithm == alg) {
			usable = append(usable, k)
		}
	}
	if len(usable) != 1 {
		return nil
	}
	return &usable[0]
}

// fetchKeys fetches the issuer's keys (finding where they are first, when
// not configured).
func (v *Verifier) fetchKeys(ctx context.Context) error {
	v.mu.Lock()
	v.tried = v.now()
	where := v.jwksURL
	v.mu.Unlock()
	if where == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return err
		}
		where = u
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, where, &set); err != nil {
		return fmt.Errorf("%w: %v", ErrKeysFetching, err)
	}
	v.mu.Lock()
	v.keys, v.fetchedAt, v.jwksURL = &set, v.now(), where
	v.mu.Unlock()
	v.log.Info("oauth: fetched the issuer's keys", "keys", len(set.Keys))
	return nil
}

// discover finds the issuer's jwks_uri in its metadata: RFC 8414's
// /.well-known/oauth-authorization-server, then OpenID Connect's
// /.well-known/openid-configuration.
func (v *Verifier) discover(ctx context.Context) (string, error) {
	iss := strings.TrimSuffix(v.cfg.Issuer, "/")
	u, _ := url.Parse(iss)
	var tried []string
	for _, where := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + u.Path,
		iss + "/.well-known/openid-configuration",
	} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, where, &meta); err != nil {
			tried = append(tried, err.Error())
			continue
		}
		if meta.Issuer != v.cfg.Issuer || meta.JWKSURI == "" {
			tried = append(tried, fmt.Sprintf("%s: issuer %q, jwks_uri %q", where, meta.Issuer, meta.JWKSURI))
			continue
		}
		if err := checkURL("jwks_uri", meta.JWKSURI); err != nil {
			return "", fmt.Errorf("%w: %v", ErrKeysFetching, err)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("%w: no metadata with this issuer and a jwks_uri (%s)", ErrKeysFetching, strings.Join(tried, "; "))
}

// getJSON fetches a JSON document of at most maxBody bytes.
func (v *Verifier) getJSON(ctx context.Context, where string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", where, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", where, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("GET %s: more than %d bytes", where, maxBody)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w", where, err)
	}
	return nil
}

// Either authenticates Nexus API tokens (nxs_...) with Tokens and anything
// else with JWT: both kinds of bearer token on one server.
type Either struct {
	Tokens *users.Users
	JWT    *Verifier
}

// Authenticate implements the HTTP front's Authenticator.
func (e Either) Authenticate(ctx context.Context, token string) (*users.User, error) {
	if strings.HasPrefix(token, users.TokenPrefix) || e.JWT == nil {
		return e.Tokens.Authenticate(ctx, token)
	}
	return e.JWT.Authenticate(ctx, token)
}
