package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/livemcpbench"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// excerpt is the catalog excerpt of package livemcpbench's testdata: two
// servers, three tools each at most.
func excerpt(tb testing.TB) []livemcpbench.Server {
	tb.Helper()
	servers, _, err := livemcpbench.Load(filepath.Join(testtools.RepoRoot(tb), "internal", "livemcpbench", "testdata"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(servers) < 2 {
		tb.Fatalf("the excerpt has %d servers, want 2", len(servers))
	}
	return servers
}

// whole is the whole catalog, read from the shared data
// (../shared/data/livemcpbench beside the repository, or under
// $NEXUS_SHARED_DATA). Without it the test is skipped, or failed when CI is
// set.
func whole(tb testing.TB) []livemcpbench.Server {
	tb.Helper()
	data := os.Getenv(testtools.SharedDataEnv)
	if data == "" {
		data = filepath.Join(testtools.RepoRoot(tb), "..", "shared", "data")
	}
	dir := filepath.Join(data, "livemcpbench")
	if _, err := os.Stat(filepath.Join(dir, "tools.json")); err != nil {
		msg := fmt.Sprintf("the whole LiveMCPBench catalog is needed (livemcpbench/tools.json of ../shared/data beside the repository; %s overrides its place): %v", testtools.SharedDataEnv, err)
		if os.Getenv("CI") != "" {
			tb.Fatal(msg + "; CI must have it")
		}
		tb.Skip("SKIPPED: " + msg + "; the tests on the excerpt still run, CI runs this one")
	}
	servers, _, err := livemcpbench.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return servers
}

// httpClient is shared by the clients of a test, with room for many idle
// connections: listing hundreds of servers at once opens as many.
var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}

// connect connects an SDK client to e's server under base.
func connect(ctx context.Context, base string, e Entry, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "catalog-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/" + e.Name + "/mcp", HTTPClient: httpClient}, opts)
}

// list connects to e's server, lists its tools (every page) and closes.
func list(ctx context.Context, base string, e Entry, opts *mcp.ClientSessionOptions) ([]*mcp.Tool, error) {
	cs, err := connect(ctx, base, e, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", e.Name, err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list the tools of %s: %w", e.Name, err)
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

// listAll lists the tools of every entry at once, one client each, and
// returns them by entry (in entries' order).
func listAll(ctx context.Context, base string, entries []Entry) ([][]*mcp.Tool, error) {
	got := make([][]*mcp.Tool, len(entries))
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() { got[i], errs[i] = list(ctx, base, e, nil) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// sameTools reports how listed differs from e's tools (names, descriptions
// and input schemas, as JSON values), "" when it does not.
func sameTools(e Entry, listed []*mcp.Tool) string {
	want := map[string]livemcpbench.Tool{}
	for _, t := range e.Tools {
		want[t.Name] = t
	}
	if len(listed) != len(want) {
		return fmt.Sprintf("%s lists %d tools, want %d", e.Name, len(listed), len(want))
	}
	for _, got := range listed {
		w, ok := want[got.Name]
		if !ok {
			return fmt.Sprintf("%s lists tool %q, which it does not have", e.Name, got.Name)
		}
		delete(want, got.Name)
		if got.Description != w.Description {
			return fmt.Sprintf("%s/%s: description %q, want %q", e.Name, got.Name, got.Description, w.Description)
		}
		var gotSchema, wantSchema any
		raw, err := json.Marshal(got.InputSchema)
		if err != nil {
			return err.Error()
		}
		if err := json.Unmarshal(raw, &gotSchema); err != nil {
			return err.Error()
		}
		if err := json.Unmarshal(w.InputSchema, &wantSchema); err != nil {
			return err.Error()
		}
		if !reflect.DeepEqual(gotSchema, wantSchema) {
			return fmt.Sprintf("%s/%s: input schema %s, want %s", e.Name, got.Name, raw, w.InputSchema)
		}
	}
	return ""
}

// TestServe connects real SDK clients, with and without a session, to each
// server of the excerpt: each is its entry, lists exactly its tools, and
// answers a call with the canned text.
func TestServe(t *testing.T) {
	entries := Entries(excerpt(t), 1)
	base := Start(t, entries)
	ctx := t.Context()
	for _, proto := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"session", testtools.WithSession()}, {"sessionless", testtools.Sessionless()}} {
		t.Run(proto.name, func(t *testing.T) {
			for _, e := range entries {
				cs, err := connect(ctx, base, e, proto.opts)
				if err != nil {
					t.Fatal(err)
				}
				if info := cs.InitializeResult().ServerInfo; info.Name != e.Name || info.Version != Version {
					t.Errorf("server %s says it is %+v", e.Name, info)
				}
				tools, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := sameTools(e, tools.Tools); diff != "" {
					t.Error(diff)
				}
				tool := e.Tools[len(e.Tools)-1].Name
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"symbol": "AAPL", "n": 3}})
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf(`%s/%s called with {"n":3,"symbol":"AAPL"}`, e.Name, tool)
				if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
					t.Errorf("call of %s/%s: %+v, want the text %q", e.Name, tool, res, want)
				}
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
					t.Errorf("%s: a call of an unknown tool succeeded", e.Name)
				}
				if err := cs.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for _, path := range []string{"/nope/mcp", "/" + entries[0].Name, "/" + entries[0].Name + "/mcp/more"} {
		resp, err := httpClient.Post(base+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %s, want 404", path, resp.Status)
		}
	}
}

