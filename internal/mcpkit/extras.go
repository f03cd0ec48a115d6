package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// The downstream servers' prompts, resources and resource templates on the
// MCP surfaces (issue 26), set up by [Options.Server]: a prompt is listed under its server's prefix as
// a tool is (toolbox__server__prompt), a resource and a template under
// their own URIs. Each is listed to, and served to, the callers who may use
// its server (pipeline.Pipeline.ServerVisible, the access rules of the
// per-server proxy); a prompts/get or resources/read is recorded as a call
// (traced on the surface, counted in /metrics, as "prompt:NAME" and
// "resource:URI" of its server). The SDK server tells the clients when the
// lists change (notifications/prompts/list_changed and
// notifications/resources/list_changed), as for tools.

// extrasSyncer keeps an MCP server's prompts, resources and templates equal
// to the registry's.
type extrasSyncer struct {
	s       *mcp.Server
	p       *pipeline.Pipeline
	surface string

	instance string // the surface's server instance ([Transport])
	// opened, when set, is whether the caller of ctx opened toolbox, so
	// that its servers' prompts and resources are theirs to see
	// (Options.ExtrasOpened).
	opened func(ctx context.Context, req mcp.Request, toolbox string) bool
	// local are the templates of Nexus's own servers, by URI template,
	// served from the start (local).
	local map[string]registry.LocalTemplate

	mu        sync.Mutex
	prompts   map[string]registry.Prompt           // by listed name
	resources map[string]registry.Resource         // by URI
	templates map[string]registry.ResourceTemplate // by URI template
}

// newExtrasSyncer returns the syncer of a surface's server, which is set
// (x.s) before its first sync.
func newExtrasSyncer(p *pipeline.Pipeline, surface, instance string) *extrasSyncer {
	return &extrasSyncer{p: p, surface: surface, instance: instance, local: map[string]registry.LocalTemplate{}, prompts: map[string]registry.Prompt{},
		resources: map[string]registry.Resource{}, templates: map[string]registry.ResourceTemplate{}}
}

// sync adds what the registry has that the server does not, and removes
// what it no longer has.
func (x *extrasSyncer) sync() {
	reg := x.p.Registry()
	x.mu.Lock()
	defer x.mu.Unlock()

	prompts := map[string]registry.Prompt{}
	for _, p := range reg.Prompts() {
		prompts[p.Name()] = p
	}
	syncSet(x.prompts, prompts, func(a, b registry.Prompt) bool { return a.Prompt == b.Prompt }, x.s.RemovePrompts,
		func(name string, p registry.Prompt) {
			listed := *p.Prompt
			listed.Name = name
			x.s.AddPrompt(&listed, x.getPrompt)
		})
	x.prompts = prompts

	resources := map[string]registry.Resource{}
	for _, r := range reg.Resources() {
		resources[r.Resource.URI] = r
	}
	syncSet(x.resources, resources, func(a, b registry.Resource) bool { return a.Resource == b.Resource }, x.s.RemoveResources,
		func(_ string, r registry.Resource) { x.s.AddResource(r.Resource, x.readResource) })
	x.resources = resources

	templates := map[string]registry.ResourceTemplate{}
	for _, t := range reg.ResourceTemplates() {
		if _, own := x.local[t.Template.URITemplate]; own {
			continue // Nexus's own template keeps its URIs
		}
		if _, dup := templates[t.Template.URITemplate]; !dup {
			templates[t.Template.URITemplate] = t
		}
	}
	syncSet(x.templates, templates, func(a, b registry.ResourceTemplate) bool { return a.Template == b.Template }, x.s.RemoveResourceTemplates,
		func(_ string, t registry.ResourceTemplate) { x.s.AddResourceTemplate(t.Template, x.readResource) })
	x.templates = templates
}

// addLocal serves the resource templates of Nexus's own servers
// (registry.LocalTemplate): a resources/read of a URI one matches calls its
// tool through the pipeline, as a tools/call of the surface would.
func (x *extrasSyncer) addLocal() {
	for _, lt := range x.p.Registry().LocalTemplates() {
		x.local[lt.Template.URITemplate] = lt
		x.s.AddResourceTemplate(lt.Template, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return x.readLocal(ctx, req, lt)
		})
	}
}

