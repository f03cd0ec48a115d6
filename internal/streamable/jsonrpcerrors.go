package streamable

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/nexus-mcp/nexus/internal/jsondepth"
	"github.com/nexus-mcp/nexus/internal/jsonrpcmsg"
)

// JSON-RPC 2.0 error codes of the responses [JSONRPCErrors] writes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInternalError  = -32603
)

// JSONRPCErrors wraps an MCP Streamable HTTP handler (the SDK's) so that the
// errors it writes itself as plain text (http.Error: a malformed payload, an
// unknown method or session, a wrong HTTP method...) reach the client as
// JSON-RPC error responses, with the same HTTP status and headers:
//
//	{"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":"<the SDK's text>"}}
//
// C is -32700 (parse error) when the body is not JSON the SDK could read
// (syntax, nesting too deep), -32601 for a method the server does not
// handle, -32603 for a 5xx and -32600 (invalid request) otherwise. ID is the
// request's id when its body (as read by the guard) is one JSON-RPC message
// with a string or number id, else null.
//
// Only a response with status >= 400 and a text/plain Content-Type, before
// anything of it was written, is rewritten; every other response (JSON,
// SSE streams, JSON-RPC errors the SDK writes itself) passes through as it
// is written, flushes included.
func JSONRPCErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		b, buffered := r.Body.(*bufferedBody)
		if buffered {
			body = b.data
		}
		// A message is checked here as on stdio (jsonrpcmsg), before the
		// SDK, which lets some malformed ones through (a fractional id,
		// a message with neither method nor result, a batch).
		if r.Method == http.MethodPost && len(bytes.TrimSpace(body)) > 0 {
			_, info, id, code, reason := jsonrpcmsg.Inspect(body, jsondepth.Max)
			if code != 0 {
				writeRPCErrorCode(w, http.StatusBadRequest, id, code, reason)
				return
			}
			// What the session limiter reads of the message (peek).
			b.info, b.checked = info, true
		}
		rw := &rpcErrorWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		if rw.held {
			writeRPCError(w, rw.status, body, rw.buf.String())
		}
	})
}

// rpcErrorWriter holds back a plain-text error response, passing anything
// else on.
type rpcErrorWriter struct {
	http.ResponseWriter
	held   bool // a plain-text error is being held in buf
	passed bool // a final status was passed on
	status int
	buf    bytes.Buffer
}

func (w *rpcErrorWriter) WriteHeader(code int) {
	switch {
	case w.held:
		return
	case !w.passed && code >= 400 && isPlainText(w.Header().Get("Content-Type")):
		w.held, w.status = true, code
		return
	case code >= 200:
		w.passed = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrorWriter) Write(b []byte) (int, error) {
	if w.held {
		return w.buf.Write(b)
	}
	if !w.passed {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on (SSE streams), except of a held error.
func (w *rpcErrorWriter) Flush() {
	if w.held {
		return
	}
	w.passed = true // net/http sends 200 if nothing was written
	if f, ok := w.ResponseWriter.(interface{ FlushError() error }); ok {
		f.FlushError() // net/http's own writer: no controller per flush
		return
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func isPlainText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/plain"
}

// writeRPCError writes the JSON-RPC error for the SDK's plain-text error msg
// with status, to the request of body (nil when unknown).
func writeRPCError(w http.ResponseWriter, status int, body []byte, msg string) {
	msg = strings.TrimSpace(msg)
	code := rpcInvalidRequest
	switch {
	case status >= 500:
		code = rpcInternalError
	case strings.Contains(msg, "JSON RPC not handled"):
		code = rpcMethodNotFound
	case strings.Contains(msg, "nesting depth"):
		code = rpcParseError
	case strings.HasPrefix(msg, "malformed payload: unmarshaling"):
		// The SDK could not decode the body: a parse error, unless the body
		// is JSON but no JSON-RPC message ("x", a method that is a number).
		if body == nil || !json.Valid(body) {
			code = rpcParseError
		}
	}
	id := json.RawMessage("null")
	if code != rpcParseError {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || m.ID[0] >= '0' && m.ID[0] <= '9') {
			id = m.ID
		}
	}
	writeRPCErrorCode(w, status, id, code, msg)
}

// writeRPCErrorCode writes a JSON-RPC error response with the given HTTP
// status; a nil id is null.
func writeRPCErrorCode(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, msg
	b, err := json.Marshal(resp)
	if err != nil { // cannot happen: the shape always marshals
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encode error"}}`)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Del("Content-Length")
	w.WriteHeader(status)
	w.Write(b)
}
