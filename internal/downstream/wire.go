package downstream

import (
	"bytes"
	"mime"
	"strings"
)

// The Streamable HTTP wire details that both raw users of a downstream
// server share: the proxy's passthrough (internal/proxy) and the
// workbench's raw tools/call ([HTTPSession.CallTool]).

// Headers of the Streamable HTTP transport.
const (
	SessionHeader     = "Mcp-Session-Id"
	VersionHeader     = "Mcp-Protocol-Version"
	LastEventIDHeader = "Last-Event-ID"
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
