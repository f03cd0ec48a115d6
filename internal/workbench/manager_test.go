package workbench

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

func TestOpenThreeStdioServers(t *testing.T) {
	cfg := toolboxConfig("local",
		named{"hello", example("hello")},
		named{"everything", example("everything")},
		named{"memory", example("memory")})
	m, reg := newManager(t, cfg)
	if m.Opened("local") {
		t.Fatal("Opened before Open")
	}

	start := time.Now()
	o := open(t, m, "local")
	elapsed := time.Since(start)
	t.Logf("opened a toolbox of 3 stdio servers in %s (target <= 1s)", elapsed)
	if elapsed > 10*time.Second {
		t.Errorf("opening took %s", elapsed)
	}

	if !m.Opened("local") {
		t.Error("Opened after Open = false")
	}
	if want := []string{"hello", "everything", "memory"}; !slices.Equal(o.ServersConnected, want) {
		t.Errorf("ServersConnected = %v, want %v (errors %v)", o.ServersConnected, want, o.ServerErrors)
	}
	if o.Toolbox != "local" || o.Description != "the local toolbox" {
		t.Errorf("Opened = %q %q", o.Toolbox, o.Description)
	}
	// The everything example names tools "greet (structured)" and so on:
	// those break the MCP name rules and are reported, not served.
	if len(o.ServerErrors) != 1 || !strings.Contains(o.ServerErrors["everything"], `"greet (structured)"`) {
		t.Errorf("ServerErrors = %v, want only everything's unservable tool names", o.ServerErrors)
	}
	if _, ok := reg.Lookup("local__everything__greet (structured)"); ok {
		t.Error("a tool whose name breaks the MCP rules was registered")
	}

	var names []string
	for _, tool := range o.Tools {
		names = append(names, tool.ID.Name())
		if tool.Source != registry.MCP || tool.Family != registry.Workbench || tool.Handler == nil {
			t.Errorf("%s: source %q family %q", tool.ID.Name(), tool.Source, tool.Family)
		}
	}
	for _, want := range []string{"local__hello__greet", "local__everything__greet", "local__everything__ping",
		"local__memory__create_entities", "local__memory__read_graph"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if names[0] != "local__hello__greet" {
		t.Errorf("tools are not in server order: %v", names)
	}
	greet, _ := reg.Lookup("local__hello__greet")
	var schema map[string]any
	if err := json.Unmarshal(greet.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if props, _ := schema["properties"].(map[string]any); props["name"] == nil {
		t.Errorf("greet's input schema is not the downstream one: %s", greet.InputSchema)
	}
	if greet.Description != "say hi" {
		t.Errorf("greet's description = %q", greet.Description)
	}

	if got := mustCall(t, reg, "local__hello__greet", map[string]any{"name": "Ada"}); got != "Hi Ada" {
		t.Errorf("hello greet = %q", got)
	}
	mustCall(t, reg, "local__memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Nexus", "entityType": "project", "observations": []string{"an MCP hub"}}}})
	res, err := call(t, reg, "local__memory__read_graph", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"Nexus"`) {
		t.Errorf("memory read_graph = %s", b)
	}

	// Open is idempotent: nothing reconnects, the registry entries stay.
	o2 := open(t, m, "local")
	if !slices.Equal(o2.ServersConnected, o.ServersConnected) || len(o2.Tools) != len(o.Tools) {
		t.Errorf("second Open = %v %d tools, first %v %d tools", o2.ServersConnected, len(o2.Tools), o.ServersConnected, len(o.Tools))
	}
	for i := range o2.Tools {
		if o2.Tools[i] != o.Tools[i] {
			t.Errorf("second Open re-registered %s", o2.Tools[i].ID.Name())
		}
	}
}

func TestToolboxesAndUnknownToolbox(t *testing.T) {
	cfg := toolboxConfig("dev", named{"hello", example("hello")}, named{"memory", example("memory")})
	addToolbox(cfg, "prod", named{"hello", example("hello")})
	m, _ := newManager(t, cfg)

	want := []registry.Toolbox{
		{Name: "dev", Description: "the dev toolbox", Servers: []string{"hello", "memory"}},
		{Name: "prod", Description: "the prod toolbox", Servers: []string{"hello"}},
	}
	got := m.Toolboxes()
	if len(got) != len(want) {
		t.Fatalf("Toolboxes = %+v", got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Description != want[i].Description || !slices.Equal(got[i].Servers, want[i].Servers) {
			t.Errorf("Toolboxes[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	_, err := m.Open(context.Background(), "production")
	if e := errs.From(err); e == nil || e.Code != errs.NotFound || e.Message != "Toolbox 'production' not found" {
		t.Errorf("Open(unknown) = %v", err)
	}
	if m.Opened("production") || m.Opened("dev") {
		t.Error("Opened without Open")
	}
}

func TestToolFilters(t *testing.T) {
	mem := example("memory")
	mem.ToolFilters = []string{"*_entities", "read_graph", "!delete_*"}
	hello := example("hello")
	hello.ToolFilters = []string{"!greet"}
	m, reg := newManager(t, toolboxConfig("f", named{"memory", mem}, named{"hello", hello}))

	o := open(t, m, "f")
	if len(o.ServersConnected) != 2 {
		t.Fatalf("connected %v, errors %v", o.ServersConnected, o.ServerErrors)
	}
	want := []string{"f__memory__create_entities", "f__memory__read_graph"}
	if got := toolNames(reg, "f"); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if len(o.Tools) != 2 {
		t.Errorf("Opened.Tools has %d tools", len(o.Tools))
	}
}

func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		filters []string
		name    string
		want    bool
	}{
		{nil, "anything", true},
		{[]string{"read_file"}, "read_file", true},
		{[]string{"read_file"}, "write_file", false},
		{[]string{"get_*"}, "get_user", true},
		{[]string{"get_*"}, "set_user", false},
		{[]string{"!delete_*"}, "get_user", true},
		{[]string{"!delete_*"}, "delete_user", false},
		{[]string{"*_user", "!delete_*"}, "delete_user", false},
		{[]string{"*_user", "!delete_*"}, "get_user", true},
		{[]string{"get_?"}, "get_a", true},
		{[]string{"[bad"}, "[bad", true}, // a malformed glob matches only itself
		{[]string{"[bad"}, "b", false},
		{[]string{"!read_file"}, "read_file", false},
	} {
		if got := config.Selected(tc.filters, tc.name); got != tc.want {
			t.Errorf("selected(%q, %q) = %v, want %v", tc.filters, tc.name, got, tc.want)
		}
	}
}

// The same tool name on two servers (and the same server in two toolboxes,
// seed 003's dev/prod example) makes distinct tools, each routed to its own
// server.
func TestSameToolNameOnTwoServers(t *testing.T) {
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote"}, nil)
	textTool(remote, "greet", "hello from HTTP")
	url := httpPeer(t, config.StreamableHTTP, remote)

	cfg := toolboxConfig("dev", named{"hello", example("hello")}, named{"remote", urlServer(config.StreamableHTTP, url)})
	addToolbox(cfg, "prod", named{"hello", example("hello")})
	m, reg := newManager(t, cfg)
	open(t, m, "dev")
	open(t, m, "prod")

	if got := mustCall(t, reg, "dev__hello__greet", map[string]any{"name": "Bo"}); got != "Hi Bo" {
		t.Errorf("dev hello greet = %q", got)
	}
	if got := mustCall(t, reg, "dev__remote__greet", nil); got != "hello from HTTP" {
		t.Errorf("dev remote greet = %q", got)
	}
	if got := mustCall(t, reg, "prod__hello__greet", map[string]any{"name": "Cy"}); got != "Hi Cy" {
		t.Errorf("prod hello greet = %q", got)
	}
	a, _ := reg.Lookup("dev__hello__greet")
	b, _ := reg.Lookup("prod__hello__greet")
	if a.ID == b.ID || a.ID.Tool != "greet" || b.ID.Tool != "greet" {
		t.Errorf("ids %+v %+v", a.ID, b.ID)
	}
}

// Tool names with "-", "." and "__" are served under their flat name and
// called with their original name; names that break the MCP name rules are
// reported.
func TestToolNamesWithDashAndDot(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "names"}, nil)
	for _, name := range []string{"get-item", "v1.list", "a__b", "bad name", "x/y"} {
		textTool(srv, name, "I am "+name)
	}
	url := httpPeer(t, config.StreamableHTTP, srv)
	m, reg := newManager(t, toolboxConfig("tb", named{"srv", urlServer(config.StreamableHTTP, url)}))

	o := open(t, m, "tb")
	want := []string{"tb__srv__a__b", "tb__srv__get-item", "tb__srv__v1.list"}
	if got := toolNames(reg, "tb"); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	msg := o.ServerErrors["srv"]
	if !strings.Contains(msg, `"bad name"`) || !strings.Contains(msg, `"x/y"`) || !slices.Equal(o.ServersConnected, []string{"srv"}) {
		t.Errorf("ServerErrors = %v, connected %v", o.ServerErrors, o.ServersConnected)
	}
	for _, name := range []string{"get-item", "v1.list", "a__b"} {
		tool, _ := reg.LookupID(registry.ID{Toolbox: "tb", Server: "srv", Tool: name})
		if tool == nil {
			t.Fatalf("no tool %s", name)
		}
		if got := mustCall(t, reg, tool.ID.Name(), nil); got != "I am "+name {
			t.Errorf("%s = %q", name, got)
		}
	}
}

// A server's notifications/tools/list_changed refreshes its tools, over
// Streamable HTTP and legacy SSE.
func TestListChangedRefresh(t *testing.T) {
	for _, transport := range []string{config.StreamableHTTP, config.SSE} {
		t.Run(transport, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "changing"}, nil)
			textTool(srv, "early", "e")
			url := httpPeer(t, transport, srv)
			m, reg := newManager(t, toolboxConfig("tb", named{"srv", urlServer(transport, url)}))

			open(t, m, "tb")
			if got := toolNames(reg, "tb"); !slices.Equal(got, []string{"tb__srv__early"}) {
				t.Fatalf("tools = %v", got)
			}
			textTool(srv, "late", "l")
			testtools.Eventually(t, 10*time.Second, "the added tool to be registered", func() bool {
				_, ok := reg.Lookup("tb__srv__late")
				return ok
			})
			if got := mustCall(t, reg, "tb__srv__late", nil); got != "l" {
				t.Errorf("late = %q", got)
			}
			srv.RemoveTools("early")
			testtools.Eventually(t, 10*time.Second, "the removed tool to be unregistered", func() bool {
				_, ok := reg.Lookup("tb__srv__early")
				return !ok
			})
			o := open(t, m, "tb")
			if len(o.Tools) != 1 || o.Tools[0].ID.Tool != "late" {
				t.Errorf("Open after refresh lists %d tools", len(o.Tools))
			}
		})
	}
}

// A legacy SSE server stays usable after the connect deadline: its event
// stream is not tied to the handshake's context.
func TestLegacySSE(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "legacy"}, nil)
	textTool(srv, "greet", "hi over SSE")
	url := httpPeer(t, config.SSE, srv)
	sse := urlServer(config.SSE, url)
	sse.ConnectTimeout = 500 * time.Millisecond
	m, reg := newManager(t, toolboxConfig("tb", named{"legacy", sse}))

	o := open(t, m, "tb")
	if !slices.Equal(o.ServersConnected, []string{"legacy"}) {
		t.Fatalf("connected %v, errors %v", o.ServersConnected, o.ServerErrors)
	}
	if got := mustCall(t, reg, "tb__legacy__greet", nil); got != "hi over SSE" {
		t.Errorf("greet = %q", got)
	}
	// Not synchronisation: the behaviour under test is that the session
	// outlives its connect deadline (500 ms), so that much time must pass.
	time.Sleep(700 * time.Millisecond)
	if got := mustCall(t, reg, "tb__legacy__greet", nil); got != "hi over SSE" {
		t.Errorf("greet after the connect deadline = %q", got)
	}
}

// Downstream results, isError ones included, reach the caller unmodified.
func TestResultsProxiedUnmodified(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "results"}, nil)
	want := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "partial"}, &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"n": 3.0, "items": []any{"a"}},
		IsError:           true,
		Meta:              mcp.Meta{"trace": "x"},
	}
	srv.AddTool(&mcp.Tool{Name: "odd", InputSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if string(req.Params.Arguments) != `{"k":"v"}` {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "args " + string(req.Params.Arguments)}}}, nil
			}
			return want, nil
		})
	url := httpPeer(t, config.StreamableHTTP, srv)
	m, reg := newManager(t, toolboxConfig("tb", named{"srv", urlServer(config.StreamableHTTP, url)}))
	open(t, m, "tb")

	// Nexus's context fields are stripped before the call goes downstream.
	res, err := call(t, reg, "tb__srv__odd", map[string]any{"k": "v", "context": map[string]any{"workspaceId": "w"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("result\n got %s\nwant %s", got, wantJSON)
	}
}

// A hung tool call times out with a clear error while the server's other
// tools and the toolbox's other servers keep answering.
func TestHungServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	hung := make(chan struct{}, 1) // the hung call reached the server
	slow := mcp.NewServer(&mcp.Implementation{Name: "slow"}, nil)
	slow.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case hung <- struct{}{}:
			default:
			}
			<-release // hung: ignores cancellation
			return &mcp.CallToolResult{}, nil
		})
	textTool(slow, "fast", "quick")
	url := httpPeer(t, config.StreamableHTTP, slow)
	srv := urlServer(config.StreamableHTTP, url)
	srv.Timeout = 300 * time.Millisecond
	m, reg := newManager(t, toolboxConfig("tb", named{"slow", srv}, named{"hello", example("hello")}))
	// Unblock the handler before the manager closes: the SDK's client deletes
	// its HTTP session on close, which waits (up to 5 s) for the hung call.
	t.Cleanup(func() { close(release) })
	open(t, m, "tb")

	type outcome struct {
		o       *pipeline.Outcome
		elapsed time.Duration
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		o := pipeline.New(pipeline.Options{Registry: reg}).Call(context.Background(), pipeline.Request{Tool: "tb__slow__hang"})
		done <- outcome{o, time.Since(start)}
	}()
	select {
	case <-hung:
	case <-time.After(10 * time.Second):
		t.Fatal("the hung call did not reach the server")
	}
	for range 3 {
		if got := mustCall(t, reg, "tb__hello__greet", map[string]any{"name": "X"}); got != "Hi X" {
			t.Errorf("greet = %q", got)
		}
		if got := mustCall(t, reg, "tb__slow__fast", nil); got != "quick" {
			t.Errorf("fast = %q", got)
		}
	}
	select {
	case <-done:
		t.Error("the other calls did not finish while the hung call was pending")
	default:
	}
	r := <-done
	want := "Tool 'hang' on server 'slow' (toolbox 'tb') timed out after 300ms"
	if r.o.Err == nil || r.o.Err.Code != errs.Unavailable || r.o.Err.Message != want {
		t.Errorf("hung call: err %v, want %s %q", r.o.Err, errs.Unavailable, want)
	}
	if r.elapsed < 300*time.Millisecond || r.elapsed > 5*time.Second {
		t.Errorf("hung call returned after %s", r.elapsed)
	}
	t.Logf("hung call timed out after %s", r.elapsed)
}

// A URL with nothing listening is reported in ServerErrors without holding
// up the other servers; opening again retries it.
func TestUnreachableServer(t *testing.T) {
	addr := testtools.FreeAddr(t)

	m, reg := newManager(t, toolboxConfig("tb",
		named{"gone", urlServer(config.StreamableHTTP, "http://"+addr+"/mcp")},
		named{"hello", example("hello")}))
	start := time.Now()
	o := open(t, m, "tb")
	t.Logf("Open with an unreachable server took %s: %v", time.Since(start), o.ServerErrors)
	if !slices.Equal(o.ServersConnected, []string{"hello"}) {
		t.Errorf("connected %v", o.ServersConnected)
	}
	if msg := o.ServerErrors["gone"]; !strings.Contains(msg, "connect") || len(o.ServerErrors) != 1 {
		t.Errorf("ServerErrors = %v", o.ServerErrors)
	}
	if got := mustCall(t, reg, "tb__hello__greet", map[string]any{"name": "Di"}); got != "Hi Di" {
		t.Errorf("greet = %q", got)
	}

	// Something starts listening there: opening again connects it.
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	back := mcp.NewServer(&mcp.Implementation{Name: "back"}, nil)
	textTool(back, "ping", "pong")
	ts := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return back }, nil))
	ts.Listener.Close()
	ts.Listener = ln2
	ts.Start()
	defer ts.Close()
	defer m.Close() // before the HTTP server, whose Close waits for the manager's streams

	o = open(t, m, "tb")
	if !slices.Equal(o.ServersConnected, []string{"gone", "hello"}) || len(o.ServerErrors) != 0 {
		t.Errorf("after a retry: connected %v, errors %v", o.ServersConnected, o.ServerErrors)
	}
	if got := mustCall(t, reg, "tb__gone__ping", nil); got != "pong" {
		t.Errorf("ping = %q", got)
	}
}

// A server that accepts the connection but never answers the handshake is
// bounded by its ConnectTimeout.
func TestConnectTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	srv := urlServer(config.StreamableHTTP, ts.URL)
	srv.ConnectTimeout = 300 * time.Millisecond
	m, _ := newManager(t, toolboxConfig("tb", named{"mute", srv}, named{"hello", example("hello")}))

	start := time.Now()
	o := open(t, m, "tb")
	elapsed := time.Since(start)
	if want := "connect: no answer within 300ms"; o.ServerErrors["mute"] != want {
		t.Errorf("ServerErrors = %v, want mute: %q", o.ServerErrors, want)
	}
	if !slices.Equal(o.ServersConnected, []string{"hello"}) {
		t.Errorf("connected %v", o.ServersConnected)
	}
	if elapsed > 5*time.Second {
		t.Errorf("Open took %s", elapsed)
	}
}

func TestCommandNotFound(t *testing.T) {
	m, _ := newManager(t, toolboxConfig("tb",
		named{"missing", &config.Server{Transport: config.Stdio, Command: filepath.Join(t.TempDir(), "no-such-server")}},
		named{"hello", example("hello")}))
	o := open(t, m, "tb")
	if msg := o.ServerErrors["missing"]; !strings.Contains(msg, "no-such-server") {
		t.Errorf("ServerErrors = %v", o.ServerErrors)
	}
	if !slices.Equal(o.ServersConnected, []string{"hello"}) {
		t.Errorf("connected %v", o.ServersConnected)
	}
}

func TestEagerServersConnectAtStart(t *testing.T) {
	eager := example("hello")
	eager.Eager = true
	cfg := toolboxConfig("tb", named{"eager", eager}, named{"lazy", example("memory")})
	m, reg := newManager(t, cfg)
	m.Start(context.Background())
	testtools.Eventually(t, 10*time.Second, "the eager server's tools to be registered", func() bool {
		_, ok := reg.Lookup("tb__eager__greet")
		return ok
	})
	if got := toolNames(reg, "tb"); !slices.Equal(got, []string{"tb__eager__greet"}) {
		t.Errorf("tools = %v: the lazy server connected too", got)
	}
	if m.Opened("tb") {
		t.Error("Start opened the toolbox")
	}
	if got := mustCall(t, reg, "tb__eager__greet", map[string]any{"name": "E"}); got != "Hi E" {
		t.Errorf("greet = %q", got)
	}
}

func TestOpenAll(t *testing.T) {
	cfg := toolboxConfig("a", named{"hello", example("hello")})
	addToolbox(cfg, "b", named{"memory", example("memory")})
	m, reg := newManager(t, cfg)
	m.OpenAll(context.Background())
	if !m.Opened("a") || !m.Opened("b") {
		t.Error("OpenAll left a toolbox closed")
	}
	for _, name := range []string{"a__hello__greet", "b__memory__read_graph"} {
		if _, ok := reg.Lookup(name); !ok {
			t.Errorf("no %s", name)
		}
	}
}

// @modelcontextprotocol/server-memory, a popular npm server, over stdio
// under Node 22.
func TestNPMServerMemory(t *testing.T) {
	node, memory := testtools.MemoryServer(t)
	mem := &config.Server{Transport: config.Stdio, Command: node, Args: []string{memory},
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}
	m, reg := newManager(t, toolboxConfig("kg", named{"memory", mem}))

	start := time.Now()
	o := open(t, m, "kg")
	t.Logf("opened the npm server-memory in %s", time.Since(start))
	if !slices.Equal(o.ServersConnected, []string{"memory"}) || len(o.ServerErrors) != 0 {
		t.Fatalf("connected %v, errors %v", o.ServersConnected, o.ServerErrors)
	}
	names := toolNames(reg, "kg")
	for _, want := range []string{"kg__memory__create_entities", "kg__memory__read_graph", "kg__memory__search_nodes", "kg__memory__open_nodes"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	mustCall(t, reg, "kg__memory__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Nexus", "entityType": "project", "observations": []string{"a Go MCP tool hub"}}}})
	res, err := call(t, reg, "kg__memory__search_nodes", map[string]any{"query": "hub"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(res), "Nexus") {
		t.Errorf("search_nodes = %q", text(res))
	}
	tool, _ := reg.Lookup("kg__memory__search_nodes")
	if tool.OutputSchema != nil && res.StructuredContent == nil {
		t.Errorf("structured content lost: %+v", res)
	}
	// A bad argument is rejected by the downstream schema, as seed 003 says.
	if _, err := call(t, reg, "kg__memory__search_nodes", map[string]any{"query": 42}); err == nil || err.Code != errs.BadRequest {
		t.Errorf("search_nodes with a number: %v", err)
	}
}

// TestCallWhileConnecting: a server's tools enter the registry while its
// first connection lists them, a moment before the connection's session is
// kept; a call in that moment (a client that saw the tools listed) waits
// for the connection instead of failing with "not connected". The
// registry's change listener holds the connection in that moment while a
// call starts.
func TestCallWhileConnecting(t *testing.T) {
	m, reg := newManager(t, toolboxConfig("w", named{"hello", example("hello")}))
	var (
		once   sync.Once
		result = make(chan error, 1)
	)
	reg.OnChange(func() {
		tool, ok := reg.Lookup("w__hello__greet")
		if !ok {
			return
		}
		once.Do(func() {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_, err := tool.Handler(ctx, &registry.Call{Args: json.RawMessage(`{"name":"ada"}`)})
				result <- err
			}()
			time.Sleep(200 * time.Millisecond) // the call runs in the moment
		})
	})
	open(t, m, "w")
	if err := <-result; err != nil {
		t.Fatalf("a call while the server connected: %v", err)
	}
}
