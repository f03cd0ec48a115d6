package workbench

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/relay"
)

// Held calls. A client of the sessionless protocol (2026-07-28) takes no
// request while a call runs: a server that needs its input answers with an
// input-required result, and the client calls again with its answers (the
// multi-round trip, SEP-2322). A server of the handshake protocol, which
// Nexus speaks with downstream servers, asks during the call instead, and
// waits. So the call is held: Nexus answers the client's call with the
// server's requests as input requests and a request state naming the held
// call, while the server's call goes on, waiting; the client's retry that
// carries that state resumes it: its answers go to the server, and the
// retry is answered with the call's result, or with the server's next
// requests.
//
// A held call lives in this process, within the server's call timeout: a
// retry that reaches another replica, or comes too late, is told to call
// the tool again.

// heldPrefix starts the request state of a held call.
const heldPrefix = "nexus-held:"

// flight is a downstream call made for a client of the sessionless
// protocol, which may be held.
type flight struct {
	ctx    context.Context // the call's own, beyond any one request of the client
	cancel context.CancelFunc
	asks   chan *ask    // the server's requests for input
	done   chan outcome // the call's outcome (capacity 1)
	// Touched by one request of the client at a time (the held call is
	// taken from holds by one retry).
	seq     int
	waiting map[string]*ask // asked of the client, by input request id
	handle  string          // the request state naming it while held (guarded by holds.mu)
}

// ask is one request of the server for input and where its answer goes.
type ask struct {
	req   mcp.InputRequest
	reply chan answer // capacity 1
}

type answer struct {
	res mcp.InputResponse
	err error
}

type outcome struct {
	res any
	err error
}

func newFlight() *flight {
	return &flight{asks: make(chan *ask), done: make(chan outcome, 1), waiting: map[string]*ask{}}
}

// ask passes a request of the server to the client's request that waits
// for the call, and waits for the client's answer.
func (f *flight) ask(r mcp.InputRequest) (mcp.InputResponse, error) {
	a := &ask{req: r, reply: make(chan answer, 1)}
	select {
	case f.asks <- a:
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
	select {
	case ans := <-a.reply:
		return ans.res, ans.err
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
}

// holds are a server's held calls, by request state.
type holds struct {
	mu   sync.Mutex
	held map[string]*heldCall
}

type heldCall struct {
	tool, user string // what was called, by whom
	ic         *inCall
}

// userKey carries the id of the user a downstream call acts as
// (registry.Call.User), to whom a held call belongs.
type userKey struct{}

func withUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userKey{}, id)
}

func userOf(ctx context.Context) string {
	id, _ := ctx.Value(userKey{}).(string)
	return id
}

func (h *holds) put(tool, user string, ic *inCall) string {
	handle := heldPrefix + rand.Text()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[string]*heldCall{}
	}
	h.held[handle] = &heldCall{tool: tool, user: user, ic: ic}
	ic.flight.handle = handle
	return handle
}

// take takes the held call handle names, if it is user's call of tool: a
// request state grants nothing to anyone else, who finds no held call (and
// leaves it held for its user).
func (h *holds) take(handle, tool, user string) *heldCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	hc := h.held[handle]
	if hc == nil || hc.tool != tool || hc.user != user {
		return nil
	}
	delete(h.held, handle)
	if hc != nil {
		hc.ic.flight.handle = ""
	}
	return hc
}

// drop forgets the held call of f, if it is held.
func (h *holds) drop(f *flight) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.handle != "" {
		delete(h.held, f.handle)
	}
}

// fly makes the call of ic, a client of the sessionless protocol, in a
// goroutine of its own, bounded by the server's call timeout, and answers
// the client's request with its outcome or the server's first requests
// for input (await).
func (s *server) fly(ctx context.Context, sess *session, tool string, args []byte, ic *inCall) (any, error) {
	f := ic.flight
	f.ctx, f.cancel = context.WithTimeout(context.WithoutCancel(ctx), s.timeout())
	stop := context.AfterFunc(s.ctx, f.cancel)
	started := s.goroutine(func() {
		defer stop()
		defer f.cancel()
		defer s.relays.end(ic)
		defer s.holds.drop(f)
		res, err := s.invoke(f.ctx, sess, tool, args, ic)
		ic.flush()
		if err != nil {
			err = s.callError(s.ctx, f.ctx, sess, tool, err)
		}
		f.done <- outcome{res, err}
	})
	if !started {
		stop()
		f.cancel()
		s.relays.end(ic)
		return nil, s.closedErr()
	}
	return s.await(ctx, tool, ic)
}

// resume continues the held call that the retry of caller c names: the
// client's answers go to the server, and the retry is answered as the
// first request was (await).
func (s *server) resume(ctx context.Context, tool string, c *relay.Caller) (any, error) {
	hc := s.holds.take(c.RequestState, tool, userOf(ctx))
	if hc == nil {
		return nil, errs.E(errs.BadRequest, "Tool '%s' on server '%s' (toolbox '%s'): the call this retry continues is no longer held here (it ended, timed out, or is held by another replica); call the tool again", tool, s.name, s.toolbox)
	}
	ic := hc.ic
	f := ic.flight
	ic.rebind(ctx, c)
	for id, a := range f.waiting {
		if res, ok := c.InputResponses[id]; ok {
			a.reply <- answer{res: res}
		} else {
			a.reply <- answer{err: fmt.Errorf("%w: the client's retry has no answer to input request %q", relay.ErrCannotAsk, id)}
		}
		delete(f.waiting, id)
	}
	return s.await(ctx, tool, ic)
}

// await answers a request of the client with the call's outcome, or, when
// the server asks for input first, with an input-required result naming
// the held call.
func (s *server) await(ctx context.Context, tool string, ic *inCall) (any, error) {
	f := ic.flight
	select {
	case o := <-f.done:
		return o.res, o.err
	case a := <-f.asks:
		reqs := mcp.InputRequestMap{}
		add := func(a *ask) {
			f.seq++
			id := "nexus-" + strconv.Itoa(f.seq)
			f.waiting[id] = a
			reqs[id] = a.req
		}
		add(a)
		for more := true; more; { // a server may ask several at once
			select {
			case a := <-f.asks:
				add(a)
			default:
				more = false
			}
		}
		// What the server sent before it asked reaches the client before
		// this request's answer ends its stream.
		ic.flush()
		return &mcp.CallToolResult{InputRequests: reqs, RequestState: s.holds.put(tool, userOf(ctx), ic)}, nil
	case <-ctx.Done():
		f.cancel()
		return nil, &errs.Error{Code: errs.Unavailable, Err: ctx.Err(),
			Message: fmt.Sprintf("Call of tool '%s' on server '%s' (toolbox '%s') was cancelled", tool, s.name, s.toolbox)}
	}
}

// held reports whether c is the retry of a held call.
func held(c *relay.Caller) bool {
	return c != nil && strings.HasPrefix(c.RequestState, heldPrefix)
}
