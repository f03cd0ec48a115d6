package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// fake is one provider kind behind its fake server: a provider of it and
// what its server received.
type fake struct {
	name string
	open func(t *testing.T, script llmtest.Script, stall time.Duration) (llm.Provider, func() []received)
}

// received is a request as either fake saw it.
type received struct {
	model       string
	tools       []string
	toolResults map[string]string
	system      string
}

var fakes = []fake{
	{"openai", func(t *testing.T, script llmtest.Script, stall time.Duration) (llm.Provider, func() []received) {
		f := llmtest.NewOpenAI(t, script)
		p, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: f.URL, APIKey: "sk-test", Model: "gpt-test", Timeout: stall})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() []received {
			var out []received
			for _, r := range f.Requests() {
				rc := received{model: r.Model, tools: r.ToolNames(), toolResults: r.LastToolResults()}
				if len(r.Messages) > 0 && r.Messages[0]["role"] == "system" {
					rc.system, _ = r.Messages[0]["content"].(string)
				}
				out = append(out, rc)
			}
			return out
		}
	}},
	{"anthropic", func(t *testing.T, script llmtest.Script, stall time.Duration) (llm.Provider, func() []received) {
		f := llmtest.NewAnthropic(t, func(n int, r *llmtest.AnthropicRequest) llmtest.Answer { return script(n, nil) })
		p, err := llm.NewAnthropic(llm.AnthropicOptions{BaseURL: f.URL, APIKey: "sk-ant-test", Model: "claude-test", Timeout: stall})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() []received {
			var out []received
			for _, r := range f.Requests() {
				rc := received{model: r.Model, toolResults: map[string]string{}}
				for _, tl := range r.Tools {
					rc.tools = append(rc.tools, tl.Name)
				}
				if len(r.System) > 0 {
					rc.system, _ = r.System[0]["text"].(string)
				}
				if n := len(r.Messages); n > 0 {
					for _, b := range r.Messages[n-1].Content {
						if b["type"] == "tool_result" {
							id, _ := b["tool_use_id"].(string)
							content, _ := json.Marshal(b["content"])
							rc.toolResults[id] = string(content)
						}
					}
				}
				out = append(out, rc)
			}
			return out
		}
	}},
}

// run streams one turn and collects its events.
func run(ctx context.Context, p llm.Provider, req llm.Request) (text string, calls []llm.ToolCall, done *llm.Event, err error) {
	err = p.Stream(ctx, req, func(e llm.Event) error {
		text += e.Text
		if e.Call != nil {
			calls = append(calls, *e.Call)
		}
		if e.Done {
			d := e
			done = &d
		}
		return nil
	})
	return
}

