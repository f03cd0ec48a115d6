// Package catalog serves the real tool definitions of LiveMCPBench (see
// package livemcpbench: 70 MCP servers, 527 tools) as MCP servers over
// Streamable HTTP, for tests and benchmarks that need Nexus in front of a
// realistic catalog with no network and no real server behind it.
//
// [Entries] turns the catalog into downstream servers with valid Nexus
// names, [Handler] serves each at /{name}/mcp with the official MCP Go SDK,
// every tool answering a canned text result, [Start] runs them on an
// httptest server, and [Config] writes the Nexus configuration that points
// at them. Copies of the catalog under other names (Entries' copies) scale
// it: 10 copies are 700 servers and 5,270 tools.
package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/livemcpbench"
)

// Entry is one downstream server of the catalog.
type Entry struct {
	// Name is the server's name: lowercase letters, digits and '-', at
	// most 63 characters, unique among the entries of one [Entries] call.
	// It is the server's Nexus name, the Implementation name it reports and
	// its path, /{Name}/mcp.
	Name string
	// Toolbox is the Nexus toolbox the server belongs to, named after its
	// catalog category (lowercase letters, digits and '-').
	Toolbox string
	// Category is the catalog category Toolbox is named after, with
	// " (copy n)" for copy n > 1; [Config] gives it as the toolbox's
	// description.
	Category string
	// Description is the catalog's description of the server (some are in
	// Chinese); the server gives it as its instructions.
	Description string
	// Tools are the server's tools, each with its input schema as the
	// catalog gives it, or made an object schema when the SDK would not
	// accept it (see [Entries]).
	Tools []livemcpbench.Tool
}

// Limits of names: Nexus's for toolbox and server names, MCP's for tools.
const (
	maxServerName = 63
	maxToolName   = 128
)

// Entries turns the catalog's servers into entries, copies times over
// (fewer than 1 counts as 1). Copy 1 is the catalog as it is; copy n > 1
// has every server and toolbox name suffixed "-n" and every tool name "_n",
// so that all server names stay unique and all tool names valid MCP names
// ([A-Za-z0-9_.-], 1 to 128 characters).
//
// A server's name comes from its key in the catalog (its name there when
// the key gives none): lowercased, each run of other characters than
// [a-z0-9] made one '-', trimmed of '-', cut to fit 63 characters with its
// suffix. Names that still clash (two keys that differ only in case or
// punctuation) get a further "-x2", "-x3", ... in the order of servers, so
// the names depend only on the input and its order.
//
// An input schema that the SDK would refuse (one that is not a JSON object
// with "type": "object") is fixed minimally: "type": "object" is added to
// an object without type or replaces another type, and anything that is
// not an object becomes {"type": "object"}. The whole catalog needs no fix.
func Entries(servers []livemcpbench.Server, copies int) []Entry {
	copies = max(copies, 1)
	taken := make(map[string]bool, len(servers)*copies)
	base := make([]string, len(servers))
	tools := make([][]livemcpbench.Tool, len(servers))
	for i, s := range servers {
		base[i] = unique(taken, fit(cmp.Or(slug(s.Key), slug(s.Name), "server"), "", maxServerName), maxServerName)
		tools[i] = make([]livemcpbench.Tool, len(s.Tools))
		for j, t := range s.Tools {
			t.InputSchema, _ = objectSchema(t.InputSchema)
			tools[i][j] = t
		}
	}
	out := make([]Entry, 0, len(servers)*copies)
	for n := 1; n <= copies; n++ {
		for i, s := range servers {
			e := Entry{
				Name:        base[i],
				Toolbox:     toolboxName(s.Category),
				Category:    cmp.Or(s.Category, "Uncategorized"),
				Description: s.Description,
				Tools:       tools[i],
			}
			if n > 1 {
				e.Name = unique(taken, fit(base[i], "-"+strconv.Itoa(n), maxServerName), maxServerName)
				e.Toolbox = fit(e.Toolbox, "-"+strconv.Itoa(n), maxServerName)
				e.Category += " (copy " + strconv.Itoa(n) + ")"
				e.Tools = renamed(tools[i], "_"+strconv.Itoa(n))
			}
			out = append(out, e)
		}
	}
	return out
}

// renamed returns tools with suffix added to every name, names kept unique
// and within the MCP limit.
func renamed(tools []livemcpbench.Tool, suffix string) []livemcpbench.Tool {
	out := make([]livemcpbench.Tool, len(tools))
	taken := make(map[string]bool, len(tools))
	for i, t := range tools {
		t.Name = unique(taken, fit(t.Name, suffix, maxToolName), maxToolName)
		out[i] = t
	}
	return out
}

// slug lowercases s and turns each run of characters other than [a-z0-9]
// into one '-', trimmed at both ends.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	return b.String()
}

// toolboxName is the toolbox of a category: its slug, "uncategorized" when
// empty, and not Nexus's reserved built-in toolbox "nexus".
func toolboxName(category string) string {
	name := fit(cmp.Or(slug(category), "uncategorized"), "", maxServerName)
	if name == "nexus" {
		name = "nexus-category"
	}
	return name
}

// fit returns name+suffix cut to at most limit bytes by shortening name
// (ASCII, as slugs and MCP tool names are), never leaving '-' or '_' at the
// end of the shortened name.
func fit(name, suffix string, limit int) string {
	if keep := limit - len(suffix); len(name) > keep {
		name = strings.TrimRight(name[:max(keep, 0)], "-_")
	}
	return name + suffix
}

// unique returns name, or name with "-x2", "-x3", ... when taken, and
// marks the result taken.
func unique(taken map[string]bool, name string, limit int) string {
	got := name
	for k := 2; taken[got]; k++ {
		got = fit(name, "-x"+strconv.Itoa(k), limit)
	}
	taken[got] = true
	return got
}

// objectSchema returns schema as an input schema the SDK's AddTool accepts
// (a JSON object with "type": "object"), and whether it had to change it.
// An object without type gets "type": "object" first, its text otherwise
// kept; an object with another type gets "object" instead; anything else
// (missing, null, not an object) becomes {"type":"object"}.
func objectSchema(schema json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`), true
	}
	typ, ok := m["type"]
	if !ok {
		body := bytes.TrimSpace(schema)[1:] // after '{'
		if len(m) == 0 {
			return json.RawMessage(`{"type":"object"}`), true
		}
		return append(json.RawMessage(`{"type":"object",`), body...), true
	}
	var s string
	if json.Unmarshal(typ, &s) == nil && s == "object" {
		return schema, false
	}
	m["type"] = json.RawMessage(`"object"`)
	fixed, err := json.Marshal(m)
	if err != nil { // cannot happen: m was just decoded
		return json.RawMessage(`{"type":"object"}`), true
	}
	return fixed, true
}
