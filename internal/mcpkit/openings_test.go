package mcpkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestRepeatInitialize: a second initialize on one session starts no second
// opening (the SDK refuses it), the session's tools/list waits for the one
// opening, and no entry of the session outlives it. The second opening used
// to replace the first's entry, which the first then deleted.
func TestRepeatInitialize(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	open := func(context.Context) {
		started.Add(1)
		<-release
	}
	mw, o := openOnInitialize(open)
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddReceivingMiddleware(mw)
	r := connectRaw(t, srv)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	init := map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}
	if res := await(t, r.send(1, "initialize", init), "initialize"); res.Error != nil {
		t.Fatalf("initialize: %v", res.Error)
	}
	r.send(0, "notifications/initialized", map[string]any{})
	if res := await(t, r.send(2, "initialize", init), "second initialize"); res.Error == nil {
		t.Error("the SDK accepted a second initialize")
	}
	// Openings run in goroutines of their own: wait for the first to start.
	testtools.Eventually(t, 10*time.Second, "the opening to start", func() bool { return started.Load() > 0 })
	// Not synchronisation: a window in which a second opening, which must
	// not start, would start (nothing signals what does not happen).
	time.Sleep(100 * time.Millisecond)
	if n := started.Load(); n != 1 {
		t.Errorf("%d openings started, want 1", n)
	}
	list := r.send(3, "tools/list", map[string]any{})
	select {
	case res := <-list:
		t.Fatalf("tools/list answered while the opening ran: %+v", res)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if res := await(t, list, "tools/list"); res.Error != nil {
		t.Fatalf("tools/list: %v", res.Error)
	}
	testtools.EventuallyErr(t, 10*time.Second, "no session to be marked opening", func() error {
		if n := o.sessions(); n != 0 {
			return fmt.Errorf("%d sessions still marked opening after every opening ended", n)
		}
		return nil
	})
}

// rawSession is a client speaking JSON-RPC to srv over an in-memory
// connection, so that it can send what the SDK's client never does.
type rawSession struct {
	t    *testing.T
	conn mcp.Connection
	mu   sync.Mutex
	resp map[string]chan *jsonrpc.Response
}

func connectRaw(t *testing.T, srv *mcp.Server) *rawSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &rawSession{t: t, conn: conn, resp: map[string]chan *jsonrpc.Response{}}
	go func() {
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			if res, ok := msg.(*jsonrpc.Response); ok {
				r.reply(res.ID) <- res
			}
		}
	}()
	return r
}

func (r *rawSession) reply(id jsonrpc.ID) chan *jsonrpc.Response {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, _ := json.Marshal(id.Raw())
	ch, ok := r.resp[string(key)]
	if !ok {
		ch = make(chan *jsonrpc.Response, 1)
		r.resp[string(key)] = ch
	}
	return ch
}

// send sends a request (id > 0) or a notification (id 0); the channel
// receives a request's response.
func (r *rawSession) send(id int64, method string, params any) chan *jsonrpc.Response {
	r.t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		r.t.Fatal(err)
	}
	req := &jsonrpc.Request{Method: method, Params: b}
	var ch chan *jsonrpc.Response
	if id > 0 {
		req.ID, _ = jsonrpc.MakeID(float64(id))
		ch = r.reply(req.ID)
	}
	if err := r.conn.Write(context.Background(), req); err != nil {
		r.t.Fatal(err)
	}
	return ch
}

func await(t *testing.T, ch chan *jsonrpc.Response, what string) *jsonrpc.Response {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no response", what)
		return nil
	}
}
