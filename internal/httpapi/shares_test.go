package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/streamable"
	"github.com/nexus-mcp/nexus/internal/testtools"
	"github.com/nexus-mcp/nexus/internal/users"
)

// slowServer is whoServer with a tool "slow" that blocks until release is
// closed, telling started each time a call begins.
func slowServer(started chan<- struct{}, release <-chan struct{}) *mcp.Server {
	srv := whoServer(nil)
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	return srv
}

// busyUsers runs slow calls of users in sessions of their own against a
// slowServer's endpoint, each in flight until the test ends.
type busyUsers struct {
	t       *testing.T
	ts      *httptest.Server
	url     string
	started chan struct{}
	release chan struct{}
	wg      sync.WaitGroup
}

// serveBusy serves o with a slowServer as its flat surface (/mcp), whose
// slow calls are released when the test ends, before the server closes.
func serveBusy(t *testing.T, o httpapi.Options) *busyUsers {
	b := &busyUsers{t: t, started: make(chan struct{}), release: make(chan struct{})}
	o.MCP = slowServer(b.started, b.release)
	b.ts = serve(t, o)
	b.url = b.ts.URL + "/mcp"
	// Registered after serve's: runs before the server closes, which
	// waits for the requests in flight.
	t.Cleanup(func() {
		close(b.release)
		b.wg.Wait()
	})
	return b
}

// connect opens a session as token's user (opts: nil for sessionless),
// closed when the test ends.
func (b *busyUsers) connect(token string, opts *mcp.ClientSessionOptions, copts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	cs, err := b.open(token, opts, copts)
	if err == nil {
		b.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// open opens a session as token's user ("" for the local user).
func (b *busyUsers) open(token string, opts *mcp.ClientSessionOptions, copts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	hc := http.DefaultClient // the local user: no token, on a loopback listener
	if token != "" {
		hc = &http.Client{Transport: bearer(token)}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, copts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.url, HTTPClient: hc}, opts)
}

// hold starts a session as token's user with a slow call in flight; it
// reports the initialize's error, if it failed.
func (b *busyUsers) hold(token string) error {
	cs, err := b.open(token, testtools.WithSession(), nil)
	if err != nil {
		return err
	}
	// Closed once its call ends (Close waits for it): when the test
	// releases the slow calls.
	failed := make(chan error, 1)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer cs.Close()
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}); err != nil {
			failed <- err
		}
	}()
	select {
	case <-b.started:
		return nil
	case err := <-failed:
		return fmt.Errorf("the slow call: %w", err)
	}
}

// initializeAs sends an initialize as token's user, on the wire.
func initializeAs(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	sb.Write(buf[:n])
	resp.Body.Close()
	return resp, sb.String()
}

// Issue 21, item 5: with --max-sessions 50, fifty slow calls of one user
// made the next user's initialize fail with 503. Each user now holds at most
// a share of the slots (by default a tenth of the cap, at least 10): past it,
// and with every one of theirs busy, their initialize gets 429 naming the
// per-user limit, with Retry-After, while another user still gets in.
func TestOneUserCannotTakeEverySessionSlot(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	bob := &users.User{ID: "u2", Name: "bob", Role: principal.Member, Tier: users.Free}
	busy := serveBusy(t, httpapi.Options{MaxSessions: 50, Auth: tokens{"a": alice, "b": bob}, AllowedHosts: []string{"127.0.0.1"}})
	held, refused := 0, 0
	for range 50 {
		if err := busy.hold("a"); err != nil {
			refused++
			continue
		}
		held++
	}
	t.Logf("alice holds %d sessions with a slow call in flight; %d initializes refused", held, refused)
	cs, err := busy.connect("b", testtools.WithSession(), nil)
	if err != nil {
		t.Fatalf("bob's initialize with alice's slow calls in flight: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}})
	if err != nil || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "bob ") {
		t.Fatalf("bob's call: %v %v", res, err)
	}
	if held != 10 {
		t.Errorf("alice holds %d sessions, want her share of 10", held)
	}
	resp, body := initializeAs(t, busy.url, "a")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, "RATE_LIMITED") || !strings.Contains(body, "at most 10 per user") || !strings.Contains(body, "--max-sessions-per-user") {
		t.Fatalf("alice's initialize past her share: %s %v %s", resp.Status, resp.Header, body)
	}
}

