package ws_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// TestNewConversationsDoNotMix: two messages that start new conversations
// on one socket, answered by a streaming model at once: every event, from
// the first token on, names its conversation, so that each conversation's
// text arrives whole and apart from the other's (tokens waiting for the
// writer are merged only within one conversation).
func TestNewConversationsDoNotMix(t *testing.T) {
	url := serve(t, func(_ int, req *llmtest.Request) llmtest.Answer {
		name := "ONE"
		if strings.Contains(fmt.Sprint(req.Messages[len(req.Messages)-1]["content"]), "two") {
			name = "TWO"
		}
		chunks := make([]string, 5)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("[CONV-%s#%d]", name, i+1)
		}
		return llmtest.Answer{Chunks: chunks, Delay: 20 * time.Millisecond}
	}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for _, content := range []string{"one", "two"} {
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"`+content+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	text := map[string]*strings.Builder{}
	completed := map[string]bool{}
	for len(completed) < 2 {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (completed %v)", err, completed)
		}
		var e struct {
			Type           string `json:"type"`
			Content        string `json:"content"`
			ConversationID string `json:"conversation_id"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if e.ConversationID == "" {
			t.Fatalf("a %s event names no conversation: %s", e.Type, data)
		}
		switch e.Type {
		case "token":
			if completed[e.ConversationID] {
				t.Fatalf("a token after its conversation's complete: %s", data)
			}
			if text[e.ConversationID] == nil {
				text[e.ConversationID] = &strings.Builder{}
			}
			text[e.ConversationID].WriteString(e.Content)
		case "complete":
			completed[e.ConversationID] = true
		case "error":
			t.Fatalf("error event: %s", data)
		}
	}
	var got []string
	for id, b := range text {
		if !completed[id] {
			t.Errorf("tokens of conversation %s, which did not complete", id)
		}
		got = append(got, b.String())
	}
	want := map[string]bool{}
	for _, name := range []string{"ONE", "TWO"} {
		var b strings.Builder
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, "[CONV-%s#%d]", name, i)
		}
		want[b.String()] = true
	}
	if len(got) != 2 || !want[got[0]] || !want[got[1]] || got[0] == got[1] {
		t.Fatalf("the two conversations' texts: %q", got)
	}
}
