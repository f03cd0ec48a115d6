package pipeline

// Resolving a call's session and workspace (seed 000's context and precedence) and binding transports' sessions.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/ids"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// resolveContext removes seed 000's "context", "workspaceContext" and
// top-level "sessionId" from args (unless the tool declares them itself; then
// they are the tool's) and resolves the named session and the workspace with
// seed 000's precedence: workspaceContext.workspaceId, context.workspaceId,
// the context given outside the arguments, the session's workspace, then
// "default". A named session that exists in another workspace than the one
// the call names is an error. It only reads; explicit reports whether the
// caller named the workspace.
func (p *Pipeline) resolveContext(ctx context.Context, who principal.Principal, t *registry.Tool, given *CallContext, args map[string]any, o *Outcome) (explicit bool, _ *errs.Error) {
	var cctx, wctx map[string]any
	var top string
	var e *errs.Error
	if !t.Declares("context") {
		if cctx, e = contextObject(args, "context"); e != nil {
			return false, e
		}
		delete(args, "context")
	}
	if !t.Declares("workspaceContext") {
		if wctx, e = contextObject(args, "workspaceContext"); e != nil {
			return false, e
		}
		delete(args, "workspaceContext")
	}
	if !t.Declares("sessionId") {
		if top, e = stringField(args, "", "sessionId"); e != nil {
			return false, e
		}
		delete(args, "sessionId")
	}
	if given == nil {
		given = &CallContext{}
	}

	sid, e := stringField(cctx, "context", "sessionId")
	if e != nil {
		return false, e
	}
	sidField := "context.sessionId"
	switch {
	case sid != "":
	case top != "":
		sid, sidField = top, "sessionId"
	default:
		sid, sidField = given.SessionID, "_meta session"
	}
	o.SessionID = sid
	ws, e := stringField(wctx, "workspaceContext", "workspaceId")
	if e != nil {
		return false, e
	}
	field := "workspaceContext.workspaceId"
	if ws == "" {
		if ws, e = stringField(cctx, "context", "workspaceId"); e != nil {
			return false, e
		}
		field = "context.workspaceId"
	}
	if ws == "" && (sid == "" || sid == given.SessionID) {
		// The context given outside the arguments is a fallback: when the
		// arguments name a session of their own, its workspace decides.
		ws, field = given.WorkspaceID, "_meta workspace"
	}
	explicit = ws != ""
	if ws != "" && !ids.Valid(ws) {
		return false, errs.Invalid(field, "workspace id %q must be %s", ws, ids.Rule)
	}
	if sid != "" && p.sessions != nil {
		sws, owner, ok, err := p.sessions.Lookup(ctx, sid)
		if err != nil {
			var ee *errs.Error
			if errors.As(err, &ee) && ee.Code == errs.BadRequest {
				return false, errs.Invalid(sidField, "%s", strings.TrimPrefix(ee.Message, ee.Field+": "))
			}
			return false, errs.From(fmt.Errorf("look up session workspace: %w", err))
		}
		switch {
		case ok && !who.MayUse(owner):
			// Named, it exists, and it is not the caller's: the id does
			// not grant it. (Saying so discloses only that the id is taken,
			// which a caller naming a new session must learn anyway.)
			return false, errs.E(errs.Forbidden, "session %q (%s) is another user's conversation; name one of yours, or leave the session out for a new one", sid, sidField)
		case ok && explicit && sws != ws:
			return false, errs.E(errs.Conflict, "session %q belongs to workspace %q, but this call names workspace %q (%s); "+
				"name a session of workspace %q, or leave the workspace out to use the session's", sid, sws, ws, field, ws)
		case ok:
			ws = sws
		}
	}
	if ws == "" {
		ws = p.defaultWorkspace(who)
	}
	o.Workspace = ws
	return explicit, nil
}

