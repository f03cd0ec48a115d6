package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/nexus-mcp/nexus/internal/oauth"
)

// oauthFlags registers serve's --oauth-* flags; the returned function
// checks them and gives the OAuth configuration, or nil when OAuth is off
// (no --oauth-issuer).
func oauthFlags(fs *flag.FlagSet) func() (*oauth.Config, error) {
	issuer := fs.String("oauth-issuer", os.Getenv("NEXUS_OAUTH_ISSUER"), "accept the JWT access tokens of this OAuth issuer (an identity provider's issuer URL) (env NEXUS_OAUTH_ISSUER)")
	audience := fs.String("oauth-audience", os.Getenv("NEXUS_OAUTH_AUDIENCE"), "this server's resource URL, which tokens' aud must hold, e.g. https://nexus.example.edu/mcp (env NEXUS_OAUTH_AUDIENCE)")
	jwks := fs.String("oauth-jwks-url", os.Getenv("NEXUS_OAUTH_JWKS_URL"), "where the issuer publishes its keys; default: from the issuer's metadata (env NEXUS_OAUTH_JWKS_URL)")
	userClaim := fs.String("oauth-user-claim", envOr("NEXUS_OAUTH_USER_CLAIM", "sub"), "the claim that names the user (env NEXUS_OAUTH_USER_CLAIM)")
	roleClaim := fs.String("oauth-role-claim", os.Getenv("NEXUS_OAUTH_ROLE_CLAIM"), "a claim (string or list) that makes a user an admin when it holds one of --oauth-admin-values (env NEXUS_OAUTH_ROLE_CLAIM)")
	adminValues := fs.String("oauth-admin-values", os.Getenv("NEXUS_OAUTH_ADMIN_VALUES"), "comma-separated values of --oauth-role-claim that make an admin (env NEXUS_OAUTH_ADMIN_VALUES)")
	tierClaim := fs.String("oauth-tier-claim", os.Getenv("NEXUS_OAUTH_TIER_CLAIM"), "a claim (string or list) whose values set the user's tier by --oauth-tiers (env NEXUS_OAUTH_TIER_CLAIM)")
	tiers := fs.String("oauth-tiers", os.Getenv("NEXUS_OAUTH_TIERS"), "comma-separated TIER=VALUE pairs, e.g. paid=staff,free=students; paid wins over free over anonymous; others are free (env NEXUS_OAUTH_TIERS)")
	return func() (*oauth.Config, error) {
		if *issuer == "" {
			for _, f := range []struct{ name, v string }{{"--oauth-audience", *audience}, {"--oauth-jwks-url", *jwks},
				{"--oauth-role-claim", *roleClaim}, {"--oauth-tier-claim", *tierClaim}} {
				if f.v != "" {
					return nil, fmt.Errorf("%s needs --oauth-issuer (env NEXUS_OAUTH_ISSUER): the identity provider whose tokens to accept", f.name)
				}
			}
			return nil, nil
		}
		if *audience == "" {
			return nil, fmt.Errorf("--oauth-issuer needs --oauth-audience (env NEXUS_OAUTH_AUDIENCE): this server's resource URL, which the tokens' aud must hold")
		}
		cfg := &oauth.Config{Issuer: *issuer, Audience: *audience, JWKSURL: *jwks, UserClaim: *userClaim,
			RoleClaim: *roleClaim, AdminValues: splitList(*adminValues), TierClaim: *tierClaim}
		if len(cfg.AdminValues) > 0 && cfg.RoleClaim == "" {
			return nil, fmt.Errorf("--oauth-admin-values needs --oauth-role-claim: the claim those values are read from")
		}
		if *tiers != "" {
			if cfg.TierClaim == "" {
				return nil, fmt.Errorf("--oauth-tiers needs --oauth-tier-claim: the claim those values are read from")
			}
			cfg.TierValues = map[string][]string{}
			for _, pair := range splitList(*tiers) {
				tier, value, ok := strings.Cut(pair, "=")
				if !ok || value == "" {
					return nil, fmt.Errorf("--oauth-tiers: %q is not TIER=VALUE (e.g. paid=staff)", pair)
				}
				cfg.TierValues[tier] = append(cfg.TierValues[tier], value)
			}
		}
		return cfg, nil
	}
}
