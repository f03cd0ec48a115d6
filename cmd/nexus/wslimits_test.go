package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// TestChangedUserClosesSocketOnAnotherReplica (issue 21, item 1): a token
// revoked, or an admin demoted, by a command on the shared database (which
// tells the replicas over the event bus) reaches a WebSocket open on a
// replica: its running turn is cancelled, it gets UNAUTHORIZED or
// FORBIDDEN, and it is closed with 1008.
func TestChangedUserClosesSocketOnAnotherReplica(t *testing.T) {
	fake := llmtest.NewOpenAI(t, func(int, *llmtest.Request) llmtest.Answer {
		chunks := make([]string, 600)
		for i := range chunks {
			chunks[i] = "x "
		}
		return llmtest.Answer{Chunks: chunks, Delay: 50 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	reps, db := startReplicas(t, 2, "--no-demo")
	token := func(name string) string {
		out, errOut, code := runNexus(t, "", "users", "add", name, "--role", "admin", "--db", db)
		if code != 0 {
			t.Fatalf("users add %s: %s", name, errOut)
		}
		return strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	}
	for _, tc := range []struct {
		name, code string
		change     []string
	}{
		{"revoked", "UNAUTHORIZED", nil},
		{"demoted", "FORBIDDEN", []string{"users", "set", "demoted", "--role", "member"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := token(tc.name)
			c := wsDial(t, reps[1].base(), tok)
			if ev := wsEvents(t, c, map[string]any{"type": "message", "content": "talk"}, "token"); ev[len(ev)-1]["type"] != "token" {
				t.Fatalf("the turn: %v", ev)
			}
			change := tc.change
			if change == nil {
				out, errOut, code := runNexus(t, "", "tokens", "list", tc.name, "--json", "--db", db)
				var toks []struct{ ID string }
				if code != 0 || json.Unmarshal([]byte(out), &toks) != nil || len(toks) != 1 {
					t.Fatalf("tokens list: %s %s", out, errOut)
				}
				id := toks[0].ID
				change = []string{"tokens", "revoke", id}
			}
			// The change, made by another process on the shared database.
			if out, errOut, code := runNexus(t, "", append(change, "--db", db)...); code != 0 {
				t.Fatalf("%v: %s %s", change, out, errOut)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var refused bool
			for {
				e, err := readEvent(ctx, c)
				if err != nil {
					if s := websocket.CloseStatus(err); s != websocket.StatusPolicyViolation || !refused {
						t.Fatalf("after the change: closed %v (%v), refused %v; want %s then 1008", s, err, refused, tc.code)
					}
					return
				}
				if e["type"] == "complete" {
					t.Fatal("the turn completed after the change")
				}
				refused = refused || (e["type"] == "error" && e["code"] == tc.code)
			}
		})
	}
}

// readEvent reads one event of c.
func readEvent(ctx context.Context, c *websocket.Conn) (map[string]any, error) {
	_, data, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var e map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	return e, nil
}
