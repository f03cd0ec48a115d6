// Package mcpwire holds the details of MCP's Streamable HTTP wire that
// Nexus reads and writes itself where the SDK has no API for them: the
// protocol versions (from the SDK's list), the transport's headers, the
// media types of a POST, SSE events and JSON-RPC error messages. Every
// user of the wire (the HTTP front's fast path, the per-server proxy, the
// raw calls to downstream servers) takes them from here, so that each is
// written once.
package mcpwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sessionless is the first protocol version of the sessionless direction
// of MCP (SEP-2567, SEP-2575): no initialize and no session; a client
// learns the server with server/discover, and every request carries its
// protocol version in the Mcp-Protocol-Version header and in its _meta.
// The versions before it have the initialize handshake and stateful
// sessions (the Mcp-Session-Id header).
const Sessionless = "2026-07-28"

// HandshakeVersions are the protocol versions the SDK supports that have
// the initialize handshake (before [Sessionless]), in the SDK's order
// (newest first, as a server's ServerOptions.SupportedProtocolVersions
// lists them).
func HandshakeVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= Sessionless })
}

// LatestHandshake is the newest protocol version with the initialize
// handshake that the SDK supports.
func LatestHandshake() string { return slices.Max(HandshakeVersions()) }

// IsHandshake reports whether version, the value of a request's
// Mcp-Protocol-Version header, is one of a session with the initialize
// handshake that the SDK accepts: "" (2025-03-26 clients sent no header) or
// one of [HandshakeVersions].
func IsHandshake(version string) bool {
	return version == "" || version < Sessionless && slices.Contains(mcp.SupportedProtocolVersions(), version)
}

// Headers of the Streamable HTTP transport.
const (
	SessionHeader     = "Mcp-Session-Id"
	VersionHeader     = "Mcp-Protocol-Version"
	LastEventIDHeader = "Last-Event-ID"
	// MethodHeader and NameHeader repeat a request's method and, for
	// tools/call, resources/read and prompts/get, its name, from
	// [Sessionless] on (SEP-2243); ParamHeaderPrefix begins the headers that
	// repeat arguments a tool's schema marks with x-mcp-header.
	MethodHeader      = "Mcp-Method"
	NameHeader        = "Mcp-Name"
	ParamHeaderPrefix = "Mcp-Param-"
)

// MediaType is the media type of a Content-Type (or Accept part), in lower
// case; "" if it does not parse.
func MediaType(contentType string) string {
	// The common values, without the parser's allocations.
	switch contentType {
	case "application/json", "text/event-stream":
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// Accepts reports whether the Accept header values take JSON and an event
// stream, by the MCP SDK's rule for a Streamable HTTP POST (each
// comma-separated part's media type, parameters ignored, wildcards
// counted): the passthrough and the HTTP front's fast path answer what the
// SDK would.
func Accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// CheckRequest says what is wrong with r, a POST of a message or a GET of
// a session's stream, by the Streamable HTTP transport's rules: a protocol
// version header of a version of the handshake or of the sessionless
// protocol (whose requests carry their version and are checked each on
// its own), the Accept of a GET (an
// event stream) and of a POST (JSON and an event stream), a POST's
// Content-Type (JSON) and body (not empty: body is what was read of it).
// It returns the HTTP status to answer and the message, which names what is
// wrong; status 0 when nothing is.
func CheckRequest(r *http.Request, body []byte) (status int, message string) {
	h := r.Header
	if v := h.Get(VersionHeader); v != "" && v < Sessionless && !IsHandshake(v) {
		return http.StatusBadRequest, fmt.Sprintf("Bad Request: Unsupported protocol version %q (supported versions: %s)", v, strings.Join(HandshakeVersions(), ","))
	}
	jsonOK, streamOK := Accepts(h.Values("Accept"))
	switch r.Method {
	case http.MethodGet:
		if !streamOK {
			return http.StatusBadRequest, "Accept must contain 'text/event-stream' for GET requests"
		}
	case http.MethodPost:
		if len(bytes.TrimSpace(body)) == 0 {
			return http.StatusBadRequest, "Bad Request: POST requires a non-empty body"
		}
		if MediaType(h.Get("Content-Type")) != "application/json" {
			return http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'"
		}
		if !jsonOK || !streamOK {
			return http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'"
		}
	}
	return 0, ""
}

// NextEvent finds the first complete SSE event of in (lines up to an empty
// line): its length and lines. A lone CR at the end of in may be half of a
// CRLF, so it ends a line only at EOF.
func NextEvent(in []byte, eof bool) (end int, lines [][]byte, ok bool) {
	start := 0
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\n' && c != '\r' {
			continue
		}
		line := in[start:i]
		if c == '\r' {
			if i+1 == len(in) && !eof {
				return 0, nil, false
			}
			if i+1 < len(in) && in[i+1] == '\n' {
				i++
			}
		}
		start = i + 1
		if len(line) == 0 {
			return start, lines, true
		}
		lines = append(lines, line)
	}
	return 0, nil, false
}

// EventData returns the data of an SSE message event (its lines); nil for
// another event or one without data.
func EventData(lines [][]byte) []byte {
	var data []byte
	has := false
	for _, line := range lines {
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			if string(value) != "message" {
				return nil
			}
		case "data":
			if has {
				data = append(data, '\n')
			}
			data = append(data, value...)
			has = true
		}
	}
	return data
}

// EventField returns the value of an SSE event's field name (its last
// occurrence: "id" or "retry"), and whether the event has it.
func EventField(lines [][]byte, name string) (string, bool) {
	var (
		out string
		has bool
	)
	for _, line := range lines {
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) == name {
			out, has = string(bytes.TrimPrefix(value, []byte(" "))), true
		}
	}
	return out, has
}

// AppendEvent appends to dst the SSE message event carrying data (one JSON-RPC
// message, which holds no newline), as the SDK's Streamable HTTP transport
// writes one without an event store: no id.
func AppendEvent(dst, data []byte) []byte {
	dst = append(dst, "event: message\ndata: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// ErrorMessage is the JSON-RPC error response to the request id (null when
// empty) with code and message.
func ErrorMessage(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	e.JSONRPC, e.ID = "2.0", id
	e.Error.Code, e.Error.Message = code, message
	b, err := json.Marshal(e)
	if err != nil { // cannot happen: the shape always marshals
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return b
}

// WriteError answers with a JSON-RPC error response as application/json
// with status.
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(status)
	w.Write(ErrorMessage(id, code, message))
}
