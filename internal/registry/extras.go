package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A downstream server's prompts, resources and resource templates, which
// the surfaces serve beside its tools (issue 26). Prompts are named as
// tools are (toolbox__server__prompt); resources and templates keep their
// URIs, which clients read them by.

// Prompt is a prompt of a downstream server.
type Prompt struct {
	// ID names the prompt as a tool is named: ID.Tool is the prompt's own
	// name, ID.Name() the name surfaces list it under.
	ID ID
	// Plain lists the prompt under its own name (ID.Tool), as its
	// toolbox's tools (Tool.Plain).
	Plain bool
	// Prompt is the prompt as the server listed it.
	Prompt *mcp.Prompt
	// Get asks the server for the prompt (its own name) with args.
	Get func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error)
}

// Name is the name the prompt is listed and got under.
func (p *Prompt) Name() string {
	if p.Plain {
		return p.ID.Tool
	}
	return p.ID.Name()
}

// Resource is a resource of a downstream server.
type Resource struct {
	Toolbox, Server string
	// Resource is the resource as the server listed it.
	Resource *mcp.Resource
}

// ResourceTemplate is a resource template of a downstream server.
type ResourceTemplate struct {
	Toolbox, Server string
	// Template is the template as the server listed it.
	Template *mcp.ResourceTemplate
}

// Extras are what a downstream server offers besides tools, and how to read
// its resources.
type Extras struct {
	Prompts   []Prompt
	Resources []Resource
	Templates []ResourceTemplate
	// Read reads a resource of the server by URI (a listed resource's, or
	// one a template of the server matches).
	Read func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	// Complete asks the server to complete an argument of one of its
	// prompts or resource templates (params name them as the server
	// does); nil when the server does not complete.
	Complete func(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error)
	// Subscribe and Unsubscribe subscribe Nexus to updates of a resource
	// of the server, and end it (nil when the server has no
	// subscriptions); the server's notifications/resources/updated reach
	// the surfaces through [Registry.ResourceUpdated].
	Subscribe, Unsubscribe func(ctx context.Context, uri string) error
}

// extras is what the registry keeps of a server's Extras.
type extras struct {
	Extras
	toolbox, server string
}

// ReplaceExtras replaces the prompts, resources and templates of the
// downstream server {toolbox, server} with e (nil: it has none). A prompt
// whose name breaks the MCP name rules, or another server's already has, is
// left out and reported; so is a resource whose URI another server's has.
func (r *Registry) ReplaceExtras(toolbox, server string, e *Extras) []error {
	if toolbox == BuiltinToolbox {
		return []error{fmt.Errorf("registry: toolbox %q is reserved for Nexus's own (local) servers", BuiltinToolbox)}
	}
	key := toolbox + "/" + server
	var problems []error
	r.mu.Lock()
	delete(r.extras, key)
	if e != nil {
		kept := &extras{toolbox: toolbox, server: server, Extras: Extras{Read: e.Read, Complete: e.Complete, Subscribe: e.Subscribe, Unsubscribe: e.Unsubscribe}}
		prompts, uris := r.extraNames()
		for _, p := range e.Prompts {
			name := p.Name()
			switch {
			case p.ID.Toolbox != toolbox || p.ID.Server != server:
				problems = append(problems, fmt.Errorf("registry: prompt %q does not belong to %s", name, key))
			case !ValidName(name):
				problems = append(problems, fmt.Errorf("registry: prompt %q breaks the MCP name rules", name))
			case prompts[name] != "":
				if p.Plain || prompts[name] != key {
					problems = append(problems, fmt.Errorf("registry: naming collision: prompt %q of server %q (toolbox %q) and a prompt of %s are both named %q; give one of their toolboxes naming: prefixed", p.ID.Tool, server, toolbox, prompts[name], name))
				} else {
					problems = append(problems, fmt.Errorf("registry: duplicate prompt %q", name))
				}
			default:
				prompts[name] = key
				kept.Prompts = append(kept.Prompts, p)
			}
		}
		for _, res := range e.Resources {
			if uris[res.Resource.URI] {
				problems = append(problems, fmt.Errorf("registry: resource %q of %s is another server's too; only the first is served", res.Resource.URI, key))
				continue
			}
			uris[res.Resource.URI] = true
			res.Toolbox, res.Server = toolbox, server
			kept.Resources = append(kept.Resources, res)
		}
		for _, t := range e.Templates {
			t.Toolbox, t.Server = toolbox, server
			kept.Templates = append(kept.Templates, t)
		}
		r.extras[key] = kept
	}
	r.mu.Unlock()
	r.notify()
	return problems
}

