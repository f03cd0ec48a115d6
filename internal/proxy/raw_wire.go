package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/nexus-mcp/nexus/internal/jsondepth"
	"github.com/nexus-mcp/nexus/internal/jsonrpcmsg"
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

// writeError answers a request of the raw passthrough with a JSON-RPC error
// of the proxy's own (the HTTP status says what failed: -32603 for a 5xx,
// else -32600), to the request id, nil when unknown.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	code := jsonrpcmsg.CodeInvalidRequest
	if status >= 500 {
		code = codeInternalError
	}
	mcpwire.WriteError(w, status, id, code, msg)
}

// messageID is the id of the JSON-RPC message body, nil when it has none
// or is no valid message.
func messageID(body []byte) json.RawMessage {
	if _, info, _, code, _ := jsonrpcmsg.Inspect(body, jsondepth.Max); code == 0 {
		return info.ID
	}
	return nil
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
