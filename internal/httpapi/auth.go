package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Authenticator finds the user a bearer token acts as; an error means the
// token does not authenticate anyone (unknown, revoked, of a disabled user).
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*users.User, error)
}

// WebSocketPath is the chat's WebSocket endpoint, whose upgrade may come
// without a token (the first frame carries it).
const WebSocketPath = "/ws"

// ResourceMetadataPath serves the protected resource metadata (RFC 9728)
// that a 401's WWW-Authenticate names, as the MCP authorization
// specification says.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// authenticate decides who each request acts as (the MCP authorization
// specification's resource server side). The SDK's auth.RequireBearerToken
// is not used as is because Nexus answers in its one error shape, lets
// requests without a token act as the local user on a loopback-only
// listener, and refuses tokens in URLs; it serves the SDK's metadata
// handler.
//
//   - A request with "Authorization: Bearer TOKEN" acts as the token's user;
//     any other Authorization, or a token that authenticates no one, is 401.
//   - Without a token: on a loopback-only listener the request acts as
//     [users.Local]; otherwise it is 401.
//   - A token in the URL (access_token) is refused: URLs are logged.
//   - GET /healthz, GET /readyz and the metadata need no token.
//
// Without an Authenticator (Options.Auth nil) every request acts as the
// local user: serve allows that only on a loopback-only listener.
//
// A 401 carries WWW-Authenticate: Bearer resource_metadata="…" (and
// error="invalid_token" when a token was given).
//
// The guard calls it before reading a request's body, so that a client
// without a token costs no more than its headers.
func authenticate(o Options, w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if o.Auth == nil {
		// Authentication is off: serve allows that on a loopback-only
		// listener alone (and tests build handlers so).
		return r.WithContext(users.WithUser(r.Context(), &users.Local)), true
	}
	if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || strings.HasPrefix(r.URL.Path, ResourceMetadataPath)) {
		return r, true
	}
	if o.UI != nil && isPage(r) && r.Header.Get("Authorization") == "" {
		// The web UI's page and assets hold no data: they load without a
		// token, so that a browser beyond loopback reaches the sign-in
		// screen; every request the page makes for data needs one.
		return r, true
	}
	if r.URL.Query().Has("access_token") {
		errs.Write(w, http.StatusBadRequest, errs.Invalid("access_token", "tokens are not accepted in URLs (they end up in logs): send the header Authorization: Bearer TOKEN"))
		return nil, false
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		if o.Loopback {
			return r.WithContext(users.WithUser(r.Context(), &users.Local)), true
		}
		if r.URL.Path == WebSocketPath && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			// Browsers cannot set headers on a WebSocket: the chat surface
			// authenticates the connection's first frame instead.
			return r, true
		}
		challenge(w, r, "", "authentication required: send Authorization: Bearer TOKEN (nexus users add NAME prints one)")
		return nil, false
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		challenge(w, r, "invalid_request", "the Authorization header is not \"Bearer TOKEN\"")
		return nil, false
	}
	u, err := o.Auth.Authenticate(r.Context(), token)
	if err != nil {
		o.Logger.Info("request refused: token does not authenticate", "path", r.URL.Path, "reason", err)
		challenge(w, r, "invalid_token", "the token does not authenticate a user of this server")
		return nil, false
	}
	if o.TokenLimit != nil {
		if ok, wait := o.TokenLimit.Allow(r.Context(), u.ID); !ok {
			secs := quota.RetrySeconds(wait)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			e := errs.E(errs.RateLimited, "too many requests for this user: at most %s a second; retry in %d s", strconv.FormatFloat(o.TokenLimit.Rate(), 'g', -1, 64), secs)
			e.RetryAfter = secs
			errs.Write(w, http.StatusTooManyRequests, e)
			return nil, false
		}
	}
	return r.WithContext(users.WithUser(r.Context(), u)), true
}

// baseURL is the scheme and host the request reached Nexus at.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// challenge answers 401 with the MCP authorization specification's
// WWW-Authenticate header.
func challenge(w http.ResponseWriter, r *http.Request, code, message string) {
	v := `Bearer resource_metadata="` + baseURL(r) + ResourceMetadataPath + `"`
	if code != "" {
		v += `, error="` + code + `"`
	}
	w.Header().Set("WWW-Authenticate", v)
	errs.Write(w, http.StatusUnauthorized, errs.E(errs.Unauthorized, "%s", message))
}

// resourceMetadata serves RFC 9728 protected resource metadata: Nexus's MCP
// endpoint is the resource (resource, when configured, else the URL the
// request reached), bearer tokens go in the header, and the authorization
// servers are those whose tokens Nexus accepts (OAuth mode).
func resourceMetadata(resource string, servers []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res := resource
		if res == "" {
			res = baseURL(r) + "/mcp"
		}
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               res,
			AuthorizationServers:   servers,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "Nexus",
		}).ServeHTTP(w, r)
	}
}

// adminsOnly serves h to admins (and the local user) alone: what it shows
// spans every user (the metrics count every user's calls of every tool).
func adminsOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := users.FromContext(r.Context()); ok && !u.Principal().Admin() {
			errs.Write(w, http.StatusForbidden, errs.E(errs.Forbidden, "%s is for admins: it counts every user's calls", r.URL.Path))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isPage reports whether r asks for the web UI itself: GET (or HEAD) of
// an asset under /ui/, or of / by a browser (Accept: text/html; any other
// client gets the JSON index, which needs a token).
func isPage(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return strings.HasPrefix(r.URL.Path, "/ui/") || r.URL.Path == "/" && strings.Contains(r.Header.Get("Accept"), "text/html")
}
