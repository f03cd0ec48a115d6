package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/jsondepth"
	"github.com/nexus-mcp/nexus/internal/jsonrpcmsg"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// The raw passthrough: an upstream session on a Streamable HTTP downstream
// server is forwarded as HTTP, without the SDK. Each upstream HTTP request
// of the session becomes one downstream HTTP request with the same body, on
// the downstream session the upstream initialize opened; the downstream
// response (JSON or an SSE stream) is copied back as it is read. Only the
// envelope of a POSTed message is decoded (id, method, and a tools/call's
// tool name), and a response is only rewritten where the proxy adds or
// removes something: the initialize result ("_meta" MetaKey) and a
// filtered server's tools/list result.

// rawSession is an upstream session forwarded as raw HTTP to a downstream
// session of a Streamable HTTP server.
type rawSession struct {
	ep   *endpoint
	id   string // the upstream session id, Nexus's
	down string // the downstream server's session id; "" if it gave none
	// version is the protocol version the downstream server negotiated,
	// sent with the proxy's own requests (cancellation, DELETE).
	version string
	// ctx ends when the session closes: requests in flight and open
	// streams end with it.
	ctx    context.Context
	cancel context.CancelFunc

	posts atomic.Int32 // POSTs in flight; an open GET stream is no activity
	last  atomic.Int64 // when the last POST ended (unix nanoseconds)
	timer *time.Timer  // the idle timeout, nil without one

	closeOnce sync.Once
}

// newRawSession registers an upstream session for the downstream session
// down; nil when the endpoint is closing.
func (ep *endpoint) newRawSession(down, version string) *rawSession {
	s := &rawSession{ep: ep, id: rand.Text(), down: down, version: version}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.last.Store(time.Now().UnixNano())
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.closed {
		s.cancel()
		return nil
	}
	ep.raw[s.id] = s
	if d := ep.p.sessionTimeout; d > 0 {
		s.timer = time.AfterFunc(d, s.idle)
	}
	return s
}

// sessionless reports whether s forwards the requests of sessionless
// clients (the endpoint's slRaw): no session on either side.
func (s *rawSession) sessionless() bool { return s.id == "" }

func (ep *endpoint) rawSession(id string) *rawSession {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.raw[id]
}

// idle closes the session when no POST was made for the session timeout,
// else checks again when it could be.
func (s *rawSession) idle() {
	d := s.ep.p.sessionTimeout
	if s.posts.Load() == 0 {
		if left := d - time.Since(time.Unix(0, s.last.Load())); left > 0 {
			s.timer.Reset(left)
			return
		}
		s.close(true)
		return
	}
	s.timer.Reset(d)
}

// close ends the session: it is forgotten, its requests and streams are
// cut, and with del the downstream session is deleted too.
func (s *rawSession) close(del bool) {
	s.closeOnce.Do(func() {
		s.ep.mu.Lock()
		if s.ep.raw[s.id] == s {
			delete(s.ep.raw, s.id)
		}
		s.ep.mu.Unlock()
		if s.timer != nil {
			s.timer.Stop()
		}
		s.cancel()
		if del && s.down != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.ep.cfg.URL, nil)
			if err != nil {
				return
			}
			s.header(req)
			if resp, err := s.ep.hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			} else {
				s.ep.log.Debug("deleting the downstream session", "error", err)
			}
		}
		s.ep.log.Debug("proxy session closed", "session", s.id)
	})
}

// header sets the downstream session id and protocol version of a request
// the proxy makes itself.
func (s *rawSession) header(req *http.Request) {
	if s.down != "" {
		req.Header.Set(mcpwire.SessionHeader, s.down)
	}
	if s.version != "" {
		req.Header.Set(mcpwire.VersionHeader, s.version)
	}
}

// downRequest is the downstream request forwarding r with body.
func (ep *endpoint) downRequest(ctx context.Context, r *http.Request, s *rawSession, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, ep.cfg.URL, rd)
	if err != nil {
		return nil, fmt.Errorf("forwarding a request to %s: %w", ep.cfg.URL, err)
	}
	h := req.Header
	if body != nil {
		h["Content-Type"] = []string{"application/json"}
	}
	for _, k := range [...]string{"Accept", mcpwire.VersionHeader, mcpwire.LastEventIDHeader} {
		if v := r.Header.Values(k); len(v) > 0 {
			h[k] = v
		}
	}
	if s != nil && s.down != "" {
		h[mcpwire.SessionHeader] = []string{s.down}
	}
	if s != nil && s.sessionless() {
		// The headers that repeat the request's method, name and
		// arguments (the server checks them against the body).
		for k, v := range r.Header {
			if k == mcpwire.MethodHeader || k == mcpwire.NameHeader || strings.HasPrefix(k, mcpwire.ParamHeaderPrefix) {
				h[k] = v
			}
		}
	}
	return req, nil
}

