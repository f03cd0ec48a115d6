package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// TestDrainFinishesTurnsThenCloses: once the replica drains, a connection
// with a turn running refuses new messages (SERVICE_UNAVAILABLE), gets
// every event of the running turn up to complete, and is then closed with
// 1012 (service restart); an idle connection is closed with 1012 at once;
// Server.Wait returns once both have ended.
func TestDrainFinishesTurnsThenCloses(t *testing.T) {
	drain := make(chan struct{})
	chunks := []string{"one ", "two ", "three ", "four ", "five"}
	url, sv := serveWith(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: chunks, Delay: 150 * time.Millisecond}
	}, ws.Options{Drain: drain})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	read := func(c *websocket.Conn) (map[string]any, error) {
		_, data, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var e map[string]any
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("not JSON: %s", data)
		}
		return e, nil
	}
	busy, idle := dial(), dial()
	busy.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"count"}`))
	if e, err := read(busy); err != nil || e["type"] != "token" {
		t.Fatalf("the turn's first event: %v %v", e, err)
	}
	close(drain)

	// The idle connection is told to connect again, at once.
	start := time.Now()
	if _, err := read(idle); websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("the idle connection on drain: %v, want close 1012", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the idle connection took %v to close", d)
	}
	// The busy one: a new message is refused, the running turn ends with
	// complete, then the connection closes with 1012.
	busy.Write(ctx, websocket.MessageText, []byte(`{"type":"message","conversation_id":"another","content":"more"}`))
	var refused, complete bool
	var text string
	for {
		e, err := read(busy)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
				t.Fatalf("the busy connection ended with %v, want close 1012", err)
			}
			break
		}
		switch e["type"] {
		case "token":
			text += e["content"].(string)
		case "complete":
			complete = true
		case "error":
			if e["code"] != "SERVICE_UNAVAILABLE" || e["conversation_id"] != "another" {
				t.Fatalf("an error while draining: %v", e)
			}
			refused = true
		}
	}
	if !refused || !complete || text != "two three four five" {
		t.Fatalf("while draining: refused %v, complete %v, text %q", refused, complete, text)
	}
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := sv.Wait(wctx); err != nil {
		t.Fatalf("Wait after both ended: %v", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}

// TestWaitGivenUpLeavesNoGoroutine: a Wait whose context ends while a
// connection is still open returns an error and leaves nothing behind.
func TestWaitGivenUpLeavesNoGoroutine(t *testing.T) {
	url, sv := serveWith(t, func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: []string{"unused"}} }, ws.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// A round trip: the connection is served, its goroutines are running.
	if err := c.Write(ctx, websocket.MessageText, []byte(`not a frame`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	ignore := goleak.IgnoreCurrent()
	ended, end := context.WithCancel(ctx)
	end()
	if err := sv.Wait(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a connection open and its context ended: %v, want context.Canceled", err)
	}
	goleak.VerifyNone(t, ignore)
}
