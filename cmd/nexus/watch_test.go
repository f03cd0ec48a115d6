package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// TestWatchConversationOnAnotherReplica: a WebSocket watching a
// conversation on replica B receives every event of a turn that runs on
// replica A, once each and in order (tokens may arrive merged), and a watch
// of a conversation that does not exist is refused.
func TestWatchConversationOnAnotherReplica(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Chunks: []string{"Let me ", "look. "}, Calls: []llmtest.Call{{ID: "c1", Name: "get_tools", Args: `{}`}}, Delay: 20 * time.Millisecond}
		}
		return llmtest.Answer{Chunks: []string{"Nexus ", "has ", "three ", "agents ", "on ", "every ", "replica."}, Delay: 60 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	reps, _ := startReplicas(t, 2, "--no-demo")
	a, b := reps[0].base(), reps[1].base()

	code, body := restDo(t, "POST", a+"/api/tools/session_start:call", "", `{"platform":"api"}`)
	conv := jsonPath(t, body, "session", "id")
	if code != 200 || conv == "" {
		t.Fatalf("session_start: %d %s", code, body)
	}

	watcher := wsDial(t, b, "")
	if ev := wsEvents(t, watcher, map[string]any{"type": "watch", "conversation_id": "no-such-conversation"}, "error"); ev[0]["code"] != "NOT_FOUND" {
		t.Fatalf("watching a conversation that does not exist: %v", ev)
	}
	// The watch frame, then one whose error says the watch was handled
	// (frames are handled in order).
	b2, _ := json.Marshal(map[string]any{"type": "watch", "conversation_id": conv})
	if err := watcher.Write(context.Background(), websocket.MessageText, b2); err != nil {
		t.Fatal(err)
	}
	if ev := wsEvents(t, watcher, map[string]any{"type": "bogus"}, "error"); len(ev) != 1 || ev[0]["code"] != "BAD_REQUEST" {
		t.Fatalf("after the watch: %v", ev)
	}

	runner := wsDial(t, a, "")
	ran := wsEvents(t, runner, map[string]any{"type": "message", "conversation_id": conv, "content": "What is on each replica?"}, "complete")
	watched := wsEvents(t, watcher, nil, "complete")

	shape := func(evs []map[string]any) (steps []string, text string) {
		var b strings.Builder
		for _, e := range evs {
			if e["conversation_id"] != conv {
				t.Errorf("event of another conversation: %v", e)
			}
			if e["type"] == "token" {
				b.WriteString(e["content"].(string))
				continue
			}
			steps = append(steps, strings.Join([]string{e["type"].(string), str(e["tool_name"]), str(e["tool_call_id"]), str(e["message_id"])}, "/"))
		}
		return steps, b.String()
	}
	rs, rt := shape(ran)
	ws, wt := shape(watched)
	if !slices.Equal(rs, ws) || rt != wt {
		t.Fatalf("the watcher on the other replica saw\n\t%v %q\nthe runner saw\n\t%v %q", ws, wt, rs, rt)
	}
	if rt != "Let me look. Nexus has three agents on every replica." || len(rs) < 3 {
		t.Fatalf("the turn: %v %q", rs, rt)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
