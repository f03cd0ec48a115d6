package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// Every tools/call the proxy forwards is recorded as the pipeline records
// the calls it runs (SPEC section 5): traced and counted, through
// Options.Record (the pipeline's RecordPassthrough). The proxy still
// carries the messages as written; it only reads what the record needs:
// the tool's name and the size of its arguments from the request, and from
// the answer its size, whether it is an error (and its code) or a result
// marked isError.

// toolCall is a forwarded tools/call being answered.
type toolCall struct {
	ep    *endpoint
	ctx   context.Context // the caller's (its principal)
	tool  string
	args  int
	start time.Time
	done  bool
}

// beginCall starts the record of a tools/call of tool with args bytes of
// arguments, or returns nil when the proxy records nothing.
func (ep *endpoint) beginCall(ctx context.Context, tool string, args int) *toolCall {
	if ep.p.record == nil {
		return nil
	}
	return &toolCall{ep: ep, ctx: ctx, tool: tool, args: args, start: time.Now()}
}

// answered records the call answered with msg, a JSON-RPC response.
func (c *toolCall) answered(msg []byte) {
	if c == nil || c.done {
		return
	}
	var resp struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &resp) != nil {
		c.finish(len(msg), errs.Unavailable, false)
		return
	}
	var code errs.Code
	if resp.Error != nil {
		code = rpcCode(resp.Error.Code)
	}
	c.finish(len(msg), code, resp.Result != nil && resp.Result.IsError)
}

// result records the call answered on the SDK path with res or err.
func (c *toolCall) result(res mcp.Result, err error) {
	if c == nil || c.done {
		return
	}
	if err != nil {
		var werr *jsonrpc.Error
		code := errs.Unavailable
		if errors.As(err, &werr) {
			code = rpcCode(werr.Code)
		}
		c.finish(len(err.Error()), code, false)
		return
	}
	switch r := res.(type) {
	case *rawResult:
		var v struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(r.raw, &v)
		c.finish(len(r.raw), "", v.IsError)
	case *mcp.CallToolResult:
		data, _ := json.Marshal(r)
		c.finish(len(data), "", r.IsError)
	default:
		c.finish(0, "", false)
	}
}

// failed records a call that got no answer from the server (unreachable,
// timed out, cut short): the client got an error of the proxy's.
func (c *toolCall) failed(size int) {
	if c == nil || c.done {
		return
	}
	c.finish(size, errs.Unavailable, false)
}

func (c *toolCall) finish(size int, code errs.Code, isError bool) {
	c.done = true
	c.ep.p.record(c.ctx, pipeline.Passthrough{
		Toolbox: c.ep.toolbox, Server: c.ep.name, Tool: c.tool, Start: c.start, Duration: time.Since(c.start),
		ArgsBytes: c.args, ResultBytes: size, Err: code, IsError: isError,
	})
}

// rpcCode names a JSON-RPC error of a tools/call as the pipeline names a
// downstream failure: invalid parameters (an unknown tool among them) are
// the caller's; anything else is the server's.
func rpcCode(code int64) errs.Code {
	if code == jsonrpc.CodeInvalidParams {
		return errs.BadRequest
	}
	return errs.Unavailable
}
