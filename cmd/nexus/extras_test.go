package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// notesServer is a downstream MCP server over Streamable HTTP with a prompt
// (greet, one argument), a resource (memo://notes/1) and a resource
// template (memo://notes/{id}), as an everything server has them; it
// answers an initialize after delay.
func notesServer(t *testing.T, delay time.Duration) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var values []string
			for _, v := range []string{"Ada", "Alan", "Grace"} {
				if req.Params.Ref.Name == "greet" && strings.HasPrefix(v, req.Params.Argument.Value) {
					values = append(values, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values}}, nil
		},
	})
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]}}}}, nil
		})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		id := strings.TrimPrefix(req.Params.URI, "memo://notes/")
		if id == "404" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "note " + id}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: "memo://notes/1", Name: "first note", MIMEType: "text/plain"}, read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "memo://notes/{id}", Name: "a note"}, read)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" && r.Method == http.MethodPost {
			time.Sleep(delay) // not synchronisation: a server slow to connect
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}

// TestDownstreamPromptsAndResources: the flat surface lists a downstream
// server's prompts (under its server's prefix, as its tools), resources
// and resource templates, and serves them, for session and sessionless
// clients alike; the server's refusal reaches the client as an error that
// names the server; each prompts/get and resources/read is traced.
func TestDownstreamPromptsAndResources(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"docs": map[string]any{"description": "notes", "mcpServers": map[string]any{
			"notes": map[string]any{"url": notesServer(t, 0), "transport": "http"},
		}},
	}})
	base := startServe(t, "--no-demo", "--config", cfg)
	ctx := context.Background()
	for _, kind := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"session", testtools.WithSession()}, {"sessionless", testtools.Sessionless()}} {
		t.Run(kind.name, func(t *testing.T) {
			cs, _ := connectWith(t, base+"/mcp", kind.opts)
			if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || caps.Resources == nil {
				t.Fatalf("capabilities %+v: want prompts and resources", caps)
			}
			var prompts []string
			testtools.EventuallyErr(t, 30*time.Second, "the downstream prompt to be listed", func() error {
				lp, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					return err
				}
				prompts = prompts[:0]
				for _, p := range lp.Prompts {
					prompts = append(prompts, p.Name)
				}
				if !slices.Contains(prompts, "docs__notes__greet") {
					return fmt.Errorf("prompts %v", prompts)
				}
				return nil
			})
			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs__notes__greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada" {
				t.Fatalf("prompts/get: %+v %v", got, err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err == nil || !strings.Contains(err.Error(), `unknown prompt "greet"`) {
				t.Errorf("a prompt by its server's name: %v, want unknown prompt", err)
			}
			if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
				t.Errorf("capabilities %+v: want completions", caps)
			}
			comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs__notes__greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
			if err != nil || !slices.Equal(comp.Completion.Values, []string{"Ada", "Alan"}) {
				t.Errorf("completion/complete of the prompt's argument: %+v %v", comp, err)
			}

			lr, err := cs.ListResources(ctx, nil)
			if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != "memo://notes/1" {
				t.Fatalf("resources/list: %+v %v", lr, err)
			}
			// The downstream server's, beside Nexus's own (TestOwnResources).
			want := []string{"memo://notes/{id}", "nexus://beliefs/{id}", "tn://courses/{institution}/{subject}/{number}"}
			if templates := templateURIs(t, cs); !slices.Equal(templates, want) {
				t.Fatalf("resources/templates/list: %v, want %v", templates, want)
			}
			for uri, want := range map[string]string{"memo://notes/1": "note 1", "memo://notes/7": "note 7"} {
				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != want {
					t.Fatalf("resources/read %s: %+v %v", uri, rr, err)
				}
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://notes/404"}); err == nil || !strings.Contains(err.Error(), "notes") {
				t.Errorf("a resource the server does not have: %v, want its refusal naming the server", err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "other://x"}); err == nil {
				t.Error("a URI no server has was read")
			}
		})
	}
	// Traced as calls of the server (the trace writer commits in batches).
	testtools.EventuallyErr(t, 10*time.Second, "the prompt and resource to be traced", func() error {
		resp, err := http.Get(base + "/api/traces?limit=50")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		if _, err := body.ReadFrom(resp.Body); err != nil {
			return err
		}
		for _, want := range []string{`"tool":"prompt:greet"`, `"tool":"resource:memo://notes/7"`, `"tool":"complete:greet"`} {
			if !strings.Contains(body.String(), want) {
				return fmt.Errorf("traces lack %s: %.600s", want, body.String())
			}
		}
		return nil
	})
}

