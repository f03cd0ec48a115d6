package workbench

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// A downstream server's prompts, resources and resource templates (issue
// 26): listed with its tools, when its capabilities say it has them, again
// on every list_changed, and put in the registry beside its tools
// (registry.ReplaceExtras), where the surfaces find them.

// listChanged asks for a new listing of the server (its tools, prompts and
// resources) after a list_changed notification.
func (s *server) listChanged() {
	select {
	case s.refresh <- struct{}{}:
	default: // a refresh is already pending
	}
}

// listExtras lists what cs's server offers besides tools and puts it in the
// registry; it returns what was not served, and why ("" when all was).
func (s *server) listExtras(ctx context.Context, cs *mcp.ClientSession) string {
	var caps *mcp.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	if caps == nil || (caps.Prompts == nil && caps.Resources == nil) {
		s.m.reg.ReplaceExtras(s.toolbox, s.name, nil)
		return ""
	}
	e := &registry.Extras{Read: s.readResource}
	if caps.Completions != nil {
		e.Complete = s.complete
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		e.Subscribe, e.Unsubscribe = s.subscribe, s.unsubscribe
		s.resubscribe(ctx, cs)
	}
	var failed []error
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				failed = append(failed, fmt.Errorf("list prompts: %w", err))
				break
			}
			name := p.Name
			e.Prompts = append(e.Prompts, registry.Prompt{ID: registry.ID{Toolbox: s.toolbox, Server: s.name, Tool: name}, Plain: s.cfg.Plain, Prompt: p,
				Get: func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
					return s.getPrompt(ctx, name, args)
				}})
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				failed = append(failed, fmt.Errorf("list resources: %w", err))
				break
			}
			e.Resources = append(e.Resources, registry.Resource{Resource: r})
		}
		for t, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				failed = append(failed, fmt.Errorf("list resource templates: %w", err))
				break
			}
			e.Templates = append(e.Templates, registry.ResourceTemplate{Template: t})
		}
	}
	failed = append(failed, s.m.reg.ReplaceExtras(s.toolbox, s.name, e)...)
	if err := errors.Join(failed...); err != nil {
		return err.Error()
	}
	return ""
}

// getPrompt asks the server for its prompt name with args, bounded by the
// server's call timeout.
func (s *server) getPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := s.extraCall(ctx, "prompt '"+name+"'", func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	return res, err
}

// readResource reads the server's resource uri, bounded by the server's
// call timeout.
func (s *server) readResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := s.extraCall(ctx, "resource '"+uri+"'", func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	return res, err
}

// complete asks the server to complete an argument, bounded by its call
// timeout.
func (s *server) complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	what := "completions"
	if params.Ref != nil {
		what = "completions of " + params.Ref.Name + params.Ref.URI
	}
	err := s.extraCall(ctx, what, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.Complete(ctx, params)
		return err
	})
	return res, err
}

// codeResourceNotFound is the JSON-RPC error code of an unknown resource
// before SEP-2164 made it invalid params; servers still answer it.
const codeResourceNotFound = -32002

// extraCall runs do on the server's live session, bounded by its call
// timeout, and names what failed as a tool call's failures are named.
func (s *server) extraCall(ctx context.Context, what string, do func(context.Context, *mcp.ClientSession) error) error {
	// Reading a prompt, a resource or a completion is safe to repeat.
	_, err := s.guarded(ctx, "reading "+what, func() (any, error) {
		return s.retrying(ctx, func() (any, error) { return nil, s.extraCallOnce(ctx, what, do) })
	})
	return err
}

// extraCallOnce is [server.extraCall] past the breaker.
func (s *server) extraCallOnce(ctx context.Context, what string, do func(context.Context, *mcp.ClientSession) error) error {
	sess, down := s.session()
	if sess == nil && s.connectingFirst() {
		_ = s.ensure(ctx) // why it failed, if it did, is the server's down error
		sess, down = s.session()
	}
	if sess == nil {
		return &errs.Error{Code: errs.Unavailable, Err: down,
			Message: fmt.Sprintf("Server '%s' (toolbox '%s') is unavailable: %v", s.name, s.toolbox, down)}
	}
	timeout := s.timeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := do(cctx, sess.cs)
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &errs.Error{Code: errs.Unavailable, Err: err,
			Message: fmt.Sprintf("Reading %s of server '%s' (toolbox '%s') was cancelled", what, s.name, s.toolbox)}
	case cctx.Err() != nil:
		return &errs.Error{Code: errs.Unavailable, Err: err,
			Message: fmt.Sprintf("Reading %s of server '%s' (toolbox '%s') timed out after %s", what, s.name, s.toolbox, formatDuration(timeout))}
	case errors.As(err, &wire) && (wire.Code == jsonrpc.CodeInvalidParams || wire.Code == codeResourceNotFound):
		return &errs.Error{Code: errs.BadRequest, Err: err,
			Message: fmt.Sprintf("Server '%s' (toolbox '%s') refused %s: %s", s.name, s.toolbox, what, wire.Message)}
	}
	return &errs.Error{Code: errs.Unavailable, Err: err,
		Message: fmt.Sprintf("Server '%s' (toolbox '%s') failed to give %s: %v", s.name, s.toolbox, what, err)}
}
