// Package relay carries a tool call's caller to where the call is served,
// so that what a downstream MCP server sends while it runs a call Nexus made
// for a client reaches that client: progress notifications, log messages,
// and its requests for input (elicitation, sampling, roots), whose answers
// go back down. What the client sends down with its call (its progress
// token, the answers of a multi-round-trip retry) travels here too;
// cancellation travels as the call's context.
//
// An MCP surface puts the [Caller] of each tools/call in the call's context
// ([With]); the workbench reads it ([From]) when it calls a downstream
// server. A call with no caller (REST, the chat loop, a CLI call) gets no
// relay: its downstream requests for input are refused with a clear error.
package relay

//lint:file-ignore SA1019 logging, sampling and roots are relayed for the clients and servers of the protocol versions that have them (SEP-2577 deprecates them)

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// Caller is the MCP client a tool call runs for, as far as the call may
// reach it while it runs.
type Caller struct {
	// Session is the client's session on the surface it called (for a
	// client of the sessionless protocol, the SDK's session of its one
	// request).
	Session *mcp.ServerSession
	// ProgressToken is the token the client gave its call (nil: it wants
	// no progress notifications).
	ProgressToken any
	// InputResponses and RequestState are what a client of the sessionless
	// protocol sends when it retries a call that needed input (the
	// multi-round-trip protocol): they go down to the server that asked.
	InputResponses mcp.InputResponseMap
	RequestState   string
}

type key struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the caller ctx carries, or nil.
func From(ctx context.Context) *Caller {
	c, _ := ctx.Value(key{}).(*Caller)
	return c
}

// FromRequest is the caller of an MCP tools/call request, for a surface's
// receiving middleware to put in the call's context: its session, progress
// token and multi-round-trip answers.
func FromRequest(req *mcp.CallToolRequest) *Caller {
	c := &Caller{Session: req.Session}
	if p := req.Params; p != nil {
		c.ProgressToken = p.GetProgressToken()
		c.InputResponses, c.RequestState = p.InputResponses, p.RequestState
	}
	return c
}

// ErrCannotAsk is why a request for input of a downstream server was not
// passed to the calling client; the error names the reason.
var ErrCannotAsk = errors.New("the calling client cannot be asked")

func cannot(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrCannotAsk, fmt.Sprintf(format, a...))
}

// Sessionless reports whether the caller speaks the sessionless protocol:
// it cannot be sent requests while a call runs, so a downstream server's
// need for input reaches it as an input-required result instead.
func (c *Caller) Sessionless() bool {
	if c == nil || c.Session == nil {
		return false
	}
	ip := c.Session.InitializeParams()
	return ip != nil && !mcpwire.IsHandshake(ip.ProtocolVersion)
}

// Capabilities are the capabilities the caller declared (empty when there
// is no caller).
func (c *Caller) Capabilities() *mcp.ClientCapabilities {
	if c != nil && c.Session != nil {
		if ip := c.Session.InitializeParams(); ip != nil && ip.Capabilities != nil {
			return ip.Capabilities
		}
	}
	return &mcp.ClientCapabilities{}
}

// askable reports why the caller cannot be sent a request for input that
// needs capability what (nil: it can).
func (c *Caller) askable(what string, declared bool) error {
	switch {
	case c == nil || c.Session == nil:
		return cannot("the tool was called without an MCP session (over REST, in the chat or from the command line), so there is no client to ask for %s", what)
	case c.Sessionless():
		return cannot("the client speaks the sessionless protocol, which takes no requests while a call runs; the server asked for %s during the call instead of answering with an input-required result", what)
	case !declared:
		return cannot("the client did not declare the %s capability", what)
	}
	return nil
}

// Progress sends the caller a progress notification of its call, under its
// own token; nothing when it gave none. ctx is the call's request context,
// which the SDK relates the notification to (the request's stream).
func (c *Caller) Progress(ctx context.Context, p *mcp.ProgressNotificationParams) error {
	if c == nil || c.Session == nil || c.ProgressToken == nil {
		return nil
	}
	q := *p
	q.ProgressToken = c.ProgressToken
	return c.Session.NotifyProgress(ctx, &q)
}

// Log sends the caller a log message of its call, if the client asked for
// messages of that level.
func (c *Caller) Log(ctx context.Context, p *mcp.LoggingMessageParams) error {
	if c == nil || c.Session == nil {
		return nil
	}
	return c.Session.Log(ctx, p)
}

// Elicit asks the caller's user for input (elicitation/create).
func (c *Caller) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if err := c.askable("elicitation", c.Capabilities().Elicitation != nil); err != nil {
		return nil, err
	}
	return c.Session.Elicit(ctx, p)
}

// CreateMessage asks the caller's model for a message
// (sampling/createMessage).
func (c *Caller) CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	if err := c.askable("sampling", c.Capabilities().Sampling != nil); err != nil {
		return nil, err
	}
	return c.Session.CreateMessageWithTools(ctx, p)
}

// ListRoots asks the caller for its roots (roots/list).
func (c *Caller) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	// The SDK cannot tell a client that declared roots without
	// listChanged from one that did not declare roots (go-sdk#607): the
	// client is asked, and one without roots answers so.
	if err := c.askable("roots", true); err != nil {
		return nil, err
	}
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	return c.Session.ListRoots(ctx, p)
}

// Ask asks the caller for one input (an elicitation, a sampling or a
// roots request) and returns its answer.
func (c *Caller) Ask(ctx context.Context, r mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := r.(type) {
	case *mcp.ElicitParams:
		return c.Elicit(ctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return c.CreateMessage(ctx, p)
	case *mcp.CreateMessageParams:
		return c.CreateMessage(ctx, withTools(p))
	case *mcp.ListRootsParams:
		return c.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("unknown kind of input request %T", r)
}

// Fulfill answers the input requests of a multi-round-trip result by asking
// the caller, one request at a time, and returns the answers by request id.
func (c *Caller) Fulfill(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	out := make(mcp.InputResponseMap, len(reqs))
	for id, r := range reqs {
		res, err := c.Ask(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		out[id] = res
	}
	return out, nil
}

// withTools is a sampling request of the older shape in the shape with
// tools, which every client that samples takes.
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Content: []mcp.Content{m.Content}, Role: m.Role})
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}