// readLocal reads the URI of req, which lt's template matches, by calling
// lt's tool: its JSON result is the resource's text; an unknown course or
// belief (NOT_FOUND) is resource not found, any other error the tool's
// message as a JSON-RPC error.
func (x *extrasSyncer) readLocal(ctx context.Context, req *mcp.ReadResourceRequest, lt registry.LocalTemplate) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	t, err := uritemplate.New(lt.Template.URITemplate)
	if err != nil {
		return nil, err
	}
	vals := t.Match(uri)
	if vals == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	vars := map[string]string{}
	for _, name := range t.Varnames() {
		vars[name] = vals.Get(name).String()
	}
	args, err := lt.Args(vars)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource %q: %v", uri, err)}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	o := x.p.Call(ctx, CallRequest(x.surface, Transport(x.instance, req), lt.Tool, raw, nil))
	if o.Err != nil {
		if o.Err.Code == errs.NotFound {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource %q: %s", uri, o.Err.Message)}
		}
		code := int64(jsonrpc.CodeInternalError)
		if o.Err.Code == errs.BadRequest {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: fmt.Sprintf("resource %q: %s", uri, o.Err.Message)}
	}
	body, _ := o.Body()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: lt.Template.MIMEType, Text: string(body)}}}, nil
}

// syncSet makes what a server serves, old, what it should serve, now (both
// by key): it removes what is gone or changed (same says an entry did
// not), and adds what is new or changed.
func syncSet[T any](old, now map[string]T, same func(a, b T) bool, remove func(...string), add func(string, T)) {
	var gone []string
	for k, o := range old {
		if n, ok := now[k]; !ok || !same(o, n) {
			gone = append(gone, k)
		}
	}
	remove(gone...)
	for k, n := range now {
		if o, ok := old[k]; !ok || !same(o, n) {
			add(k, n)
		}
	}
}

// getPrompt serves prompts/get of a downstream server's prompt.
func (x *extrasSyncer) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Name
	x.mu.Lock()
	p, ok := x.prompts[name]
	x.mu.Unlock()
	if !ok || !x.visible(ctx, req, p.ID.Toolbox, p.ID.Server) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	}
	start := time.Now()
	res, err := p.Get(ctx, req.Params.Arguments)
	x.record(ctx, p.ID.Toolbox, p.ID.Server, "prompt:"+p.ID.Tool, start, err)
	if err != nil {
		return nil, rpcError(err)
	}
	return res, nil
}

// readResource serves resources/read of a downstream server's resource, or
// of a URI one of their templates matches.
func (x *extrasSyncer) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	toolbox, server, ok := x.owner(uri)
	if !ok || !x.visible(ctx, req, toolbox, server) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	read := x.p.Registry().ReadResource(toolbox, server)
	if read == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	start := time.Now()
	res, err := read(ctx, uri)
	x.record(ctx, toolbox, server, "resource:"+uri, start, err)
	if err != nil {
		return nil, rpcError(err)
	}
	return res, nil
}

// visible reports whether the caller of ctx may see and use the prompts
// and resources of the server {toolbox, server}: they may reach the whole
// server (pipeline.Pipeline.ServerVisible) and, on a surface that opens
// toolboxes per session, opened its toolbox.
func (x *extrasSyncer) visible(ctx context.Context, req mcp.Request, toolbox, server string) bool {
	return x.p.ServerVisible(ctx, toolbox, server) && (x.opened == nil || x.opened(ctx, req, toolbox))
}

// subscribe serves resources/subscribe of a downstream server's resource
// (or a URI its template matches), by subscribing its server; the SDK
// server keeps which sessions subscribed, and tells them its updates
// (updated).
func (x *extrasSyncer) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return x.subscription(ctx, req, req.Params.URI, true)
}

// unsubscribe serves resources/unsubscribe.
func (x *extrasSyncer) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return x.subscription(ctx, req, req.Params.URI, false)
}

func (x *extrasSyncer) subscription(ctx context.Context, req mcp.Request, uri string, on bool) error {
	toolbox, server, ok := x.owner(uri)
	if !ok || !x.visible(ctx, req, toolbox, server) {
		return mcp.ResourceNotFoundError(uri)
	}
	sub, unsub := x.p.Registry().Subscription(toolbox, server)
	if sub == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("server '%s' (toolbox '%s') does not offer subscriptions to its resources", server, toolbox)}
	}
	do, what := sub, "subscribe:"
	if !on {
		do, what = unsub, "unsubscribe:"
	}
	start := time.Now()
	err := do(ctx, uri)
	x.record(ctx, toolbox, server, what+uri, start, err)
	if err != nil {
		return rpcError(err)
	}
	return nil
}