// rawInitialize forwards an upstream initialize to the downstream server
// and, when it succeeds, opens a raw session. It reports false, having
// written nothing (r.Body is restored), for a request that is not an
// initialize the raw passthrough takes: the SDK's handler then serves it
// (or refuses it) as before.
func (ep *endpoint) rawInitialize(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(mcpwire.LastEventIDHeader) != "" {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	if status, _ := mcpwire.CheckRequest(r, body); status != 0 {
		return false
	}
	if _, _, code, _ := jsonrpcmsg.Validate(body, jsondepth.Max); code != 0 {
		return false
	}
	var m envelope
	var params struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "initialize" || !m.isRequest() ||
		json.Unmarshal(m.Params, &params) != nil || params.ProtocolVersion == "" || params.ProtocolVersion >= mcpwire.Sessionless {
		// Clients of the sessionless protocol are told by the SDK to use
		// the handshake.
		return false
	}

	ctx := r.Context()
	if d := ep.cfg.ConnectTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	fail := func(err error) bool {
		mcpwire.WriteError(w, http.StatusOK, m.ID, codeInternalError,
			fmt.Sprintf("connecting to MCP server %q of toolbox %q: %v", ep.name, ep.toolbox, err))
		return true
	}
	req, err := ep.downRequest(ctx, r, nil, body)
	if err != nil {
		return fail(err)
	}
	resp, err := ep.hc.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fail(err)
	}
	down := resp.Header.Get(mcpwire.SessionHeader)
	var out []byte
	var version string
	if resp.StatusCode/100 == 2 {
		out, version = ep.initializeResult(data, mcpwire.MediaType(resp.Header.Get("Content-Type")), m.ID)
	}
	if out == nil {
		// Refused: passed on as it is.
		if down != "" {
			(&rawSession{ep: ep, down: down, cancel: func() {}}).close(true)
		}
		copyHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		w.Write(data)
		return true
	}
	s := ep.newRawSession(down, version)
	if s == nil {
		(&rawSession{ep: ep, down: down, version: version, cancel: func() {}}).close(true)
		mcpwire.WriteError(w, http.StatusOK, m.ID, codeInternalError, "the MCP proxy is shutting down")
		return true
	}
	ep.log.Debug("proxy session opened", "session", s.id, "protocol", version, "raw", true)
	copyHeader(w.Header(), resp.Header)
	w.Header().Set(mcpwire.SessionHeader, s.id)
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
	return true
}

// initializeResult returns the downstream initialize response body data
// with MetaKey added to the result's "_meta", and the negotiated protocol
// version; nil if data holds no successful result for id.
func (ep *endpoint) initializeResult(data []byte, mt string, id json.RawMessage) ([]byte, string) {
	var version string
	edit := func(msg []byte) []byte {
		out, v := ep.markResult(msg, id)
		if out != nil {
			version = v
		}
		return out
	}
	switch mt {
	case "application/json":
		if out := edit(data); out != nil {
			return out, version
		}
	case "text/event-stream":
		if out := editSSE(data, edit); out != nil {
			return out, version
		}
	}
	return nil, ""
}

// markResult returns the response msg to the request id with MetaKey added
// to its result's "_meta", and the result's protocolVersion (an initialize
// result's); nil if msg is not a successful response to id.
func (ep *endpoint) markResult(msg []byte, id json.RawMessage) ([]byte, string) {
	var m envelope
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || !bytes.Equal(m.ID, id) || len(m.Result) == 0 {
		return nil, ""
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m.Result, &res) != nil || res == nil {
		return nil, ""
	}
	var version string
	json.Unmarshal(res["protocolVersion"], &version)
	meta := map[string]json.RawMessage{}
	if raw, ok := res["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return nil, ""
		}
	}
	mark, _ := json.Marshal(map[string]string{"toolbox": ep.toolbox, "server": ep.name})
	meta[MetaKey] = mark
	var err error
	if res["_meta"], err = json.Marshal(meta); err != nil {
		return nil, ""
	}
	return replaceResult(msg, res), version
}

