package workbench

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Raw tools/call requests. A Streamable HTTP server is connected with the
// handshake protocol ([mcpwire.LatestHandshake]), and its tool calls are
// POSTed as bytes on the SDK client's session ([downstream.HTTPSession]):
// the SDK client's connection machinery (its JSON-RPC connection, the
// decoding of every message into SDK types and back, its SSE reader) costed
// about a quarter of Nexus's CPU on a flat call. The SDK client keeps the
// session (listing, list_changed on its standalone stream, the session's
// end), and calls go through it for the other transports, for a server
// that negotiated the sessionless protocol, after a 404, and with
// [Options.SDKCalls].

// rawSession is the raw-call session of cs, when cs is a Streamable HTTP
// session of the handshake protocol; nil otherwise.
func (s *server) rawSession(cs *mcp.ClientSession) *downstream.HTTPSession {
	if s.hc == nil || s.m.noRaw {
		return nil
	}
	ir := cs.InitializeResult()
	if ir == nil || !downstream.RawOK(ir.ProtocolVersion) {
		return nil
	}
	return &downstream.HTTPSession{URL: s.cfg.URL, ID: cs.ID(), Version: ir.ProtocolVersion, Client: s.hc,
		Notify: func(method string, _ json.RawMessage) {
			if method == "notifications/tools/list_changed" {
				select {
				case s.refresh <- struct{}{}:
				default: // a refresh is already pending
				}
			}
		}}
}

// rawCall makes a tools/call as raw HTTP on sess and returns its result,
// decoded as the SDK client decodes it, with its JSON as it came (which the
// pipeline takes as the call's result instead of encoding it again).
func rawCall(ctx context.Context, sess *downstream.HTTPSession, tool string, args json.RawMessage, x *downstream.Exchange) (*registry.Encoded, error) {
	raw, err := sess.CallTool(ctx, tool, args, x)
	if err != nil {
		return nil, err
	}
	res, err := decodeResult(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding the result of tool %q: %w", tool, err)
	}
	return &registry.Encoded{Value: res, JSON: raw}, nil
}

// textResult is the wire form of a tool result whose content is text only,
// the common case, which decodeResult reads without the SDK's decoder (it
// makes a decoder, and a buffer of 32 KB or more, per message).
type textResult struct {
	Meta    mcp.Meta `json:"_meta,omitempty"`
	Content []struct {
		Type        string           `json:"type"`
		Text        string           `json:"text"`
		Meta        mcp.Meta         `json:"_meta"`
		Annotations *mcp.Annotations `json:"annotations"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	// Only the SDK's decoder keeps these (a multi-round-trip result).
	ResultType json.RawMessage `json:"resultType"`
}

// decodeResult decodes a tools/call result as the SDK client does: a
// result whose content is text only is decoded here (structuredContent is
// kept as its JSON), anything else by the SDK's own decoder.
func decodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var w textResult
	if err := json.Unmarshal(raw, &w); err == nil && w.ResultType == nil && textOnly(&w) {
		res := &mcp.CallToolResult{Meta: w.Meta, IsError: w.IsError, Content: make([]mcp.Content, len(w.Content))}
		for i, c := range w.Content {
			res.Content[i] = &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: c.Annotations}
		}
		if len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
			res.StructuredContent = w.StructuredContent
		}
		return res, nil
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// textOnly reports whether every content item of w is text.
func textOnly(w *textResult) bool {
	for _, c := range w.Content {
		if c.Type != "text" {
			return false
		}
	}
	return true
}
