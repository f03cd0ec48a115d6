package downstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// RawOK reports whether a session that negotiated protocol version can take
// raw requests ([HTTPSession.CallTool]): a session with the initialize
// handshake (before [mcpwire.Sessionless]); one of the sessionless protocol
// would need the SDK's per-request _meta and headers.
func RawOK(version string) bool { return version != "" && version < mcpwire.Sessionless }

// ErrSessionGone is the error of a raw request the server answered with
// HTTP 404: it no longer knows the session. The request did not run.
var ErrSessionGone = errors.New("the server no longer knows the session (HTTP 404)")

// notifyTimeout bounds the requests an HTTPSession makes in the background:
// a cancellation, the answer to a server's request.
const notifyTimeout = 5 * time.Second

// HTTPSession is a session the SDK's Streamable HTTP client opened on a
// server (with the initialize handshake: [RawOK]), for requests sent on it
// without the SDK: the JSON-RPC request is POSTed as bytes and the JSON or
// SSE response read as bytes, on the connection's keep-alive pool. The SDK
// client keeps the session itself (its standalone stream, its end).
//
// Raw requests have string ids ("nx-1", ...), so they never collide with the
// SDK client's integer ids on the same session.
type HTTPSession struct {
	URL     string
	ID      string       // the server's Mcp-Session-Id; "" if it gave none
	Version string       // the negotiated protocol version
	Client  *http.Client // the connection's pool ([HTTPClient])
	// Notify, if set, is told of the notifications that arrive on a raw
	// request's stream (progress and log messages of the call, or a
	// list_changed the server sent there), as the SDK client's handlers
	// would be.
	Notify func(method string, params json.RawMessage)
}

var rawIDs atomic.Uint64

// Exchange is what one raw call sends besides its tool's name and
// arguments, and what it does with what the server sends during the call;
// the zero value (or nil) sends nothing more and answers as a client
// without capabilities.
type Exchange struct {
	// Meta is the request's _meta (a progress token), encoded; empty: none.
	Meta json.RawMessage
	// Ask answers a request the server makes during the call
	// (elicitation/create, sampling/createMessage, roots/list) with its
	// result, or an error (a *[jsonrpc.Error] is sent as it is, anything
	// else as an internal error). Nil: a ping is answered, roots/list with
	// no roots, anything else with method not found.
	Ask func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// Notify, if set, is told the progress notifications and log messages
	// that arrive on the call's stream (the session's Notify is told the
	// others).
	Notify func(method string, params json.RawMessage)
}

// CallTool makes one tools/call on the session and returns the result as
// the server sent it. A JSON-RPC error response is a *[jsonrpc.Error]; HTTP
// 404 is [ErrSessionGone]. Requests the server makes during the call go to
// x's Ask, and its progress and log messages to x's Notify. When ctx ends
// first, the server is sent notifications/cancelled.
func (s *HTTPSession) CallTool(ctx context.Context, name string, args json.RawMessage, x *Exchange) (json.RawMessage, error) {
	if x == nil {
		x = &Exchange{}
	}
	id := "nx-" + strconv.FormatUint(rawIDs.Add(1), 10)
	qname, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	body := make([]byte, 0, 96+len(qname)+len(args)+len(id))
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, id...)
	body = append(body, `","method":"tools/call","params":{"name":`...)
	body = append(body, qname...)
	body = append(body, `,"arguments":`...)
	body = append(body, args...)
	if len(x.Meta) > 0 {
		body = append(body, `,"_meta":`...)
		body = append(body, x.Meta...)
	}
	body = append(body, "}}"...)
	res, err := s.roundTrip(ctx, id, body, x)
	if err != nil && ctx.Err() != nil {
		s.cancel(id, "the call was cancelled")
		return nil, fmt.Errorf("tools/call %q: %w (%v)", name, ctx.Err(), err)
	}
	return res, err
}

// post sends one message on the session.
func (s *HTTPSession) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if s.ID != "" {
		h[mcpwire.SessionHeader] = []string{s.ID}
	}
	if s.Version != "" {
		h[mcpwire.VersionHeader] = []string{s.Version}
	}
	return s.Client.Do(req)
}

