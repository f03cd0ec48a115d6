package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// chatClient is a WebSocket chat client of TestKillOneReplicaUnderLoad: it
// runs turns in its own conversation and, when its connection dies with a
// replica, dials again (through the balancer, to a live replica) and goes
// on in the same conversation, as the web UI does.
type chatClient struct {
	base, token string
	// first, when set, is where the first connection goes (not base).
	first string
	conn  *websocket.Conn
	// drops counts the connections lost, after the turns answered (with
	// complete, or an error such as the quota's) after the first loss.
	drops, after int
	conv         string
	// acked are the assistant message ids of the turns that completed.
	acked []string
	tally *chatTally
}

// chatTally counts, for one user, the outcome of every turn its clients
// sent: completed, refused for the prompt quota, or interrupted (the
// connection died before the turn's last event, so whether the quota counted
// it is not known to the client).
type chatTally struct {
	name, user                      string // the user's name, and id (the quota's subject)
	completed, refused, interrupted atomic.Int64
}

// errDropped is a turn whose connection died before its last event.
var errDropped = errors.New("the connection dropped during the turn")

func (c *chatClient) dial(ctx context.Context) error {
	o := &websocket.DialOptions{}
	if c.token != "" {
		o.HTTPHeader = map[string][]string{"Authorization": {"Bearer " + c.token}}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	base := c.base
	if c.first != "" {
		base, c.first = c.first, ""
	}
	conn, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", o)
	if err != nil {
		return err
	}
	conn.SetReadLimit(1 << 20)
	c.conn = conn
	return nil
}

func (c *chatClient) close() {
	if c.conn != nil {
		c.conn.CloseNow()
	}
}

// turn sends one message and returns the turn's events, up to its complete
// or error event. A dropped connection is errDropped (the client dials
// again on its next turn); an error event is returned with the events.
func (c *chatClient) turn(ctx context.Context, content string) ([]map[string]any, error) {
	if c.conn == nil {
		if err := c.dial(ctx); err != nil {
			return nil, fmt.Errorf("dial: %w", err)
		}
	}
	frame, _ := json.Marshal(map[string]any{"type": "message", "conversation_id": c.conv, "content": content})
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := c.conn.Write(tctx, websocket.MessageText, frame); err != nil {
		c.drop()
		return nil, errDropped
	}
	var out []map[string]any
	for {
		_, data, err := c.conn.Read(tctx)
		if err != nil {
			c.drop()
			return out, errDropped
		}
		var e map[string]any
		if err := json.Unmarshal(data, &e); err != nil {
			return out, fmt.Errorf("an event that is not JSON: %s", data)
		}
		out = append(out, e)
		if conv, _ := e["conversation_id"].(string); conv != "" && c.conv == "" {
			c.conv = conv
		}
		switch e["type"] {
		case "complete", "error":
			if e["type"] == "complete" {
				c.acked = append(c.acked, str(e["message_id"]))
			}
			if c.drops > 0 {
				c.after++
			}
			return out, nil
		}
	}
}

func (c *chatClient) drop() {
	c.drops++
	c.conn.CloseNow()
	c.conn = nil
}

// run sends turns until stop closes, pausing between them, and counts
// their outcomes. Any error event but the quota's fails the test.
func (c *chatClient) run(t *testing.T, name string, stop <-chan struct{}, pause time.Duration, fail func(string, ...any)) {
	defer c.close()
	deadline := time.Now().Add(time.Hour)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		evs, err := c.turn(context.Background(), fmt.Sprintf("%s asks question %d while a replica may die", name, n))
		switch {
		case errors.Is(err, errDropped):
			c.tally.interrupted.Add(1)
			if deadline.After(time.Now().Add(10 * time.Second)) {
				deadline = time.Now().Add(10 * time.Second)
			}
		case err != nil:
			if time.Now().After(deadline) {
				fail("%s: still failing after 10 s: %v", name, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		default:
			deadline = time.Now().Add(time.Hour)
			last := evs[len(evs)-1]
			switch {
			case last["type"] == "complete":
				c.tally.completed.Add(1)
			case last["code"] == "RATE_LIMITED":
				c.tally.refused.Add(1)
			default:
				fail("%s: turn %d ended with %v", name, n, last)
				return
			}
		}
	}
}

// checkQuota checks one user's prompt quota after the run: the store's
// count is at least the turns that completed and at most those plus the
// interrupted ones (an interrupted turn may have been counted before its
// replica died), never over the limit, and exactly the limit once a turn
// was refused for it.
func checkQuota(t *testing.T, conn *sql.DB, tally *chatTally, limit int) {
	t.Helper()
	var used int
	err := conn.QueryRow(`SELECT COALESCE(SUM(used), 0) FROM quota_usage WHERE subject = $1`, tally.user).Scan(&used)
	if err != nil {
		t.Fatal(err)
	}
	completed, refused, interrupted := int(tally.completed.Load()), int(tally.refused.Load()), int(tally.interrupted.Load())
	t.Logf("quota of %s: %d prompts counted of %d; turns completed %d, refused %d, interrupted %d", tally.name, used, limit, completed, refused, interrupted)
	if used < completed || used > completed+interrupted {
		t.Errorf("quota of %s: %d prompts counted for %d completed and %d interrupted turns", tally.user, used, completed, interrupted)
	}
	if used > limit {
		t.Errorf("quota of %s: %d prompts counted past the limit %d", tally.user, used, limit)
	}
	if refused > 0 && used != limit {
		t.Errorf("quota of %s: %d turns refused with %d of %d prompts counted", tally.user, refused, used, limit)
	}
}

// checkChatStored checks that every completed turn's assistant message is
// stored in its conversation, whose sequence is gap-free.
func checkChatStored(t *testing.T, conn *sql.DB, clients []*chatClient) {
	t.Helper()
	turns := 0
	for _, c := range clients {
		if c.conv == "" {
			continue
		}
		rows, err := conn.Query(`SELECT id, seq FROM exchanges WHERE conversation_id = $1 ORDER BY seq`, c.conv)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		want := 1
		for rows.Next() {
			var id string
			var seq int
			if err := rows.Scan(&id, &seq); err != nil {
				t.Fatal(err)
			}
			if seq != want {
				t.Errorf("conversation %s: seq %d where %d was due", c.conv, seq, want)
			}
			want = seq + 1
			stored[id] = true
		}
		rows.Close()
		for _, id := range c.acked {
			if !stored[id] {
				t.Errorf("conversation %s: the completed turn's message %s is not stored", c.conv, id)
			}
		}
		turns += len(c.acked)
	}
	t.Logf("chat: %d completed turns in %d conversations, each stored", turns, len(clients))
}

// watchLog collects the events a WebSocket watching one conversation
// receives.
type watchLog struct {
	mu     sync.Mutex
	events []map[string]any
	done   chan struct{}
	err    error
}

// watch starts reading conn, which watches a conversation, until it closes.
func watch(conn *websocket.Conn) *watchLog {
	w := &watchLog{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				w.err = err
				return
			}
			var e map[string]any
			if err := json.Unmarshal(data, &e); err != nil {
				w.err = fmt.Errorf("not JSON: %s", data)
				return
			}
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
		}
	}()
	return w
}

