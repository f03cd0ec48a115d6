package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// authzConfig denies one tool of each family to members: a valence tool to
// every member, a tutor tool and a downstream toolbox (its server "hello",
// a real MCP server) to all but alice.
const authzConfig = `toolboxes:
  ext:
    mcpServers:
      hello: {command: %q}
access:
  tools:
    tension_resolve: {roles: [admin]}
    tn_course_grades: {users: [alice]}
  toolboxes:
    nexus: {roles: [admin, member]}
    ext: {users: [alice]}
`

// surfaceCaller calls tools as a user on one surface and lists what that
// user sees there.
type surfaceCaller struct {
	name string
	// call returns the error code of the call ("" when it succeeded) and
	// the body the surface answered.
	call func(t *testing.T, user, tool string, args map[string]any) (code, body string)
	// list returns the tool names the user sees (the agents surface: as
	// agent_mode; bounded: get_tools' overview); nil: the surface lists
	// nothing per user (the CLI).
	list func(t *testing.T, user string) []string
}

// idOf is the toolbox, server (agent) and own name of a tool by its flat
// name.
func idOf(tool string) (toolbox, server, name string) {
	if parts := strings.Split(tool, "__"); len(parts) == 3 {
		return parts[0], parts[1], parts[2]
	}
	return "nexus", serverOf(tool), tool
}

// serverOf names the server (agent) of a built-in tool.
func serverOf(tool string) string {
	switch {
	case strings.HasPrefix(tool, "tn_"):
		return "tutor"
	case strings.HasPrefix(tool, "belief_"), strings.HasPrefix(tool, "tension_"), strings.HasPrefix(tool, "entity_"):
		return "substrate"
	}
	return "vkb"
}

// errorCode reads the error code of a failed call's body in any family's
// shape: valence {error_code}, tutor ErrorResponse {code}, REST {error:
// {code}}.
func errorCode(body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return "UNREADABLE: " + body
	}
	if c, ok := m["error_code"].(string); ok {
		return c
	}
	if e, ok := m["error"].(map[string]any); ok {
		if c, ok := e["code"].(string); ok {
			return c
		}
	}
	if c, ok := m["code"].(string); ok {
		return c
	}
	return "NO CODE: " + body
}