// roundTrip posts the request id (body) and reads its response.
func (s *HTTPSession) roundTrip(ctx context.Context, id string, body []byte, x *Exchange) (json.RawMessage, error) {
	resp, err := s.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrSessionGone
	case resp.StatusCode/100 != 2:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	switch mt := mcpwire.MediaType(resp.Header.Get("Content-Type")); mt {
	case "application/json":
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		res, done, err := s.message(ctx, id, data, x)
		if !done && err == nil {
			err = errors.New("the response is not the request's")
		}
		return res, err
	case "text/event-stream":
		return s.readSSE(ctx, id, resp.Body, x)
	default:
		return nil, fmt.Errorf("unexpected response content type %q", mt)
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// maxResumes bounds the times a call's stream is resumed (SEP-1699: a
// server may end a request's stream before its response, for the client to
// resume it from its last event id), and maxRetryWait the wait the server
// may ask for before each.
const (
	maxResumes   = 10
	maxRetryWait = 5 * time.Second
)

// readSSE reads an SSE response until the response to id. When the stream
// ends first after an event with an id, the call's stream is resumed as
// SEP-1699 has it: a GET with Last-Event-ID, after the wait the server's
// retry field asked for.
func (s *HTTPSession) readSSE(ctx context.Context, id string, body io.Reader, x *Exchange) (json.RawMessage, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	var (
		lastID string
		retry  time.Duration
	)
	for resumes := 0; ; resumes++ {
		res, done, err := s.readEvents(ctx, id, body, x, *bp, &lastID, &retry)
		if done || err != nil {
			return res, err
		}
		// The stream ended before the response.
		if lastID == "" || resumes == maxResumes {
			return nil, fmt.Errorf("the response stream ended before the result: %w", io.ErrUnexpectedEOF)
		}
		if retry > 0 {
			t := time.NewTimer(min(retry, maxRetryWait))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
		resp, err := s.resume(ctx, lastID)
		if err != nil {
			// Not %w: the call was sent, so a 404 here must not make the
			// caller send it again (ErrSessionGone means it did not run).
			return nil, fmt.Errorf("resuming the response stream after event %q: %v", lastID, err)
		}
		defer resp.Body.Close()
		body = resp.Body
	}
}

// readEvents reads the events of one stream until the response to id
// (done) or the stream's end, noting the last event id and retry field.
func (s *HTTPSession) readEvents(ctx context.Context, id string, body io.Reader, x *Exchange, buf []byte, lastID *string, retry *time.Duration) (json.RawMessage, bool, error) {
	var in []byte
	for {
		n, rerr := body.Read(buf)
		in = append(in, buf[:n]...)
		for {
			end, lines, ok := mcpwire.NextEvent(in, rerr != nil)
			if !ok {
				break
			}
			if v, ok := mcpwire.EventField(lines, "id"); ok {
				*lastID = v
			}
			if v, ok := mcpwire.EventField(lines, "retry"); ok {
				if ms, err := strconv.Atoi(v); err == nil && ms >= 0 {
					*retry = time.Duration(ms) * time.Millisecond
				}
			}
			if data := mcpwire.EventData(lines); data != nil {
				if res, done, err := s.message(ctx, id, data, x); done || err != nil {
					return res, done, err
				}
			}
			in = in[end:]
		}
		if rerr != nil {
			if rerr == io.EOF {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("the response stream ended before the result: %w", rerr)
		}
	}
}

// resume opens the GET stream that continues a request's stream after the
// event lastID.
func (s *HTTPSession) resume(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Accept"] = []string{"text/event-stream"}
	h[mcpwire.LastEventIDHeader] = []string{lastID}
	if s.ID != "" {
		h[mcpwire.SessionHeader] = []string{s.ID}
	}
	if s.Version != "" {
		h[mcpwire.VersionHeader] = []string{s.Version}
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, ErrSessionGone
	case resp.StatusCode/100 != 2:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// wireMessage is what CallTool decodes of a message from the server.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// message handles one message of the response to id: done with its result
// or error when it is that response; a server's request is answered (x's
// Ask) and a notification passed to x's or the session's Notify.
func (s *HTTPSession) message(ctx context.Context, id string, data []byte, x *Exchange) (_ json.RawMessage, done bool, _ error) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, fmt.Errorf("reading the response: %w", err)
	}
	if m.Method != "" {
		switch {
		case len(m.ID) > 0 && string(m.ID) != "null":
			s.answer(ctx, m.ID, m.Method, m.Params, x.Ask)
		case x.Notify != nil && (m.Method == "notifications/progress" || m.Method == "notifications/message"):
			x.Notify(m.Method, m.Params)
		case s.Notify != nil:
			s.Notify(m.Method, m.Params)
		}
		return nil, false, nil
	}
	if string(m.ID) != strconv.Quote(id) {
		return nil, false, nil // not ours (cannot happen on a request's stream)
	}
	if m.Error != nil {
		return nil, true, m.Error
	}
	if len(m.Result) == 0 {
		return nil, true, errors.New("a response without a result or an error")
	}
	return m.Result, true, nil
}

// answer answers a server's request made during a call (in the
// background): by ask when it is set, else as a client without
// capabilities.
func (s *HTTPSession) answer(ctx context.Context, id json.RawMessage, method string, params json.RawMessage, ask func(context.Context, string, json.RawMessage) (any, error)) {
	if method == "ping" || ask == nil {
		var tail string
		switch method {
		case "ping":
			tail = `"result":{}}`
		case "roots/list":
			tail = `"result":{"roots":[]}}`
		default:
			msg, _ := json.Marshal(fmt.Sprintf("the client does not support %s", method))
			tail = `"error":{"code":-32601,"message":` + string(msg) + `}}`
		}
		s.background(ctx, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,`+tail))
		return
	}
	// The answer may take a person's time (an elicitation): it is asked
	// for in a goroutine of its own, which the call's context ends.
	go func() {
		res, err := ask(ctx, method, params)
		msg := map[string]any{"jsonrpc": "2.0", "id": id}
		var wire *jsonrpc.Error
		switch {
		case errors.As(err, &wire):
			msg["error"] = wire
		case err != nil:
			msg["error"] = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		default:
			msg["result"] = res
		}
		body, merr := json.Marshal(msg)
		if merr != nil {
			body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
				"error": &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}})
		}
		s.background(ctx, body)
	}()
}

// cancel tells the server that the raw request id is cancelled (in the
// background).
func (s *HTTPSession) cancel(id, reason string) {
	r, _ := json.Marshal(reason)
	body := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":` + string(r) + `}}`)
	s.background(context.Background(), body)
}

// background posts body on the session in a goroutine of its own, bounded
// by notifyTimeout whatever becomes of ctx.
func (s *HTTPSession) background(ctx context.Context, body []byte) {
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
		defer cancel()
		resp, err := s.post(ctx, body)
		if err != nil {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
}
