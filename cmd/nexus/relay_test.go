package main

//lint:file-ignore SA1019 the relay of logging, sampling and roots is tested for clients and servers of the protocol versions that have them

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// relayPeerEnv makes the test binary run relayServer over stdio instead of
// running the tests (TestMain): a downstream stdio server that asks its
// client for everything during a call.
const relayPeerEnv = "NEXUS_E2E_RELAY_PEER"

// relayServer is a downstream server whose tool ask, during its call,
// sends two progress notifications (when given a token), logs at info and
// at debug, asks its client for a name (elicitation), a message (sampling)
// and its roots, and answers with what it got; wait blocks until its call
// is cancelled and then creates the file it names.
func relayServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}},
	})
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ss := req.Session
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 2; i++ {
				ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d", i)})
			}
		}
		ss.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "too detailed"})
		ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "asking"})
		var parts []string
		if er, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}); err != nil {
			parts = append(parts, "elicit failed: "+err.Error())
		} else {
			parts = append(parts, fmt.Sprintf("name=%v", er.Content["name"]))
		}
		if cm, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}); err != nil {
			parts = append(parts, "sampling failed: "+err.Error())
		} else if tc, ok := cm.Content.(*mcp.TextContent); ok {
			parts = append(parts, "sampled="+tc.Text)
		}
		if lr, err := ss.ListRoots(ctx, nil); err != nil {
			parts = append(parts, "roots failed: "+err.Error())
		} else {
			var uris []string
			for _, r := range lr.Roots {
				uris = append(uris, r.URI)
			}
			parts = append(parts, "roots="+strings.Join(uris, ","))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(parts, "; ")}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		lr, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range lr.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"file": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			var in struct{ File string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err == nil && in.File != "" {
				os.WriteFile(in.File, []byte("cancelled"), 0o644)
			}
			return nil, ctx.Err()
		})
	return s
}

func runRelayPeer() int {
	if err := relayServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "relay peer:", err)
		return 1
	}
	return 0
}

// relayClient is an MCP client that answers everything a server may ask
// and records what it is sent.
type relayClient struct {
	mu       sync.Mutex
	progress []string
	logs     []string
}

func (rc *relayClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "a sampled reply"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			rc.mu.Lock()
			rc.logs = append(rc.logs, fmt.Sprintf("%s:%v", req.Params.Level, req.Params.Data))
			rc.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			rc.mu.Lock()
			rc.progress = append(rc.progress, fmt.Sprintf("%v:%v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message))
			rc.mu.Unlock()
		},
	}
}

func (rc *relayClient) client() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "relay-client", Version: "1"}, rc.options())
	c.AddRoots(&mcp.Root{URI: "file:///home/ada/project", Name: "project"})
	return c
}

func (rc *relayClient) seen() (progress, logs []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.progress), slices.Clone(rc.logs)
}

// relayConfig is a configuration of toolbox relay with the relay server
// over Streamable HTTP (http) and over stdio (stdio).
func relayConfig(t *testing.T) string {
	t.Helper()
	srv := relayServer()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"relay": map[string]any{"description": "servers that ask", "mcpServers": map[string]any{
			"http":  map[string]any{"url": ts.URL, "transport": "http"},
			"stdio": map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{relayPeerEnv: "1"}},
		}},
	}})
}

