package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// The downstream peers of these tests are real MCP servers, none written
// here: the MCP Go SDK's example servers (built from the module cache),
// SDK servers hosted in process over Streamable HTTP and legacy SSE, the
// npm package @modelcontextprotocol/server-memory run by Node 22, and, for
// the tests that must kill a server in the middle of a call, an SDK server
// over stdio run by this very test binary (see peer_test.go).

// examples are the SDK example servers TestMain builds, by name.
var examples = map[string]string{}

// exampleNames are the example servers the tests run over stdio.
var exampleNames = []string{"hello", "everything", "memory"}

func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) != "" {
		os.Exit(runPeer())
	}
	dir, err := os.MkdirTemp("", "workbench-peers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := buildExamples(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// buildExamples builds the SDK's example servers into dir.
func buildExamples(dir string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, name := range exampleNames {
		args = append(args, "github.com/modelcontextprotocol/go-sdk/examples/server/"+name)
	}
	cmd := exec.Command("go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("build the SDK's example servers: %v\n%s", err, out)
	}
	for _, name := range exampleNames {
		examples[name] = filepath.Join(dir, name)
	}
	return nil
}

// example is a stdio server running the SDK example server name.
func example(name string) *config.Server {
	return &config.Server{Transport: config.Stdio, Command: examples[name]}
}

// named is a server of a toolbox under construction.
type named struct {
	name string
	srv  *config.Server
}

// toolboxConfig is a configuration of one toolbox.
func toolboxConfig(toolbox string, servers ...named) *config.Config {
	cfg := &config.Config{Toolboxes: map[string]*config.Toolbox{}}
	addToolbox(cfg, toolbox, servers...)
	return cfg
}

func addToolbox(cfg *config.Config, toolbox string, servers ...named) {
	tb := &config.Toolbox{Name: toolbox, Description: "the " + toolbox + " toolbox", Servers: map[string]*config.Server{}}
	for _, s := range servers {
		s.srv.Name = s.name
		tb.Servers[s.name] = s.srv
		tb.Order = append(tb.Order, s.name)
	}
	cfg.Toolboxes[toolbox] = tb
	cfg.Order = append(cfg.Order, toolbox)
}

// newManager returns a manager of cfg, closed when the test ends. In tests
// (not benchmarks) its log and the stdio servers' stderr are shown when the
// test fails or runs with -v.
func newManager(t testing.TB, cfg *config.Config) (*Manager, *registry.Registry) {
	t.Helper()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stderr.Close()
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("stderr of the stdio servers:\n%s", b)
		}
	})
	reg := registry.New()
	log := slog.New(slog.DiscardHandler)
	if _, ok := t.(*testing.T); ok {
		log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	m := NewManager(cfg, reg, Options{Logger: log, Stderr: stderr, ClientName: "nexus-test", ClientVersion: "1"})
	t.Cleanup(func() { m.Close() })
	return m, reg
}

// open opens the toolbox and fails the test on an error.
func open(t testing.TB, m *Manager, toolbox string) *registry.Opened {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := m.Open(ctx, toolbox)
	if err != nil {
		t.Fatalf("Open(%q): %v", toolbox, err)
	}
	return o
}

// call runs the tool through the pipeline, as every surface does, and
// returns the downstream result or the pipeline's error.
func call(t testing.TB, reg *registry.Registry, tool string, args any) (*mcp.CallToolResult, *errs.Error) {
	t.Helper()
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := pipeline.New(pipeline.Options{Registry: reg}).Call(ctx, pipeline.Request{Tool: tool, Args: raw, Surface: "test"})
	if o.Err != nil {
		return nil, o.Err
	}
	if o.MCP == nil {
		t.Fatalf("%s: the pipeline returned no MCP result: %s", tool, o.Result)
	}
	return o.MCP, nil
}

// mustCall is call that fails the test on an error or an isError result,
// and returns the result's text.
func mustCall(t testing.TB, reg *registry.Registry, tool string, args any) string {
	t.Helper()
	res, err := call(t, reg, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError result: %s", tool, text(res))
	}
	return text(res)
}

// text is the concatenated text content of res.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolNames are the flat names of the registry's tools in toolbox.
func toolNames(reg *registry.Registry, toolbox string) []string {
	var out []string
	for _, t := range reg.List() {
		if t.ID.Toolbox == toolbox {
			out = append(out, t.ID.Name())
		}
	}
	return out
}

// httpPeer serves srv in process over Streamable HTTP (config.StreamableHTTP)
// or legacy SSE (config.SSE) until the test ends, and returns its URL.
// Register it before the manager, so that the manager closes first.
func httpPeer(t testing.TB, transport string, srv *mcp.Server) string {
	t.Helper()
	var h http.Handler
	switch transport {
	case config.StreamableHTTP:
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	case config.SSE:
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	default:
		t.Fatalf("no HTTP transport %q", transport)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// urlServer is a server reached at url over transport.
func urlServer(transport, url string) *config.Server {
	return &config.Server{Transport: transport, URL: url}
}

// textTool adds a tool named name to srv that answers reply.
func textTool(srv *mcp.Server, name, reply string) {
	srv.AddTool(&mcp.Tool{Name: name, Description: "answers " + reply, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reply}}}, nil
		})
}
