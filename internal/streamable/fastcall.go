package streamable

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/relay"
)

// ToolCalls is an MCP surface's tools/call, for the front to serve without
// the SDK server's JSON-RPC machinery (fastCalls). The SDK's Streamable
// HTTP handler decodes every message several times (with a decoder that
// allocates 32 KB or more each time), queues it on the session's JSON-RPC
// connection, runs it on a goroutine of its own and encodes the result
// again: on a flat call through Nexus that was about a third of Nexus's
// CPU. The surface still parses nothing of the HTTP and renders the result
// itself; the front only finds the session and writes the answer as the
// SDK would.
type ToolCalls interface {
	// Serves reports whether the surface runs a tools/call of name itself
	// (through the pipeline): what the SDK server would do with it then
	// is what Call does. Any other name is left to the SDK (its
	// unknown-tool error, say).
	Serves(name string) bool
	// Call runs a tools/call of session ss and returns its result as the
	// SDK server would encode it, or the JSON-RPC error it would answer
	// with.
	Call(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error)
	// CallSessionless runs a tools/call of the sessionless protocol (no
	// session: its call in a conversation of its own unless it names one),
	// as Call does.
	CallSessionless(ctx context.Context, name string, args json.RawMessage, meta mcp.Meta) (json.RawMessage, *jsonrpc.Error)
	// Relays reports whether a call of tool name may send its client
	// something while it runs (a downstream server's progress, log
	// messages, requests for input), which only the SDK's machinery
	// relates to the call's request: such a call is left to the SDK
	// when its client could receive any of it (relaysTo).
	Relays(name string) bool
	// ServesSessionless reports whether the surface runs a sessionless
	// tools/call of name itself: as Serves, for a tool listed without
	// arguments repeated in headers (x-mcp-header), which the SDK checks.
	ServesSessionless(name string) bool
	// Implementation is the server's name and version, which every result
	// of the sessionless protocol carries in its _meta.
	Implementation() *mcp.Implementation
}

// fastCalls serves the POSTs of one server's endpoint that are one
// tools/call request, for a tool calls serves, without the SDK server's
// JSON-RPC machinery, answering as the SDK would: an SSE response of one
// message event, or the same JSON-RPC error. For a session
// ([fastCalls.serve]) the session table hands it the requests of a live,
// initialized session; for the sessionless protocol
// ([fastCalls.serveSessionless]) the front hands it the requests without a
// session. Everything else goes to the SDK unchanged: other methods,
// notifications and responses, a request with a progress token or other
// protocol _meta, a Last-Event-ID, anything unusual in the message. A
// notifications/cancelled naming a call served here cancels that call (and
// goes to the SDK too, which answers it).
type fastCalls struct {
	srv   *mcp.Server
	calls ToolCalls
}

// inFlight are the tools/call requests of one session that fastCalls runs,
// by the request's id (encoded), so that a notifications/cancelled finds
// them.
type inFlight struct {
	mu    sync.Mutex
	calls map[string]context.CancelFunc
	// logging is set once the session's client set a log level (here, on
	// another replica, or before the session was restored): it wants the
	// log messages of its calls.
	logging atomic.Bool
}

func newFastCalls(srv *mcp.Server, calls ToolCalls) *fastCalls {
	return &fastCalls{srv: srv, calls: calls}
}

// The headers of a Streamable HTTP request that fastCalls reads.
const (
	sessionHeader  = mcpwire.SessionHeader
	protocolHeader = mcpwire.VersionHeader
)

// fastMessage is a tools/call request as fastCalls reads it: its members by
// their exact names, as the SDK's decoder matches them.
type fastMessage map[string]json.RawMessage