// A user at their share whose sessions are not all busy gets in: their own
// session idle the longest is closed to make room, not another user's.
func TestSessionShareEvictsTheUsersOwnIdleSession(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	bob := &users.User{ID: "u2", Name: "bob", Role: principal.Member, Tier: users.Free}
	ts := serve(t, httpapi.Options{MaxSessions: 4, MaxSessionsPerUser: 2, Auth: tokens{"a": alice, "b": bob}, AllowedHosts: []string{"127.0.0.1"}})
	ping := func(token, id string) int {
		resp, _ := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
		return resp.StatusCode
	}
	open := func(token string) string {
		resp, body := initializeAs(t, ts.URL+"/mcp", token)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize as %s: %s %s", token, resp.Status, body)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	b1 := open("b")                  // bob's, idle the longest of all
	time.Sleep(5 * time.Millisecond) // not synchronisation: the sessions are idle for different lengths of time
	a1 := open("a")
	time.Sleep(5 * time.Millisecond) // not synchronisation (above)
	a2 := open("a")
	a3 := open("a") // alice is at her share: her a1 goes, not bob's b1
	for _, s := range []struct{ token, id, name string }{{"b", b1, "b1"}, {"a", a2, "a2"}, {"a", a3, "a3"}} {
		if code := ping(s.token, s.id); code != http.StatusOK {
			t.Fatalf("session %s: %d", s.name, code)
		}
	}
	if code := ping("a", a1); code != http.StatusNotFound {
		t.Fatalf("alice's session idle the longest, past her share: %d, want 404", code)
	}
}

// Users of the anonymous tier share one share between them (an anonymous
// identity costs nothing to make); the local user (no token on a loopback
// listener) is bounded by the cap alone.
func TestSessionSharesOfAnonymousAndLocalUsers(t *testing.T) {
	anon1 := &users.User{ID: "n1", Name: "anon1", Role: principal.Member, Tier: users.Anonymous}
	anon2 := &users.User{ID: "n2", Name: "anon2", Role: principal.Member, Tier: users.Anonymous}
	bob := &users.User{ID: "u2", Name: "bob", Role: principal.Member, Tier: users.Free}
	busy := serveBusy(t, httpapi.Options{MaxSessions: 6, MaxSessionsPerUser: 2, Loopback: true, Auth: tokens{"n1": anon1, "n2": anon2, "b": bob}})
	for _, token := range []string{"n1", "n2"} {
		if err := busy.hold(token); err != nil {
			t.Fatalf("%s: %v", token, err)
		}
	}
	if resp, body := initializeAs(t, busy.url, "n1"); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "anonymous tier") {
		t.Fatalf("a third session of the anonymous tier: %s %s", resp.Status, body)
	}
	if resp, body := initializeAs(t, busy.url, "b"); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob beside the anonymous tier's share: %s %s", resp.Status, body)
	}
	// The local user: three sessions, past a user's share of 2.
	for i := range 3 {
		if err := busy.hold(""); err != nil {
			t.Fatalf("the local user's session %d: %v", i, err)
		}
	}
}

// Sessionless listening streams (subscriptions/listen) are shared out the
// same way: past their share a user's listen gets 429 naming the per-user
// limit, while another user's is still accepted.
func TestSessionlessListenShare(t *testing.T) {
	alice := &users.User{ID: "u1", Name: "alice", Role: principal.Member, Tier: users.Free}
	bob := &users.User{ID: "u2", Name: "bob", Role: principal.Member, Tier: users.Free}
	busy := serveBusy(t, httpapi.Options{MaxSessions: 2, Auth: tokens{"a": alice, "b": bob}, AllowedHosts: []string{"127.0.0.1"}})
	// A sessionless client that wants tools/list_changed opens a listening
	// stream as it connects (its Connect fails when that is refused).
	listener := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}
	if _, err := busy.connect("a", nil, listener); err != nil {
		t.Fatalf("alice's listening stream: %v", err)
	}
	resp, body := post(t, busy.ts, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`,
		map[string]string{"Authorization": "Bearer a", "Mcp-Protocol-Version": streamable.SessionlessVersion})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "at most 1 per user") {
		t.Fatalf("alice's second listening stream: %s %v %s", resp.Status, resp.Header, body)
	}
	if _, err := busy.connect("b", nil, listener); err != nil {
		t.Fatalf("bob's listening stream beside alice's: %v", err)
	}
}

// TestSessionsPerUser: the default share is a tenth of the cap, at least 10,
// but at most half of it, so that one user never holds every slot.
func TestSessionsPerUser(t *testing.T) {
	for maxSessions, want := range map[int]int{10000: 1000, 200: 20, 50: 10, 20: 10, 10: 5, 3: 2, 2: 1, 1: 1} {
		if got := streamable.SessionsPerUser(maxSessions); got != want {
			t.Errorf("SessionsPerUser(%d) = %d, want %d", maxSessions, got, want)
		}
	}
}