// TestRelayDuringACall: what a downstream server sends while it runs a call
// reaches the client that made it, and the client's answers go back:
// progress (under the client's own token), log messages at the client's
// level, elicitation, sampling and roots, over an HTTP and a stdio
// downstream, through a flat name on /mcp, use_tool on /mcp/bounded and a
// flat name over nexus stdio; the client's cancellation reaches the server.
// A client of the sessionless protocol gets the progress and log messages,
// and a server's request during the call is refused with the reason.
func TestRelayDuringACall(t *testing.T) {
	cfg := relayConfig(t)
	base := startServe(t, "--no-demo", "--config", cfg)
	ctx := context.Background()

	type surface struct {
		name    string
		connect func(t *testing.T, c *mcp.Client) *mcp.ClientSession
		call    func(server, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolParams
	}
	flatCall := func(server, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "relay__" + server + "__" + tool, Arguments: args, Meta: meta}
	}
	httpConnect := func(path string, opts *mcp.ClientSessionOptions) func(t *testing.T, c *mcp.Client) *mcp.ClientSession {
		return func(t *testing.T, c *mcp.Client) *mcp.ClientSession {
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path}, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}
	}
	surfaces := []surface{
		{"flat", httpConnect("/mcp", testtools.WithSession()), flatCall},
		{"bounded", httpConnect("/mcp/bounded", testtools.WithSession()), func(server, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolParams {
			return &mcp.CallToolParams{Name: "use_tool", Meta: meta, Arguments: map[string]any{
				"tool": map[string]any{"toolbox": "relay", "server": server, "tool": tool}, "arguments": args}}
		}},
		{"stdio", func(t *testing.T, c *mcp.Client) *mcp.ClientSession {
			cmd := exec.Command(binary, "stdio", "--no-demo", "--config", cfg, "--data-dir", t.TempDir())
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, testtools.WithSession())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}, flatCall},
	}
	for _, sf := range surfaces {
		for _, server := range []string{"http", "stdio"} {
			t.Run(sf.name+"/"+server, func(t *testing.T) {
				rc := &relayClient{}
				cs := sf.connect(t, rc.client())
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
				if sf.name == "bounded" {
					if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": "relay"}}); err != nil || res.IsError {
						t.Fatalf("open_toolbox: %v %s", err, text(res))
					}
				}
				var res *mcp.CallToolResult
				testtools.EventuallyErr(t, 30*time.Second, "the relay call", func() error {
					var err error
					res, err = cs.CallTool(ctx, sf.call(server, "ask", map[string]any{}, mcp.Meta{"progressToken": "tok-" + server}))
					if err == nil && res.IsError {
						err = fmt.Errorf("%s", text(res))
					}
					return err
				})
				if got, want := text(res), "name=Ada; sampled=a sampled reply; roots=file:///home/ada/project"; got != want {
					t.Errorf("result %q, want %q", got, want)
				}
				wantProgress := []string{"tok-" + server + ":1/2 step 1", "tok-" + server + ":2/2 step 2"}
				testtools.EventuallyErr(t, 10*time.Second, "the progress and log messages", func() error {
					progress, logs := rc.seen()
					if !slices.Equal(progress, wantProgress) || !slices.Equal(logs, []string{"info:asking"}) {
						return fmt.Errorf("progress %q, logs %q; want %q and [info:asking]", progress, logs, wantProgress)
					}
					return nil
				})

				// Cancellation reaches the server.
				file := filepath.Join(t.TempDir(), "cancelled")
				cctx, cancel := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(cctx, sf.call(server, "wait", map[string]any{"file": file}, nil))
					done <- err
				}()
				time.Sleep(300 * time.Millisecond) // not synchronisation: the call is under way, or cancelled before it starts, which the server sees too
				cancel()
				<-done
				testtools.EventuallyErr(t, 10*time.Second, "the server to see the cancellation", func() error {
					_, err := os.Stat(file)
					return err
				})
			})
		}
	}

	// A client that declares roots only (as the Go SDK's does by default)
	// keeps the front's fast path: a server's roots/list during its call
	// goes on the session's standalone stream, and is answered.
	for _, server := range []string{"http", "stdio"} {
		t.Run("roots-only/"+server, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "roots-only", Version: "1"}, nil)
			c.AddRoots(&mcp.Root{URI: "file:///srv/data", Name: "data"})
			cs := httpConnect("/mcp", testtools.WithSession())(t, c)
			var res *mcp.CallToolResult
			testtools.EventuallyErr(t, 30*time.Second, "the roots call", func() error {
				var err error
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "relay__" + server + "__roots", Arguments: map[string]any{}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%s", text(res))
				}
				return err
			})
			if got := text(res); got != "file:///srv/data" {
				t.Errorf("roots %q, want file:///srv/data", got)
			}
		})
	}

	// A client of the sessionless protocol takes no request during a
	// call: the server's requests come back as an input-required result,
	// which the SDK client answers and retries with, resuming the held
	// call; its progress and log messages come on the call's stream.
	sessionless := []struct {
		name    string
		connect func(t *testing.T, c *mcp.Client) *mcp.ClientSession
		call    func(server, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolParams
	}{
		{"mcp", httpConnect("/mcp", testtools.Sessionless()), flatCall},
		{"bounded", httpConnect("/mcp/bounded", testtools.Sessionless()), surfaces[1].call},
		{"stdio", func(t *testing.T, c *mcp.Client) *mcp.ClientSession {
			cmd := exec.Command(binary, "stdio", "--no-demo", "--config", cfg, "--data-dir", t.TempDir())
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, testtools.Sessionless())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}, flatCall},
	}
	for _, sl := range sessionless {
		for _, server := range []string{"http", "stdio"} {
			t.Run("sessionless/"+sl.name+"/"+server, func(t *testing.T) {
				rc := &relayClient{}
				cs := sl.connect(t, rc.client())
				var res *mcp.CallToolResult
				testtools.EventuallyErr(t, 30*time.Second, "the relay call", func() error {
					var err error
					res, err = cs.CallTool(ctx, sl.call(server, "ask", map[string]any{},
						mcp.Meta{"progressToken": "tok", "io.modelcontextprotocol/logLevel": "info"}))
					if err == nil && res.IsError {
						err = fmt.Errorf("%s", text(res))
					}
					return err
				})
				if got, want := text(res), "name=Ada; sampled=a sampled reply; roots=file:///home/ada/project"; got != want {
					t.Errorf("result %q, want %q", got, want)
				}
				progress, logs := rc.seen()
				if !slices.Equal(progress, []string{"tok:1/2 step 1", "tok:2/2 step 2"}) || !slices.Equal(logs, []string{"info:asking"}) {
					t.Errorf("progress %q, logs %q", progress, logs)
				}
			})
		}
	}
}
