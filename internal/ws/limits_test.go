package ws_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/users"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// serveUsers starts the WebSocket surface over a real app with users: a
// request with Authorization: Bearer TOKEN acts as the token's user (as
// the HTTP front does), one without authenticates by its first frame. The
// app's user changes reach the surface as serve wires them
// (App.OnUsersChanged) when wire is set. opts returns the options (nil:
// the defaults).
func serveUsers(tb testing.TB, script llmtest.Script, opts func(*app.App) ws.Options, wire bool) (string, *ws.Server, *app.App) {
	tb.Helper()
	a := openApp(tb, script)
	var o ws.Options
	if opts != nil {
		o = opts(a)
	}
	o.Chat, o.Auth = a.Chat, a.Users
	h := ws.Handler(o)
	if wire {
		a.OnUsersChanged(h.UsersChanged)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Authorization"); v != "" {
			u, err := a.Users.Authenticate(r.Context(), strings.TrimPrefix(v, "Bearer "))
			if err != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r = r.WithContext(users.WithUser(r.Context(), u))
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), h, a
}

// addUser makes user name (admin) and returns its token.
func addUser(t *testing.T, a *app.App, name string) string {
	t.Helper()
	_, token, err := a.Users.Add(context.Background(), name, users.Paid, principal.Admin, "test")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// dialAs opens a WebSocket as token's user, by the upgrade's header or by
// the auth frame, and returns once the server has accepted it (a bogus
// frame answered BAD_REQUEST).
func dialAs(t *testing.T, ctx context.Context, url, token string, header bool) *websocket.Conn {
	t.Helper()
	c := dialAsNoCheck(t, ctx, url, token, header)
	send(t, ctx, c, map[string]any{"type": "bogus"})
	if e := next(t, ctx, c); e["code"] != "BAD_REQUEST" {
		t.Fatalf("a new connection's first answer: %v", e)
	}
	return c
}

func dialAsNoCheck(t *testing.T, ctx context.Context, url, token string, header bool) *websocket.Conn {
	t.Helper()
	o := &websocket.DialOptions{}
	if header {
		o.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	c, _, err := websocket.Dial(ctx, url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	if !header {
		send(t, ctx, c, map[string]any{"type": "auth", "token": token})
	}
	return c
}

func send(t *testing.T, ctx context.Context, c *websocket.Conn, frame any) {
	t.Helper()
	b, _ := json.Marshal(frame)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("send %s: %v", b, err)
	}
}

// next reads the next event; a closed connection fails the test.
func next(t *testing.T, ctx context.Context, c *websocket.Conn) map[string]any {
	t.Helper()
	e, err := read(ctx, c)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return e
}

func read(ctx context.Context, c *websocket.Conn) (map[string]any, error) {
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

// untilClosed reads events until the connection closes, and returns them
// with the close status.
func untilClosed(ctx context.Context, c *websocket.Conn) ([]map[string]any, websocket.StatusCode, error) {
	var evs []map[string]any
	for {
		e, err := read(ctx, c)
		if err != nil {
			if ctx.Err() != nil {
				return evs, -1, ctx.Err()
			}
			return evs, websocket.CloseStatus(err), nil
		}
		evs = append(evs, e)
	}
}

// slow streams a long answer: a turn that runs until it is cancelled (or
// for 20 s).
func slow(int, *llmtest.Request) llmtest.Answer {
	chunks := make([]string, 400)
	for i := range chunks {
		chunks[i] = "x "
	}
	return llmtest.Answer{Chunks: chunks, Delay: 50 * time.Millisecond}
}

// TestChangedUserReachesOpenSocket (issue 21, item 1): revoking the token
// of an open WebSocket, disabling its user or taking the admin role away
// cancels the turn running on it, sends UNAUTHORIZED or FORBIDDEN and
// closes it with 1008, whether it authenticated by the upgrade's header
// or by its auth frame; and with no change event at all, the next frame
// after the users cache forgot the token is refused so.
func TestChangedUserReachesOpenSocket(t *testing.T) {
	url, _, a := serveUsers(t, slow, nil, true)
	changes := map[string]struct {
		code   string
		change func(ctx context.Context, name string) error
	}{
		"revoke": {"UNAUTHORIZED", func(ctx context.Context, name string) error {
			toks, err := a.Users.Tokens(ctx, name)
			if err != nil {
				return err
			}
			return a.Users.Revoke(ctx, toks[0].ID)
		}},
		"disable": {"UNAUTHORIZED", func(ctx context.Context, name string) error {
			yes := true
			_, err := a.Users.Set(ctx, name, users.Change{Disabled: &yes})
			return err
		}},
		"demote": {"FORBIDDEN", func(ctx context.Context, name string) error {
			member := principal.Member
			_, err := a.Users.Set(ctx, name, users.Change{Role: &member})
			return err
		}},
	}
	for what, ch := range changes {
		for _, header := range []bool{true, false} {
			name := what + map[bool]string{true: "-header", false: "-frame"}[header]
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				dialAs(t, ctx, url, addUser(t, a, name), header) // a second socket, idle
				c := dialAs(t, ctx, url, addUser(t, a, name+"2"), header)
				send(t, ctx, c, map[string]any{"type": "message", "content": "talk"})
				if e := next(t, ctx, c); e["type"] != "token" {
					t.Fatalf("the turn's first event: %v", e)
				}
				if err := ch.change(ctx, name+"2"); err != nil {
					t.Fatal(err)
				}
				evs, status, err := untilClosed(ctx, c)
				if err != nil {
					t.Fatalf("the socket stayed open after %s: %v (events %d)", what, err, len(evs))
				}
				var refused bool
				for _, e := range evs {
					if e["type"] == "complete" {
						t.Fatalf("the turn completed after %s", what)
					}
					refused = refused || (e["type"] == "error" && e["code"] == ch.code)
				}
				if !refused || status != websocket.StatusPolicyViolation {
					t.Fatalf("after %s: refused %v (want %s), closed %v (want 1008); last events %v", what, refused, ch.code, status, evs[max(0, len(evs)-3):])
				}
			})
		}
	}
	t.Run("next-frame", func(t *testing.T) {
		// No event (OnUsersChanged not wired) and a long recheck: the
		// frame itself checks the token.
		url, _, a := serveUsers(t, slow, func(*app.App) ws.Options { return ws.Options{Recheck: time.Hour} }, false)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := dialAs(t, ctx, url, addUser(t, a, "nf"), true)
		// Another replica revokes it: its own Users, no event here.
		other := users.New(a.Store)
		toks, err := other.Tokens(ctx, "nf")
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Revoke(ctx, toks[0].ID); err != nil {
			t.Fatal(err)
		}
		a.Users.Forget() // as CacheFor passing does
		send(t, ctx, c, map[string]any{"type": "message", "conversation_id": "c-nf", "content": "hello"})
		evs, status, err := untilClosed(ctx, c)
		if err != nil || len(evs) != 1 || evs[0]["code"] != "UNAUTHORIZED" || evs[0]["conversation_id"] != "c-nf" || status != websocket.StatusPolicyViolation {
			t.Fatalf("the frame after the revocation: %d events %v, closed %v %v", len(evs), evs[:min(3, len(evs))], status, err)
		}
	})
}

// TestFramesCountAgainstTokenRate (issue 21, item 2): every frame of a
// user counts against their request rate, as an HTTP request does; a
// frame over it is answered RATE_LIMITED with retry_after.
func TestFramesCountAgainstTokenRate(t *testing.T) {
	url, _, a := serveUsers(t, slow, func(a *app.App) ws.Options {
		l, err := quota.NewSharedLimiter(a.Store, quota.SharedOptions{LimiterOptions: quota.LimiterOptions{Rate: 0.01, Burst: 4}})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Options{RateLimit: l}
	}, true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dialAs(t, ctx, url, addUser(t, a, "rate"), false) // one frame of the 4
	var bad, limited int
	for range 8 {
		send(t, ctx, c, map[string]any{"type": "bogus"})
		e := next(t, ctx, c)
		switch {
		case e["code"] == "BAD_REQUEST":
			bad++
		case e["code"] == "RATE_LIMITED" && e["retry_after"].(float64) >= 1:
			limited++
		default:
			t.Fatalf("a frame's answer: %v", e)
		}
	}
	if bad != 3 || limited != 5 {
		t.Fatalf("8 frames after 1, at a burst of 4: %d answered, %d RATE_LIMITED; want 3 and 5", bad, limited)
	}
}

// TestTurnCaps (issue 21, item 3): one connection runs one turn at a time
// with at most MaxQueued messages waiting (one more is RATE_LIMITED); a
// user runs at most Turns' cap at once over all their connections (one
// more is RATE_LIMITED with retry_after and writes nothing); the waiting
// messages then run in order.
func TestTurnCaps(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan int, 100)
	script := func(n int, req *llmtest.Request) llmtest.Answer {
		arrived <- n
		<-release
		return llmtest.Answer{Chunks: []string{"done"}}
	}
	url, _, a := serveUsers(t, script, func(a *app.App) ws.Options {
		turns, err := quota.NewTurnSlots(a.Store, quota.TurnOptions{Max: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Options{MaxQueued: 2, Turns: turns}
	}, true)
	var once bool
	t.Cleanup(func() {
		if !once {
			close(release)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	token := addUser(t, a, "turns")
	conversations := func() int {
		var n int
		if err := a.Store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := conversations()

	c1 := dialAs(t, ctx, url, token, false)
	send(t, ctx, c1, map[string]any{"type": "message", "conversation_id": "one-0", "content": "go"})
	<-arrived
	// Two wait behind it; the fourth is refused.
	for i := 1; i <= 3; i++ {
		send(t, ctx, c1, map[string]any{"type": "message", "conversation_id": "one-" + string(rune('0'+i)), "content": "go"})
	}
	if e := next(t, ctx, c1); e["code"] != "RATE_LIMITED" || e["conversation_id"] != "one-3" {
		t.Fatalf("the fourth message on one connection: %v", e)
	}
	// A second connection runs the user's second turn; a third connection
	// is over the user's cap.
	c2 := dialAs(t, ctx, url, token, false)
	send(t, ctx, c2, map[string]any{"type": "message", "conversation_id": "two", "content": "go"})
	<-arrived
	c3 := dialAs(t, ctx, url, token, false)
	send(t, ctx, c3, map[string]any{"type": "message", "conversation_id": "three", "content": "go"})
	if e := next(t, ctx, c3); e["code"] != "RATE_LIMITED" || e["conversation_id"] != "three" || e["retry_after"] == nil {
		t.Fatalf("a third turn of the user: %v", e)
	}
	select {
	case n := <-arrived:
		t.Fatalf("model request %d while two turns ran", n)
	default:
	}
	if n := conversations() - before; n != 2 {
		t.Fatalf("%d conversations written, want 2 (the refused turns write none)", n)
	}
	once = true
	close(release)
	var done []string
	for len(done) < 3 {
		e := next(t, ctx, c1)
		if e["type"] == "complete" {
			done = append(done, e["conversation_id"].(string))
		} else if e["type"] == "error" {
			t.Fatalf("a waiting turn: %v", e)
		}
	}
	if strings.Join(done, ",") != "one-0,one-1,one-2" {
		t.Fatalf("turns completed in the order %v", done)
	}
}

// TestIdleSocketCloses (issue 21, item 4): a connection that sends
// nothing is closed (1001) after the idle timeout; one running a turn
// longer than that is not.
func TestIdleSocketCloses(t *testing.T) {
	url, _ := serveWith(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"a", "b", "c", "d", "e", "f"}, Delay: 100 * time.Millisecond}
	}, ws.Options{IdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	busy, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.CloseNow()
	idle, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.CloseNow()
	send(t, ctx, busy, map[string]any{"type": "message", "content": "go"})
	for {
		e := next(t, ctx, busy)
		if e["type"] == "complete" {
			break
		}
		if e["type"] == "error" {
			t.Fatalf("the busy connection: %v", e)
		}
	}
	evs, status, err := untilClosed(ctx, idle)
	if err != nil || status != websocket.StatusGoingAway || len(evs) != 0 {
		t.Fatalf("the idle connection: %v %v %v, want closed 1001", evs, status, err)
	}
}

// TestSocketsPerUser (issue 21, item 4): a user holds at most MaxPerUser
// connections; one more is refused with RATE_LIMITED and closed 1008.
func TestSocketsPerUser(t *testing.T) {
	url, _, a := serveUsers(t, slow, func(*app.App) ws.Options { return ws.Options{MaxPerUser: 2} }, true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	token := addUser(t, a, "many")
	dialAs(t, ctx, url, token, false)
	dialAs(t, ctx, url, token, true)
	c := dialAsNoCheck(t, ctx, url, token, false)
	evs, status, err := untilClosed(ctx, c)
	if err != nil || len(evs) != 1 || evs[0]["code"] != "RATE_LIMITED" || status != websocket.StatusPolicyViolation {
		t.Fatalf("a third connection: %v, closed %v %v", evs, status, err)
	}
	// Another user is not affected.
	dialAs(t, ctx, url, addUser(t, a, "other"), false)
}

// TestBadFrameNamesItsField: a frame with a field of the wrong type is a
// BAD_REQUEST naming that field and what it must be; one that is not a
// JSON object says what a frame is.
func TestBadFrameNamesItsField(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url, _, a := serveUsers(t, func(n int, req *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: []string{"ok"}} }, nil, false)
	c := dialAs(t, ctx, url, addUser(t, a, "ann"), true)
	for _, tc := range []struct {
		frame string
		want  []string
	}{
		{`{"type":"message","content":"x","replace_last":"yes"}`, []string{`"replace_last"`, "true or false", "string"}},
		{`{"type":"message","content":"x","model":5}`, []string{`"model"`, "a string", "number"}},
		{`[1,2]`, []string{"a frame must be a JSON object with a type"}},
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(tc.frame)); err != nil {
			t.Fatal(err)
		}
		e := next(t, ctx, c)
		msg, _ := e["message"].(string)
		for _, w := range tc.want {
			if e["code"] != "BAD_REQUEST" || !strings.Contains(msg, w) {
				t.Errorf("frame %s: %v, want a BAD_REQUEST saying %q", tc.frame, e, w)
			}
		}
	}
}
