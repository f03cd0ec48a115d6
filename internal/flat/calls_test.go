package flat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/flat"
	"github.com/nexus-mcp/nexus/internal/httpapi"
	"github.com/nexus-mcp/nexus/internal/mcpkit"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/streamable"
)

// noSecrets refuses the tool named "secret" to everyone.
type noSecrets struct{}

func (noSecrets) Tool(_ principal.Principal, t *registry.Tool) bool { return t.ID.Tool != "secret" }
func (noSecrets) Toolbox(principal.Principal, string) bool          { return true }
func (noSecrets) Server(principal.Principal, string, string) bool   { return true }
func (noSecrets) Workspace(context.Context, principal.Principal, string) error {
	return nil
}
func (noSecrets) DefaultWorkspace(principal.Principal) string { return pipeline.DefaultWorkspace }

// countingCalls counts the calls the front served itself.
type countingCalls struct {
	streamable.ToolCalls
	n atomic.Int64
}

func (c *countingCalls) Call(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	c.n.Add(1)
	return c.ToolCalls.Call(ctx, ss, name, args, meta)
}

func (c *countingCalls) CallSessionless(ctx context.Context, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error) {
	c.n.Add(1)
	return c.ToolCalls.CallSessionless(ctx, name, args, meta)
}

// TestFastCallsMatchTheSDK: the same calls through the front's own
// tools/call (httpapi.Options.MCPCalls) and through the SDK's handler, with
// SDK clients over Streamable HTTP, have the same results (content,
// structuredContent, isError, _meta), the same errors (unknown tool, invalid
// arguments, forbidden), the same cancellation, and the same answers for an
// unknown and an ended session; a call with a progress token is left to
// the SDK. The calls are made by clients of a session (2025-11-25) and by
// sessionless clients (2026-07-28, the SDK client's default), whose results
// the front marks complete and names the server in, as the SDK does.
func TestFastCallsMatchTheSDK(t *testing.T) {
	reg := registry.New()
	started := make(chan string, 4)
	cancelled := make(chan string, 4)
	obj := json.RawMessage(`{"type":"object"}`)
	add := func(name string, schema json.RawMessage, h registry.Handler) {
		t.Helper()
		src := registry.Local
		if name == "downstream" {
			src = registry.MCP
		}
		if err := reg.Add(registry.Tool{ID: registry.ID{Toolbox: "box", Server: "srv", Tool: name}, Source: src,
			Family: registry.Workbench, InputSchema: schema, Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	add("echo", json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		func(_ context.Context, c *registry.Call) (any, error) {
			var in struct{ Text string }
			err := json.Unmarshal(c.Args, &in)
			return map[string]any{"echo": in.Text}, err
		})
	add("plain", obj, func(context.Context, *registry.Call) (any, error) { return "just <text> & more", nil })
	add("fails", obj, func(context.Context, *registry.Call) (any, error) {
		return nil, errs.E(errs.Conflict, "it conflicts")
	})
	add("secret", obj, func(context.Context, *registry.Call) (any, error) { return "the secret", nil })
	add("downstream", obj, func(context.Context, *registry.Call) (any, error) {
		raw := json.RawMessage(`{"content":[{"type":"text","text":"from downstream"}],"structuredContent":{"n":1},"_meta":{"x":"y"}}`)
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, err
		}
		return &registry.Encoded{Value: &res, JSON: raw}, nil
	})
	add("block", obj, func(ctx context.Context, c *registry.Call) (any, error) {
		var in struct{ Tag string }
		json.Unmarshal(c.Args, &in)
		tag := in.Tag
		started <- tag
		select {
		case <-ctx.Done():
			cancelled <- tag
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return "not cancelled", nil
		}
	})
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions(), Authorizer: noSecrets{}})
	reg2 := &mcpkit.Calls{}
	srv := mcpkit.Must(flat.New(p, mcpkit.Options{Name: "nexus", Version: "t", Surface: "t", Calls: reg2}))
	calls := &countingCalls{ToolCalls: reg2.Of(srv)}
	if calls.ToolCalls == nil {
		t.Fatal("no calls for a flat server")
	}
	fast := httptest.NewServer(httpapi.Handler(httpapi.Options{MCP: srv, MCPCalls: calls}))
	defer fast.Close()
	sdk := httptest.NewServer(httpapi.Handler(httpapi.Options{MCP: srv}))
	defer sdk.Close()

	ctx := context.Background()
	// bare clients declare no capabilities: nothing could be relayed to
	// them during a call, so the front serves their downstream calls too.
	bare := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	connectWith := func(ts *httptest.Server, version string, o *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, o).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	connectVersion := func(ts *httptest.Server, version string) *mcp.ClientSession { return connectWith(ts, version, bare) }
	connect := func(ts *httptest.Server) *mcp.ClientSession { return connectVersion(ts, "2025-11-25") }
	// outcome is a call's result or error, with what differs by call (the
	// request id) or by session (the session id) masked.
	outcome := func(cs *mcp.ClientSession, params *mcp.CallToolParams) string {
		t.Helper()
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return "error: " + err.Error()
		}
		for _, k := range []string{mcpkit.MetaRequest, mcpkit.MetaSession} {
			if _, ok := res.Meta[k]; ok {
				res.Meta[k] = "<" + k + ">"
			}
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name   string
		params *mcp.CallToolParams
		fast   bool // served by the front
		// sessionless: served by the front to a sessionless client (a
		// name the server does not list is the SDK's: its handler checks
		// the tool's schema against the request's headers).
		sessionless bool
	}{
		{"structured result", &mcp.CallToolParams{Name: "box__srv__echo", Arguments: map[string]any{"text": "hi"}}, true, true},
		{"text result", &mcp.CallToolParams{Name: "box__srv__plain", Arguments: map[string]any{}}, true, true},
		{"no arguments", &mcp.CallToolParams{Name: "box__srv__plain"}, true, true},
		{"tool error", &mcp.CallToolParams{Name: "box__srv__fails", Arguments: map[string]any{}}, true, true},
		{"invalid arguments", &mcp.CallToolParams{Name: "box__srv__echo", Arguments: map[string]any{"text": 3}}, true, true},
		{"missing argument", &mcp.CallToolParams{Name: "box__srv__echo", Arguments: map[string]any{}}, true, true},
		{"forbidden", &mcp.CallToolParams{Name: "box__srv__secret", Arguments: map[string]any{}}, true, true},
		{"unknown tool", &mcp.CallToolParams{Name: "box__srv__nope", Arguments: map[string]any{}}, true, false},
		{"downstream result", &mcp.CallToolParams{Name: "box__srv__downstream", Arguments: map[string]any{}}, true, true},
		{"context in _meta", &mcp.CallToolParams{Name: "box__srv__plain", Meta: mcp.Meta{mcpkit.MetaWorkspace: "ws1"}}, true, true},
		{"progress token", &mcp.CallToolParams{Name: "box__srv__echo", Arguments: map[string]any{"text": "p"}, Meta: mcp.Meta{"progressToken": "tok"}}, false, false},
	}
	fcs, scs := connect(fast), connect(sdk)
	defer fcs.Close()
	defer scs.Close()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		fv, sv := connectVersion(fast, version), connectVersion(sdk, version)
		for _, c := range cases {
			before := calls.n.Load()
			got, want := outcome(fv, c.params), outcome(sv, c.params)
			if got != want {
				t.Errorf("%s, %s: through the front\n\t%s\nthrough the SDK\n\t%s", version, c.name, got, want)
			}
			wantFast := c.fast
			if version == "2026-07-28" {
				wantFast = c.sessionless
			}
			if served := calls.n.Load() > before; served != wantFast {
				t.Errorf("%s, %s: served by the front: %v, want %v", version, c.name, served, wantFast)
			}
			t.Logf("%s, %s: %s", version, c.name, got)
		}
		fv.Close()
		sv.Close()
	}

	// A client that could be asked for input during a call (it declares
	// elicitation) gets a downstream server's tool, or a name not known
	// yet, through the SDK, which relates what the call sends to its
	// request; Nexus's own tools still take the front. (A client that
	// declares roots only, as the SDK client does by default, keeps the
	// front: see relaysTo.)
	asks := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		fv, sv := connectWith(fast, version, asks), connectWith(sdk, version, asks)
		for _, c := range []struct {
			name string
			fast bool
		}{{"box__srv__downstream", false}, {"box__srv__nope", false}, {"box__srv__plain", true}} {
			before := calls.n.Load()
			params := &mcp.CallToolParams{Name: c.name, Arguments: map[string]any{}}
			if got, want := outcome(fv, params), outcome(sv, params); got != want {
				t.Errorf("%s, %s, a client that elicits: through the front\n\t%s\nthrough the SDK\n\t%s", version, c.name, got, want)
			}
			if served := calls.n.Load() > before; served != c.fast {
				t.Errorf("%s, %s, a client that elicits: served by the front: %v, want %v", version, c.name, served, c.fast)
			}
		}
		fv.Close()
		sv.Close()
	}

	// Cancellation: the client's notifications/cancelled cancels the call's
	// context on both paths.
	for _, side := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"front", fcs}, {"sdk", scs}} {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := side.cs.CallTool(cctx, &mcp.CallToolParams{Name: "box__srv__block", Arguments: map[string]any{"tag": side.name}})
			done <- err
		}()
		select {
		case tag := <-started:
			if tag != side.name {
				t.Fatalf("started %q, want %q", tag, side.name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the blocking call did not start", side.name)
		}
		cancel()
		select {
		case tag := <-cancelled:
			if tag != side.name {
				t.Fatalf("cancelled %q, want %q", tag, side.name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the call's context was not cancelled", side.name)
		}
		if err := <-done; err == nil {
			t.Errorf("%s: a cancelled call returned no error", side.name)
		}
	}

	// An unknown session, and one the client ended: the same answer.
	post := func(ts *httptest.Server, session string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"box__srv__plain","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + resp.Header.Get("Content-Type") + " " + strings.ReplaceAll(string(b), session, "<id>")
	}
	if got, want := post(fast, "bogus"), post(sdk, "bogus"); got != want {
		t.Errorf("unknown session: through the front %q, through the SDK %q", got, want)
	}
	fid, sid := fcs.ID(), scs.ID()
	if got := post(fast, fid); !strings.HasPrefix(got, "200 OK text/event-stream") {
		t.Errorf("a live session's call: %q", got)
	}
	fcs.Close()
	scs.Close()
	before := calls.n.Load()
	if got, want := post(fast, fid), post(sdk, sid); got != want || !strings.HasPrefix(got, "404") {
		t.Errorf("ended session: through the front %q, through the SDK %q (want 404)", got, want)
	}
	if calls.n.Load() != before {
		t.Error("the front served a call of an ended session")
	}
}