// validServer is a valid server or toolbox name of Entries.
var validServer = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// checkNames fails t unless every entry's names are valid, server names
// unique, tool names unique within their server, and every flat name
// toolbox__server__tool a valid MCP tool name.
func checkNames(t *testing.T, entries []Entry) {
	t.Helper()
	servers := map[string]bool{}
	for _, e := range entries {
		for _, name := range []string{e.Name, e.Toolbox} {
			if !validServer.MatchString(name) || len(name) > 63 || name == config.BuiltinToolbox {
				t.Errorf("server %q in toolbox %q: name %q is not a valid Nexus name", e.Name, e.Toolbox, name)
			}
		}
		if servers[e.Name] {
			t.Errorf("server name %q is not unique", e.Name)
		}
		servers[e.Name] = true
		tools := map[string]bool{}
		for _, tool := range e.Tools {
			if tools[tool.Name] {
				t.Errorf("%s: tool name %q is not unique", e.Name, tool.Name)
			}
			tools[tool.Name] = true
			if flat := (registry.ID{Toolbox: e.Toolbox, Server: e.Name, Tool: tool.Name}); flat.Check() != nil || !registry.ValidName(flat.Name()) {
				t.Errorf("flat name %q is not valid", flat.Name())
			}
		}
	}
}

// TestCopies checks the names of three copies of the excerpt, and serves
// the tools of the last copy under their new names.
func TestCopies(t *testing.T) {
	servers := excerpt(t)
	one, three := Entries(servers, 1), Entries(servers, 3)
	if len(three) != 3*len(servers) || !reflect.DeepEqual(three[:len(servers)], one) {
		t.Fatalf("3 copies: %d entries, the first copy %+v, want %d entries, the first %+v", len(three), three[:len(servers)], 3*len(servers), one)
	}
	if zero := Entries(servers, 0); !reflect.DeepEqual(zero, one) {
		t.Errorf("0 copies gave %d entries, want 1 copy", len(zero))
	}
	checkNames(t, three)
	for i, s := range servers {
		if len(one[i].Tools) != len(s.Tools) || one[i].Description != s.Description || one[i].Category != s.Category {
			t.Errorf("copy 1 of %s: %+v", s.Key, one[i])
		}
		for n := 2; n <= 3; n++ {
			e := three[(n-1)*len(servers)+i]
			suffix := fmt.Sprint(n)
			if e.Name != one[i].Name+"-"+suffix || e.Toolbox != one[i].Toolbox+"-"+suffix || e.Category != s.Category+" (copy "+suffix+")" {
				t.Errorf("copy %d of %s is %s in %s (%s)", n, one[i].Name, e.Name, e.Toolbox, e.Category)
			}
			for j, tool := range e.Tools {
				if orig := s.Tools[j]; tool.Name != orig.Name+"_"+suffix || tool.Description != orig.Description || string(tool.InputSchema) != string(orig.InputSchema) {
					t.Errorf("copy %d of tool %s: %+v", n, orig.Name, tool)
				}
			}
		}
	}
	last := three[len(three)-1]
	base := Start(t, three)
	tools, err := list(t.Context(), base, last, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameTools(last, tools); diff != "" {
		t.Error(diff)
	}
}

// TestNames checks how names are made: slugs, clashes, lengths, fallbacks.
func TestNames(t *testing.T) {
	tool := livemcpbench.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	long := strings.Repeat("abcdefghij", 7) // 70 characters
	servers := []livemcpbench.Server{
		{Key: "Ant Design Components", Category: "File Access", Tools: []livemcpbench.Tool{tool}},
		{Key: "magicuidesign_mcp", Category: "Code"},
		{Key: "Fetch", Category: "Discovery"},
		{Key: "fetch", Category: "Discovery"},
		{Key: "fetch-2", Category: "Discovery"},
		{Key: "必应", Name: "Bing CN", Category: ""},
		{Key: "必应", Name: "必应", Category: "nexus"},
		{Key: long, Category: "--Weird  Category!!--", Tools: []livemcpbench.Tool{{Name: strings.Repeat("t", 127), InputSchema: tool.InputSchema}}},
	}
	entries := Entries(servers, 2)
	var got []string
	for _, e := range entries {
		got = append(got, e.Toolbox+"/"+e.Name)
	}
	l63, l61 := long[:63], long[:61]
	want := []string{
		"file-access/ant-design-components", "code/magicuidesign-mcp", "discovery/fetch", "discovery/fetch-x2", "discovery/fetch-2",
		"uncategorized/bing-cn", "nexus-category/server", "weird-category/" + l63,
		"file-access-2/ant-design-components-2", "code-2/magicuidesign-mcp-2", "discovery-2/fetch-2-x2", "discovery-2/fetch-x2-2", "discovery-2/fetch-2-2",
		"uncategorized-2/bing-cn-2", "nexus-category-2/server-2", "weird-category-2/" + l61 + "-2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("names:\n got %q\nwant %q", got, want)
	}
	if name := entries[len(entries)-1].Tools[0].Name; len(name) != 128 || !strings.HasSuffix(name, "_2") {
		t.Errorf("a long tool's copy is named %q (%d characters), want 128 ending _2", name, len(name))
	}
	if entries[5].Category != "Uncategorized" {
		t.Errorf("an empty category is %q", entries[5].Category)
	}
}

// TestObjectSchema checks the fixes of input schemas the SDK refuses, and
// that the SDK serves the fixed ones.
func TestObjectSchema(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{` {"properties":{"a":{}},"required":["a"]}`, `{"type":"object","properties":{"a":{}},"required":["a"]}`},
		{`{}`, `{"type":"object"}`},
		{`{"type":"array","items":{}}`, `{"items":{},"type":"object"}`},
		{`{"type":["object","null"]}`, `{"type":"object"}`},
		{``, `{"type":"object"}`},
		{`null`, `{"type":"object"}`},
		{`[1]`, `{"type":"object"}`},
		{`"object"`, `{"type":"object"}`},
	} {
		got, fixed := objectSchema(json.RawMessage(c.in))
		switch {
		case c.want == "" && (fixed || string(got) != c.in):
			t.Errorf("objectSchema(%s) = %s, %v; want it unchanged", c.in, got, fixed)
		case c.want != "" && (!fixed || string(got) != c.want):
			t.Errorf("objectSchema(%s) = %s, %v; want %s, true", c.in, got, fixed, c.want)
		}
	}
	bad := livemcpbench.Server{Key: "bad", Tools: []livemcpbench.Tool{
		{Name: "untyped", InputSchema: json.RawMessage(`{"properties":{"a":{"type":"string"}}}`)},
		{Name: "none"},
	}}
	e := Entries([]livemcpbench.Server{bad}, 1)[0]
	tools, err := list(t.Context(), Start(t, []Entry{e}), e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameTools(e, tools); diff != "" {
		t.Error(diff)
	}
	// A hand-made entry is fixed when served.
	e.Tools = bad.Tools
	if tools, err = list(t.Context(), Start(t, []Entry{e}), e, nil); err != nil || len(tools) != 2 {
		t.Errorf("a hand-made entry with bad schemas: %d tools, %v", len(tools), err)
	}
}

// checkConfig parses Config(base, entries) with Nexus's loader and fails t
// unless it has every entry, at its URL, in its toolbox, described by its
// category.
func checkConfig(t *testing.T, base string, entries []Entry) {
	t.Helper()
	data := Config(base+"/", entries)
	cfg, err := config.Parse("catalog.yaml", data, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	servers := 0
	for _, tb := range cfg.Toolboxes {
		servers += len(tb.Servers)
	}
	if servers != len(entries) {
		t.Errorf("the configuration has %d servers, want %d", servers, len(entries))
	}
	for _, e := range entries {
		tb := cfg.Toolboxes[e.Toolbox]
		if tb == nil {
			t.Fatalf("no toolbox %s in\n%s", e.Toolbox, data)
		}
		if tb.Description != e.Category {
			t.Errorf("toolbox %s is described %q, want %q", e.Toolbox, tb.Description, e.Category)
		}
		s := tb.Servers[e.Name]
		if want := base + "/" + e.Name + "/mcp"; s == nil || s.URL != want || s.TransportKind() != config.StreamableHTTP || s.Description != e.Description {
			t.Errorf("server %s of %s: %+v, want url %s and description %q", e.Name, e.Toolbox, s, want, e.Description)
		}
	}
}

// TestConfig parses the configuration of two copies of the excerpt, and of
// a category that looks like a variable.
func TestConfig(t *testing.T) {
	entries := Entries(excerpt(t), 2)
	checkConfig(t, "http://127.0.0.1:8080", entries)
	odd := Entries([]livemcpbench.Server{{Key: "s", Category: `Costs in ${HOME} and "$$" <here>`}}, 1)
	checkConfig(t, "http://127.0.0.1:8080", odd)
	if data := string(Config("http://x", entries)); !strings.HasPrefix(data, "# ") || !strings.Contains(data, "\ntoolboxes:\n") {
		t.Errorf("configuration:\n%s", data)
	}
}

// TestWholeCatalog serves the whole catalog, once and ten times over (not
// in -short mode): every server lists all its tools to a client, all listed
// at once (timed, first when the servers are made, then again), and the
// configuration names every server. It logs how many input schemas needed
// a fix.
func TestWholeCatalog(t *testing.T) {
	servers := whole(t)
	fixes := 0
	for _, s := range servers {
		for _, tool := range s.Tools {
			if _, fixed := objectSchema(tool.InputSchema); fixed {
				fixes++
				t.Logf("input schema fixed: %s/%s: %s", s.Key, tool.Name, tool.InputSchema)
			}
		}
	}
	t.Logf("%d input schemas of the catalog needed a fix for the SDK", fixes)
	for _, copies := range []int{1, 10} {
		t.Run(fmt.Sprintf("copies=%d", copies), func(t *testing.T) {
			if copies > 1 && testing.Short() {
				t.Skip("SKIPPED in -short mode: serving 10 copies of the catalog (700 servers) takes seconds")
			}
			start := time.Now()
			entries := Entries(servers, copies)
			made := time.Since(start)
			start = time.Now()
			Handler(entries)
			handler := time.Since(start)
			if handler > time.Second {
				t.Errorf("a handler of %d servers took %v to make", len(entries), handler)
			}
			tools := 0
			for _, e := range entries {
				tools += len(e.Tools)
			}
			if len(entries) != 70*copies || tools != 527*copies {
				t.Errorf("%d servers, %d tools; want %d and %d", len(entries), tools, 70*copies, 527*copies)
			}
			checkNames(t, entries)
			checkConfig(t, "http://127.0.0.1:8080", entries)

			base := Start(t, entries)
			start = time.Now()
			listed, err := listAll(t.Context(), base, entries)
			cold := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range entries {
				if diff := sameTools(e, listed[i]); diff != "" {
					t.Error(diff)
				}
			}
			start = time.Now()
			if _, err := listAll(t.Context(), base, entries); err != nil {
				t.Fatal(err)
			}
			warm := time.Since(start)
			t.Logf("%d servers, %d tools: entries made in %v, handler in %v; connecting to and listing all at once took %v the first time (servers made), %v the second",
				len(entries), tools, made, handler, cold, warm)
		})
	}
}

// BenchmarkListCatalog measures connecting to and listing every server of
// the whole catalog at once, one SDK client each (sessionless, as Nexus
// connects), the servers already made.
func BenchmarkListCatalog(b *testing.B) {
	entries := Entries(whole(b), 1)
	base := Start(b, entries)
	if _, err := listAll(b.Context(), base, entries); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := listAll(b.Context(), base, entries); err != nil {
			b.Fatal(err)
		}
	}
}
