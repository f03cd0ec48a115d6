package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// wsDial opens a WebSocket to base's /ws, with a token when given.
func wsDial(t *testing.T, base, token string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := &websocket.DialOptions{}
	if token != "" {
		o.HTTPHeader = map[string][]string{"Authorization": {"Bearer " + token}}
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", o)
	if err != nil {
		t.Fatalf("dial /ws: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// wsEvents sends frame and reads events until one of type until (or error).
func wsEvents(t *testing.T, c *websocket.Conn, frame any, until string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if frame != nil {
		b, _ := json.Marshal(frame)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	var out []map[string]any
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d events %v: %v", len(out), out, err)
		}
		var e map[string]any
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("not JSON: %s", data)
		}
		out = append(out, e)
		if e["type"] == until || e["type"] == "error" {
			return out
		}
	}
}

// TestChatWithoutModel: with no model configured, a message gets an error
// event saying how to configure one; the rest of Nexus works.
func TestChatWithoutModel(t *testing.T) {
	for _, k := range []string{"NEXUS_LLM_PROVIDER", "NEXUS_LLM_MODEL", "NEXUS_LLM_API_KEY", "NEXUS_LLM_BASE_URL"} {
		t.Setenv(k, "")
	}
	base := startServe(t)
	c := wsDial(t, base, "")
	ev := wsEvents(t, c, map[string]any{"type": "message", "conversation_id": "", "content": "hello"}, "complete")
	last := ev[len(ev)-1]
	if last["type"] != "error" || last["code"] != "MODEL_NOT_CONFIGURED" || !strings.Contains(last["message"].(string), "NEXUS_LLM_PROVIDER") {
		t.Fatalf("events: %v", ev)
	}
	ev = wsEvents(t, c, map[string]any{"type": "bogus"}, "error")
	if ev[0]["code"] != "BAD_REQUEST" {
		t.Fatalf("a bogus frame: %v", ev)
	}
}

// TestChatEndToEnd: with a model configured by the environment (a fake
// OpenAI-compatible server speaking the real wire format), a WebSocket
// message streams tool calls with their source and tokens, completes, and
// the turn is stored; tn_session_ask answers through the same loop with the
// tutor's tools, once per clientEventId.
func TestChatEndToEnd(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		switch {
		case slices.Contains(req.ToolNames(), "tn_transfer_resolve") && len(req.LastToolResults()) == 0:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "t1", Name: "tn_course_institutions", Args: `{}`}}}
		case slices.Contains(req.ToolNames(), "tn_transfer_resolve"):
			return llmtest.Answer{Chunks: []string{"Per the BC Transfer Guide, ", "it transfers."}}
		case len(req.LastToolResults()) == 0:
			return llmtest.Answer{Chunks: []string{"Checking. "}, Calls: []llmtest.Call{{ID: "c1", Name: "get_tools", Args: `{}`}}}
		default:
			return llmtest.Answer{Chunks: []string{"Nexus has ", "**three** agents."}}
		}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	base := startServe(t)
	c := wsDial(t, base, "")
	ev := wsEvents(t, c, map[string]any{"type": "message", "conversation_id": "", "content": "What is here?"}, "complete")
	var types []string
	var tokens strings.Builder
	for _, e := range ev {
		types = append(types, e["type"].(string))
		if e["type"] == "token" {
			tokens.WriteString(e["content"].(string))
		}
		if e["type"] == "tool_start" && (e["tool_name"] != "get_tools" || e["source"] != "local" || e["tool_call_id"] != "c1" || e["tool_input"] != "{}") {
			t.Errorf("tool_start: %v", e)
		}
		if e["type"] == "tool_complete" && (e["source"] != "local" || !strings.Contains(e["tool_result"].(string), "agents")) {
			t.Errorf("tool_complete: %v", e)
		}
	}
	last := ev[len(ev)-1]
	if last["type"] != "complete" || last["message_id"] == "" || tokens.String() != "Checking. Nexus has **three** agents." {
		t.Fatalf("events %v, tokens %q", types, tokens.String())
	}
	conv := last["conversation_id"].(string)
	code, body := restDo(t, "POST", base+"/api/tools/exchange_list:call", "", `{"session_id":"`+conv+`"}`)
	if code != 200 || !strings.Contains(body, "What is here?") || !strings.Contains(body, "**three** agents") || !strings.Contains(body, `"tool_uses":[{`) {
		t.Fatalf("the stored turn: %d %s", code, body)
	}
	// tn_session_ask: the tutor's tools, the same loop, once per clientEventId.
	_, body = restDo(t, "POST", base+"/api/tools/tn_session_start:call", "", `{}`)
	var st struct{ SessionID string }
	json.Unmarshal([]byte(body), &st)
	ask := `{"sessionId":"` + st.SessionID + `","message":"Does CPSC 1150 transfer?","clientEventId":"e-1"}`
	code, body = restDo(t, "POST", base+"/api/tools/tn_session_ask:call", "", ask)
	if code != 200 || !strings.Contains(body, `"response":"Per the BC Transfer Guide, it transfers."`) || !strings.Contains(body, "tool.called:tn_course_institutions") {
		t.Fatalf("tn_session_ask: %d %s", code, body)
	}
	before := len(fake.Requests())
	code, again := restDo(t, "POST", base+"/api/tools/tn_session_ask:call", "", ask)
	if code != 200 || again != body || len(fake.Requests()) != before {
		t.Fatalf("a retried clientEventId asked again: %d %s (model requests %d -> %d)", code, again, before, len(fake.Requests()))
	}
	code, body = restDo(t, "POST", base+"/api/tools/tn_session_ask:call", "", `{"sessionId":"`+st.SessionID+`","message":"Something else","clientEventId":"e-1"}`)
	if code != 409 || !strings.Contains(body, "CONFLICT") {
		t.Fatalf("clientEventId reused for another message: %d %s", code, body)
	}
	_, body = restDo(t, "POST", base+"/api/tools/tn_session_history:call", "", `{"sessionId":"`+st.SessionID+`"}`)
	if !strings.Contains(body, "Does CPSC 1150 transfer?") || !strings.Contains(body, "it transfers.") {
		t.Fatalf("the tutoring transcript: %s", body)
	}
}

