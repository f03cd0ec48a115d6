package users

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/access/principal"
)

// Local is the user a request acts as without a token where that is allowed:
// stdio, and HTTP on a loopback-only listener (only this machine can reach
// it). It is an admin of the paid tier.
var Local = User{ID: principal.Local.ID, Name: principal.Local.Name, Tier: principal.Local.Tier, Role: principal.Local.Role}

// Principal is who a call by u acts as, for access control.
func (u *User) Principal() principal.Principal {
	return principal.Principal{ID: u.ID, Name: u.Name, Tier: u.Tier, Role: u.Role}
}

type userKey struct{}

// WithUser returns ctx acting as u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// FromContext returns the user ctx acts as, if any.
func FromContext(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok
}