// completes counts the complete events seen so far, but that of the turn
// whose message is before (see [watchLog.after]).
func (w *watchLog) completes(before string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, e := range w.events {
		if e["type"] == "complete" && e["message_id"] != before {
			n++
		}
	}
	return n
}

// after returns the events seen after the complete event of the turn whose
// message is before, or all of them when that did not come. A turn's events
// reach the other replicas over the event bus, later than the turn's own
// client: a turn whose client saw it complete just before the watch began
// may still have been on its way to the watcher's replica, and its last
// events reach the watcher then (as the rest of a turn in progress reaches
// a browser that watches again).
func (w *watchLog) after(before string) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.events, func(e map[string]any) bool { return e["type"] == "complete" && e["message_id"] == before })
	return w.events[i+1:]
}

// turnShape is what must match between a turn's runner and its watcher:
// every event but the tokens in order (type, tool, call and message ids),
// and the tokens' text put together (a watcher may get tokens merged).
func turnShape(evs []map[string]any) (steps []string, text string) {
	var b strings.Builder
	for _, e := range evs {
		if e["type"] == "token" {
			b.WriteString(str(e["content"]))
			continue
		}
		steps = append(steps, strings.Join([]string{str(e["type"]), str(e["conversation_id"]), str(e["tool_name"]), str(e["tool_call_id"]), str(e["message_id"]), str(e["code"])}, "/"))
	}
	return steps, b.String()
}

// firstDiff is the first index where a and b differ (len of the shorter
// when one is a prefix of the other).
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
