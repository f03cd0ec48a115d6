// Package jsonrpcmsg checks that a message is a JSON-RPC 2.0 message as
// MCP allows it, and says what is wrong when it is not: one JSON object (no
// batches), nested at most so deep, with "jsonrpc": "2.0", an id that is
// absent, a string or an integer, and either a string method with object
// params (a request or notification) or a result or error with an id (a
// response). Every transport checks messages here before the MCP SDK sees
// them, so that stdio and HTTP refuse the same messages with the same words.
package jsonrpcmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nexus-mcp/nexus/internal/jsondepth"
)

// JSON-RPC error codes of refused messages.
const (
	CodeParseError     = jsonrpc.CodeParseError     // -32700: not JSON
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: JSON, but not a JSON-RPC 2.0 message
)

// Check validates one message. It returns the message, or the id to answer
// with (nil when unknown), the error code ([CodeParseError] or
// [CodeInvalidRequest]) and the reason, which names what is wrong.
func Check(line []byte, maxDepth int) (_ jsonrpc.Message, id json.RawMessage, code int, reason string) {
	raw, id, code, reason := Validate(line, maxDepth)
	if code != 0 {
		return nil, id, code, reason
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, id, CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return msg, nil, 0, ""
}

// Validate is [Check] without decoding the message, for a transport that
// hands the bytes on (HTTP, to the MCP SDK): it returns the message trimmed
// of white space, or the id to answer with, the error code and the reason.
func Validate(line []byte, maxDepth int) (raw, id json.RawMessage, code int, reason string) {
	raw, _, id, code, reason = Inspect(line, maxDepth)
	return raw, id, code, reason
}

// Info is what a transport may want to know of a valid message without
// decoding it.
type Info struct {
	// Method is the method of a request or notification, "" for a
	// response.
	Method string
	// HasID reports that the message has an id: a request or a response.
	HasID bool
	// ID is the message's id, nil when it has none.
	ID json.RawMessage
}

// Inspect is [Validate], also returning what info says of a valid message.
func Inspect(line []byte, maxDepth int) (raw json.RawMessage, info Info, id json.RawMessage, code int, reason string) {
	if d := jsondepth.Of(line, maxDepth); d > maxDepth {
		return nil, info, nil, CodeParseError, fmt.Sprintf("Parse error: nested deeper than %d levels", maxDepth)
	}
	if !json.Valid(line) {
		var v json.RawMessage
		err := json.Unmarshal(line, &v) // says where and why
		return nil, info, nil, CodeParseError, "Parse error: " + err.Error()
	}
	switch raw = bytes.TrimSpace(line); raw[0] {
	case '{':
	case '[':
		return nil, info, nil, CodeInvalidRequest, "Invalid Request: batches are not supported; send one message per line"
	default:
		return nil, info, nil, CodeInvalidRequest, "Invalid Request: a message must be a JSON object"
	}
	var m members // a member present (even as null) is non-empty
	m.read(raw)
	hasID := len(m.ID) > 0
	if hasID {
		if err := checkID(m.ID); err != nil {
			return nil, info, nil, CodeInvalidRequest, "Invalid Request: " + err.Error()
		}
		id = m.ID
	}
	if len(m.JSONRPC) == 0 {
		return nil, info, id, CodeInvalidRequest, `Invalid Request: "jsonrpc" is missing; it must be "2.0"`
	}
	if string(m.JSONRPC) != `"2.0"` {
		return nil, info, id, CodeInvalidRequest, fmt.Sprintf(`Invalid Request: "jsonrpc" is %s; it must be "2.0"`, clip(m.JSONRPC))
	}
	hasResult, hasError := len(m.Result) > 0, len(m.Error) > 0
	if len(m.Method) > 0 {
		if m.Method[0] != '"' {
			return nil, info, id, CodeInvalidRequest, `Invalid Request: "method" must be a string`
		}
		if hasResult || hasError {
			return nil, info, id, CodeInvalidRequest, `Invalid Request: a message has either "method" or "result"/"error", not both`
		}
		if p := m.Params; len(p) > 0 && p[0] != '{' && string(p) != "null" {
			return nil, info, id, CodeInvalidRequest, `Invalid Request: "params" must be an object`
		}
		info.Method = unquote(m.Method)
	} else {
		switch {
		case hasResult == hasError:
			return nil, info, id, CodeInvalidRequest, `Invalid Request: a request needs "method"; a response needs "result" or "error" (one of them)`
		case !hasID:
			return nil, info, id, CodeInvalidRequest, `Invalid Request: a response needs an "id"`
		}
		if hasError && m.Error[0] != '{' {
			return nil, info, id, CodeInvalidRequest, `Invalid Request: "error" must be an object`
		}
	}
	info.HasID = hasID
	if hasID {
		info.ID = id
	}
	return raw, info, nil, 0, ""
}

// maxExactInt is the largest integer a float64 (the SDK's id type for
// numbers) holds exactly.
const maxExactInt = 1 << 53

// checkID accepts a string or an integer id (MCP: never null).
func checkID(raw json.RawMessage) error {
	switch raw[0] {
	case '"':
		return nil
	case 'n':
		return errors.New(`"id" must not be null (MCP); omit it for a notification`)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			if n > maxExactInt || n < -maxExactInt {
				return fmt.Errorf(`"id" %s is too large (at most 2^53)`, raw)
			}
			return nil
		}
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
			return nil
		}
		return fmt.Errorf(`"id" %s is not an integer`, clip(raw))
	}
	return fmt.Errorf(`"id" must be a string or an integer, not %s`, clip(raw))
}

// clip shortens a JSON value quoted in an error message.
func clip(v []byte) string {
	const n = 40
	if len(v) > n {
		return string(v[:n]) + "..."
	}
	return string(v)
}
