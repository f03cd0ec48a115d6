package ws_test

import (
	"context"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// TestNextMessageRightAfterComplete: a client that sends its next message
// of a conversation as soon as complete arrives gets it answered, not
// CONFLICT. The conversation was released only after the turn's last event
// was sent, its turn slot freed and its events published, so such a
// message raced the end of the turn (seen in the kill test under load).
func TestNextMessageRightAfterComplete(t *testing.T) {
	script := func(n int, req *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"ok"}}
	}
	url, _, a := serveUsers(t, script, func(a *app.App) ws.Options {
		turns, err := quota.NewTurnSlots(a.Store, quota.TurnOptions{Max: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Options{Turns: turns}
	}, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dialAs(t, ctx, url, addUser(t, a, "quick"), true)
	conv := ""
	for i := range 30 {
		send(t, ctx, c, map[string]any{"type": "message", "conversation_id": conv, "content": "again"})
		for {
			e := next(t, ctx, c)
			if e["type"] == "error" {
				t.Fatalf("message %d, sent as soon as the previous turn completed: %v", i, e)
			}
			if e["type"] == "complete" {
				conv, _ = e["conversation_id"].(string)
				break
			}
		}
	}
}

// TestCancelNewConversation: a turn of a new conversation is cancelled by a
// cancel naming the id its events carry (it was filed under a private key,
// so the cancel reached nothing and the turn ran on).
func TestCancelNewConversation(t *testing.T) {
	script := func(n int, req *llmtest.Request) llmtest.Answer {
		chunks := make([]string, 2000)
		for i := range chunks {
			chunks[i] = "word "
		}
		return llmtest.Answer{Chunks: chunks, Delay: 5 * time.Millisecond}
	}
	url, _, a := serveUsers(t, script, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dialAs(t, ctx, url, addUser(t, a, "canceller"), true)
	send(t, ctx, c, map[string]any{"type": "message", "content": "talk a long time"})
	first := next(t, ctx, c)
	id, _ := first["conversation_id"].(string)
	if id == "" {
		t.Fatalf("the first event names no conversation: %v", first)
	}
	send(t, ctx, c, map[string]any{"type": "cancel", "conversation_id": id})
	for {
		e := next(t, ctx, c)
		if e["conversation_id"] != id {
			t.Fatalf("an event of another conversation: %v", e)
		}
		switch e["type"] {
		case "complete":
			t.Fatalf("the turn ran to its end after cancel %s", id)
		case "error":
			if e["code"] != "CANCELLED" {
				t.Fatalf("after cancel: %v, want CANCELLED", e)
			}
			return
		}
	}
}

// TestStoreOutageKeepsSocket: a socket whose token cannot be checked again
// because the store does not answer is not refused as if the token were
// revoked: the outage refuses no token (the socket was closed with
// UNAUTHORIZED on any error of the check).
func TestStoreOutageKeepsSocket(t *testing.T) {
	url, h, a := serveUsers(t, func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: []string{"ok"}} }, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialAs(t, ctx, url, addUser(t, a, "outage"), true)
	// The users cache forgotten and the store gone: the check after a
	// change must read the store, and cannot.
	a.Users.Forget()
	if err := a.Store.DB().Close(); err != nil {
		t.Fatal(err)
	}
	h.UsersChanged()
	send(t, ctx, c, map[string]any{"type": "bogus"})
	if e := next(t, ctx, c); e["code"] != "BAD_REQUEST" {
		t.Fatalf("with the store down, the socket answered %v; want it open (BAD_REQUEST for the bogus frame)", e)
	}
}
