// Package access decides what a caller may do (SPEC section 8, issue 10):
// which tools they may see and call (the configuration's access rules) and
// which workspaces they may act in (owners and members, kept in the store).
// The pipeline asks it on every call, through pipeline.Authorizer, so every
// surface enforces the same rules.
//
// Admins may do everything. A user who is not an admin:
//   - sees and calls only the tools the access rules allow them;
//   - acts only in workspaces they own or are a member of, and in their
//     personal workspace "user:NAME" (their calls' default); a workspace
//     nobody holds yet becomes theirs when they first use it;
//   - never uses another's personal workspace, nor a workspace without an
//     owner ("default" and those holding data from before owners: admins'
//     until an admin gives them one).
package access

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/ids"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// PersonalPrefix starts every personal workspace: "user:" and the user's
// name. The prefix is reserved in any case ([CheckWorkspace]).
const PersonalPrefix = "user:"

// AdminWorkspace is the default workspace of admins (and of the local user).
const AdminWorkspace = "default"

// CacheFor is how long a decision on a workspace is trusted without reading
// the store again: a membership removed by another process takes effect
// within it (one made by this process, at once).
const CacheFor = 5 * time.Second

// maxCached bounds the decisions kept.
const maxCached = 100_000

// Personal is the personal workspace of the user named name.
func Personal(name string) string { return PersonalPrefix + name }

// IsPersonal reports whether ws is, or looks like, a personal workspace: it
// starts with [PersonalPrefix] in any case.
func IsPersonal(ws string) bool {
	return len(ws) >= len(PersonalPrefix) && strings.EqualFold(ws[:len(PersonalPrefix)], PersonalPrefix)
}

// CheckWorkspace reports why ws cannot name a workspace (BAD_REQUEST): it
// is not a valid id ([ids.Valid]), or it looks like a personal workspace
// without being one's exact id: personal workspace ids are lower case, as
// user names are, so "USER:BOB" or "user:Bob" would pass for bob's. Every
// way a workspace is created checks it.
func CheckWorkspace(ws string) error {
	switch {
	case !ids.Valid(ws):
		return errs.Invalid("workspaceId", "workspace id %q must be %s", ws, ids.Rule)
	case IsPersonal(ws) && ws != strings.ToLower(ws):
		return errs.Invalid("workspaceId", "workspace id %q is reserved: ids starting with %q in any case are personal workspaces, "+
			"whose ids are lower case (%s)", ws, PersonalPrefix, strings.ToLower(ws))
	}
	return nil
}

// Authorizer decides calls' access; it implements pipeline.Authorizer. It is
// safe for concurrent use.
type Authorizer struct {
	st    *store.Store
	rules atomic.Pointer[config.Access]
	now   func() time.Time

	mu sync.Mutex
	// decided holds recent decisions by workspace and user id.
	decided map[decisionKey]decision
	// generation counts the times decided was dropped: a decision read
	// before a drop is not kept (it may predate the change behind it).
	generation uint64
	// changed are called after this process changed owners or members
	// ([Authorizer.OnChange]).
	changed []func(context.Context)
}

type decisionKey struct{ workspace, user string }

type decision struct {
	allowed bool
	at      time.Time
}

// New returns the authorizer of st's workspaces under rules.
func New(st *store.Store, rules config.Access) *Authorizer {
	a := &Authorizer{st: st, now: store.Now, decided: map[decisionKey]decision{}}
	a.SetRules(rules)
	return a
}

// SetRules replaces the access rules (a reloaded configuration's); the
// next decision on a tool follows them.
func (a *Authorizer) SetRules(rules config.Access) {
	a.rules.Store(&rules)
}

// Tool reports whether who may see and call t: admins may use every tool;
// anyone else, a tool every applying rule allows (its toolbox's and each
// tool rule whose pattern matches its flat name).
func (a *Authorizer) Tool(who principal.Principal, t *registry.Tool) bool {
	rules := a.rules.Load()
	if who.Admin() || rules.Empty() {
		return true
	}
	if r, ok := rules.Toolboxes[t.ID.Toolbox]; ok && !allows(r, who) {
		return false
	}
	name := t.ID.Name()
	for _, r := range rules.Tools {
		if ok, _ := path.Match(r.Pattern, name); ok && !allows(r.Rule, who) {
			return false
		}
	}
	return true
}

// Toolbox reports whether who may know of toolbox at all: admins may;
// anyone else unless a rule refuses them every tool of it (its toolbox's
// rule, or a tool rule whose pattern matches every name the toolbox can
// hold: "*", or a literal head of "toolbox__" followed by a final "*").
// Surfaces describe a toolbox to who only when it is allowed, and treat a
// refused one as missing.
func (a *Authorizer) Toolbox(who principal.Principal, toolbox string) bool {
	rules := a.rules.Load()
	if who.Admin() || rules.Empty() {
		return true
	}
	if r, ok := rules.Toolboxes[toolbox]; ok && !allows(r, who) {
		return false
	}
	prefix := toolbox + "__" // the head of its tools' flat names
	if toolbox == registry.BuiltinToolbox {
		prefix = "" // local tools' flat names are their own
	}
	for _, r := range rules.Tools {
		if allows(r.Rule, who) || !strings.HasSuffix(r.Pattern, "*") {
			continue
		}
		head := strings.TrimSuffix(r.Pattern, "*")
		if strings.ContainsAny(head, "*?[\\") {
			continue
		}
		if head == "" || (prefix != "" && strings.HasPrefix(prefix, head)) {
			return false
		}
	}
	return true
}