func TestStreams(t *testing.T) {
	for _, f := range fakes {
		t.Run(f.name, func(t *testing.T) {
			p, reqs := f.open(t, func(n int, _ *llmtest.Request) llmtest.Answer {
				if n == 1 {
					return llmtest.Answer{Chunks: []string{"Looking ", "it up."}, Calls: []llmtest.Call{
						{ID: "call_1", Name: "get_tools", Args: `{"tools":["a_b"]}`},
						{ID: "call_2", Name: "use_tool", Args: `{"tool":{"toolbox":"x","server":"y","tool":"z"},"arguments":{}}`},
					}}
				}
				return llmtest.Answer{Chunks: []string{"Done", "."}}
			}, 0)
			tools := []llm.ToolSpec{{Name: "get_tools", Description: "d", Schema: json.RawMessage(`{"type":"object","properties":{"tools":{}}}`)},
				{Name: "use_tool", Description: "d", Schema: json.RawMessage(`{"type":"object","properties":{"tool":{"type":"object"}},"required":["tool"]}`)}}
			req := llm.Request{System: "be brief", Tools: tools, Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}
			text, calls, done, err := run(context.Background(), p, req)
			if err != nil {
				t.Fatal(err)
			}
			if text != "Looking it up." || len(calls) != 2 || calls[0].ID != "call_1" || calls[1].Name != "use_tool" ||
				string(calls[0].Args) != `{"tools":["a_b"]}` || done == nil || done.StopReason == "" {
				t.Fatalf("text %q calls %+v done %+v", text, calls, done)
			}
			// The results go back with the calls they answer.
			req.Messages = append(req.Messages, llm.Message{Role: llm.Assistant, Content: text, ToolCalls: calls},
				llm.Message{Role: llm.Tool, ToolCallID: "call_1", Content: `{"r":1}`},
				llm.Message{Role: llm.Tool, ToolCallID: "call_2", Content: "boom", IsError: true})
			text, calls, _, err = run(context.Background(), p, req)
			if err != nil || text != "Done." || len(calls) != 0 {
				t.Fatalf("second turn: %q %v %v", text, calls, err)
			}
			got := reqs()
			if len(got) != 2 || got[0].system != "be brief" || len(got[0].tools) != 2 || got[0].model == "" {
				t.Fatalf("requests: %+v", got)
			}
			if !strings.Contains(got[1].toolResults["call_1"], `{\"r\":1}`) && !strings.Contains(got[1].toolResults["call_1"], `{"r":1}`) ||
				!strings.Contains(got[1].toolResults["call_2"], "boom") {
				t.Fatalf("tool results sent: %v", got[1].toolResults)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name   string
		answer llmtest.Answer
		cancel bool
		kind   string
		retry  time.Duration
	}{
		{"bad key", llmtest.Answer{Fail: 401}, false, llm.Auth, 0},
		{"rate limited", llmtest.Answer{Fail: 429, RetryAfter: 7}, false, llm.RateLimited, 7 * time.Second},
		{"outage", llmtest.Answer{Fail: 503}, false, llm.Unavailable, 0},
		{"unknown model", llmtest.Answer{Fail: 404}, false, llm.BadRequest, 0},
		{"cut stream", llmtest.Answer{Chunks: []string{"a", "b", "c"}, CutAfter: 2}, false, llm.BadStream, 0},
		{"stalled", llmtest.Answer{Chunks: []string{"a", "b"}, Delay: 3 * time.Second}, false, llm.Timeout, 0},
		{"cancelled", llmtest.Answer{Chunks: []string{"a", "b"}, Delay: 3 * time.Second}, true, "", 0},
	}
	for _, f := range fakes {
		for _, tc := range tests {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				p, _ := f.open(t, func(int, *llmtest.Request) llmtest.Answer { return tc.answer }, 500*time.Millisecond)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel {
					time.AfterFunc(200*time.Millisecond, cancel)
				}
				start := time.Now()
				_, _, _, err := run(ctx, p, llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}})
				if d := time.Since(start); d > 2500*time.Millisecond {
					t.Errorf("took %s", d)
				}
				if tc.cancel {
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("cancelled: %v", err)
					}
					return
				}
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != tc.kind || e.RetryAfter != tc.retry {
					t.Fatalf("error %#v, want kind %s retry %s", err, tc.kind, tc.retry)
				}
				if strings.Contains(err.Error(), "sk-") {
					t.Fatalf("the error shows the key: %v", err)
				}
			})
		}
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, _ := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: "http://" + addr + "/v1", Model: "m"})
	if _, _, _, err := run(context.Background(), p, llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}); llm.KindOf(err) != llm.Unavailable {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if p, err := llm.FromEnv(env(), http.DefaultClient); p != nil || err != nil {
		t.Fatalf("nothing set: %v %v", p, err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"NEXUS_LLM_PROVIDER", "gemini", "NEXUS_LLM_MODEL", "m"}, `NEXUS_LLM_PROVIDER "gemini"`},
		{[]string{"NEXUS_LLM_PROVIDER", "openai"}, "needs NEXUS_LLM_MODEL"},
		{[]string{"NEXUS_LLM_PROVIDER", "anthropic", "NEXUS_LLM_MODEL", "m"}, "needs NEXUS_LLM_API_KEY"},
		{[]string{"NEXUS_LLM_MODEL", "m"}, "NEXUS_LLM_PROVIDER is not"},
	} {
		if _, err := llm.FromEnv(env(tc.env...), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
	p, err := llm.FromEnv(env("NEXUS_LLM_PROVIDER", "openai", "NEXUS_LLM_MODEL", "llama3.1", "NEXUS_LLM_BASE_URL", "http://localhost:11434/v1"), nil)
	if err != nil || p.Name() != "openai llama3.1" {
		t.Fatalf("ollama: %v %v", p, err)
	}
}