// extraNames are the prompt names served (with the "toolbox/server" that
// serves each) and resource URIs; r.mu is held.
func (r *Registry) extraNames() (prompts map[string]string, uris map[string]bool) {
	prompts, uris = map[string]string{}, map[string]bool{}
	for key, e := range r.extras {
		for _, p := range e.Prompts {
			prompts[p.Name()] = key
		}
		for _, res := range e.Resources {
			uris[res.Resource.URI] = true
		}
	}
	return prompts, uris
}

// Prompts returns the downstream servers' prompts, by name.
func (r *Registry) Prompts() []Prompt {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Prompt
	for _, e := range r.extras {
		out = append(out, e.Prompts...)
	}
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Resources returns the downstream servers' resources, by URI.
func (r *Registry) Resources() []Resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Resource
	for _, e := range r.extras {
		out = append(out, e.Resources...)
	}
	slices.SortFunc(out, func(a, b Resource) int { return strings.Compare(a.Resource.URI, b.Resource.URI) })
	return out
}

// ResourceTemplates returns the downstream servers' resource templates, by
// toolbox, server and URI template.
func (r *Registry) ResourceTemplates() []ResourceTemplate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []ResourceTemplate
	for _, e := range r.extras {
		out = append(out, e.Templates...)
	}
	slices.SortFunc(out, func(a, b ResourceTemplate) int {
		return strings.Compare(a.Toolbox+"/"+a.Server+"/"+a.Template.URITemplate, b.Toolbox+"/"+b.Server+"/"+b.Template.URITemplate)
	})
	return out
}

// Complete returns the completer of the server {toolbox, server}'s
// arguments, nil when it has none.
func (r *Registry) Complete(toolbox, server string) func(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.extras[toolbox+"/"+server]; e != nil {
		return e.Complete
	}
	return nil
}

// ReadResource returns the reader of the server {toolbox, server}'s
// resources, nil when it has none.
func (r *Registry) ReadResource(toolbox, server string) func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.extras[toolbox+"/"+server]; e != nil {
		return e.Read
	}
	return nil
}

// Subscription returns how to subscribe to a resource of the server
// {toolbox, server}, and to end the subscription; nil when it has no
// subscriptions.
func (r *Registry) Subscription(toolbox, server string) (subscribe, unsubscribe func(ctx context.Context, uri string) error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.extras[toolbox+"/"+server]; e != nil && e.Subscribe != nil && e.Unsubscribe != nil {
		return e.Subscribe, e.Unsubscribe
	}
	return nil, nil
}

// OnResourceUpdated registers fn to be told that the resource uri of the
// downstream server {toolbox, server} changed.
func (r *Registry) OnResourceUpdated(fn func(toolbox, server, uri string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updated = append(r.updated, fn)
}

// ResourceUpdated tells the listeners ([Registry.OnResourceUpdated]) that
// the resource uri of the server {toolbox, server} changed.
func (r *Registry) ResourceUpdated(toolbox, server, uri string) {
	r.mu.RLock()
	fns := slices.Clone(r.updated)
	r.mu.RUnlock()
	for _, fn := range fns {
		fn(toolbox, server, uri)
	}
}

// LocalTemplate is a resource template of one of Nexus's own servers: each
// URI it matches names what one of the server's tools returns, which a
// resources/read gets by calling that tool through the pipeline (so that
// access rules, workspace, tracing and errors are a call's).
type LocalTemplate struct {
	// Template is the template as surfaces list it; its URITemplate holds
	// the variables Args reads.
	Template *mcp.ResourceTemplate
	// Tool is the tool that reads a URI, by its name.
	Tool string
	// Args is the tool's arguments for the URI's variables, or why they
	// name nothing.
	Args func(vars map[string]string) (map[string]any, error)
}

// AddLocalTemplate adds a resource template of one of Nexus's own servers;
// its tool must be registered.
func (r *Registry) AddLocalTemplate(t LocalTemplate) error {
	if t.Template == nil || t.Template.URITemplate == "" || t.Args == nil {
		return fmt.Errorf("registry: a local resource template needs a URI template and its arguments")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if tool, ok := r.tools[t.Tool]; !ok || tool.Source != Local {
		return fmt.Errorf("registry: resource template %q: no local tool %q", t.Template.URITemplate, t.Tool)
	}
	r.local = append(r.local, t)
	return nil
}

// LocalTemplates are the resource templates of Nexus's own servers, in the
// order they were added.
func (r *Registry) LocalTemplates() []LocalTemplate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.local)
}