// updated tells the sessions subscribed to uri that it changed, when the
// server that says so is the one this surface reads uri from.
func (x *extrasSyncer) updated(toolbox, server, uri string) {
	if tb, s, ok := x.owner(uri); !ok || tb != toolbox || s != server {
		return
	}
	_ = x.s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// owner is the server of the resource uri: the one that listed it, else the
// first whose template matches it.
func (x *extrasSyncer) owner(uri string) (toolbox, server string, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.resources[uri]; ok {
		return r.Toolbox, r.Server, true
	}
	for _, t := range x.p.Registry().ResourceTemplates() {
		if cur, listed := x.templates[t.Template.URITemplate]; listed && cur.Template == t.Template && matches(t.Template.URITemplate, uri) {
			return t.Toolbox, t.Server, true
		}
	}
	return "", "", false
}

// record records a prompts/get or resources/read as a call.
func (x *extrasSyncer) record(ctx context.Context, toolbox, server, name string, start time.Time, err error) {
	c := pipeline.Passthrough{Surface: x.surface, Toolbox: toolbox, Server: server, Tool: name, Start: start, Duration: time.Since(start)}
	if err != nil {
		c.Err = errs.Unavailable
		if e, ok := errors.AsType[*errs.Error](err); ok {
			c.Err = e.Code
		}
	}
	x.p.RecordPassthrough(ctx, c)
}

// rpcError is the JSON-RPC error of a failed prompts/get or resources/read:
// the server's refusal as invalid params, anything else as an internal
// error, with the message naming the server.
func rpcError(err error) error {
	code := int64(jsonrpc.CodeInternalError)
	if e, ok := errors.AsType[*errs.Error](err); ok && e.Code == errs.BadRequest {
		code = jsonrpc.CodeInvalidParams
	}
	msg := err.Error()
	if e, ok := errors.AsType[*errs.Error](err); ok && e.Message != "" {
		msg = e.Message
	}
	return &jsonrpc.Error{Code: code, Message: msg}
}

// matches reports whether uri is one of the URIs of the RFC 6570 template
// tmpl, by the library the SDK matches templates with (so that the server
// named is the one whose template the SDK dispatched on).
func matches(tmpl, uri string) bool {
	t, err := uritemplate.New(tmpl)
	return err == nil && t.Regexp().MatchString(uri)
}

// listOnly keeps, in a prompts/list, resources/list or
// resources/templates/list result, what the caller may use.
func (x *extrasSyncer) listOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		// A listed item the syncer does not know is not a server's: kept.
		visible := func(toolbox, server string, ok bool) bool {
			return !ok || x.visible(ctx, req, toolbox, server)
		}
		switch r := res.(type) {
		case *mcp.ListPromptsResult:
			out := *r
			out.Prompts = keepItems(r.Prompts, func(lp *mcp.Prompt) bool {
				p, ok := x.prompts[lp.Name]
				return visible(p.ID.Toolbox, p.ID.Server, ok)
			})
			return &out, nil
		case *mcp.ListResourcesResult:
			out := *r
			out.Resources = keepItems(r.Resources, func(lr *mcp.Resource) bool {
				res, ok := x.resources[lr.URI]
				return visible(res.Toolbox, res.Server, ok)
			})
			return &out, nil
		case *mcp.ListResourceTemplatesResult:
			out := *r
			out.ResourceTemplates = keepItems(r.ResourceTemplates, func(lt *mcp.ResourceTemplate) bool {
				t, ok := x.templates[lt.URITemplate]
				return visible(t.Toolbox, t.Server, ok)
			})
			return &out, nil
		}
		return res, err
	}
}

// keepItems is the items of a listing that ok keeps, in order (an empty list,
// not null, when none is).
func keepItems[T any](items []T, ok func(T) bool) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		if ok(it) {
			out = append(out, it)
		}
	}
	return out
}

// complete serves completion/complete of a downstream server's prompt
// (ref/prompt, by its listed name) or resource template (ref/resource, by
// its URI template), asking that server with its own names; an argument of
// anything else has no completions.
func (x *extrasSyncer) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	none := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if ref == nil {
		return none, nil
	}
	var toolbox, server string
	params := *req.Params
	own := *ref
	x.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		p, ok := x.prompts[ref.Name]
		if !ok || !x.visible(ctx, req, p.ID.Toolbox, p.ID.Server) {
			x.mu.Unlock()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		toolbox, server, own.Name = p.ID.Toolbox, p.ID.Server, p.ID.Tool
	case "ref/resource":
		t, ok := x.templates[ref.URI]
		if !ok {
			x.mu.Unlock()
			return none, nil
		}
		toolbox, server = t.Toolbox, t.Server
	}
	x.mu.Unlock()
	if toolbox == "" || !x.visible(ctx, req, toolbox, server) {
		return none, nil
	}
	complete := x.p.Registry().Complete(toolbox, server)
	if complete == nil {
		return none, nil
	}
	params.Ref = &own
	// The caller's protocol _meta is the caller's, not the downstream
	// session's (a sessionless client's names its own protocol version).
	params.Meta = nil
	start := time.Now()
	res, err := complete(ctx, &params)
	x.record(ctx, toolbox, server, "complete:"+own.Name+own.URI, start, err)
	if err != nil {
		return nil, rpcError(err)
	}
	return res, nil
}
