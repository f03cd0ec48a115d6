// Package archtest holds the test that enforces docs/architecture.md: which
// package may import which.
package archtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nexus-mcp/nexus/"

// layers puts every package in a layer (docs/architecture.md). A package
// imports only packages of lower layers, and packages of its own layer only
// where sameLayer allows it. A new package must be given a layer here and
// in the document.
var layers = map[string]int{
	// 0: foundations, no internal imports.
	"internal/errs": 0, "internal/ids": 0, "internal/jsondepth": 0, "internal/jsonrpcmsg": 0, "internal/relay": 0, "internal/toolsearch": 0, "internal/livemcpbench": 0, "internal/sdklog": 0, "internal/textsearch": 0, "internal/locomo": 0,
	"internal/timeq":     0, // dates named in a search query, as a window of time
	"internal/telemetry": 0, "internal/config": 0, "internal/registry": 0, "internal/store": 0,
	"internal/tension": 0, "internal/cursor": 0, "internal/tutor/catalog": 0, "internal/tutor/transfer": 0,
	"internal/secrets":          0,
	"internal/mcpwire":          0, // the Streamable HTTP wire Nexus reads and writes itself: protocol versions, headers, SSE events, JSON-RPC errors
	"internal/access/principal": 0, // who a call acts as: roles, the admin, who may use a conversation
	"internal/llm":              0, // language models that stream and call tools (OpenAI-compatible, Anthropic)
	"internal/embed":            0, // embedding models, the vectors of beliefs and exchanges, exact cosine, rank fusion (issue 23)
	"internal/vault/markdown":   0, // Obsidian-style notes: frontmatter, tags, wikilinks; link resolution and rewriting (issue 28)
	"internal/vault/noteindex":  0, // a vault's notes searched: BM25F over title, headings, tags, properties, body; fuzzy names (issue 28)
	// 1: the core: the one pipeline, its records, the local servers.
	"internal/trace": 1, "internal/conversation": 1, "internal/substrate": 1, "internal/vkb": 1,
	"internal/demo": 1, "internal/pipeline": 1, "internal/tutor": 1, "internal/users": 1,
	"internal/quota":      1, // prompt quotas (store, errs) and the HTTP request rate limit (store)
	"internal/access":     1, // who may use which tools and workspaces (the pipeline's authorize step)
	"internal/oauth":      1, // OAuth resource-server mode: JWT access tokens of an identity provider
	"internal/mcpsession": 1, // MCP sessions kept in the store, so that any replica serves any session
	"internal/events":     1, // events between replicas: PostgreSQL LISTEN/NOTIFY, NATS, or in process
	"internal/vault":      1, // the notes vault's agents (seed 000's original, issue 28)
	// 2: downstream servers.
	"internal/downstream": 2, "internal/workbench": 2,
	// 3: what the surfaces share: the MCP surface kit, the HTTP front, the
	// stdio transport.
	"internal/mcpkit": 3, "internal/httpapi": 3, "internal/stdio": 3,
	"internal/streamable": 3, // MCP's Streamable HTTP on Nexus's endpoints: the session table, sessionless routing, the fast call, JSON-RPC errors
	"internal/chat":       3, // the bounded tool loop of the chat and tn_session_ask
	// 4: the surfaces, siblings.
	"internal/flat": 4, "internal/agents": 4, "internal/bounded": 4, "internal/rest": 4, "internal/ws": 4, "internal/webui": 4,
	"internal/proxy": 4, "internal/metrics": 4,
	// 5: wiring. 6: the binary.
	"internal/app": 5, "cmd/nexus": 6, "cmd/locomo": 6, "cmd/toolbench": 6,
	// Test helpers: imported by tests only.
	"internal/testtools": -1, "internal/testtools/catalog": -1, "internal/logtest": -1, "internal/pipeline/pipelinetest": -1, "internal/store/storetest": -1, "internal/substrate/substratetest": -1,
	"internal/registry/registrytest": -1, "internal/archtest": -1, "internal/llm/llmtest": -1, "internal/embed/embedtest": -1,
}

