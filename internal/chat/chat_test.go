package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// open starts Nexus with a fake OpenAI-compatible model answering by script.
func open(t *testing.T, script llmtest.Script) (*app.App, *llmtest.OpenAI) {
	t.Helper()
	fake := llmtest.NewOpenAI(t, script)
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, fake
}

// collect runs a turn and returns its events; each is also handed to
// each of on as it comes.
func collect(t *testing.T, ctx context.Context, c *chat.Chat, turn chat.Turn, on ...func(chat.Event)) ([]chat.Event, *chat.Result, error) {
	t.Helper()
	var mu sync.Mutex
	var ev []chat.Event
	res, err := c.Run(ctx, turn, func(e chat.Event) {
		mu.Lock()
		ev = append(ev, e)
		mu.Unlock()
		for _, fn := range on {
			fn(e)
		}
	})
	return ev, res, err
}

func types(ev []chat.Event) []string {
	var out []string
	for _, e := range ev {
		out = append(out, e.Type)
	}
	return out
}

// TestTurnWithParallelToolCalls: the model calls two tools at once; both
// run through the pipeline, their events pair up by tool_call_id with the
// source of the tool actually run, the model gets both results, its answer
// streams, and the turn is stored.
func TestTurnWithParallelToolCalls(t *testing.T) {
	a, fake := open(t, func(n int, req *llmtest.Request) llmtest.Answer {
		switch n {
		case 1:
			return llmtest.Answer{Chunks: []string{"Let me look. "}, Calls: []llmtest.Call{
				{ID: "c1", Name: "get_tools", Args: `{"tools":["substrate_belief_query"]}`},
				{ID: "c2", Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_query"},"arguments":{"query":"nexus"}}`},
			}}
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "c3", Name: "substrate_belief_query", Args: `{"query":"tools"}`}}}
		default:
			return llmtest.Answer{Chunks: []string{"Nexus ", "has **beliefs**", "."}}
		}
	})
	ev, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "What do you know?"})
	if err != nil {
		t.Fatalf("turn: %v (events %v)", err, types(ev))
	}
	if res.Text != "Let me look. Nexus has **beliefs**." {
		t.Errorf("text: %q", res.Text)
	}
	starts, completes := map[string]chat.Event{}, map[string]chat.Event{}
	for _, e := range ev {
		switch e.Type {
		case chat.ToolStart:
			starts[e.ToolCallID] = e
		case chat.ToolComplete:
			if _, ok := starts[e.ToolCallID]; !ok {
				t.Errorf("tool_complete %s before its tool_start", e.ToolCallID)
			}
			completes[e.ToolCallID] = e
		}
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		s, c := starts[id], completes[id]
		if s.Source != "local" || c.Source != "local" || c.IsError || c.ToolResult == "" || s.Timestamp == "" {
			t.Errorf("call %s: start %+v complete %+v", id, s, c)
		}
	}
	if last := ev[len(ev)-1]; last.Type != chat.Complete || last.MessageID == "" || last.ConversationID != res.ConversationID {
		t.Errorf("last event: %+v", last)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if got := reqs[1].LastToolResults(); got["c1"] == "" || got["c2"] == "" {
		t.Errorf("the model's second request lacks the two results: %v", got)
	}
	if names := reqs[1].ToolNames(); !slices.Contains(names, "substrate_belief_query") || !slices.Contains(names, "use_tool") {
		t.Errorf("tools offered after get_tools: %v", names)
	}
	if names := reqs[0].ToolNames(); slices.Contains(names, "substrate_belief_query") || !slices.Contains(names, "get_tools") {
		t.Errorf("tools offered at first: %v", names)
	}
	// Stored: the user's message and the assistant's with its tool uses.
	o := a.Pipeline.Call(context.Background(), pipeline.Request{Tool: "exchange_list", Surface: "test",
		Args: json.RawMessage(`{"session_id":"` + res.ConversationID + `"}`)})
	body, _ := o.Body()
	var ex struct {
		Exchanges []struct {
			Role     string           `json:"role"`
			Content  string           `json:"content"`
			ToolUses []map[string]any `json:"tool_uses"`
		} `json:"exchanges"`
	}
	json.Unmarshal(body, &ex)
	if len(ex.Exchanges) != 2 || ex.Exchanges[0].Content != "What do you know?" || ex.Exchanges[1].Role != "assistant" ||
		len(ex.Exchanges[1].ToolUses) != 3 {
		t.Fatalf("stored turn: %s", body)
	}
}