// TestChatAuthAndOwnership: beyond loopback a browser's upgrade carries no
// token and authenticates with its first frame; a bad first frame closes
// the socket; another user's conversation is FORBIDDEN; cancel stops a
// turn.
func TestChatAuthAndOwnership(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		if strings.Contains(fmt.Sprint(req.Messages[len(req.Messages)-1]["content"]), "slow") {
			return llmtest.Answer{Chunks: []string{"a", "b", "c", "d", "e"}, Delay: time.Second}
		}
		return llmtest.Answer{Chunks: []string{"hello"}}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake")
	t.Setenv("NEXUS_DB", "")
	dir := t.TempDir()
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob"} {
		out, errOut, code := runNexus(t, "", "users", "add", u, "--data-dir", dir)
		if code != 0 {
			t.Fatalf("users add: %s", errOut)
		}
		tokens[u] = strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	}
	_, port, _ := net.SplitHostPort(testtools.FreeAddr(t))
	base := startServeAt(t, dir, "0.0.0.0:"+port, "--allow-hosts", "nexus.test")

	// No token and a bad first frame: closed with a policy violation.
	c := wsDial(t, base, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"auth","token":"nxs_wrong"}`))
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("a bad auth frame: %v", err)
	}
	// The first frame authenticates alice.
	a := wsDial(t, base, "")
	a.Write(ctx, websocket.MessageText, []byte(`{"type":"auth","token":"`+tokens["alice"]+`"}`))
	ev := wsEvents(t, a, map[string]any{"type": "message", "content": "hi"}, "complete")
	conv, _ := ev[len(ev)-1]["conversation_id"].(string)
	if ev[len(ev)-1]["type"] != "complete" || conv == "" {
		t.Fatalf("alice's turn: %v", ev)
	}
	// bob cannot write into alice's conversation.
	b := wsDial(t, base, tokens["bob"])
	ev = wsEvents(t, b, map[string]any{"type": "message", "conversation_id": conv, "content": "hi"}, "complete")
	if last := ev[len(ev)-1]; last["type"] != "error" || last["code"] != "FORBIDDEN" || strings.Contains(fmt.Sprint(last), "hello") {
		t.Fatalf("bob in alice's conversation: %v", ev)
	}
	// cancel stops alice's slow turn.
	b2, _ := json.Marshal(map[string]any{"type": "message", "conversation_id": conv, "content": "slow please"})
	a.Write(ctx, websocket.MessageText, b2)
	time.Sleep(300 * time.Millisecond) // let the turn start streaming (not synchronisation: cancel works at any point)
	start := time.Now()
	ev = wsEvents(t, a, map[string]any{"type": "cancel", "conversation_id": conv}, "complete")
	if last := ev[len(ev)-1]; last["type"] != "error" || last["code"] != "CANCELLED" || time.Since(start) > 3*time.Second {
		t.Fatalf("cancel: %v after %s", ev, time.Since(start))
	}
}

// TestChatModelFromConfig: the configuration file's model section configures
// the server's model (its key from the environment).
func TestChatModelFromConfig(t *testing.T) {
	for _, k := range []string{"NEXUS_LLM_PROVIDER", "NEXUS_LLM_MODEL", "NEXUS_LLM_API_KEY", "NEXUS_LLM_BASE_URL"} {
		t.Setenv(k, "")
	}
	fake := llmtest.NewOpenAI(t, func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: []string{"from the file"}} })
	t.Setenv("FAKE_KEY", "sk-from-env")
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	os.WriteFile(conf, []byte("toolboxes: {}\nmodel:\n  provider: openai\n  model: fake-model\n  apiKey: ${FAKE_KEY}\n  baseUrl: "+fake.URL+"\n"), 0o600)
	base := startServe(t, "--config", conf)
	ev := wsEvents(t, wsDial(t, base, ""), map[string]any{"type": "message", "content": "hi"}, "complete")
	if last := ev[len(ev)-1]; last["type"] != "complete" || fake.Requests()[0].Model != "fake-model" {
		t.Fatalf("events: %v", ev)
	}
}
