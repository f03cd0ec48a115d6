package config

// The formats, told by the top-level keys: the Nexus (and MCP Workbench)
// format with toolboxes, and the desktop-client format with mcpServers.

import (
	"cmp"
	"strings"

	"go.yaml.in/yaml/v4"
)

// DefaultToolbox is the toolbox that holds the servers of a desktop-client
// file ({"mcpServers": {...}}).
const DefaultToolbox = "default"

var (
	nexusTopKeys   = []string{"toolboxes", "vaults", "access", "model", "embeddings", "tensions", "chat", "naming", "$schema"}
	desktopTopKeys = []string{"mcpServers", "naming", "$schema", "globalShortcut", "preferences"}
	toolboxKeys    = []string{"description", "naming", "mcpServers"}
	serverKeys     = []string{
		"command", "args", "env", "cwd",
		"url", "headers", "transport", "type",
		"toolFilters", "eager", "timeout", "connectTimeout", "maxIdleConnections",
		"breakerFailures", "breakerCooldown", "retries",
		"disabled", "alwaysAllow", "autoApprove", "description",
	}
)

const formatsHint = "give toolboxes or vaults (the Nexus format; toolboxes alone: the MCP Workbench format) or mcpServers (the desktop-client format)"

// top reads the top level of the file, whose keys tell the format, into cfg;
// base names the file in the description of a desktop-client toolbox.
func (l *loader) top(root *yaml.Node, cfg *Config, base string) {
	if root == nil || isNull(root) {
		l.fail(nil, "", "the file is empty: %s", formatsHint)
		return
	}
	fields, ok := l.mapping(root, "", "a mapping with toolboxes or mcpServers")
	if !ok {
		return
	}
	var toolboxes, servers, vaults *field
	for i := range fields {
		switch fields[i].name {
		case "toolboxes":
			toolboxes = &fields[i]
		case "vaults":
			vaults = &fields[i]
		case "mcpServers":
			servers = &fields[i]
		}
	}
	switch {
	case toolboxes != nil || vaults != nil:
		var access *field
		for i, f := range fields {
			switch {
			case f.name == "toolboxes", f.name == "vaults", f.name == "$schema", strings.HasPrefix(f.name, "x-"):
			case f.name == "access":
				access = &fields[i]
			case f.name == "model":
				cfg.Model = l.model(f)
			case f.name == "embeddings":
				cfg.Embeddings = l.embeddings(f)
			case f.name == "tensions":
				cfg.Tensions = l.tensions(f)
			case f.name == "chat":
				cfg.Chat = l.chat(f)
			case f.name == "naming":
				cfg.Naming = l.naming(f, "naming")
			case f.name == "mcpServers":
				l.fail(f.key, "mcpServers", "a file with toolboxes lists its servers under each toolbox (toolboxes.NAME.mcpServers), not at the top")
			default:
				l.unknownKey(f, "", nexusTopKeys, "; keys starting with x- are ignored")
			}
		}
		if toolboxes != nil {
			l.toolboxes(*toolboxes, cfg)
		}
		if vaults != nil {
			l.vaults(*vaults, cfg)
		}
		if access != nil {
			l.access(*access, cfg)
		}
	case servers != nil:
		for _, f := range fields {
			switch f.name {
			case "mcpServers", "$schema", "globalShortcut", "preferences":
			case "naming":
				cfg.Naming = l.naming(f, "naming")
			default:
				l.unknownKey(f, "", desktopTopKeys, "")
			}
		}
		tb := &Toolbox{Name: DefaultToolbox, Description: "Servers from " + base, Servers: map[string]*Server{}}
		l.servers(*servers, "mcpServers", tb)
		cfg.Toolboxes[tb.Name] = tb
		cfg.Order = append(cfg.Order, tb.Name)
	default:
		for _, f := range fields {
			if f.name != "$schema" && !strings.HasPrefix(f.name, "x-") {
				l.unknownKey(f, "", []string{"toolboxes", "mcpServers"}, "")
			}
		}
		l.fail(root, "", "no toolboxes, vaults or mcpServers: %s", formatsHint)
	}
}

// naming reads a naming option: prefixed or plain.
func (l *loader) naming(f field, p string) string {
	v, ok := l.str(f, p)
	if !ok {
		return ""
	}
	if v != NamingPrefixed && v != NamingPlain {
		l.fail(l.node(f.val), p, "must be prefixed (tools and prompts named toolbox__server__name) or plain (their own names), not %q", v)
		return ""
	}
	return v
}

// applyNaming settles every toolbox's naming (its own, else the file's,
// else prefixed) and marks the servers of plain toolboxes.
func applyNaming(cfg *Config) {
	for _, tb := range cfg.Toolboxes {
		tb.Naming = cmp.Or(tb.Naming, cfg.Naming, NamingPrefixed)
		for _, s := range tb.Servers {
			s.Plain = tb.Naming == NamingPlain
		}
	}
}

// toolboxes reads the toolboxes of a Nexus-format file into cfg.
func (l *loader) toolboxes(f field, cfg *Config) {
	fields, ok := l.mapping(f.val, "toolboxes", "a mapping of toolbox names to toolboxes")
	if !ok {
		return
	}
	for _, tf := range fields {
		p := join("toolboxes", tf.name)
		okName := l.checkName(tf, p, "toolbox")
		tb := l.toolbox(tf, p)
		if tb != nil && okName {
			cfg.Toolboxes[tb.Name] = tb
			cfg.Order = append(cfg.Order, tb.Name)
		}
	}
}

// toolbox reads one toolbox; nil when it is not a mapping.
func (l *loader) toolbox(f field, p string) *Toolbox {
	fields, ok := l.mapping(f.val, p, "a toolbox (a mapping with description and mcpServers)")
	if !ok {
		return nil
	}
	tb := &Toolbox{Name: f.name, Servers: map[string]*Server{}}
	var servers *field
	for i, sf := range fields {
		switch sf.name {
		case "description":
			tb.Description, _ = l.str(sf, join(p, sf.name))
		case "naming":
			tb.Naming = l.naming(sf, join(p, sf.name))
		case "mcpServers":
			servers = &fields[i]
		default:
			l.unknownKey(sf, p, toolboxKeys, "")
		}
	}
	if servers == nil || isNull(l.node(servers.val)) {
		at := l.node(f.val)
		if servers != nil {
			at = servers.key
		}
		l.fail(at, join(p, "mcpServers"), "missing: a toolbox lists its servers under mcpServers (an empty mapping {} is allowed)")
		return tb
	}
	l.servers(*servers, join(p, "mcpServers"), tb)
	return tb
}

// servers reads the servers of a toolbox into tb, skipping the disabled and
// invalid ones.
func (l *loader) servers(f field, p string, tb *Toolbox) {
	fields, ok := l.mapping(f.val, p, "a mapping of server names to servers")
	if !ok {
		return
	}
	for _, sf := range fields {
		if s := l.server(sf, join(p, sf.name)); s != nil {
			tb.Servers[s.Name] = s
			tb.Order = append(tb.Order, s.Name)
		}
	}
}