// serve serves an HTTP request of a raw session.
func (s *rawSession) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// A POST is checked with its body (servePOST).
		if status, msg := mcpwire.CheckRequest(r, nil); status != 0 {
			writeError(w, status, nil, msg)
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		s.posts.Add(1)
		defer func() {
			s.last.Store(time.Now().UnixNano())
			s.posts.Add(-1)
		}()
		s.servePOST(w, r)
	case http.MethodGet:
		s.serveGET(w, r)
	case http.MethodDelete:
		s.close(true)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, nil, "Method Not Allowed: "+r.Method+"; an MCP endpoint takes GET, POST and DELETE")
	}
}

// serveGET forwards the standalone SSE stream (or its resumption).
func (s *rawSession) serveGET(w http.ResponseWriter, r *http.Request) {
	ctx, stop := mergeCancel(r.Context(), s.ctx)
	defer stop()
	req, err := s.ep.downRequest(ctx, r, s, nil)
	if err != nil {
		writeError(w, http.StatusInternalServerError, nil, err.Error())
		return
	}
	resp, err := s.ep.hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			writeError(w, http.StatusBadGateway, nil, fmt.Sprintf("MCP server %q of toolbox %q: %v", s.ep.name, s.ep.toolbox, err))
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		s.close(false)
	}
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	for {
		n, err := resp.Body.Read(*bp)
		if n > 0 {
			if _, werr := w.Write((*bp)[:n]); werr != nil {
				return
			}
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// servePOST forwards one POSTed message and its response.
func (s *rawSession) servePOST(w http.ResponseWriter, r *http.Request) {
	ep := s.ep
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, nil, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, nil, "read the request body: "+err.Error())
		return
	}
	if status, msg := mcpwire.CheckRequest(r, body); status != 0 {
		writeError(w, status, messageID(body), msg)
		return
	}
	if r.Header.Get(mcpwire.LastEventIDHeader) != "" {
		writeError(w, http.StatusBadRequest, messageID(body), "can't send Last-Event-ID for POST request")
		return
	}
	// As JSONRPCErrors checks a body the HTTP front has read (when the
	// proxy is mounted behind it, this finds nothing new).
	if _, id, code, reason := jsonrpcmsg.Validate(body, jsondepth.Max); code != 0 {
		mcpwire.WriteError(w, http.StatusBadRequest, id, code, reason)
		return
	}
	var m envelope
	if err := json.Unmarshal(body, &m); err != nil {
		mcpwire.WriteError(w, http.StatusBadRequest, nil, jsonrpcmsg.CodeInvalidRequest, "Invalid Request: "+err.Error())
		return
	}
	request := m.isRequest()
	cfg := ep.cfg
	ctx, stop := mergeCancel(r.Context(), s.ctx)
	defer stop()
	// edit, when set, rewrites the response to the request (msg is one
	// JSON-RPC message; nil leaves it as it is).
	var edit func(msg []byte) []byte
	var call *toolCall // recorded (record.go)
	if request {
		switch m.Method {
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			call = ep.beginCall(r.Context(), p.Name, len(p.Arguments))
			if !cfg.Serves(p.Name) {
				msg := fmt.Sprintf("unknown tool %q", p.Name)
				mcpwire.WriteError(w, http.StatusOK, m.ID, codeInvalidParams, msg)
				if call != nil {
					call.finish(len(msg), errs.BadRequest, false)
				}
				return
			}
			if cfg.Timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout, errToolTimeout)
				defer cancel()
			}
		case "tools/list":
			if len(cfg.ToolFilters) > 0 {
				edit = func(msg []byte) []byte { return filterResponse(msg, cfg.ToolFilters) }
			}
		case "server/discover":
			if s.sessionless() {
				edit = func(msg []byte) []byte { out, _ := ep.markResult(msg, m.ID); return out }
			}
		}
	}

	req, err := ep.downRequest(ctx, r, s, body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, m.ID, err.Error())
		return
	}
	resp, err := ep.hc.Do(req)
	if err != nil {
		s.failed(w, r, ctx, &m, err, false)
		call.failed(0)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && !s.sessionless() {
		// The downstream session is gone: so is the upstream one.
		s.close(false)
	}
	copyHeader(w.Header(), resp.Header)
	mt := mcpwire.MediaType(resp.Header.Get("Content-Type"))
	switch {
	case call != nil && s.sessionless() && resp.StatusCode/100 != 2 && mt == "application/json":
		// A server of the sessionless protocol may refuse a call with an
		// HTTP error whose body is the JSON-RPC error (an unknown tool
		// named in Mcp-Name): recorded by its code.
		data, _ := io.ReadAll(resp.Body)
		w.WriteHeader(resp.StatusCode)
		w.Write(data)
		if isResponse(data, m.ID) {
			call.answered(data)
		} else {
			call.failed(len(data))
		}
	case !request || resp.StatusCode/100 != 2 || (mt != "text/event-stream" && mt != "application/json"):
		if l := resp.Header.Get("Content-Length"); l != "" {
			w.Header().Set("Content-Length", l)
		}
		w.WriteHeader(resp.StatusCode)
		n, _ := io.Copy(w, resp.Body)
		call.failed(int(n))
	case mt == "application/json":
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			s.failed(w, r, ctx, &m, err, false)
			call.failed(0)
			return
		}
		if edit != nil {
			if out := edit(data); out != nil {
				data = out
			}
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(data)
		call.answered(data)
	default:
		w.WriteHeader(resp.StatusCode)
		s.relaySSE(w, r, ctx, &m, resp.Body, edit, call)
	}
}

