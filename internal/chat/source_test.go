package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// echoServer is a real MCP server over Streamable HTTP with one tool,
// echo, that answers the arguments it received.
func echoServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "answers its arguments",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"number"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestToolSourceIsTheToolRun: a downstream tool run by use_tool (its
// toolbox not opened before) and by the agent_mode name get_tools
// discovered is announced by tool_start with the source of the tool
// actually run, mcp, and tool_complete says the same; a local tool through
// use_tool says local in both.
func TestToolSourceIsTheToolRun(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(conf, []byte("toolboxes:\n  dev:\n    mcpServers:\n      echo:\n        url: "+echoServer(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		switch n {
		case 1:
			return llmtest.Answer{Calls: []llmtest.Call{
				{ID: "u1", Name: "use_tool", Args: `{"tool":{"toolbox":"dev","server":"echo","tool":"echo"},"arguments":{"x":1}}`},
				{ID: "u2", Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_query"},"arguments":{"query":"nexus"}}`},
			}}
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "g1", Name: "get_tools", Args: `{"tools":["echo_echo"]}`}}}
		case 3:
			if !slices.Contains(req.ToolNames(), "echo_echo") {
				return llmtest.Answer{Chunks: []string{"echo_echo was not discovered"}}
			}
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "d1", Name: "echo_echo", Args: `{"x":2}`}}}
		default:
			return llmtest.Answer{Chunks: []string{"done"}}
		}
	})
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), ConfigPath: conf, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ev, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "echo twice"})
	if err != nil || res.Text != "done" {
		t.Fatalf("turn: %v %+v %v", err, res, types(ev))
	}
	starts, completes := map[string]chat.Event{}, map[string]chat.Event{}
	for _, e := range ev {
		switch e.Type {
		case chat.ToolStart:
			starts[e.ToolCallID] = e
		case chat.ToolComplete:
			completes[e.ToolCallID] = e
		}
	}
	for id, want := range map[string]string{"u1": "mcp", "u2": "local", "g1": "local", "d1": "mcp"} {
		s, c := starts[id], completes[id]
		if c.IsError {
			t.Errorf("call %s failed: %s", id, c.ToolResult)
		}
		if s.Source != want || c.Source != want {
			t.Errorf("call %s (%s): tool_start says %q, tool_complete %q; want %q in both", id, s.ToolName, s.Source, c.Source, want)
		}
	}
	for _, u := range res.ToolUses {
		if want := map[string]string{"u1": "mcp", "u2": "local", "g1": "local", "d1": "mcp"}[u.ID]; u.Source != want {
			t.Errorf("stored tool use %s: source %q, want %q", u.ID, u.Source, want)
		}
	}
}

// TestChatSearchesTools: in the chat loop, search_tools is one of the
// model's tools; the hits of a toolbox open here are offered to the model
// at once, with their schemas, under their agent_mode names, and run.
func TestChatSearchesTools(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(conf, []byte("toolboxes:\n  dev:\n    mcpServers:\n      echo:\n        url: "+echoServer(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		switch n {
		case 1:
			if !slices.Contains(req.ToolNames(), "search_tools") {
				return llmtest.Answer{Chunks: []string{"search_tools is not offered"}}
			}
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "o1", Name: "open_toolbox", Args: `{"toolbox":"dev"}`}}}
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "s1", Name: "search_tools", Args: `{"query":"answer my arguments back"}`}}}
		case 3:
			if !slices.Contains(req.ToolNames(), "echo_echo") {
				return llmtest.Answer{Chunks: []string{"echo_echo was not offered"}}
			}
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "e1", Name: "echo_echo", Args: `{"x":3}`}}}
		default:
			return llmtest.Answer{Chunks: []string{"done"}}
		}
	})
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), ConfigPath: conf, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ev, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "echo 3"})
	if err != nil || res.Text != "done" {
		t.Fatalf("turn: %v %+v %v", err, res, types(ev))
	}
	var echoed bool
	for _, u := range res.ToolUses {
		if u.IsError {
			t.Errorf("%s failed: %s", u.Name, u.Result)
		}
		echoed = echoed || (u.Name == "echo_echo" && u.Source == "mcp" && strings.Contains(u.Result, `echo {\"x\":3}`))
	}
	if !echoed {
		t.Errorf("echo_echo did not run: %+v", res.ToolUses)
	}
}