// serve answers r if it is a tools/call fastCalls serves (see fastCalls),
// and reports whether it did.
func (f *fastCalls) serve(w http.ResponseWriter, r *http.Request, ss *mcp.ServerSession, s *inFlight) bool {
	b, ok := r.Body.(*bufferedBody)
	if ok && b.info.Method == "logging/setLevel" {
		s.logging.Store(true)
	}
	if !ok || !b.checked || b.info.Method != "tools/call" || !b.info.HasID {
		return false
	}
	h := r.Header
	if !mcpwire.IsHandshake(h.Get(protocolHeader)) || len(h.Values("Last-Event-ID")) > 0 || mcpwire.MediaType(h.Get("Content-Type")) != "application/json" || !acceptsBoth(h.Values("Accept")) {
		return false
	}
	if ip := ss.InitializeParams(); ip == nil || !mcpwire.IsHandshake(ip.ProtocolVersion) {
		return false
	}
	rid, name, args, meta, ok := readCall(b.data, false)
	if !ok || !f.calls.Serves(name) || f.calls.Relays(name) && relaysTo(ss.InitializeParams().Capabilities, s.logging.Load()) {
		return false
	}
	key, err := json.Marshal(rid.Raw())
	if err != nil {
		return false
	}
	// As the SDK's: not cancelled by the HTTP request, only by the
	// client's notifications/cancelled.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	if !s.begin(string(key), cancel) {
		writeRPCResponse(w, http.StatusBadRequest, &jsonrpc.Response{ID: rid, Error: &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", rid.Raw())}})
		return true
	}
	defer s.end(string(key))
	// Its client could be sent nothing during the call (relaysTo), but a
	// downstream server that asks anyway is told why it gets no answer.
	ctx = relay.With(ctx, &relay.Caller{Session: ss})
	result, rerr := f.calls.Call(ctx, ss, name, args, meta)
	writeAnswer(w, rid, result, rerr)
	return true
}

// serveSessionless answers r if it is a tools/call of the sessionless
// protocol that fastCalls serves, and reports whether it did: a POST of one
// tools/call request for a tool calls serves, with the protocol's version
// in its header and the protocol's _meta (sessionlessMeta), its method
// and tool name repeated in the standard headers and no argument repeated
// in one (the SDK checks those against the tool's schema), no session id,
// no Last-Event-ID, and the Content-Type and Accept the SDK requires. It answers as the SDK's stateless handler does: an SSE
// response of one message event, its result marked complete and naming
// the server (completeResult). Anything else is left to the SDK. The call
// ends when its client goes away (the request's context), as the stateless
// handler's does.
func (f *fastCalls) serveSessionless(w http.ResponseWriter, r *http.Request) bool {
	b, ok := r.Body.(*bufferedBody)
	if r.Method != http.MethodPost || !ok || !b.checked || b.info.Method != "tools/call" || !b.info.HasID {
		return false
	}
	h := r.Header
	if h.Get(protocolHeader) != mcpwire.Sessionless || len(h.Values(sessionHeader)) > 0 || len(h.Values(mcpwire.LastEventIDHeader)) > 0 ||
		mcpwire.MediaType(h.Get("Content-Type")) != "application/json" || !acceptsBoth(h.Values("Accept")) ||
		h.Get(mcpwire.MethodHeader) != "tools/call" {
		return false
	}
	for k := range h {
		if strings.HasPrefix(k, mcpwire.ParamHeaderPrefix) {
			return false
		}
	}
	rid, name, args, meta, ok := readCall(b.data, true)
	if !ok || h.Get(mcpwire.NameHeader) != name || !f.calls.ServesSessionless(name) || f.calls.Relays(name) && sessionlessAsks(b.data) {
		return false
	}
	result, rerr := f.calls.CallSessionless(r.Context(), name, args, meta)
	if rerr == nil {
		result, rerr = completeResult(result, f.calls.Implementation())
	}
	writeAnswer(w, rid, result, rerr)
	return true
}

// relaysTo reports whether a client of the handshake protocol with caps
// could be sent something during a call that only the call's own stream
// should carry: it can be asked for input by elicitation or sampling, or
// wants log messages. Roots are not counted: nearly every client declares
// them (the Go SDK's by default), servers seldom ask for them during a
// call, and a roots/list of a call served here goes on the session's
// standalone stream, where the SDK sends what it cannot relate to a
// request; counting them sent most calls the SDK's slower way (2× Nexus's
// CPU per call, docs/benchmarks.md).
func relaysTo(caps *mcp.ClientCapabilities, logging bool) bool {
	//lint:ignore SA1019 the capabilities of clients of the protocol versions that have sampling
	return logging || caps != nil && (caps.Elicitation != nil || caps.Sampling != nil)
}

// sessionlessAsks reports whether a sessionless tools/call request (data)
// declares a client that could answer a downstream server's need for input
// (the input-required result, which the SDK marks).
func sessionlessAsks(data []byte) bool {
	var m struct {
		Params struct {
			Meta struct {
				Caps *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil || m.Params.Meta.Caps == nil {
		return true
	}
	return relaysTo(m.Params.Meta.Caps, false)
}

// writeAnswer writes the response to request rid, its result or error, as
// the SDK answers a request: an SSE stream (no JSONResponse option) of the
// one event with the response (no event store, so no event id).
func writeAnswer(w http.ResponseWriter, rid jsonrpc.ID, result json.RawMessage, rerr *jsonrpc.Error) {
	resp := &jsonrpc.Response{ID: rid, Result: result}
	if rerr != nil {
		resp = &jsonrpc.Response{ID: rid, Error: rerr}
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}})
	}
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Connection", "keep-alive")
	w.Write(mcpwire.AppendEvent(make([]byte, 0, len(data)+32), data))
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// readCall reads a tools/call request as the SDK would, or reports false
// when anything in it is for the SDK to judge: members it would read
// differently (not exactly "2.0", a method with escapes, params that are
// not an object, a name that is not a string), a multi-round-trip retry, a
// progress token or protocol _meta. With sessionless, the request must
// carry the sessionless protocol's _meta instead (sessionlessMeta).
func readCall(data []byte, sessionless bool) (id jsonrpc.ID, name string, args json.RawMessage, meta mcp.Meta, ok bool) {
	var m fastMessage
	if json.Unmarshal(data, &m) != nil || string(m["jsonrpc"]) != `"2.0"` || string(m["method"]) != `"tools/call"` {
		return id, "", nil, nil, false
	}
	var idv any
	if json.Unmarshal(m["id"], &idv) != nil {
		return id, "", nil, nil, false
	}
	id, err := jsonrpc.MakeID(idv)
	if err != nil || !id.IsValid() {
		return id, "", nil, nil, false
	}
	var params fastMessage
	if p := m["params"]; len(p) == 0 || p[0] != '{' || json.Unmarshal(p, &params) != nil {
		return id, "", nil, nil, false
	}
	if _, ok := params["inputResponses"]; ok {
		return id, "", nil, nil, false
	}
	if _, ok := params["requestState"]; ok {
		return id, "", nil, nil, false
	}
	if n := params["name"]; len(n) == 0 || n[0] != '"' || json.Unmarshal(n, &name) != nil {
		return id, "", nil, nil, false
	}
	var raw map[string]json.RawMessage
	if m := params["_meta"]; len(m) > 0 && (m[0] != '{' || json.Unmarshal(m, &raw) != nil) {
		return id, "", nil, nil, false
	}
	if sessionless && !sessionlessMeta(raw) {
		return id, "", nil, nil, false
	}
	for k, v := range raw {
		switch {
		case k == "progressToken":
			return id, "", nil, nil, false
		case strings.HasPrefix(k, "io.modelcontextprotocol/"):
			if !sessionless {
				return id, "", nil, nil, false
			}
			// The protocol's members (sessionlessMeta): the client's,
			// not the call's.
			continue
		}
		var val any
		if json.Unmarshal(v, &val) != nil {
			return id, "", nil, nil, false
		}
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[k] = val
	}
	return id, name, params["arguments"], meta, true
}

// sessionlessMeta reports whether meta, a request's _meta, is what the
// SDK reads as a valid request of the sessionless protocol
// ([mcpwire.Sessionless]): that protocol version, the client's
// capabilities (required) and, if given, its clientInfo, decoded as the
// SDK decodes them, and no other protocol member (a log level, say), which
// is left to the SDK.
func sessionlessMeta(meta map[string]json.RawMessage) bool {
	var version string
	if json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &version) != nil || version != mcpwire.Sessionless {
		return false
	}
	// The SDK's shape of the capabilities in _meta: the handshake's, with
	// roots as a pointer.
	var caps struct {
		mcp.ClientCapabilities
		//lint:ignore SA1019 the SDK still decodes roots in _meta, so a request it refuses for them is refused here
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if c := meta[mcp.MetaKeyClientCapabilities]; len(c) == 0 || c[0] != '{' || json.Unmarshal(c, &caps) != nil {
		return false
	}
	if ci, ok := meta[mcp.MetaKeyClientInfo]; ok {
		var impl mcp.Implementation
		if len(ci) == 0 || ci[0] != '{' || json.Unmarshal(ci, &impl) != nil {
			return false
		}
	}
	for k := range meta {
		switch k {
		case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo:
		default:
			if strings.HasPrefix(k, "io.modelcontextprotocol/") {
				return false
			}
		}
	}
	return true
}

// completeResult is result as a result of the sessionless protocol: marked
// complete (no input required, SEP-2322) and naming the server in its
// _meta (SEP-2575), unless the result already does.
func completeResult(result json.RawMessage, impl *mcp.Implementation) (json.RawMessage, *jsonrpc.Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	var meta map[string]json.RawMessage
	if m := fields["_meta"]; len(m) > 0 && string(m) != "null" {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok && impl != nil {
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		info, err := json.Marshal(impl)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		meta[mcp.MetaKeyServerInfo] = info
	}
	if meta != nil {
		m, err := json.Marshal(meta)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		fields["_meta"] = m
	}
	if _, ok := fields["resultType"]; !ok {
		fields["resultType"] = json.RawMessage(`"complete"`)
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return out, nil
}

// begin records a call of s in flight, unless one with its id is.
func (s *inFlight) begin(key string, cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.calls[key]; dup {
		return false
	}
	if s.calls == nil {
		s.calls = map[string]context.CancelFunc{}
	}
	s.calls[key] = cancel
	return true
}

func (s *inFlight) end(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, key)
}

// cancelled cancels the call that r, if it is a notifications/cancelled,
// names, if that call is in flight here (in s).
func (f *fastCalls) cancelled(r *http.Request, s *inFlight) {
	b, ok := r.Body.(*bufferedBody)
	if !ok || !b.checked || b.info.Method != "notifications/cancelled" || b.info.HasID {
		return
	}
	s.mu.Lock()
	n := len(s.calls)
	s.mu.Unlock()
	if n == 0 {
		return
	}
	var msg struct {
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(b.data, &msg) != nil {
		return
	}
	rid, err := jsonrpc.MakeID(msg.Params.RequestID)
	if err != nil || !rid.IsValid() {
		return
	}
	key, err := json.Marshal(rid.Raw())
	if err != nil {
		return
	}
	s.mu.Lock()
	cancel := s.calls[string(key)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// writeRPCResponse writes a JSON-RPC response as application/json with
// status, as the SDK writes its own errors of a request.
func writeRPCResponse(w http.ResponseWriter, status int, resp *jsonrpc.Response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if data, err := jsonrpc.EncodeMessage(resp); err == nil {
		w.Write(data)
	}
}

// acceptsBoth reports whether Accept values take both JSON and an event
// stream, the SDK's rule for a POST.
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := mcpwire.Accepts(values)
	return jsonOK && streamOK
}
