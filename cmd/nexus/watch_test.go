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

// TestWatchFollowsTheConversationRule: watching a conversation over the
// socket follows the pipeline's one rule for who may use a conversation
// (its owner and admins): an admin watches a member's conversation and
// receives its turn's events; another member's watch of it is refused as
// if it did not exist (issue 21, item 9).
func TestWatchFollowsTheConversationRule(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"Watched ", "by ", "an admin."}}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	t.Setenv("NEXUS_DB", "")
	dir := t.TempDir()
	tokens := map[string]string{}
	for _, u := range []struct{ name, role string }{{"alice", "member"}, {"bob", "member"}, {"root", "admin"}} {
		out, errOut, code := runNexus(t, "", "users", "add", u.name, "--role", u.role, "--data-dir", dir)
		if code != 0 {
			t.Fatalf("users add %s: %s", u.name, errOut)
		}
		tokens[u.name] = strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	}
	base := startServeIn(t, dir, "--no-demo", "--token-rate", "0")

	code, body := restDo(t, "POST", base+"/api/tools/session_start:call", tokens["alice"], `{"platform":"api"}`)
	conv := jsonPath(t, body, "session", "id")
	if code != 200 || conv == "" {
		t.Fatalf("session_start as alice: %d %s", code, body)
	}

	bob := wsDial(t, base, tokens["bob"])
	if ev := wsEvents(t, bob, map[string]any{"type": "watch", "conversation_id": conv}, "error"); ev[0]["code"] != "NOT_FOUND" {
		t.Fatalf("a member watching another member's conversation: %v", ev)
	}

	root := wsDial(t, base, tokens["root"])
	b, _ := json.Marshal(map[string]any{"type": "watch", "conversation_id": conv})
	if err := root.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	// Frames are handled in order: the first error is the bogus frame's,
	// unless the watch was refused.
	if ev := wsEvents(t, root, map[string]any{"type": "bogus"}, "error"); len(ev) != 1 || ev[0]["code"] != "BAD_REQUEST" {
		t.Fatalf("an admin watching a member's conversation: %v", ev)
	}

	alice := wsDial(t, base, tokens["alice"])
	ran := wsEvents(t, alice, map[string]any{"type": "message", "conversation_id": conv, "content": "hello"}, "complete")
	if last := ran[len(ran)-1]; last["type"] != "complete" {
		t.Fatalf("alice's turn: %v", ran)
	}
	watched := wsEvents(t, root, nil, "complete")
	var text strings.Builder
	for _, e := range watched {
		if e["conversation_id"] != conv {
			t.Errorf("event of another conversation: %v", e)
		}
		if e["type"] == "token" {
			text.WriteString(str(e["content"]))
		}
	}
	if last := watched[len(watched)-1]; last["type"] != "complete" || text.String() != "Watched by an admin." {
		t.Fatalf("the admin watching saw %q, %v", text.String(), watched)
	}
}
