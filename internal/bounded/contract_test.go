package bounded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access"
	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/agents"
	"github.com/nexus-mcp/nexus/internal/bounded"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/workbench"
)

// useTool calls use_tool on cs with the structured id and arguments.
func useTool(t *testing.T, cs *mcp.ClientSession, toolbox, server, tool string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	in := map[string]any{"tool": map[string]any{"toolbox": toolbox, "server": server, "tool": tool}}
	if args != nil {
		in["arguments"] = args
	}
	return callTool(t, cs, "use_tool", in)
}

// TestUseToolNeedsAnOpenedToolbox (issue 21, item 13): seed 003 says the
// toolbox of use_tool "MUST match an opened toolbox name": a configured
// toolbox this session has not opened is not found, exactly as the MCP
// Workbench answers; once the session opened it, use_tool runs its tools.
// Another session's opening does not count. The built-in toolbox is always
// open.
func TestUseToolNeedsAnOpenedToolbox(t *testing.T) {
	h := newHub(t, toolboxes("other", httpServer("srv", echoPeer(t))))
	res, body := useTool(t, h.bounded, "other", "srv", "echo", map[string]any{"x": 1})
	if want := "Toolbox 'other' not found"; !res.IsError || body != want {
		t.Fatalf("use_tool before open_toolbox: %q (isError %v), want %q", body, res.IsError, want)
	}
	if res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "other"}); res.IsError {
		t.Fatalf("open_toolbox: %s", body)
	}
	if res, body := useTool(t, h.bounded, "other", "srv", "echo", map[string]any{"x": 1}); res.IsError || body != `{"x":1}` {
		t.Fatalf("use_tool after open_toolbox: %q (isError %v)", body, res.IsError)
	}
	// A second session of the same surface has opened nothing.
	second := connectInMemory(t, h.boundedSurface.Server())
	if res, body := useTool(t, second, "other", "srv", "echo", map[string]any{"x": 1}); !res.IsError || body != "Toolbox 'other' not found" {
		t.Fatalf("use_tool in a session that did not open the toolbox: %q (isError %v)", body, res.IsError)
	}
	// get_tools that discovers one of its tools opens it for the session.
	if res, body := callTool(t, second, "get_tools", map[string]any{"tools": []string{"srv_echo"}}); res.IsError || !strings.Contains(body, `"name":"srv_echo"`) {
		t.Fatalf("get_tools: %s", body)
	}
	if res, body := useTool(t, second, "other", "srv", "echo", map[string]any{"x": 2}); res.IsError || body != `{"x":2}` {
		t.Fatalf("use_tool after get_tools opened the toolbox: %q (isError %v)", body, res.IsError)
	}
}

// TestUseToolSessionlessOpensOnTheFly (issue 21, item 13): a sessionless
// client keeps nothing between requests, so it cannot have opened a
// toolbox in an earlier one: its use_tool opens a configured toolbox
// itself (documented in docs/surfaces.md).
func TestUseToolSessionlessOpensOnTheFly(t *testing.T) {
	h := newHub(t, toolboxes("other", httpServer("srv", echoPeer(t))))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.boundedSurface.Server() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, testtools.Sessionless())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, body := useTool(t, cs, "other", "srv", "echo", map[string]any{"x": 1}); res.IsError || body != `{"x":1}` {
		t.Fatalf("sessionless use_tool: %q (isError %v)", body, res.IsError)
	}
}

// TestUseToolForwardsArguments (issue 21, item 14): seed 003 delegates the
// validation of arguments to the downstream tool ("proxied from downstream
// tool"): use_tool forwards them unchanged, even those the tool's listed
// schema would refuse, and returns what the server answers.
func TestUseToolForwardsArguments(t *testing.T) {
	h := newHub(t, toolboxes("tb", httpServer("srv", echoPeer(t))))
	if res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "tb"}); res.IsError {
		t.Fatalf("open_toolbox: %s", body)
	}
	// echo's schema: x is a number, no other properties.
	sent := `{"x":"not a number","extra":[1,2],"nothing":null}`
	res, body := useTool(t, h.bounded, "tb", "srv", "echo", json.RawMessage(sent))
	if res.IsError || body != sent {
		t.Fatalf("use_tool: %q (isError %v), want the downstream server's answer %q", body, res.IsError, sent)
	}
	// The flat name still validates (the pipeline's schema check is for
	// the other paths).
	if res, body := callTool(t, h.flat, "tb__srv__echo", json.RawMessage(sent)); !res.IsError || !strings.Contains(body, "invalid arguments") {
		t.Errorf("flat call with invalid arguments: %q (isError %v)", body, res.IsError)
	}
}