// TestAuthorizationMatrix proves SPEC section 8 on every surface (MCP flat,
// agents, bounded, REST, CLI) and every tool family (valence, tutor,
// workbench meta-tools): a user who is not an admin sees only the tools the
// access rules allow them and gets FORBIDDEN calling another; never reaches
// another user's conversation by its id (NOT_FOUND as a tool argument,
// FORBIDDEN as the call's session), workspace (FORBIDDEN) or credential
// (NOT_FOUND); and nothing is written by a refused call. Admins reach
// everything.
func TestAuthorizationMatrix(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	dir := t.TempDir()
	conf := filepath.Join(dir, "nexus.yaml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(authzConfig, helloServer(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, u := range []struct{ name, role string }{{"alice", "member"}, {"bob", "member"}, {"root", "admin"}} {
		out, errOut, code := runNexus(t, "", "users", "add", u.name, "--role", u.role, "--data-dir", dir)
		if code != 0 {
			t.Fatalf("users add %s: %s", u.name, errOut)
		}
		tokens[u.name] = strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	}
	base := startServeIn(t, dir, "--config", conf, "--token-rate", "0")

	// MCP clients, one session per user and endpoint.
	var mu sync.Mutex
	sessions := map[string]*mcp.ClientSession{}
	// With sessionless, the client speaks the sessionless protocol
	// (2026-07-28): no session, every request checked on its own.
	session := func(t *testing.T, path, user string, sessionless bool) *mcp.ClientSession {
		mu.Lock()
		defer mu.Unlock()
		key := fmt.Sprintf("%s %s %v", path, user, sessionless)
		if cs := sessions[key]; cs != nil {
			return cs
		}
		opts := testtools.WithSession()
		if sessionless {
			opts = testtools.Sessionless()
		}
		hc := &http.Client{Transport: bearer{tokens[user]}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "authz", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: hc}, opts)
		if err != nil {
			t.Fatalf("%s as %s: %v", path, user, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != opts.ProtocolVersion {
			t.Fatalf("%s as %s: negotiated %s, want %s", path, user, got, opts.ProtocolVersion)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[key] = cs
		return cs
	}
	mcpCall := func(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			// The JSON-RPC error of a tool the surface does not serve
			// (or not to this caller): as a name that does not exist.
			if strings.Contains(err.Error(), fmt.Sprintf("unknown tool %q", name)) {
				return "NOT_FOUND", err.Error()
			}
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			if code, ok := res.Meta["io.nexus/errorCode"].(string); ok && !json.Valid([]byte(text(res))) {
				return code, text(res) // a plain-text family (the workbench's)
			}
			return errorCode(text(res)), text(res)
		}
		return "", text(res)
	}
	mcpList := func(t *testing.T, cs *mcp.ClientSession) []string {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range lt.Tools {
			out = append(out, tl.Name)
			// The agents surface: its modes, as agent_mode.
			if props, ok := tl.InputSchema.(map[string]any)["properties"].(map[string]any); ok {
				if mode, ok := props["mode"].(map[string]any); ok {
					for _, m := range mode["enum"].([]any) {
						out = append(out, tl.Name+"_"+m.(string))
					}
				}
			}
		}
		return out
	}
	// The MCP surfaces, for clients with a session or without.
	mcpSurfaces := func(sessionless bool) []surfaceCaller {
		suffix := ""
		if sessionless {
			suffix = "-sessionless"
		}
		session := func(t *testing.T, path, user string) *mcp.ClientSession { return session(t, path, user, sessionless) }
		return []surfaceCaller{
			{name: "mcp-flat" + suffix,
				call: func(t *testing.T, user, tool string, args map[string]any) (string, string) {
					return mcpCall(t, session(t, "/mcp", user), tool, args)
				},
				list: func(t *testing.T, user string) []string { return mcpList(t, session(t, "/mcp", user)) }},
			{name: "mcp-agents" + suffix,
				call: func(t *testing.T, user, tool string, args map[string]any) (string, string) {
					_, agent, mode := idOf(tool)
					a := map[string]any{"mode": mode, "sessionId": ""}
					for k, v := range args {
						a[k] = v
					}
					if _, named := args["sessionId"]; !named {
						delete(a, "sessionId")
					}
					return mcpCall(t, session(t, "/mcp/agents", user), agent, a)
				},
				list: func(t *testing.T, user string) []string { return mcpList(t, session(t, "/mcp/agents", user)) }},
			{name: "mcp-bounded" + suffix,
				call: func(t *testing.T, user, tool string, args map[string]any) (string, string) {
					// The call's context goes with use_tool's own call, as a
					// bounded client sends it.
					toolbox, server, name := idOf(tool)
					cs := session(t, "/mcp/bounded", user)
					if toolbox != "nexus" {
						// Seed 003: use_tool reaches a toolbox the session
						// opened (a toolbox denied to the user is not found).
						mcpCall(t, cs, "open_toolbox", map[string]any{"toolbox": toolbox})
					}
					outer := map[string]any{"tool": map[string]any{"toolbox": toolbox, "server": server, "tool": name}}
					inner := map[string]any{}
					for k, v := range args {
						if k == "context" || k == "workspaceContext" {
							outer[k] = v
						} else {
							inner[k] = v
						}
					}
					outer["arguments"] = inner
					return mcpCall(t, cs, "use_tool", outer)
				},
				list: func(t *testing.T, user string) []string {
					_, body := mcpCall(t, session(t, "/mcp/bounded", user), "get_tools", map[string]any{})
					var ov struct {
						Agents []struct {
							Modes []struct{ Name string } `json:"modes"`
						} `json:"agents"`
					}
					json.Unmarshal([]byte(body), &ov)
					var out []string
					for _, a := range ov.Agents {
						for _, m := range a.Modes {
							out = append(out, m.Name)
						}
					}
					return out
				}},
		}
	}
	surfaces := append(mcpSurfaces(false), mcpSurfaces(true)...)
	surfaces = append(surfaces, []surfaceCaller{
		{name: "rest",
			call: func(t *testing.T, user, tool string, args map[string]any) (string, string) {
				b, _ := json.Marshal(args)
				code, body := restDo(t, "POST", base+"/api/tools/"+tool+":call", tokens[user], string(b))
				if code >= 400 {
					return errorCode(body), body
				}
				return "", body
			},
			list: func(t *testing.T, user string) []string {
				_, body := restDo(t, "GET", base+"/api/tools", tokens[user], "")
				var l struct{ Tools []struct{ Name string } }
				json.Unmarshal([]byte(body), &l)
				var out []string
				for _, tl := range l.Tools {
					out = append(out, tl.Name)
				}
				return out
			}},
		{name: "cli",
			call: func(t *testing.T, user, tool string, args map[string]any) (string, string) {
				b, _ := json.Marshal(args)
				out, errOut, code := runNexus(t, "", "call", tool, string(b), "--as", user, "--data-dir", dir, "--config", conf)
				if code != 0 {
					if strings.TrimSpace(out) == "" {
						return "EXIT " + errOut, out
					}
					return errorCode(out), out
				}
				return "", out
			}},
	}...)

	for _, s := range surfaces {
		t.Run(s.name, func(t *testing.T) {
			// Setup as alice: a vkb session, a tutoring session, a belief
			// in a shared workspace she claims, a credential.
			team := "team-" + s.name
			code, body := s.call(t, "alice", "session_start", map[string]any{"platform": "api"})
			if code != "" {
				t.Fatalf("alice session_start: %s", body)
			}
			vkbID := jsonPath(t, body, "session", "id")
			code, body = s.call(t, "alice", "tn_session_start", map[string]any{})
			if code != "" {
				t.Fatalf("alice tn_session_start: %s", body)
			}
			tnID := jsonPath(t, body, "sessionId")
			code, body = s.call(t, "alice", "tn_user_byok_add", map[string]any{"provider": "anthropic", "label": "key " + s.name, "apiKey": "sk-ant-alice-0123456789"})
			if code != "" {
				t.Fatalf("alice tn_user_byok_add: %s", body)
			}
			credID := jsonPath(t, body, "id")
			if code, body = s.call(t, "alice", "belief_create", map[string]any{"content": "alice's team ships on Fridays",
				"confidence": map[string]any{"overall": 0.8}, "domain_path": []any{"team"}, "workspaceContext": map[string]any{"workspaceId": team}}); code != "" {
				t.Fatalf("alice belief_create in %s: %s", team, body)
			}

			// Listing: bob sees neither denied tool; alice sees the tutor
			// tool the rules give her; the admin sees both.
			if s.list != nil {
				has := func(names []string, tool string) bool {
					return slices.ContainsFunc(names, func(n string) bool { return n == tool || strings.HasSuffix(n, "_"+tool) })
				}
				bob, alice, root := s.list(t, "bob"), s.list(t, "alice"), s.list(t, "root")
				if len(bob) == 0 || !has(bob, "belief_query") {
					t.Fatalf("bob lists nothing usable: %v", bob)
				}
				for _, denied := range []string{"tension_resolve", "tn_course_grades", "greet"} {
					if has(bob, denied) {
						t.Errorf("bob is listed %s, which the access rules deny him", denied)
					}
					if !has(root, denied) {
						t.Errorf("the admin is not listed %s", denied)
					}
				}
				if !has(alice, "tn_course_grades") || !has(alice, "greet") || has(alice, "tension_resolve") {
					t.Errorf("alice's listing: tn_course_grades %v (want true), tension_resolve %v (want false)", has(alice, "tn_course_grades"), has(alice, "tension_resolve"))
				}
			}

			cases := []struct {
				what, user, tool string
				args             map[string]any
				want             string
			}{
				// Tools the rules deny: FORBIDDEN, in each family.
				{"valence tool denied to members", "bob", "tension_resolve", map[string]any{"tension_id": "00000000-0000-7000-8000-000000000000", "resolution": "x", "action": "keep_both"}, "FORBIDDEN"},
				{"tutor tool denied to bob", "bob", "tn_course_grades", map[string]any{"course": "langara:CPSC 1150"}, "FORBIDDEN"},
				// A toolbox denied to a user is missing to them, on every
				// surface (issue 21, item 8).
				{"downstream toolbox denied to bob", "bob", "ext__hello__greet", map[string]any{"name": "bob"}, "NOT_FOUND"},
				{"downstream toolbox allowed to alice", "alice", "ext__hello__greet", map[string]any{"name": "alice"}, ""},
				// Another's conversation named as a tool's argument: as if
				// it did not exist.
				{"vkb session_get", "bob", "session_get", map[string]any{"session_id": vkbID}, "NOT_FOUND"},
				{"vkb exchange_add", "bob", "exchange_add", map[string]any{"session_id": vkbID, "role": "user", "content": "bob was here"}, "NOT_FOUND"},
				{"vkb exchange_list", "bob", "exchange_list", map[string]any{"session_id": vkbID}, "NOT_FOUND"},
				{"tutor history", "bob", "tn_session_history", map[string]any{"sessionId": tnID}, "NOT_FOUND"},
				{"tutor ask", "bob", "tn_session_ask", map[string]any{"sessionId": tnID, "message": "bob was here", "draft": true}, "NOT_FOUND"},
				// Another's credential.
				{"credential", "bob", "tn_user_byok_delete", map[string]any{"id": credID}, "NOT_FOUND"},
				// Another's conversation named as the call's session.
				{"context session", "bob", "belief_query", map[string]any{"query": "fridays", "context": map[string]any{"sessionId": vkbID}}, "FORBIDDEN"},
				// Another's workspaces.
				{"personal workspace", "bob", "belief_query", map[string]any{"query": "fridays", "workspaceContext": map[string]any{"workspaceId": "user:alice"}}, "FORBIDDEN"},
				{"claimed workspace", "bob", "belief_query", map[string]any{"query": "fridays", "workspaceContext": map[string]any{"workspaceId": team}}, "FORBIDDEN"},
				{"admins' workspace", "bob", "belief_create", map[string]any{"content": "bob in default", "confidence": map[string]any{"overall": 0.5}, "domain_path": []any{"x"},
					"workspaceContext": map[string]any{"workspaceId": "default"}}, "FORBIDDEN"},
				// What they may do.
				{"own workspace", "bob", "belief_query", map[string]any{"query": "fridays"}, ""},
				{"own session", "alice", "session_get", map[string]any{"session_id": vkbID}, ""},
				// (Allowed: whatever it answers, it is not FORBIDDEN.)
				{"alice's tutor tool", "alice", "tn_course_grades", map[string]any{"course": "langara:CPSC 1150"}, "!FORBIDDEN"},
				{"admin reads alice's session", "root", "session_get", map[string]any{"session_id": vkbID, "workspaceContext": map[string]any{"workspaceId": "user:alice"}}, ""},
				{"admin reads alice's tutoring", "root", "tn_session_history", map[string]any{"sessionId": tnID, "workspaceContext": map[string]any{"workspaceId": "user:alice"}}, ""},
				{"admin in alice's workspace", "root", "belief_query", map[string]any{"query": "fridays", "workspaceContext": map[string]any{"workspaceId": team}}, ""},
			}
			for _, c := range cases {
				code, body := s.call(t, c.user, c.tool, c.args)
				if c.want == "!FORBIDDEN" {
					if code == "FORBIDDEN" {
						t.Errorf("%s: %s %s: FORBIDDEN: %s", c.what, c.user, c.tool, body)
					}
					continue
				}
				if code != c.want {
					t.Errorf("%s: %s %s: code %q, want %q: %s", c.what, c.user, c.tool, code, c.want, body)
				}
				if c.want != "" && strings.Contains(body, "fridays") {
					t.Errorf("%s: the refusal discloses data: %s", c.what, body)
				}
			}
			// Nothing was written by the refusals: alice's session has no
			// exchange, her tutoring session no message.
			if _, body := s.call(t, "alice", "exchange_list", map[string]any{"session_id": vkbID}); strings.Contains(body, "bob was here") {
				t.Errorf("a refused exchange_add was written: %s", body)
			}
			if _, body := s.call(t, "alice", "tn_session_history", map[string]any{"sessionId": tnID}); strings.Contains(body, "bob was here") {
				t.Errorf("a refused tn_session_ask was written: %s", body)
			}
			if _, body := s.call(t, "alice", "tn_user_byok_list", map[string]any{}); !strings.Contains(body, credID) {
				t.Errorf("alice's credential went when bob tried to delete it: %s", body)
			}
			if _, body := s.call(t, "bob", "tn_user_byok_list", map[string]any{}); strings.Contains(body, credID) {
				t.Errorf("bob's credentials list alice's: %s", body)
			}
			// bob's session listing shows none of alice's.
			if _, body := s.call(t, "bob", "session_list", map[string]any{}); strings.Contains(body, vkbID) {
				t.Errorf("bob's session_list shows alice's session: %s", body)
			}
		})
	}

	t.Run("membership", func(t *testing.T) {
		// Made a member, bob reaches the workspace (within the cache's
		// time); removed, he no longer does.
		s := surfaces[slices.IndexFunc(surfaces, func(s surfaceCaller) bool { return s.name == "rest" })]
		args := map[string]any{"query": "fridays", "workspaceContext": map[string]any{"workspaceId": "team-rest"}}
		if _, errOut, code := runNexus(t, "", "workspaces", "add-member", "team-rest", "bob", "--data-dir", dir); code != 0 {
			t.Fatalf("add-member: %s", errOut)
		}
		testtools.EventuallyErr(t, 15*time.Second, "bob to reach team-rest", func() error {
			if code, body := s.call(t, "bob", "belief_query", args); code != "" || !strings.Contains(body, "Fridays") {
				return fmt.Errorf("%s %s", code, body)
			}
			return nil
		})
		if _, errOut, code := runNexus(t, "", "workspaces", "remove-member", "team-rest", "bob", "--data-dir", dir); code != 0 {
			t.Fatalf("remove-member: %s", errOut)
		}
		testtools.EventuallyErr(t, 15*time.Second, "bob to lose team-rest", func() error {
			if code, body := s.call(t, "bob", "belief_query", args); code != "FORBIDDEN" {
				return fmt.Errorf("%s %s", code, body)
			}
			return nil
		})
	})

	t.Run("proxy", func(t *testing.T) {
		// The per-server proxy passes every tool: only who may use them
		// all reaches it.
		for user, want := range map[string]int{"bob": http.StatusForbidden} {
			code, body := restDo(t, "POST", base+"/mcp/servers/ext/hello", tokens[user],
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			if code != want || !strings.Contains(body, "FORBIDDEN") {
				t.Errorf("%s through the proxy: %d %s", user, code, body)
			}
		}
		hc := &http.Client{Transport: bearer{tokens["alice"]}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "authz", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/servers/ext/hello", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("alice through the proxy: %v", err)
		}
		defer cs.Close()
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "ada"}}); err != nil || res.IsError {
			t.Fatalf("alice's greet through the proxy: %v %+v", err, res)
		}
		// The proxied call is recorded as every call is (SPEC section 5):
		// traced as alice's, and counted.
		testtools.EventuallyErr(t, 10*time.Second, "the proxied call to be traced", func() error {
			code, body := restDo(t, "GET", base+"/api/traces", tokens["alice"], "")
			var page struct {
				Items []struct {
					Surface, Toolbox, Server, Tool, Outcome, UserID string
					ArgsBytes                                       int `json:"argsBytes"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(body), &page); err != nil || code != http.StatusOK {
				return fmt.Errorf("GET /api/traces: %d %s", code, body)
			}
			for _, it := range page.Items {
				if it.Surface == "proxy" && it.Toolbox == "ext" && it.Server == "hello" && it.Tool == "greet" && it.Outcome == "ok" && it.UserID != "" && it.ArgsBytes > 0 {
					return nil
				}
			}
			return fmt.Errorf("no trace of the proxied greet in %s", body)
		})
		if code, body := restDo(t, "GET", base+"/metrics", tokens["root"], ""); code != http.StatusOK ||
			!strings.Contains(body, `surface="proxy",tool="ext__hello__greet"`) && !strings.Contains(body, `tool="ext__hello__greet",surface="proxy"`) {
			t.Errorf("the metrics do not count the proxied call: %d %.300s", code, body)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// The metrics count every user's calls: admins only.
		if code, body := restDo(t, "GET", base+"/metrics", tokens["bob"], ""); code != http.StatusForbidden || !strings.Contains(body, "FORBIDDEN") {
			t.Errorf("bob's GET /metrics: %d %s", code, body)
		}
		if code, body := restDo(t, "GET", base+"/metrics", tokens["root"], ""); code != http.StatusOK || !strings.Contains(body, "nexus_") {
			t.Errorf("the admin's GET /metrics: %d %.200s", code, body)
		}
	})

	t.Run("mcp session id", func(t *testing.T) {
		// Alice's MCP session id, presented with bob's token, is not found.
		cs := session(t, "/mcp", "alice", false)
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+tokens["bob"])
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), "tn_") {
			t.Fatalf("bob with alice's session id: %d %s", resp.StatusCode, b)
		}
	})
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// restDo makes one REST request with a token and returns the status and
// body.
func restDo(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonPath reads a string at path in a JSON body.
func jsonPath(t *testing.T, body string, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %s", path, body)
		}
		v = m[p]
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("no string at %v in %s", path, body)
	}
	return s
}
