package config

// The access section: who may use which toolboxes and tools (issue 10).

import (
	"fmt"
	"path"
	"strings"

	"github.com/nexus-mcp/nexus/internal/access/principal"
)

// Access says who may use which toolboxes and tools. A tool is listed to a
// user and may be called by them when every rule that applies to it allows
// them: its toolbox's rule and each tool rule whose pattern matches its flat
// name. Admins may use every tool; with no rules, everyone may.
type Access struct {
	// Toolboxes maps a toolbox name (a configured one, or "nexus" for
	// Nexus's own tools) to its rule.
	Toolboxes map[string]Rule
	// Tools are the tool rules in file order.
	Tools []ToolRule
}

// Rule allows the users with one of Roles (admin, member) and the users
// named in Users.
type Rule struct {
	Roles []string
	Users []string
}

// ToolRule is a rule for the tools whose flat names match Pattern, a name
// or a glob (tn_user_*, prod__github__*).
type ToolRule struct {
	Pattern string
	Rule
}

// Empty reports whether a has no rules.
func (a Access) Empty() bool { return len(a.Toolboxes) == 0 && len(a.Tools) == 0 }

var (
	accessKeys = []string{"toolboxes", "tools"}
	ruleKeys   = []string{"roles", "users"}
)

// builtinToolbox is the toolbox of Nexus's own tools (registry.BuiltinToolbox).
const builtinToolbox = "nexus"

// access reads the access section into cfg.Access; toolbox names are
// checked against cfg's toolboxes once they are read.
func (l *loader) access(f field, cfg *Config) {
	fields, ok := l.mapping(f.val, "access", "a mapping with toolboxes and tools")
	if !ok {
		return
	}
	for _, sf := range fields {
		p := join("access", sf.name)
		switch sf.name {
		case "toolboxes":
			tfs, ok := l.mapping(sf.val, p, "a mapping of toolbox names to rules")
			if !ok {
				continue
			}
			for _, tf := range tfs {
				tp := join(p, tf.name)
				if _, known := cfg.Toolboxes[tf.name]; !known && tf.name != builtinToolbox {
					names := append([]string{builtinToolbox}, cfg.Order...)
					l.fail(tf.key, tp, "no toolbox %q in this file: give one of %v", tf.name, names)
					continue
				}
				if r, ok := l.rule(tf, tp); ok {
					if cfg.Access.Toolboxes == nil {
						cfg.Access.Toolboxes = map[string]Rule{}
					}
					cfg.Access.Toolboxes[tf.name] = r
				}
			}
		case "tools":
			tfs, ok := l.mapping(sf.val, p, "a mapping of tool names or globs to rules")
			if !ok {
				continue
			}
			for _, tf := range tfs {
				tp := join(p, tf.name)
				if _, err := path.Match(tf.name, ""); err != nil || tf.name == "" {
					l.fail(tf.key, tp, "%q is not a tool name or a valid glob (tn_user_*, prod__github__*)", tf.name)
					continue
				}
				if r, ok := l.rule(tf, tp); ok {
					cfg.Access.Tools = append(cfg.Access.Tools, ToolRule{Pattern: tf.name, Rule: r})
				}
			}
		default:
			l.unknownKey(sf, "access", accessKeys, "")
		}
	}
}

// rule reads one rule: roles and users, at least one of them not empty.
func (l *loader) rule(f field, p string) (Rule, bool) {
	fields, ok := l.mapping(f.val, p, "a rule (a mapping with roles and users)")
	if !ok {
		return Rule{}, false
	}
	var r Rule
	n := len(l.errs) + l.dropped
	for _, rf := range fields {
		rp := join(p, rf.name)
		switch rf.name {
		case "roles":
			r.Roles = l.strList(rf, rp, func(v string) string {
				if !principal.ValidRole(v) {
					return fmt.Sprintf("%q is not a role: %s", v, strings.Join(principal.Roles(), " or "))
				}
				return ""
			})
		case "users":
			r.Users = l.strList(rf, rp, func(v string) string {
				if v == "" {
					return "a user name is empty"
				}
				return ""
			})
		default:
			l.unknownKey(rf, p, ruleKeys, "")
		}
	}
	if len(l.errs)+l.dropped > n {
		return Rule{}, false
	}
	if len(r.Roles) == 0 && len(r.Users) == 0 {
		l.fail(l.node(f.val), p, "allows nobody: give roles (admin, member) or users (user names); admins may use every tool anyway")
		return Rule{}, false
	}
	return r, true
}

var modelKeys = []string{"provider", "baseUrl", "apiKey", "model"}

// model reads the model section: provider (openai or anthropic) and model
// are required; apiKey and baseUrl may come from ${VAR}.
func (l *loader) model(f field) *Model {
	fields, ok := l.mapping(f.val, "model", "a mapping with provider, model, apiKey and baseUrl")
	if !ok {
		return nil
	}
	m := &Model{}
	n := len(l.errs) + l.dropped
	for _, sf := range fields {
		p := join("model", sf.name)
		switch sf.name {
		case "provider":
			if v, ok := l.str(sf, p); ok {
				if v != "openai" && v != "anthropic" {
					l.fail(l.node(sf.val), p, "%q is not a provider: openai (or any OpenAI-compatible server, with baseUrl) or anthropic", v)
				}
				m.Provider = v
			}
		case "baseUrl":
			if v, ok := l.str(sf, p); ok {
				if reason := checkURL(v); reason != "" {
					l.fail(l.node(sf.val), p, "%s", reason)
				}
				m.BaseURL = v
			}
		case "apiKey":
			m.APIKey, _ = l.str(sf, p)
		case "model":
			m.Model, _ = l.str(sf, p)
		default:
			l.unknownKey(sf, "model", modelKeys, "")
		}
	}
	if len(l.errs)+l.dropped > n {
		return nil
	}
	if m.Provider == "" || m.Model == "" {
		l.fail(l.node(f.val), "model", "needs provider (openai or anthropic) and model (e.g. gpt-4o-mini)")
		return nil
	}
	return m
}
