// Package principal is who a call acts as, as access control sees it: the
// user's id, name, tier and role; the roles, with the one definition of an
// admin; and the one rule for who may use a conversation. It is a
// foundation, so that the registry's tool calls can carry their principal
// and every layer above asks the same rule.
package principal

import "slices"

// The roles a user may have.
const (
	// Admin is the role of users who see and may do everything.
	Admin = "admin"
	// Member is the role of every other user: they see what the access
	// rules allow them, their own workspaces and their own conversations.
	Member = "member"
)

// Roles returns the roles, admin first.
func Roles() []string { return []string{Admin, Member} }

// ValidRole reports whether role is one of [Roles].
func ValidRole(role string) bool { return slices.Contains(Roles(), role) }

// Principal is the user a call acts as.
type Principal struct {
	ID, Name string
	// Tier (anonymous, free, paid) sets the daily prompt quota; Role is
	// [Admin] or [Member].
	Tier, Role string
}

// Local is who a call acts as when nothing says otherwise: the local admin
// of stdio, nexus call and a loopback-only HTTP listener.
var Local = Principal{ID: "local", Name: "local", Tier: "paid", Role: Admin}

// Admin reports whether p is an admin: admins see every workspace,
// conversation and trace, and every tool.
func (p Principal) Admin() bool { return p.Role == Admin }

// OnlyOwn is the owner a listing of conversations is limited to: p's id,
// or empty for an admin, who sees everyone's.
func (p Principal) OnlyOwn() string {
	if p.Admin() {
		return ""
	}
	return p.ID
}

// MayUse reports whether p may use (call tools on, chat in, watch) a
// conversation owned by owner, the user id its store records (empty for a
// conversation older than owners): its owner and admins may, nobody else.
// A session id alone never grants it (SPEC section 8). This is the one
// rule: the pipeline and every surface ask it.
func (p Principal) MayUse(owner string) bool {
	return p.Admin() || (owner != "" && owner == p.ID)
}