// bindSession gives the call its session: the named one, else the
// transport's (the one bound to the call's workspace when the call names one,
// else the transport's first), else a one-off id. It stores nothing; the
// returned function stores the session, to be called once the call has
// succeeded and may have written (nil when there is nothing to store: the
// session is stored already, or it is a one-off).
func (p *Pipeline) bindSession(ctx context.Context, who principal.Principal, transport string, explicitWS bool, o *Outcome) (func(context.Context) error, *errs.Error) {
	if p.sessions == nil {
		return nil, nil
	}
	if o.SessionID != "" {
		id, ws := o.SessionID, o.Workspace
		return func(ctx context.Context) error { return p.ensure(ctx, who, id, ws) }, nil
	}
	if transport == "" {
		// A call without a connection (REST, CLI) naming no session: its
		// session is a one-off id for its trace, never stored, so that such
		// calls do not fill session_list with empty sessions.
		o.SessionID = ulid.Make().String()
		return nil, nil
	}
	p.loadBindings(ctx, transport)
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.transports[transport]
	i := slices.IndexFunc(list, func(b boundSession) bool { return b.workspace == o.Workspace && b.user == who.ID })
	if !explicitWS {
		// seed 000 step 3: the transport session's workspace (the user's
		// first on it)
		if j := slices.IndexFunc(list, func(b boundSession) bool { return b.user == who.ID }); j >= 0 {
			i = j
		}
	}
	if i < 0 {
		nb := boundSession{id: ulid.Make().String(), workspace: o.Workspace, user: who.ID}
		if p.bindings != nil {
			// Stored before the call runs, so that a replica serving the
			// transport's next call finds it (or, when another replica
			// bound it first, this call takes that replica's).
			p.mu.Unlock()
			got, err := p.bindings.Bind(ctx, transport, Bound{SessionID: nb.id, Workspace: nb.workspace, User: nb.user})
			p.mu.Lock()
			if err != nil {
				p.log.Warn("store the conversation of a transport session", "transport", transport, "err", err)
			} else {
				nb.id, nb.bound = got.SessionID, true
			}
			list = p.transports[transport]
		}
		if j := slices.IndexFunc(list, func(b boundSession) bool { return b.workspace == nb.workspace && b.user == nb.user }); j >= 0 {
			i = j // bound meanwhile by another call of this process
		} else {
			list = append(list, nb)
			p.transports[transport] = list
			i = len(list) - 1
		}
	}
	bs := list[i]
	o.SessionID, o.Workspace = bs.id, bs.workspace
	if bs.stored {
		return nil, nil
	}
	return func(ctx context.Context) error {
		if err := p.ensure(ctx, who, bs.id, bs.workspace); err != nil {
			return err
		}
		if p.bindings != nil && !bs.bound {
			if _, err := p.bindings.Bind(ctx, transport, Bound{SessionID: bs.id, Workspace: bs.workspace, User: who.ID}); err != nil {
				return err
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		for j := range p.transports[transport] {
			if p.transports[transport][j].id == bs.id {
				p.transports[transport][j].stored = true
				p.transports[transport][j].bound = true
			}
		}
		return nil
	}, nil
}

// loadBindings reads the bindings of transport from the store the first
// time this process sees the transport, so that a transport session another
// replica served keeps its conversations here. A store that cannot be read
// leaves the transport to bind afresh (logged).
func (p *Pipeline) loadBindings(ctx context.Context, transport string) {
	if p.bindings == nil {
		return
	}
	p.mu.Lock()
	_, known := p.transports[transport]
	p.mu.Unlock()
	if known {
		return
	}
	stored, err := p.bindings.Bound(ctx, transport)
	if err != nil {
		p.log.Warn("read the conversations of a transport session", "transport", transport, "err", err)
		return
	}
	list := make([]boundSession, 0, len(stored))
	for _, b := range stored {
		// Not "stored": the replica that bound it may not have stored the
		// conversation yet; storing it again is a no-op.
		list = append(list, boundSession{id: b.SessionID, workspace: b.Workspace, user: b.User, bound: true})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, known := p.transports[transport]; !known {
		p.transports[transport] = list
	}
}

// transportSession returns the first session bound to transport, without
// binding one; ws unchanged and no session when there is none.
func (p *Pipeline) transportSession(ctx context.Context, transport, ws string) (string, string) {
	if transport == "" {
		return "", ws
	}
	who := p.principal(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.transports[transport] {
		if b.user == who.ID {
			return b.id, b.workspace
		}
	}
	return "", ws
}

// ensure stores session id in workspace, owned by who, unless it exists.
func (p *Pipeline) ensure(ctx context.Context, who principal.Principal, id, workspace string) error {
	ws, _, err := p.sessions.Ensure(ctx, id, workspace, who.ID, who.Tier)
	if err != nil {
		return err
	}
	if ws != workspace {
		// Another call created the session in another workspace between
		// this call's check and its write.
		p.log.Warn("session created concurrently in another workspace", "workspace", ws, "call_workspace", workspace)
	}
	return nil
}

func contextObject(args map[string]any, name string) (map[string]any, *errs.Error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errs.Invalid(name, "must be an object, got %s", jsonKind(v))
	}
	return m, nil
}

func stringField(m map[string]any, parent, name string) (string, *errs.Error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errs.Invalid(strings.TrimPrefix(parent+"."+name, "."), "must be a string, got %s", jsonKind(v))
	}
	if len(s) > 200 {
		return "", errs.Invalid(strings.TrimPrefix(parent+"."+name, "."), "is %d bytes; the limit is 200", len(s))
	}
	return s, nil
}
