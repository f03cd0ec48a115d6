package proxy

import (
	"context"
	"encoding/json"
	"github.com/nexus-mcp/nexus/internal/config"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tapTransport wraps the transport to a downstream server so that the proxy
// sees the messages as they cross the connection.
//
// The SDK delivers responses to the waiting caller as soon as they are read
// but queues notifications for a handler goroutine, so a notification sent
// just before a response could be forwarded after it. The tap forwards
// notifications upstream as it reads them, before it reads what follows, so
// they keep their order; it also keeps the raw result of forwarded calls so
// that it is passed on unchanged.
type tapTransport struct {
	inner mcp.Transport
	l     *link
}

// Connect connects the inner transport with a context that lasts as long as
// the link (an SSE client's stream lives as long as its connect context) and
// that ctx cancels only while connecting.
func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cctx, cancel := context.WithCancel(t.l.ctx)
	stop := context.AfterFunc(ctx, cancel)
	c, err := t.inner.Connect(cctx)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	return &tapConn{Connection: c, l: t.l, cancel: cancel, pending: map[jsonrpc.ID]*rawSlot{}}, nil
}

type tapConn struct {
	mcp.Connection
	l      *link
	cancel context.CancelFunc // of the connect context

	mu      sync.Mutex
	pending map[jsonrpc.ID]*rawSlot // forwarded calls awaiting their response
}

// slotKey is the context key of the rawSlot of a forwarded call.
type slotKey struct{}

// rawSlot receives the raw result of one forwarded call.
type rawSlot struct {
	raw atomic.Pointer[json.RawMessage]

	// Set by the tap when the call is written.
	mu   sync.Mutex
	conn *tapConn
	id   jsonrpc.ID
}

// result is the raw result of the call, or nil if no successful response
// was read (or the connection is not tapped).
func (s *rawSlot) result() json.RawMessage {
	if p := s.raw.Load(); p != nil {
		return *p
	}
	return nil
}

// forget stops waiting for the response (of a call that was cancelled).
func (s *rawSlot) forget() {
	s.mu.Lock()
	c, id := s.conn, s.id
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.pending[id] == s {
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

func (c *tapConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

func (c *tapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if s, _ := ctx.Value(slotKey{}).(*rawSlot); s != nil {
			s.mu.Lock()
			s.conn, s.id = c, req.ID
			s.mu.Unlock()
			c.mu.Lock()
			c.pending[req.ID] = s
			c.mu.Unlock()
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			c.mu.Lock()
			s := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if s != nil && m.Error == nil && m.Result != nil {
				raw := slices.Clone(m.Result)
				s.raw.Store((*json.RawMessage)(&raw))
			}
		case *jsonrpc.Request:
			if !m.IsCall() && forwardedUp(m.Method) {
				c.l.notifyUp(m.Method, m.Params)
				continue
			}
		}
		return msg, nil
	}
}

// rawParams are params marshaled as given.
type rawParams struct {
	mcp.ParamsBase
	raw json.RawMessage
}

func (p *rawParams) MarshalJSON() ([]byte, error) { return p.raw, nil }

// rawResult is a result marshaled as given.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// filterToolList removes the tools not selected by filters from a raw
// tools/list result.
func filterToolList(raw json.RawMessage, filters []string) (json.RawMessage, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(res["tools"], &tools); err != nil {
		return nil, err
	}
	kept := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		var tool struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &tool) == nil && !config.Selected(filters, tool.Name) {
			continue
		}
		kept = append(kept, t)
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	res["tools"] = b
	return json.Marshal(res)
}
