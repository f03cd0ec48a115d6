package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/registry"
)

// ToolsMarkdown renders docs/tools.md from the registry: every tool with its
// description and a table of its arguments, generated from the schemas so
// the documentation cannot drift from what Nexus serves. The tools are those
// of the [registry.Tools] view, then the bounded surface's meta-tools.
func ToolsMarkdown(reg *registry.Registry) []byte {
	var b bytes.Buffer
	b.WriteString("# Tools\n\n")
	b.WriteString("Generated from the tool schemas by `go test ./internal/app -run TestToolsDoc -update`; do not edit by hand.\n\n")
	b.WriteString("Every tool also accepts the optional `context` (`sessionId`, `workspaceId`) and `workspaceContext` (`workspaceId`) objects of seed 000; the workspace is `workspaceContext.workspaceId`, else `context.workspaceId`, else the session's workspace, else `default`.\n\n")
	b.WriteString("The vault agents (`nexus/contentManager`, `nexus/vaultManager`, `nexus/vaultLibrarian`, `nexus/memoryManager`) are served when a vault is configured ([vault.md](vault.md)); every one of their modes takes an optional `vault`, the vault's name (default: the first).\n\n")
	writeTools(&b, reg.Listed(registry.Tools))
	b.WriteString("# The bounded surface's meta-tools\n\n")
	b.WriteString("Listed only by the bounded surface (`/mcp/bounded`, `nexus stdio --surface bounded`), instead of the tools above; the tools a bounded session discovers with `get_tools` are listed by that session.\n\n")
	writeTools(&b, reg.Listed(registry.MetaTools))
	return b.Bytes()
}

// writeTools writes tools grouped by toolbox and server, each with its
// description and a table of its arguments.
func writeTools(b *bytes.Buffer, tools []*registry.Tool) {
	servers := map[string][]*registry.Tool{}
	var order []string
	for _, t := range tools {
		key := t.ID.Toolbox + "/" + t.ID.Server
		if _, ok := servers[key]; !ok {
			order = append(order, key)
		}
		servers[key] = append(servers[key], t)
	}
	slices.Sort(order)
	for _, key := range order {
		fmt.Fprintf(b, "## %s\n\n", key)
		for _, t := range servers[key] {
			fmt.Fprintf(b, "### `%s`\n\n%s\n\n", t.Name(), t.Description)
			fmt.Fprintf(b, "Source: `%s`. Read-only: %v.\n\n", t.Source, t.ReadOnly)
			var schema struct {
				Properties map[string]map[string]any `json:"properties"`
				Required   []string                  `json:"required"`
			}
			json.Unmarshal(t.InputSchema, &schema)
			if len(schema.Properties) == 0 {
				b.WriteString("No arguments.\n\n")
				continue
			}
			b.WriteString("| argument | type | required | description |\n|---|---|---|---|\n")
			names := make([]string, 0, len(schema.Properties))
			for n := range schema.Properties {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				p := schema.Properties[n]
				fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", n, typeOf(p), yesNo(slices.Contains(schema.Required, n)), describe(p))
			}
			b.WriteString("\n")
		}
	}
}

func typeOf(p map[string]any) string {
	t, _ := p["type"].(string)
	if t == "array" {
		if items, ok := p["items"].(map[string]any); ok {
			if it, ok := items["type"].(string); ok {
				return "array of " + it
			}
		}
	}
	if t == "" {
		return "any"
	}
	return t
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func describe(p map[string]any) string {
	var parts []string
	if d, ok := p["description"].(string); ok {
		parts = append(parts, d)
	}
	if e, ok := p["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, fmt.Sprintf("`%v`", v))
		}
		parts = append(parts, "One of "+strings.Join(vs, ", ")+".")
	}
	if d, ok := p["default"]; ok {
		parts = append(parts, fmt.Sprintf("Default `%v`.", d))
	}
	var bounds []string
	for _, k := range []string{"minimum", "maximum", "minLength", "maxLength", "maxItems"} {
		if v, ok := p[k]; ok {
			bounds = append(bounds, fmt.Sprintf("%s %v", k, v))
		}
	}
	if len(bounds) > 0 {
		parts = append(parts, "("+strings.Join(bounds, ", ")+")")
	}
	return strings.ReplaceAll(strings.Join(parts, " "), "|", "\\|")
}
