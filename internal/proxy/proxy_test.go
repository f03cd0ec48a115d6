package proxy

//lint:file-ignore SA1019 the passthrough relays logging, sampling and roots to clients of the protocol versions that have them

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// The test binary doubles as a stdio MCP server: with this variable set it
// serves newTestServer on stdin/stdout instead of running the tests.
const serverEnv = "NEXUS_PROXY_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "stdio" {
		if err := newTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testImpl and testInstructions identify the downstream test server.
var testImpl = &mcp.Implementation{Name: "test-downstream", Title: "Test downstream", Version: "1.2.3"}

const testInstructions = "Use echo to echo."

type empty struct{}

// newTestServer is the downstream server of the unit tests: tools
// (paginated two per page), resources with subscriptions, prompts,
// completion, logging, progress, sampling, elicitation, roots,
// list_changed and cancellation.
func newTestServer() *mcp.Server {
	var cancelled atomic.Bool
	var rootsChanged atomic.Int32
	s := mcp.NewServer(testImpl, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged.Add(1) },
		Instructions:            testInstructions,
		PageSize:                2,
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{
				Values: []string{req.Params.Argument.Value + "1", req.Params.Argument.Value + "2"},
				Total:  2,
			}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	type echoIn struct {
		Text string `json:"text"`
	}
	type echoOut struct {
		Echo string `json:"echo"`
		N    int    `json:"n"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return &mcp.CallToolResult{
			Meta:    mcp.Meta{"example.com/extra": map[string]any{"k": []any{1.5, "x"}}},
			Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}, &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
		}, echoOut{Echo: in.Text, N: len(in.Text)}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails as a tool."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it failed")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hidden", Description: "Filtered out by some configurations."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hidden"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Logs three messages."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "test", Data: fmt.Sprintf("message %d", i)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress three times."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for i := range 3 {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3, Message: fmt.Sprint("step ", i+1)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(tok)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Samples, elicits and lists roots."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		sampled, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello?"}}},
			MaxTokens: 10,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("sampling: %w", err)
		}
		elicited, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation: %w", err)
		}
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("roots: %w", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		text := fmt.Sprintf("sampled %q (%s); elicited %s %v; roots %v",
			sampled.Content.(*mcp.TextContent).Text, sampled.Model, elicited.Action, elicited.Content["name"], uris)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits to be cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			return nil, nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not cancelled"}}}, nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "Whether slow was cancelled."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatBool(cancelled.Load())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots_changed", Description: "How many roots/list_changed arrived."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(int(rootsChanged.Load()))}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "client", Description: "The client's initialize params."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		b, err := json.Marshal(req.Session.InitializeParams())
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The server's process ID."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool (tools/list_changed)."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "added"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Updates test://r1 (resources/updated)."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://r1"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})

	s.AddResource(&mcp.Resource{URI: "test://r1", Name: "r1", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "resource one"}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://bin", Name: "bin", MIMEType: "application/octet-stream"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Blob: []byte{0, 1, 2, 255}}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t", MIMEType: "application/json"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: `{"uri":"` + req.Params.URI + `"}`}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Title: "Greeting", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: "greets", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "plain"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "assistant", Content: &mcp.TextContent{Text: "plain"}}}}, nil
	})
	return s
}

// peerKind is a way to run the test server.
type peerKind struct {
	name  string
	start func(t *testing.T) *config.Server
}

var downstreams = []peerKind{
	{name: "stdio", start: func(t *testing.T) *config.Server {
		return &config.Server{Transport: config.Stdio, Command: os.Args[0], Env: map[string]string{serverEnv: "stdio", "GORACE": "atexit_sleep_ms=0"}}
	}},
	{name: "streamable-http", start: func(t *testing.T) *config.Server {
		srv := newTestServer()
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		t.Cleanup(func() { closeSessions(srv) })
		return &config.Server{Transport: config.StreamableHTTP, URL: ts.URL}
	}},
	{name: "sse", start: func(t *testing.T) *config.Server {
		srv := newTestServer()
		ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		t.Cleanup(func() { closeSessions(srv) })
		return &config.Server{Transport: config.SSE, URL: ts.URL}
	}},
}

// closeSessions ends the test peer's own server sessions, so that a session
// the peer has not yet seen ended (its DELETE or stream close still in
// flight) does not count as a goroutine left behind by the proxy.
func closeSessions(srv *mcp.Server) {
	for ss := range srv.Sessions() {
		ss.Close()
	}
}

// testConfig is a configuration with toolbox "tb" holding srv as "s" and,
// with tool filters, as "filtered".
func testConfig(srv *config.Server) *config.Config {
	filtered := *srv
	filtered.ToolFilters = []string{"!hidden"}
	return &config.Config{
		Toolboxes: map[string]*config.Toolbox{"tb": {
			Name:    "tb",
			Servers: map[string]*config.Server{"s": srv, "filtered": &filtered},
			Order:   []string{"s", "filtered"},
		}},
		Order: []string{"tb"},
	}
}

// devNull is the stderr of child processes in tests.
func devNull(t testing.TB) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() && os.Getenv("NEXUS_PROXY_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// startProxy serves a proxy for cfg on an httptest server.
func startProxy(t *testing.T, cfg *config.Config) (*Proxy, *httptest.Server) {
	t.Helper()
	p := New(cfg, Options{Logger: testLogger(t), Stderr: devNull(t)})
	ts := httptest.NewServer(p)
	t.Cleanup(func() {
		p.Close()
		ts.Close()
	})
	return p, ts
}

// events collects what the upstream client receives.
type events struct {
	mu        sync.Mutex
	logs      []string
	progress  []string
	updated   []string
	toolsList int
}

func (e *events) snapshot() events {
	e.mu.Lock()
	defer e.mu.Unlock()
	return events{logs: slices.Clone(e.logs), progress: slices.Clone(e.progress), updated: slices.Clone(e.updated), toolsList: e.toolsList}
}

// newClient returns an SDK client that answers sampling, elicitation and
// roots, and records notifications in ev.
func newClient(ev *events) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-upstream", Version: "9.9"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "re: " + text}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			ev.mu.Lock()
			ev.logs = append(ev.logs, fmt.Sprint(req.Params.Data))
			ev.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			ev.mu.Lock()
			ev.progress = append(ev.progress, fmt.Sprintf("%v:%v", req.Params.ProgressToken, req.Params.Progress))
			ev.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			ev.mu.Lock()
			ev.toolsList++
			ev.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			ev.mu.Lock()
			ev.updated = append(ev.updated, req.Params.URI)
			ev.mu.Unlock()
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	return c
}

// connect connects client to url with a session (the protocol version of
// testtools.WithSession) and its own HTTP transport (closed at cleanup, so
// that idle connections do not outlive the test). Clients of the
// sessionless protocol: connectSessionless.
func connect(t *testing.T, client *mcp.Client, url string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, testtools.WithSession())
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() {
		cs.Close()
		tr.CloseIdleConnections()
	})
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("no content in %s", mustJSON(t, res))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// TestTransparent compares a client's view of each downstream server
// through the proxy with its view of the same server connected directly,
// and exercises every kind of message through the proxy.
func TestTransparent(t *testing.T) {
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			srv := d.start(t)
			_, ts := startProxy(t, testConfig(srv))
			var ev events
			client := newClient(&ev)
			cs := connect(t, client, ts.URL+"/mcp/servers/tb/s")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			// The reference: the same server without the proxy, over
			// Streamable HTTP in-process.
			ref := srv
			if srv.Transport != config.StreamableHTTP {
				s := newTestServer()
				rts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
				t.Cleanup(rts.Close)
				ref = &config.Server{URL: rts.URL}
			}
			var refEv events
			direct := connect(t, newClient(&refEv), ref.URL)

			t.Run("initialize", func(t *testing.T) {
				got, want := cs.InitializeResult(), direct.InitializeResult()
				if !reflect.DeepEqual(got.ServerInfo, testImpl) {
					t.Errorf("serverInfo = %s, want %s", mustJSON(t, got.ServerInfo), mustJSON(t, testImpl))
				}
				if got.Instructions != testInstructions {
					t.Errorf("instructions = %q, want %q", got.Instructions, testInstructions)
				}
				if g, w := mustJSON(t, got.Capabilities), mustJSON(t, want.Capabilities); g != w {
					t.Errorf("capabilities = %s, want %s", g, w)
				}
				if got.ProtocolVersion != want.ProtocolVersion {
					t.Errorf("protocolVersion = %q, want %q", got.ProtocolVersion, want.ProtocolVersion)
				}
				if g, w := mustJSON(t, got.Meta[MetaKey]), `{"server":"s","toolbox":"tb"}`; g != w {
					t.Errorf("_meta[%q] = %s, want %s", MetaKey, g, w)
				}
			})

			t.Run("client identity and capabilities", func(t *testing.T) {
				var got mcp.InitializeParams
				if err := json.Unmarshal([]byte(text(t, call(t, cs, "client", nil))), &got); err != nil {
					t.Fatal(err)
				}
				if got.ClientInfo == nil || got.ClientInfo.Name != "test-upstream" || got.ClientInfo.Version != "9.9" {
					t.Errorf("downstream sees clientInfo %s, want the upstream client's", mustJSON(t, got.ClientInfo))
				}
				want := direct.InitializeResult().ProtocolVersion
				if got.ProtocolVersion != want {
					t.Errorf("downstream sees protocol version %q, want %q", got.ProtocolVersion, want)
				}
				if c := got.Capabilities; c == nil || c.Sampling == nil || c.Elicitation == nil || !c.Roots.ListChanged {
					t.Errorf("downstream sees capabilities %s, want sampling, elicitation and roots", mustJSON(t, got.Capabilities))
				}
				// A client without sampling or elicitation: neither is
				// advertised downstream.
				bare := connect(t, mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}), ts.URL+"/mcp/servers/tb/s")
				got = mcp.InitializeParams{}
				if err := json.Unmarshal([]byte(text(t, call(t, bare, "client", nil))), &got); err != nil {
					t.Fatal(err)
				}
				if c := got.Capabilities; c == nil || c.Sampling != nil || c.Elicitation != nil || c.RootsV2 != nil || c.Roots.ListChanged {
					t.Errorf("a bare client's capabilities downstream are %s, want none", mustJSON(t, got.Capabilities))
				}
			})

			t.Run("tools/list", func(t *testing.T) {
				var got, want []*mcp.Tool
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, tool)
				}
				for tool, err := range direct.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, tool)
				}
				if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
					t.Errorf("tools through the proxy:\n%s\nwant\n%s", g, w)
				}
				if len(got) < 10 {
					t.Errorf("%d tools, want all of them", len(got))
				}
				page, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Tools) != 2 || page.NextCursor == "" {
					t.Errorf("first page has %d tools and cursor %q, want the server's pages of 2", len(page.Tools), page.NextCursor)
				}
			})

			t.Run("tools/call", func(t *testing.T) {
				for _, name := range []string{"echo", "fail"} {
					args := map[string]any{"text": "héllo <&>"}
					if g, w := mustJSON(t, call(t, cs, name, args)), mustJSON(t, call(t, direct, name, args)); g != w {
						t.Errorf("%s through the proxy:\n%s\nwant\n%s", name, g, w)
					}
				}
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"})
				_, werr := direct.CallTool(ctx, &mcp.CallToolParams{Name: "nope"})
				if err == nil || werr == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
					t.Errorf("unknown tool: %v, want %v", err, werr)
				}
			})

			t.Run("resources", func(t *testing.T) {
				lr, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				wlr, err := direct.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(t, lr), mustJSON(t, wlr); g != w {
					t.Errorf("resources/list = %s, want %s", g, w)
				}
				lt, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "test://t/{id}" {
					t.Errorf("resources/templates/list = %s", mustJSON(t, lt))
				}
				for _, uri := range []string{"test://r1", "test://bin", "test://t/42"} {
					got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Fatal(err)
					}
					want, err := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Fatal(err)
					}
					if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
						t.Errorf("read %s = %s, want %s", uri, g, w)
					}
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://none"}); err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("reading a missing resource: %v, want not found", err)
				}

				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://r1"}); err != nil {
					t.Fatal(err)
				}
				call(t, cs, "touch", nil)
				testtools.Eventually(t, 10*time.Second, "resources/updated", func() bool { return slices.Contains(ev.snapshot().updated, "test://r1") })
				if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://r1"}); err != nil {
					t.Fatal(err)
				}
				n := len(ev.snapshot().updated)
				call(t, cs, "touch", nil)
				call(t, cs, "pid", nil) // a round trip after the notification would have been sent
				// Not synchronisation: a window for a resources/updated that
				// must not come; it would travel on the standalone stream,
				// which the round trip does not order.
				time.Sleep(50 * time.Millisecond)
				if got := len(ev.snapshot().updated); got != n {
					t.Errorf("%d resources/updated after unsubscribing", got-n)
				}
			})

			t.Run("prompts", func(t *testing.T) {
				lp, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				wlp, err := direct.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(t, lp), mustJSON(t, wlp); g != w {
					t.Errorf("prompts/list = %s, want %s", g, w)
				}
				gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(t, gp), `{"description":"greets","messages":[{"content":{"type":"text","text":"Hello, Ada"},"role":"user"}]}`; g != w {
					t.Errorf("prompts/get = %s, want %s", g, w)
				}
			})

			t.Run("completion", func(t *testing.T) {
				res, err := cs.Complete(ctx, &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
					Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"},
				})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := strings.Join(res.Completion.Values, ","), "A1,A2"; g != w {
					t.Errorf("completion = %s, want %s", g, w)
				}
			})

			t.Run("ping", func(t *testing.T) {
				if err := cs.Ping(ctx, nil); err != nil {
					t.Fatal(err)
				}
			})

			t.Run("logging", func(t *testing.T) {
				call(t, cs, "log", nil)
				if n := len(ev.snapshot().logs); n != 0 {
					t.Errorf("%d log messages before logging/setLevel", n)
				}
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
				call(t, cs, "log", nil)
				testtools.Eventually(t, 10*time.Second, "3 log messages", func() bool { return len(ev.snapshot().logs) == 3 })
				if g, w := strings.Join(ev.snapshot().logs, ","), "message 0,message 1,message 2"; g != w {
					t.Errorf("logs = %s, want %s", g, w)
				}
			})

			t.Run("progress", func(t *testing.T) {
				p := &mcp.CallToolParams{Name: "progress"}
				p.SetProgressToken("tok-1")
				res, err := cs.CallTool(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if text(t, res) != "tok-1" {
					t.Errorf("the server saw progress token %q", text(t, res))
				}
				testtools.Eventually(t, 10*time.Second, "3 progress notifications", func() bool { return len(ev.snapshot().progress) == 3 })
				if g, w := strings.Join(ev.snapshot().progress, ","), "tok-1:1,tok-1:2,tok-1:3"; g != w {
					t.Errorf("progress = %s, want %s", g, w)
				}
			})

			t.Run("sampling, elicitation and roots", func(t *testing.T) {
				got := text(t, call(t, cs, "ask", nil))
				want := `sampled "re: hello?" (test-model); elicited accept Ada; roots [file:///work]`
				if got != want {
					t.Errorf("ask = %s\nwant  %s", got, want)
				}
			})

			t.Run("roots/list_changed", func(t *testing.T) {
				client.AddRoots(&mcp.Root{URI: "file:///other"})
				testtools.Eventually(t, 10*time.Second, "roots/list_changed downstream", func() bool { return text(t, call(t, cs, "roots_changed", nil)) == "1" })
				if got := text(t, call(t, cs, "ask", nil)); !strings.HasSuffix(got, "roots [file:///other file:///work]") {
					t.Errorf("ask after adding a root = %s", got)
				}
			})

			t.Run("list_changed", func(t *testing.T) {
				call(t, cs, "add_tool", nil)
				testtools.Eventually(t, 10*time.Second, "tools/list_changed", func() bool { return ev.snapshot().toolsList > 0 })
				if text(t, call(t, cs, "added", nil)) != "added" {
					t.Error("the added tool does not answer")
				}
			})

			t.Run("cancellation", func(t *testing.T) {
				cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer ccancel()
				if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow"}); err == nil {
					t.Fatal("slow returned before it was cancelled")
				}
				testtools.Eventually(t, 10*time.Second, "the downstream call to be cancelled", func() bool { return text(t, call(t, cs, "cancelled", nil)) == "true" })
			})

			t.Run("tool filters", func(t *testing.T) {
				fcs := connect(t, newClient(new(events)), ts.URL+"/mcp/servers/tb/filtered")
				var names []string
				for tool, err := range fcs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tool.Name)
				}
				if slices.Contains(names, "hidden") || !slices.Contains(names, "echo") {
					t.Errorf("filtered tools = %v, want all but hidden", names)
				}
				if _, err := fcs.CallTool(ctx, &mcp.CallToolParams{Name: "hidden"}); err == nil || !strings.Contains(err.Error(), `unknown tool "hidden"`) {
					t.Errorf("calling a filtered tool: %v, want unknown tool", err)
				}
			})
		})
	}
}