// sameLayer lists the imports allowed within a layer.
var sameLayer = map[string][]string{
	"internal/workbench":       {"internal/downstream"},
	"internal/jsonrpcmsg":      {"internal/jsondepth"},
	"internal/relay":           {"internal/mcpwire"},
	"internal/toolsearch":      {"internal/textsearch"},
	"internal/vault/noteindex": {"internal/textsearch"},
	"internal/vkb":             {"internal/conversation", "internal/substrate"},
	"internal/vault":           {"internal/conversation"}, // memoryManager's sessions are conversations
	"internal/demo":            {"internal/substrate"},
	"internal/tutor/transfer":  {"internal/tutor/catalog"},
	"internal/tension":         {"internal/textsearch"},
	"internal/embed":           {"internal/store"},            // vectors are kept in the store (table embeddings)
	"internal/registry":        {"internal/access/principal"}, // a tool call carries its principal
	"internal/config":          {"internal/access/principal"}, // access rules name roles
	"internal/users":           {"internal/quota"},
	"internal/oauth":           {"internal/users"},
	"internal/tutor":           {"internal/conversation", "internal/quota"},
	"internal/pipeline":        {"internal/trace"},
	"internal/mcpsession":      {"internal/pipeline", "internal/events"},
	"internal/httpapi":         {"internal/streamable"}, // the front hands the MCP routes' requests to their endpoints
}

// upward lists imports of a higher layer that are known faults, to remove.
var upward = map[string][]string{}

// never lists imports that no rule may allow.
var never = map[string][]string{
	"internal/substrate":    {"internal/pipeline"},
	"internal/vkb":          {"internal/pipeline"},
	"internal/conversation": {"internal/pipeline"},
	"internal/tutor":        {"internal/pipeline"},
	"internal/pipeline":     {"internal/substrate", "internal/vkb", "internal/conversation", "internal/store"},
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		layer, ok := layers[name]
		if !ok {
			t.Errorf("%s has no layer: add it to docs/architecture.md and to layers in this test", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, internal := strings.CutPrefix(imp, module)
			if !internal {
				continue
			}
			if err := check(name, layer, dep); err != nil {
				t.Error(err)
			}
		}
	}
}

func check(name string, layer int, dep string) error {
	depLayer, ok := layers[dep]
	switch {
	case !ok:
		return nil // reported as a package without a layer
	case slices.Contains(never[name], dep):
		return fmt.Errorf("%s imports %s, which it must never import", name, dep)
	case depLayer == -1:
		return fmt.Errorf("%s imports the test helper %s outside a test", name, dep)
	case layer == -1:
		return nil
	case depLayer < layer:
		return nil
	case depLayer == layer && slices.Contains(sameLayer[name], dep):
		return nil
	case depLayer > layer && slices.Contains(upward[name], dep):
		return nil
	case depLayer == layer:
		return fmt.Errorf("%s imports %s of its own layer %d, which docs/architecture.md does not allow", name, dep, layer)
	}
	return fmt.Errorf("%s (layer %d) imports %s of the higher layer %d", name, layer, dep, depLayer)
}

// TestCheckCatchesViolations: the rules refuse what they must (a test that
// cannot fail is a defect).
func TestCheckCatchesViolations(t *testing.T) {
	for _, tc := range []struct{ name, dep string }{
		{"internal/pipeline", "internal/flat"},      // upward
		{"internal/substrate", "internal/pipeline"}, // never
		{"internal/registry", "internal/errs"},      // foundations import nothing internal
		{"internal/flat", "internal/agents"},        // a surface importing a sibling
		{"internal/rest", "internal/testtools"},     // a test helper outside tests
		{"internal/workbench", "internal/bounded"},  // upward, not a known fault
	} {
		if err := check(tc.name, layers[tc.name], tc.dep); err == nil {
			t.Errorf("%s -> %s was allowed", tc.name, tc.dep)
		}
	}
	if err := check("internal/vkb", layers["internal/vkb"], "internal/substrate"); err != nil {
		t.Errorf("an allowed import was refused: %v", err)
	}
}
