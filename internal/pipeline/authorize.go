package pipeline

// The authorize step (SPEC section 1): which tools, workspaces and conversations a caller may use.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Authorizer decides what a caller may do: the authorize step of SPEC
// section 1, the same for every surface.
type Authorizer interface {
	// Tool reports whether who may see and call t. A surface lists only the
	// tools it allows ([Pipeline.Visible]); calling another is FORBIDDEN.
	Tool(who principal.Principal, t *registry.Tool) bool
	// Toolbox reports whether who may know of the toolbox at all (by its
	// name, "nexus" for the built-in one). A surface describes a toolbox
	// only to those it allows ([Pipeline.ToolboxVisible]), and answers
	// anyone else as if it did not exist.
	Toolbox(who principal.Principal, toolbox string) bool
	// Server reports whether who may reach everything of the downstream
	// server {toolbox, server}: its prompts and resources are served to
	// such callers only ([Pipeline.ServerVisible]).
	Server(who principal.Principal, toolbox, server string) bool
	// Workspace returns nil when who may act in workspace ws, else the
	// error to answer (FORBIDDEN, naming the workspace). A workspace nobody
	// holds yet becomes who's.
	Workspace(ctx context.Context, who principal.Principal, ws string) error
	// DefaultWorkspace is the workspace of who's calls that name none.
	DefaultWorkspace(who principal.Principal) string
}

// DefaultWorkspace is the workspace of who's calls that name none.
func (p *Pipeline) DefaultWorkspace(who principal.Principal) string { return p.defaultWorkspace(who) }

// defaultWorkspace is the workspace of who's calls that name none.
func (p *Pipeline) defaultWorkspace(who principal.Principal) string {
	if p.authz != nil {
		return p.authz.DefaultWorkspace(who)
	}
	return DefaultWorkspace
}

// Visible reports whether the caller of ctx may see and call t: surfaces
// list only such tools (the authorize step's listing half).
func (p *Pipeline) Visible(ctx context.Context, t *registry.Tool) bool {
	return p.authz == nil || p.authz.Tool(p.principal(ctx), t)
}

// ServerVisible reports whether the caller of ctx may use the downstream
// server {toolbox, server}: its prompts and resources are listed and served
// to such callers only, by the same access rules as its tools.
func (p *Pipeline) ServerVisible(ctx context.Context, toolbox, server string) bool {
	return p.authz == nil || p.authz.Server(p.principal(ctx), toolbox, server)
}

// ToolboxVisible reports whether the caller of ctx may know of toolbox:
// surfaces describe (instructions, overviews), open and call into only
// such toolboxes, and answer for another as for a missing one.
func (p *Pipeline) ToolboxVisible(ctx context.Context, toolbox string) bool {
	return p.authz == nil || p.authz.Toolbox(p.principal(ctx), toolbox)
}

// checkSessionArgs refuses a call whose arguments name a conversation the
// caller may not use (registry.Tool.SessionArgs): it is NOT_FOUND, as a
// conversation that does not exist, so that nothing is disclosed.
func (p *Pipeline) checkSessionArgs(ctx context.Context, who principal.Principal, t *registry.Tool, args map[string]any) *errs.Error {
	if p.sessions == nil || who.Admin() {
		return nil
	}
	for _, name := range t.SessionArgs() {
		id, _ := args[name].(string)
		if id == "" {
			continue
		}
		_, owner, ok, err := p.sessions.Lookup(ctx, id)
		if err != nil {
			var ee *errs.Error
			if errors.As(err, &ee) && ee.Code == errs.BadRequest {
				return errs.Invalid(name, "%s", strings.TrimPrefix(ee.Message, ee.Field+": "))
			}
			return errs.From(fmt.Errorf("look up session: %w", err))
		}
		if ok && !who.MayUse(owner) {
			return errs.Missing("session", id)
		}
	}
	return nil
}
