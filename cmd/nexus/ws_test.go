package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
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