// TestTurnFailures: a tool error goes back to the model; a cut stream, a
// rate limit, a runaway loop and a cancel end the turn with a clear error
// event, never a hang.
func TestTurnFailures(t *testing.T) {
	tests := []struct {
		name   string
		script llmtest.Script
		cancel bool
		code   string
		text   string
	}{
		{name: "tool error", script: func(n int, req *llmtest.Request) llmtest.Answer {
			if n == 1 {
				return llmtest.Answer{Calls: []llmtest.Call{{ID: "x", Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"substrate","tool":"nope"},"arguments":{}}`}}}
			}
			if !strings.Contains(req.LastToolResults()["x"], "nope") {
				return llmtest.Answer{Chunks: []string{"the error did not reach me"}}
			}
			return llmtest.Answer{Chunks: []string{"That tool does not exist."}}
		}, text: "That tool does not exist."},
		{name: "cut stream", script: func(int, *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Chunks: []string{"a", "b", "c", "d"}, CutAfter: 3}
		}, code: chat.ModelError},
		{name: "rate limited", script: func(int, *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Fail: 429, RetryAfter: 7}
		}, code: "RATE_LIMITED"},
		{name: "bad key", script: func(int, *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Fail: 401}
		}, code: chat.ModelError},
		{name: "runaway", script: func(n int, _ *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "r" + string(rune('a'+n)), Name: "get_tools", Args: `{}`}}}
		}, code: chat.StepLimit},
		{name: "cancel", script: func(int, *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Chunks: []string{"slow", "slow", "slow"}, Delay: 2 * time.Second}
		}, cancel: true, code: chat.Cancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := open(t, tc.script)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			start := time.Now()
			ev, res, err := collect(t, ctx, a.Chat, chat.Turn{Content: "hi"})
			if time.Since(start) > 15*time.Second {
				t.Errorf("the turn took %s", time.Since(start))
			}
			last := ev[len(ev)-1]
			if tc.code == "" {
				if err != nil || res.Text != tc.text {
					t.Fatalf("err %v text %q events %v", err, res.Text, types(ev))
				}
				return
			}
			if err == nil || last.Type != chat.Error || last.Code != tc.code || last.Message == "" {
				t.Fatalf("err %v, last event %+v", err, last)
			}
			if tc.code == "RATE_LIMITED" && last.RetryAfter != 7 {
				t.Errorf("retry_after %d, want 7", last.RetryAfter)
			}
		})
	}
}

// TestOwnKeyReusesConnections: a user's own credential runs their turns
// (not counted against the quota) through one shared connection pool: ten
// turns one after another use one connection to the provider, not one each
// (a pool per turn held 1 GB at 1,000 concurrent conversations). The fake
// ends each response a moment after its "data: [DONE]", as a loaded server
// may: a stream closed on [DONE] before the response's end arrives would
// lose its connection.
func TestOwnKeyReusesConnections(t *testing.T) {
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	fake := llmtest.NewOpenAI(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"ok"}, Linger: 20 * time.Millisecond}
	})
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir()}) // no server model: only the user's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	o := a.Pipeline.Call(context.Background(), pipeline.Request{Tool: "tn_user_byok_add", Surface: "test",
		Args: json.RawMessage(`{"provider":"openai","label":"mine","apiKey":"sk-mine-0123456789","baseUrl":"` + fake.URL + `"}`)})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	conv := ""
	for range 10 {
		_, res, err := collect(t, context.Background(), a.Chat, chat.Turn{ConversationID: conv, Content: "hi"})
		if err != nil || res.Text != "ok" {
			t.Fatalf("turn on the user's own key: %v %+v", err, res)
		}
		conv = res.ConversationID
	}
	if n := fake.Conns(); n != 1 {
		t.Fatalf("ten turns opened %d connections to the provider, want 1", n)
	}
}

// TestTurnOnAnthropic: the same loop on Anthropic's Messages API (its
// streaming events, tool_use blocks, tool_result blocks sent back).
func TestTurnOnAnthropic(t *testing.T) {
	fake := llmtest.NewAnthropic(t, func(n int, req *llmtest.AnthropicRequest) llmtest.Answer {
		if n == 1 {
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "toolu_1", Name: "get_tools", Args: `{}`}, {ID: "toolu_2", Name: "get_tools", Args: `{"tools":["vkb_session_list"]}`}}}
		}
		last := req.Messages[len(req.Messages)-1]
		if len(last.Content) != 2 || last.Content[0]["type"] != "tool_result" || last.Content[1]["tool_use_id"] != "toolu_2" {
			return llmtest.Answer{Chunks: []string{"the tool results did not come back"}}
		}
		return llmtest.Answer{Chunks: []string{"Two ", "lookups done."}}
	})
	model, err := llm.NewAnthropic(llm.AnthropicOptions{BaseURL: fake.URL, APIKey: "sk-ant-x", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ev, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "look twice"})
	if err != nil || res.Text != "Two lookups done." || res.ToolCalls != 2 {
		t.Fatalf("turn: %v %+v %v", err, res, types(ev))
	}
	if n := len(fake.Requests()); n != 2 || !slices.Contains(func() []string {
		var out []string
		for _, tl := range fake.Requests()[1].Tools {
			out = append(out, tl.Name)
		}
		return out
	}(), "vkb_session_list") {
		t.Fatalf("requests: %d; the discovered tool was not offered", n)
	}
}

// TestTurnChoosesItsModel: a turn may ask for the server's model or one of
// the user's keys; the complete event names the model that answered, and a
// key the user does not have is refused with an error naming the choice.
func TestTurnChoosesItsModel(t *testing.T) {
	a, _ := open(t, func(n int, req *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"Hello."}}
	})
	ctx := context.Background()
	for _, choice := range []string{"", chat.ModelServer} {
		ev, _, err := collect(t, ctx, a.Chat, chat.Turn{Content: "hi", Model: choice})
		if err != nil {
			t.Fatalf("model %q: %v (%v)", choice, err, types(ev))
		}
		last := ev[len(ev)-1]
		if last.Type != chat.Complete || !strings.Contains(last.Model, "fake") || last.OwnKey {
			t.Fatalf("model %q: last event %+v, want complete naming the server's model", choice, last)
		}
	}
	ev, _, err := collect(t, ctx, a.Chat, chat.Turn{Content: "hi", Model: "cred-nobody"})
	last := ev[len(ev)-1]
	if err == nil || last.Type != chat.Error || last.Code != string(errs.BadRequest) || !strings.Contains(last.Message, `"cred-nobody"`) {
		t.Fatalf("unknown key: err %v, last event %+v, want a bad request naming the key", err, last)
	}
}

// TestTurnReplacesTheLast: a turn with ReplaceLast (Regenerate, Edit and
// resend) replaces the conversation's last user message and its answer:
// the model sees the history without them, and the conversation keeps the
// new turn in their place. Without a stored conversation it is refused,
// naming replace_last, and stores nothing.
func TestTurnReplacesTheLast(t *testing.T) {
	var mu sync.Mutex
	var seen [][]string
	a, _ := open(t, func(n int, req *llmtest.Request) llmtest.Answer {
		var contents []string
		for _, m := range req.Messages {
			if s, ok := m["content"].(string); ok && m["role"] != "system" {
				contents = append(contents, s)
			}
		}
		mu.Lock()
		seen = append(seen, contents)
		mu.Unlock()
		return llmtest.Answer{Chunks: []string{fmt.Sprintf("answer %d", n)}}
	})
	ctx := context.Background()
	_, first, err := collect(t, ctx, a.Chat, chat.Turn{Content: "first question"})
	if err != nil {
		t.Fatal(err)
	}
	conv := first.ConversationID
	for _, turn := range []chat.Turn{
		{ConversationID: conv, Content: "second question"},
		{ConversationID: conv, Content: "second question, edited", ReplaceLast: true},
	} {
		if _, _, err := collect(t, ctx, a.Chat, turn); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	if want := []string{"first question", "answer 1", "second question, edited"}; !slices.Equal(last, want) {
		t.Fatalf("the replacing turn's model saw %q, want %q", last, want)
	}
	ws, _, _, err := a.Conversations.Lookup(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	ex, total, err := a.Conversations.Exchanges(ctx, ws, conv, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ex {
		got = append(got, e.Content)
	}
	if want := []string{"first question", "answer 1", "second question, edited", "answer 3"}; total != 4 || !slices.Equal(got, want) {
		t.Fatalf("stored %d exchanges %q, want %q", total, got, want)
	}

	ev, res, err := collect(t, ctx, a.Chat, chat.Turn{Content: "nothing to replace", ReplaceLast: true})
	end := ev[len(ev)-1]
	if err == nil || end.Type != chat.Error || end.Code != string(errs.BadRequest) || !strings.Contains(end.Message, "replace_last") {
		t.Fatalf("replacing in a new conversation: err %v, last event %+v, want a bad request naming replace_last", err, end)
	}
	if _, _, ok, _ := a.Conversations.Lookup(ctx, res.ConversationID); ok {
		t.Fatalf("a refused turn stored its conversation %s", res.ConversationID)
	}
}