// TestUseToolServerUnavailable (issue 21, item 15): in a partly opened
// toolbox, a tool of the server that failed to connect is not "not found":
// the server is unavailable, and the answer says why, as open_toolbox's
// server_errors does.
func TestUseToolServerUnavailable(t *testing.T) {
	gone := "http://127.0.0.1:1/mcp" // nothing listens on port 1
	h := newHub(t, toolboxes("mixed", httpServer("ghost", gone), httpServer("echo", echoPeer(t))))
	res, body := callTool(t, h.bounded, "open_toolbox", map[string]any{"toolbox": "mixed"})
	if res.IsError {
		t.Fatalf("open_toolbox: %s", body)
	}
	cause, _ := decode(t, body)["server_errors"].(map[string]any)["ghost"].(string)
	if cause == "" {
		t.Fatalf("open_toolbox gives no server error for ghost: %s", body)
	}
	res, body = useTool(t, h.bounded, "mixed", "ghost", "anything", nil)
	if want := "Failed to connect to MCP server 'ghost' (toolbox 'mixed'): connect: "; !res.IsError || !strings.HasPrefix(body, want) {
		t.Fatalf("use_tool on the server that did not connect: %q (isError %v), want it to start with %q", body, res.IsError, want)
	}
	if code := res.Meta[mcpkit.MetaError]; code != string(errs.Unavailable) {
		t.Errorf("error code %v, want %s", code, errs.Unavailable)
	}
	// A tool the connected server lacks is still not found.
	res, body = useTool(t, h.bounded, "mixed", "echo", "anything", nil)
	if want := "Tool 'anything' not found in server 'echo' (toolbox 'mixed')"; !res.IsError || body != want {
		t.Errorf("use_tool on a missing tool of a connected server: %q, want %q", body, want)
	}
}

// deniedRules give toolbox "secret" to admins only.
var deniedRules = config.Access{Toolboxes: map[string]config.Rule{"secret": {Roles: []string{"admin"}}}}

