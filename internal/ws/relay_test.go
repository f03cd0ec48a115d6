package ws

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/events"
)

// TestRelayCoalescesTokens: a turn's tokens sent in a burst reach the bus
// as a few token events, not one each, with every byte in order, and a
// non-token event is published after the tokens before it.
func TestRelayCoalescesTokens(t *testing.T) {
	bus, err := events.Open(context.Background(), events.Options{URL: "local", Origin: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	var mu sync.Mutex
	var got []chat.Event
	done := make(chan struct{})
	bus.Subscribe(TopicChatEvent, func(e events.Event) {
		var ce chatEvent
		if err := json.Unmarshal(e.Data, &ce); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		got = append(got, ce.Event)
		mu.Unlock()
		if ce.Event.Type == chat.Complete {
			close(done)
		}
	})
	c := &conn{id: "c1", log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r := &relay{h: &hub{bus: bus}, c: c}
	ctx := context.Background()
	var want strings.Builder
	r.send(ctx, "conv", chat.Event{Type: chat.ToolStart, ToolName: "get_tools", ConversationID: "conv"})
	for i := range 200 {
		tok := strconv.Itoa(i) + " "
		want.WriteString(tok)
		r.send(ctx, "conv", chat.Event{Type: chat.Token, Content: tok, ConversationID: "conv"})
		if i == 100 {
			// A pause: the tokens so far go out on their own, once the
			// coalescing timer fires (waited for, not slept on: under load
			// the timer's goroutine may run late).
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the tokens before the pause were never published")
				}
			}
		}
	}
	r.send(ctx, "conv", chat.Event{Type: chat.Complete, ConversationID: "conv"})
	r.flush(ctx)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no complete event on the bus")
	}
	mu.Lock()
	defer mu.Unlock()
	var text strings.Builder
	tokens := 0
	for i, e := range got {
		switch {
		case i == 0 && e.Type != chat.ToolStart, i == len(got)-1 && e.Type != chat.Complete:
			t.Fatalf("event %d is %s: %v", i, e.Type, got)
		case e.Type == chat.Token:
			tokens++
			text.WriteString(e.Content)
		}
	}
	if text.String() != want.String() {
		t.Fatalf("tokens on the bus: %q, want %q", text.String(), want.String())
	}
	if tokens < 2 || tokens > 10 {
		t.Errorf("200 tokens went out as %d events; want them gathered into a few (at least 2: there was a pause)", tokens)
	}
}
