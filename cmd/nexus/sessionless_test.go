package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestSessionlessOverHTTP: SDK clients of the sessionless protocol
// (2026-07-28, no session) call tools on every MCP surface of "nexus serve",
// on both stores.
func TestSessionlessOverHTTP(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testSessionless(t, startServe(t)) })
	t.Run("postgres", func(t *testing.T) { testSessionless(t, startServe(t, "--db", storetest.PostgresURL(t))) })
}

func testSessionless(t *testing.T, base string) {
	t.Run("flat", func(t *testing.T) {
		cs := connectSessionless(t, base+"/mcp")
		if names := toolNames(t, cs); !slices.Contains(names, "belief_query") || !slices.Contains(names, "tn_course_search") {
			t.Fatalf("tools/list: %v", names)
		}
		sessionlessConversation(t, cs, cs)
	})
	t.Run("agents", func(t *testing.T) {
		cs := connectSessionless(t, base+"/mcp/agents")
		if names := toolNames(t, cs); !slices.Equal(names, []string{"substrate", "tutor", "vkb"}) {
			t.Fatalf("tools/list: %v", names)
		}
		res := call(t, cs, "substrate", map[string]any{"mode": "belief_query", "query": "transfer"})
		if res.IsError {
			t.Fatalf("substrate belief_query: %s", text(res))
		}
		res = call(t, cs, "substrate", map[string]any{"mode": "nosuch"})
		if !res.IsError || !strings.Contains(text(res), "unknown mode") {
			t.Fatalf("an unknown mode: %s", text(res))
		}
	})
	t.Run("bounded", func(t *testing.T) {
		cs := connectSessionless(t, base+"/mcp/bounded")
		sessionlessBounded(t, cs, cs)
	})
}

// connectSessionless connects an SDK client of the sessionless protocol to
// url, and checks that it negotiated it: no session id.
func connectSessionless(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectWith(t, url, testtools.Sessionless())
	if v := cs.InitializeResult().ProtocolVersion; v != testtools.SessionlessProtocol || cs.ID() != "" {
		t.Fatalf("%s: negotiated %s with session %q, want the sessionless protocol", url, v, cs.ID())
	}
	return cs
}

// sessionlessConversation: on the flat surface, a sessionless client's
// calls that name no session are one-offs (a conversation each, as REST
// calls), and a call naming one in _meta (io.nexus/sessionId, from an
// earlier result) is in that conversation, found by the next, which a
// (possibly) other connection b makes.
func sessionlessConversation(t *testing.T, a, b *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	res := call(t, a, "belief_query", map[string]any{"query": "transfer"})
	first, _ := res.Meta[mcpkit.MetaSession].(string)
	res = call(t, b, "belief_query", map[string]any{"query": "transfer"})
	second, _ := res.Meta[mcpkit.MetaSession].(string)
	if first == "" || second == "" || first == second {
		t.Fatalf("calls without a session got conversations %q and %q, want two one-offs", first, second)
	}
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "belief_create", Meta: mcp.Meta{mcpkit.MetaSession: first},
		Arguments: map[string]any{"content": "A sessionless client names its conversation", "domain_path": []string{"sessionless"}}})
	if err != nil || res.IsError || res.Meta[mcpkit.MetaSession] != first {
		t.Fatalf("belief_create in conversation %s: %v %s %v", first, err, text(res), res.Meta)
	}
	res = call(t, b, "session_get", map[string]any{"session_id": first})
	if res.IsError {
		t.Fatalf("session_get of the named conversation: %s", text(res))
	}
}

// sessionlessBounded: on the bounded surface, a sessionless client keeps
// nothing between requests: get_tools gives schemas and says so, tools/list
// stays the meta-tools, and the tools are called all the same, by name
// (resolved on each request) and through use_tool; calls of a (possibly)
// other connection b.
func sessionlessBounded(t *testing.T, a, b *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	res := call(t, a, "get_tools", map[string]any{"tools": map[string]any{"substrate": []string{"belief_create"}}})
	if res.IsError || !strings.Contains(text(res), `"name":"substrate_belief_create"`) || !strings.Contains(text(res), "no session") {
		t.Fatalf("get_tools: %s", text(res))
	}
	if names := toolNames(t, b); !slices.Equal(names, []string{"get_tools", "open_toolbox", "search_tools", "use_tool"}) {
		t.Fatalf("tools/list after get_tools: %v, want the meta-tools alone", names)
	}
	res = call(t, b, "substrate_belief_create", map[string]any{"content": "A sessionless client calls a tool get_tools named"})
	if res.IsError {
		t.Fatalf("substrate_belief_create by name: %s", text(res))
	}
	res = call(t, a, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "nexus", "server": "substrate", "tool": "belief_query"},
		"arguments": map[string]any{"query": "sessionless"}})
	if res.IsError || !strings.Contains(text(res), "sessionless client") {
		t.Fatalf("use_tool belief_query: %s", text(res))
	}
	// A name get_tools would not give stays unknown.
	if res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "substrate_nosuch", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Fatalf("an unknown tool answered: %s", text(res))
	}
}

// TestSessionlessAcrossReplicas: a sessionless client behind a round-robin
// balancer of two replicas on one PostgreSQL database: every request may
// reach either replica, and all of them work, a conversation named in _meta
// included, on the flat and the bounded surface.
func TestSessionlessAcrossReplicas(t *testing.T) {
	reps, _ := startReplicas(t, 2, "--no-demo")
	front, counts := roundRobin(t, bases(reps))
	flat := connectSessionless(t, front+"/mcp")
	for i := range 4 {
		if res := call(t, flat, "belief_query", map[string]any{"query": "replicas"}); res.IsError {
			t.Fatalf("call %d: %s", i, text(res))
		}
	}
	sessionlessConversation(t, flat, flat)
	sessionlessBounded(t, connectSessionless(t, front+"/mcp/bounded"), connectSessionless(t, front+"/mcp/bounded"))
	for i, c := range counts {
		if c.Load() < 4 {
			t.Errorf("replica %d got %d requests", i, c.Load())
		}
	}
}