// TestDeniedToolboxIsMissing (issue 21, item 8): a toolbox the access rules
// deny a user is, to that user, a toolbox that does not exist, on every
// surface: neither the initialize instructions (flat, agents, bounded),
// nor a sessionless client's server/discover, nor get_tools' overview
// names it or its servers; open_toolbox and use_tool answer exactly as for
// a missing toolbox, and get_tools opens nothing of it. An admin still sees
// it all.
func TestDeniedToolboxIsMissing(t *testing.T) {
	secretPeer, openPeer := echoPeer(t), echoPeer(t)
	cfg := toolboxes("open", httpServer("pub", openPeer), "secret", httpServer("vault-srv", secretPeer))
	cfg.Toolboxes["secret"].Description = "admin-only tooling"
	reg := registry.New()
	m := workbench.NewManager(cfg, reg, workbench.Options{})
	t.Cleanup(func() { m.Close() })
	authz := access.New(storetest.OpenTestSQLite(t), deniedRules)
	type whoKey struct{}
	p := pipeline.New(pipeline.Options{Registry: reg, Authorizer: authz, Principal: func(ctx context.Context) (principal.Principal, bool) {
		who, ok := ctx.Value(whoKey{}).(principal.Principal)
		return who, ok
	}})
	cat := &mcpkit.Catalog{Registry: reg, Toolboxes: m}
	o := func(surface string) mcpkit.Options {
		return mcpkit.Options{Name: "nexus", Version: "t", Surface: surface, Instructions: "Nexus.", Catalog: cat}
	}
	bs, err := bounded.NewSurface(p, o("bounded"))
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]*mcp.Server{
		"bounded": bs.Server(),
		"flat":    mcpkit.Must(flat.New(p, o("flat"))),
		"agents":  mcpkit.Must(agents.New(p, o("agents"))),
	}
	member := principal.Principal{ID: "u-bob", Name: "bob", Role: principal.Member, Tier: "free"}
	admin := principal.Principal{ID: "u-root", Name: "root", Role: principal.Admin, Tier: "free"}
	// as serves srv over HTTP to who (the HTTP front puts the user in the
	// request's context).
	as := func(who principal.Principal, srv *mcp.Server, stateless bool) string {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), whoKey{}, who)))
		}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	connect := func(url string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	leaks := func(s string) bool {
		return strings.Contains(s, "secret") || strings.Contains(s, "admin-only") || strings.Contains(s, "vault")
	}

	bob := connect(as(member, servers["bounded"], false), testtools.WithSession())
	if res, body := callTool(t, bob, "get_tools", map[string]any{}); res.IsError || leaks(body) || !strings.Contains(body, `"open"`) {
		t.Errorf("the member's get_tools overview: %s", body)
	}
	if res, body := callTool(t, bob, "get_tools", map[string]any{"tools": map[string]any{"vault-srv": []string{"echo"}}}); res.IsError || !strings.Contains(body, `"unknown":["vault-srv_echo"]`) {
		t.Errorf("the member's get_tools of the secret toolbox's tool: %s", body)
	}
	if m.Opened("secret") {
		t.Errorf("the member's get_tools opened the secret toolbox")
	}
	res, body := callTool(t, bob, "open_toolbox", map[string]any{"toolbox": "secret"})
	if want := "Toolbox 'secret' not found. Available toolboxes: nexus, open"; !res.IsError || body != want {
		t.Errorf("the member's open_toolbox: %q (isError %v), want %q", body, res.IsError, want)
	}
	res, body = useTool(t, bob, "secret", "vault-srv", "echo", map[string]any{"x": 1})
	if want := "Toolbox 'secret' not found"; !res.IsError || body != want {
		t.Errorf("the member's use_tool: %q (isError %v), want %q", body, res.IsError, want)
	}
	if m.Opened("secret") {
		t.Errorf("the member opened the secret toolbox")
	}

	// (The flat and agents surfaces open every toolbox when a client
	// initializes: connections are the server's, not the caller's.)
	for _, name := range []string{"flat", "agents", "bounded"} {
		for _, sessionless := range []bool{false, true} {
			opts := testtools.WithSession()
			if sessionless {
				opts = testtools.Sessionless()
			}
			got := connect(as(member, servers[name], sessionless), opts).InitializeResult().Instructions
			if leaks(got) || !strings.Contains(got, "- open:") {
				t.Errorf("%s (sessionless %v): the member's instructions: %q", name, sessionless, got)
			}
			if got := connect(as(admin, servers[name], sessionless), opts).InitializeResult().Instructions; !strings.Contains(got, "- secret: admin-only tooling (servers: vault-srv)") {
				t.Errorf("%s (sessionless %v): the admin's instructions lack the secret toolbox: %q", name, sessionless, got)
			}
		}
	}

	// A denied toolbox's tool called by its own name, on the flat surface,
	// is answered as a tool of a toolbox that does not exist.
	call := func(cs *mcp.ClientSession, name string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"x": 1}})
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res.Content)
		return fmt.Sprintf("isError %v: %s", res.IsError, b)
	}
	for _, sessionless := range []bool{false, true} {
		opts := testtools.WithSession()
		if sessionless {
			opts = testtools.Sessionless()
		}
		cs := connect(as(member, servers["flat"], sessionless), opts)
		denied, missing := call(cs, "secret__vault-srv__echo"), call(cs, "nosuch__vault-srv__echo")
		if want := strings.ReplaceAll(missing, "nosuch", "secret"); denied != want {
			t.Errorf("flat (sessionless %v): the member calling the secret toolbox's tool: %s\nwant as a missing toolbox's: %s", sessionless, denied, want)
		}
	}

	root := connect(as(admin, servers["bounded"], false), testtools.WithSession())
	if _, body := callTool(t, root, "get_tools", map[string]any{}); !strings.Contains(body, "admin-only tooling") {
		t.Errorf("the admin's get_tools overview lacks the secret toolbox: %s", body)
	}
	if res, body := callTool(t, root, "open_toolbox", map[string]any{"toolbox": "secret"}); res.IsError || !reflect.DeepEqual(decode(t, body)["server_names"], []any{"vault-srv"}) {
		t.Errorf("the admin's open_toolbox: %s", body)
	}
}