// relaySSE copies the SSE stream of a forwarded request event by event,
// flushing each; edit, when set, rewrites the request's response; call, when not nil, is recorded with the response. If the stream ends
// before the request's response (the call's Timeout, the session's end, the
// server), the client gets an error response.
func (s *rawSession) relaySSE(w http.ResponseWriter, r *http.Request, ctx context.Context, m *envelope, body io.Reader, edit func([]byte) []byte, call *toolCall) {
	rc := http.NewResponseController(w)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	var in []byte
	answered := false
	for {
		n, err := body.Read(*bp)
		in = append(in, (*bp)[:n]...)
		wrote := false
		for {
			end, lines, ok := mcpwire.NextEvent(in, err != nil)
			if !ok {
				break
			}
			ev := in[:end]
			if !answered {
				if data := mcpwire.EventData(lines); data != nil && isResponse(data, m.ID) {
					answered = true
					if edit != nil {
						if out := edit(data); out != nil {
							ev = rewriteEvent(lines, out)
						}
					}
					call.answered(data)
				}
			}
			if _, werr := w.Write(ev); werr != nil {
				s.cancelDown(m, "the client is gone")
				call.failed(0)
				return
			}
			wrote = true
			in = in[end:]
		}
		if wrote {
			rc.Flush()
		}
		if err != nil {
			if !answered {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				s.failed(w, r, ctx, m, err, true)
				call.failed(0)
			}
			return
		}
	}
}

// failed answers a forwarded message whose downstream request failed with
// err before its response: for a request, a JSON-RPC error (as an SSE event
// when sse, the stream having begun); for a notification or response, an
// HTTP error. The downstream server is told when a request it may still
// run is cancelled.
func (s *rawSession) failed(w http.ResponseWriter, r *http.Request, ctx context.Context, m *envelope, err error, sse bool) {
	ep := s.ep
	var msg string
	switch {
	case ctx.Err() == nil:
		msg = fmt.Sprintf("MCP server %q of toolbox %q: %v", ep.name, ep.toolbox, err)
	case context.Cause(ctx) == errToolTimeout:
		msg = fmt.Sprintf("tool call timed out after %v", ep.cfg.Timeout)
		s.cancelDown(m, msg)
	case s.ctx.Err() != nil:
		msg = fmt.Sprintf("MCP server %q of toolbox %q: %v", ep.name, ep.toolbox, errClosed)
	default: // the client is gone
		s.cancelDown(m, "the client cancelled the request")
		return
	}
	if !m.isRequest() {
		if !sse {
			writeError(w, http.StatusBadGateway, nil, msg)
		}
		return
	}
	if !sse {
		mcpwire.WriteError(w, http.StatusOK, m.ID, codeInternalError, msg)
		return
	}
	w.Write(mcpwire.AppendEvent(nil, mcpwire.ErrorMessage(m.ID, codeInternalError, msg)))
	http.NewResponseController(w).Flush()
}

// cancelDown tells the downstream server that a forwarded request is
// cancelled (in the background).
func (s *rawSession) cancelDown(m *envelope, reason string) {
	if !m.isRequest() || s.ctx.Err() != nil || s.sessionless() {
		// A sessionless request is cancelled by ending its HTTP request,
		// which the proxy has done.
		return
	}
	params, _ := json.Marshal(map[string]any{"requestId": m.ID, "reason": reason})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": json.RawMessage(params)})
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, notifyTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.ep.cfg.URL, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		s.header(req)
		resp, err := s.ep.hc.Do(req)
		if err != nil {
			s.ep.log.Debug("forwarding a cancellation downstream", "error", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
}
