package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// The wire details of the raw passthrough (raw.go): headers, envelopes,
// SSE events, and the JSON-RPC errors the proxy writes itself.

// copyHeader copies the headers of a downstream response that concern the
// upstream client.
func copyHeader(dst, src http.Header) {
	for _, k := range [...]string{"Content-Type", "Cache-Control", "Allow", "Retry-After"} {
		if v := src.Values(k); len(v) > 0 {
			dst[k] = v
		}
	}
}

// postHeadersOK reports whether a POST has the Content-Type and Accept the
// SDK's handler requires, writing its error if not.
func postHeadersOK(w http.ResponseWriter, r *http.Request) bool {
	if mcpwire.MediaType(r.Header.Get("Content-Type")) != "application/json" {
		if w != nil {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		}
		return false
	}
	if jsonOK, streamOK := mcpwire.Accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		if w != nil {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		}
		return false
	}
	return true
}

// versionHeaderOK reports whether the MCP-Protocol-Version header is absent
// or one the endpoint speaks, writing the SDK handler's error if not.
func versionHeaderOK(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get(mcpwire.VersionHeader)
	if v == "" || v >= mcpwire.Sessionless || mcpwire.IsHandshake(v) {
		return true
	}
	if w != nil {
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(mcpwire.HandshakeVersions(), ",")), http.StatusBadRequest)
	}
	return false
}

// envelope is what the raw passthrough decodes of a message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (m *envelope) isRequest() bool { return len(m.ID) > 0 && m.Method != "" }

// replaceResult returns the response msg with its result replaced by res.
func replaceResult(msg []byte, res any) []byte {
	var full map[string]json.RawMessage
	if json.Unmarshal(msg, &full) != nil {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil
	}
	full["result"] = b
	out, err := json.Marshal(full)
	if err != nil {
		return nil
	}
	return out
}

// editSSE returns an SSE body whose first event that edit changes (edit
// returns its new data, nil to leave it) is replaced; nil if none is.
func editSSE(data []byte, edit func(msg []byte) []byte) []byte {
	var out []byte
	done := false
	for len(data) > 0 {
		end, lines, ok := mcpwire.NextEvent(data, true)
		if !ok {
			out = append(out, data...)
			break
		}
		ev := data[:end]
		if !done {
			if msg := mcpwire.EventData(lines); msg != nil {
				if b := edit(msg); b != nil {
					ev, done = rewriteEvent(lines, b), true
				}
			}
		}
		out = append(out, ev...)
		data = data[end:]
	}
	if !done {
		return nil
	}
	return out
}

// rewriteEvent returns an event with the lines of an event other than its
// data, and data.
func rewriteEvent(lines [][]byte, data []byte) []byte {
	var b []byte
	for _, line := range lines {
		if field, _, _ := bytes.Cut(line, []byte(":")); string(field) == "data" {
			continue
		}
		b = append(b, line...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, '\n', '\n')
}

// isResponse reports whether msg is the response to the request id.
func isResponse(msg []byte, id json.RawMessage) bool {
	// Most events are the response: check its id without decoding the
	// rest of it.
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == nil && bytes.Equal(m.ID, id)
}

// filterResponse filters the tools of a tools/list response message.
func filterResponse(msg []byte, filters []string) []byte {
	var m envelope
	if json.Unmarshal(msg, &m) != nil || len(m.Result) == 0 {
		return msg
	}
	res, err := filterToolList(m.Result, filters)
	if err != nil {
		return msg
	}
	if out := replaceResult(msg, json.RawMessage(res)); out != nil {
		return out
	}
	return msg
}

// JSON-RPC error codes of the proxy's own errors.
const (
	codeInvalidParams = -32602
	codeInternalError = -32603
)