// Server reports whether who may reach every tool of server in toolbox at
// once (the per-server proxy, which passes messages unchanged and so cannot
// hide one tool): admins may; anyone else when their toolbox's rule allows
// them and no tool rule that refuses them could match a tool of that server
// (a pattern naming the server's tools, or starting with a wildcard).
func (a *Authorizer) Server(who principal.Principal, toolbox, server string) bool {
	rules := a.rules.Load()
	if who.Admin() || rules.Empty() {
		return true
	}
	if r, ok := rules.Toolboxes[toolbox]; ok && !allows(r, who) {
		return false
	}
	prefix := registry.ID{Toolbox: toolbox, Server: server, Tool: "x"}.Name()
	prefix = prefix[:len(prefix)-1]
	for _, r := range rules.Tools {
		if allows(r.Rule, who) {
			continue
		}
		literal := r.Pattern
		if i := strings.IndexAny(literal, "*?[\\"); i >= 0 {
			literal = literal[:i]
		}
		// The pattern's literal head is a prefix of the server's tool
		// names, or they are a prefix of it: it may match one of them.
		if strings.HasPrefix(prefix, literal) || strings.HasPrefix(literal, prefix) {
			return false
		}
	}
	return true
}

func allows(r config.Rule, who principal.Principal) bool {
	return slices.Contains(r.Roles, who.Role) || slices.Contains(r.Users, who.Name)
}

// DefaultWorkspace is the workspace of who's calls that name none: "default"
// for admins, the personal workspace for anyone else.
func (a *Authorizer) DefaultWorkspace(who principal.Principal) string {
	if who.Admin() {
		return AdminWorkspace
	}
	return Personal(who.Name)
}

// Workspace returns nil when who may act in ws, else a FORBIDDEN error
// naming it. A workspace nobody holds becomes who's (admins' too, so that a
// workspace an admin uses is not taken by the next user).
func (a *Authorizer) Workspace(ctx context.Context, who principal.Principal, ws string) error {
	k := decisionKey{ws, who.ID}
	now := a.now()
	a.mu.Lock()
	d, ok := a.decided[k]
	generation := a.generation
	a.mu.Unlock()
	if !ok || now.Sub(d.at) >= CacheFor {
		allowed, err := a.decide(ctx, who, ws)
		if err != nil {
			return err
		}
		d = decision{allowed: allowed, at: now}
		a.mu.Lock()
		if len(a.decided) >= maxCached {
			clear(a.decided)
		}
		if a.generation == generation {
			a.decided[k] = d
		}
		a.mu.Unlock()
	}
	if d.allowed {
		return nil
	}
	if IsPersonal(ws) {
		return errs.E(errs.Forbidden, "workspace %q is another user's personal workspace; leave the workspace out to use yours (%s)", ws, Personal(who.Name))
	}
	return errs.E(errs.Forbidden, "workspace %q is not one of yours: its owner, or an admin, can add you (nexus workspaces add-member %s %s); "+
		"leave the workspace out to use your own (%s)", ws, ws, who.Name, Personal(who.Name))
}

// decide reads whether who may act in ws, claiming ws for who when nobody
// holds it.
func (a *Authorizer) decide(ctx context.Context, who principal.Principal, ws string) (bool, error) {
	if err := CheckWorkspace(ws); err != nil {
		return false, err
	}
	personal := IsPersonal(ws)
	own := personal && ws == Personal(who.Name)
	if !who.Admin() && personal && !own {
		return false, nil
	}
	owner, member, found, err := a.lookup(ctx, ws, who.ID)
	if err != nil {
		return false, err
	}
	if !found {
		if err := a.claim(ctx, ws, who.ID); err != nil {
			return false, err
		}
		if owner, member, _, err = a.lookup(ctx, ws, who.ID); err != nil {
			return false, err
		}
	}
	switch {
	case who.Admin(), own:
		return true, nil
	}
	return owner == who.ID && owner != "" || member, nil
}

// lookup reads ws's owner and whether user is a member.
func (a *Authorizer) lookup(ctx context.Context, ws, user string) (owner string, member, found bool, err error) {
	var o sql.NullString
	var m int
	err = a.st.DB().QueryRowContext(ctx, a.st.Q(`SELECT w.owner_id,
		(SELECT COUNT(*) FROM workspace_members m WHERE m.workspace_id = w.id AND m.user_id = ?)
		FROM workspaces w WHERE w.id = ?`), user, ws).Scan(&o, &m)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("read workspace %q: %w", ws, err)
	}
	return o.String, m > 0, true, nil
}

// claim makes ws user's unless somebody holds it already.
func (a *Authorizer) claim(ctx context.Context, ws, user string) error {
	if err := CheckWorkspace(ws); err != nil {
		return err
	}
	if _, err := a.st.DB().ExecContext(ctx, a.st.Q(`INSERT INTO workspaces (id, owner_id, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		ws, user, store.Micros(a.now())); err != nil {
		return fmt.Errorf("claim workspace %q: %w", ws, err)
	}
	return nil
}

// forget drops the cached decisions after a change made by this process,
// which takes effect at once here, and tells the functions of
// [Authorizer.OnChange] (other processes forget theirs when they hear of
// it, or within CacheFor).
func (a *Authorizer) forget(ctx context.Context) {
	a.Forget()
	a.mu.Lock()
	fns := slices.Clone(a.changed)
	a.mu.Unlock()
	for _, fn := range fns {
		fn(ctx)
	}
}

// Forget drops the cached decisions on workspaces: another process changed
// owners or members, and the next call in each workspace reads the store.
func (a *Authorizer) Forget() {
	a.mu.Lock()
	clear(a.decided)
	a.generation++
	a.mu.Unlock()
}

// OnChange registers fn, called after this process changes a workspace's
// owner or members (what other processes cache for up to CacheFor), so
// that it can tell them to [Authorizer.Forget].
func (a *Authorizer) OnChange(fn func(context.Context)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.changed = append(a.changed, fn)
}