// TestDownstreamPromptListChanged: a prompt a downstream server adds after
// Nexus connected reaches the flat surface's clients: the server's
// notifications/prompts/list_changed makes Nexus list it again, and its
// clients get the same notification and find the prompt.
func TestDownstreamPromptListChanged(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "grow", Version: "1"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "first"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "1"}}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"g": map[string]any{"description": "growing", "mcpServers": map[string]any{"grow": map[string]any{"url": ts.URL + "/", "transport": "http"}}},
	}})
	base := startServe(t, "--no-demo", "--config", cfg)
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() []string {
		lp, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range lp.Prompts {
			out = append(out, p.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"g__grow__first"}) {
		t.Fatalf("prompts %v", got)
	}
	for len(changed) > 0 {
		<-changed
	}
	s.AddPrompt(&mcp.Prompt{Name: "second"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "2"}}}}, nil
	})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/prompts/list_changed reached the client")
	}
	testtools.EventuallyErr(t, 10*time.Second, "the new prompt to be listed", func() error {
		if got := names(); !slices.Equal(got, []string{"g__grow__first", "g__grow__second"}) {
			return fmt.Errorf("prompts %v", got)
		}
		return nil
	})
}

// TestDownstreamPromptBeforeItsServerConnected: a client that names a
// downstream prompt or resource at once, before its server has connected
// (the toolboxes open when the client initializes), gets it: its request
// waits for the opening, as tools/list does.
func TestDownstreamPromptBeforeItsServerConnected(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"docs": map[string]any{"description": "notes", "mcpServers": map[string]any{
			"notes": map[string]any{"url": notesServer(t, 500*time.Millisecond), "transport": "http"},
		}},
	}})
	base := startServe(t, "--no-demo", "--config", cfg)
	ctx := context.Background()
	for _, kind := range []struct {
		name string
		opts *mcp.ClientSessionOptions
	}{{"session", testtools.WithSession()}, {"sessionless", testtools.Sessionless()}} {
		t.Run(kind.name, func(t *testing.T) {
			cs, _ := connectWith(t, base+"/mcp", kind.opts)
			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs__notes__greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(got.Messages) != 1 {
				t.Fatalf("prompts/get right after connecting: %+v %v", got, err)
			}
			if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://notes/2"}); err != nil || rr.Contents[0].Text != "note 2" {
				t.Fatalf("resources/read right after connecting: %+v %v", rr, err)
			}
		})
	}
}

// TestExtrasOnEverySurface: the agents surface serves the downstream
// prompts and resources as the flat surface does (its agents group tools;
// prompts and resources are not tools), and the bounded surface those of
// the toolboxes the session opened, as it serves their tools; Nexus's own
// resource templates are on both.
func TestExtrasOnEverySurface(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"docs": map[string]any{"description": "notes", "mcpServers": map[string]any{
			"notes": map[string]any{"url": notesServer(t, 0), "transport": "http"},
		}},
	}})
	base := startServe(t, "--no-demo", "--config", cfg)
	ctx := context.Background()
	prompts := func(cs *mcp.ClientSession) []string {
		lp, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range lp.Prompts {
			names = append(names, p.Name)
		}
		return names
	}
	templates := func(cs *mcp.ClientSession) []string { return templateURIs(t, cs) }
	all := []string{"memo://notes/{id}", "nexus://beliefs/{id}", "tn://courses/{institution}/{subject}/{number}"}
	own := []string{"nexus://beliefs/{id}", "tn://courses/{institution}/{subject}/{number}"}

	t.Run("agents", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp/agents")
		testtools.EventuallyErr(t, 30*time.Second, "the downstream prompt", func() error {
			if got := prompts(cs); !slices.Equal(got, []string{"docs__notes__greet"}) {
				return fmt.Errorf("prompts %v", got)
			}
			return nil
		})
		if got := templates(cs); !slices.Equal(got, all) {
			t.Errorf("templates %v, want %v", got, all)
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://notes/3"})
		if err != nil || rr.Contents[0].Text != "note 3" {
			t.Errorf("resources/read: %+v %v", rr, err)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp/bounded")
		if got := prompts(cs); len(got) != 0 {
			t.Errorf("prompts before open_toolbox: %v, want none", got)
		}
		if got := templates(cs); !slices.Equal(got, own) {
			t.Errorf("templates before open_toolbox: %v, want Nexus's own %v", got, own)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://notes/3"}); err == nil {
			t.Error("a resource of a toolbox the session did not open was read")
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_toolbox", Arguments: map[string]any{"toolbox": "docs"}}); err != nil || res.IsError {
			t.Fatalf("open_toolbox: %v %s", err, text(res))
		}
		if got := prompts(cs); !slices.Equal(got, []string{"docs__notes__greet"}) {
			t.Errorf("prompts after open_toolbox: %v", got)
		}
		if got := templates(cs); !slices.Equal(got, all) {
			t.Errorf("templates after open_toolbox: %v, want %v", got, all)
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs__notes__greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada" {
			t.Errorf("prompts/get after open_toolbox: %+v %v", got, err)
		}
	})
}

// templateURIs are the URI templates cs lists, sorted.
func templateURIs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lt, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range lt.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	slices.Sort(uris)
	return uris
}
