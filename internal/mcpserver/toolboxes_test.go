package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestFlatDoesNotRunMetaTools: the flat surface does not list the bounded
// surface's meta-tools, and a tools/call of one is the SDK's unknown-tool
// error, not a run of the tool (it used to reach the pipeline as a name
// "not listed yet").
func TestFlatDoesNotRunMetaTools(t *testing.T) {
	reg := registry.New()
	var ran atomic.Int32
	for _, name := range []string{"use_tool", "open_toolbox", "get_tools"} {
		err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: registry.BuiltinToolbox, Server: "bounded", Tool: name},
			Source: registry.Local, Family: registry.Workbench, Meta: true, InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(context.Context, *registry.Call) (any, error) { ran.Add(1); return "ran", nil }})
		if err != nil {
			t.Fatal(err)
		}
	}
	p := pipeline.New(pipeline.Options{Registry: reg})
	srv := New(p, Options{Name: "nexus", Version: "t", Surface: "t"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 0 {
		t.Fatalf("tools/list: %v %v, want no tools", lt, err)
	}
	for _, name := range []string{"use_tool", "open_toolbox", "get_tools"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("call %s: %v %v, want the JSON-RPC unknown-tool error", name, res, err)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the flat surface ran a meta-tool %d times", n)
	}
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
	// Openings run in goroutines of their own: give a second one time to
	// start.
	for deadline := time.Now().Add(5 * time.Second); started.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
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
	deadline := time.Now().Add(5 * time.Second)
	for o.sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still marked opening after every opening ended", o.sessions())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
