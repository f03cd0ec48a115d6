package chat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// openAlways opens an app whose configuration asks before every tool call
// (chat.toolApproval always), on model.
func openAlways(t *testing.T, model llm.Provider) *app.App {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(path, []byte("toolboxes: {}\nchat: {toolApproval: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Model: model, ConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// TestApprovalDeniedIsToolError: a denied call reaches the model as a tool
// result marked as an error (Anthropic's is_error) with the denial's text;
// a user who may not use the conversation cannot answer for its owner.
func TestApprovalDeniedIsToolError(t *testing.T) {
	fake := llmtest.NewAnthropic(t, func(n int, _ *llmtest.AnthropicRequest) llmtest.Answer {
		if n == 1 {
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "toolu_1", Name: "get_tools", Args: `{}`}}}
		}
		return llmtest.Answer{Chunks: []string{"understood"}}
	})
	model, err := llm.NewAnthropic(llm.AnthropicOptions{BaseURL: fake.URL, APIKey: "sk-ant-x", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	a := openAlways(t, model)
	stranger := principal.Principal{ID: "stranger", Name: "stranger", Role: principal.Member}
	answers := make(chan error, 2)
	_, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "look", Approvable: true}, func(e chat.Event) {
		if e.Type == chat.ApprovalRequest {
			// Answered from another goroutine, as a surface does.
			go func() {
				answers <- a.Chat.Answer(stranger, e.ConversationID, e.ToolCallID, true)
				answers <- a.Chat.Answer(principal.Local, e.ConversationID, e.ToolCallID, false)
			}()
		}
	})
	if err != nil || res.Text != "understood" {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if err := <-answers; err == nil || !strings.Contains(err.Error(), "is waiting for approval") {
		t.Errorf("a stranger's answer: %v, want it refused as not waiting", err)
	}
	if err := <-answers; err != nil {
		t.Errorf("the owner's answer: %v", err)
	}
	if len(res.ToolUses) != 1 || !res.ToolUses[0].IsError || !strings.Contains(res.ToolUses[0].Result, "the user denied this tool call") {
		t.Errorf("stored tool use: %+v", res.ToolUses)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(last.Content) != 1 || last.Content[0]["type"] != "tool_result" || last.Content[0]["is_error"] != true ||
		!strings.Contains(strings.ToLower(toText(last.Content[0]["content"])), "the user denied this tool call") {
		t.Errorf("the model got %+v", last.Content)
	}
}

// toText is the text of a tool_result block's content (a string, or text
// blocks).
func toText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, x := range c {
			if m, ok := x.(map[string]any); ok {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// TestApprovalOnlyWhereAnswerable: with the setting always, a turn whose
// surface cannot deliver answers (Approvable false: tn_session_ask) never
// waits: its calls run at once; the same turn on a surface that answers
// (Approvable) asks first.
func TestApprovalOnlyWhereAnswerable(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(_ int, req *llmtest.Request) llmtest.Answer {
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "c1", Name: "get_tools", Args: `{}`}}}
		}
		return llmtest.Answer{Chunks: []string{"done"}}
	})
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	a := openAlways(t, model)
	for _, approvable := range []bool{false, true} {
		asked := 0
		_, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "look", Approvable: approvable}, func(e chat.Event) {
			if e.Type == chat.ApprovalRequest {
				asked++
				go a.Chat.Answer(principal.Local, e.ConversationID, e.ToolCallID, true)
			}
		})
		if err != nil || len(res.ToolUses) != 1 || res.ToolUses[0].IsError {
			t.Fatalf("approvable %v: %v %+v", approvable, err, res)
		}
		if want := map[bool]int{false: 0, true: 1}[approvable]; asked != want {
			t.Errorf("approvable %v: asked %d times, want %d", approvable, asked, want)
		}
	}
}
