package mcpkit

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/mcpsession"
)

// OpenOnInitialize returns a receiving middleware that runs open in the
// background when a client's initialize succeeds, and makes the session's
// tools/list requests wait until that run has ended (or the request is
// cancelled). A session runs one opening at a time: a repeated initialize
// (which the SDK refuses anyway) starts none, and a session's entry is
// removed when its opening ends, so none outlives it. A [Sessionless]
// request has no initialize before it, nor has a session restored from the
// store on another replica than the one it began on: their tools/list runs
// open itself and waits for it.
func OpenOnInitialize(open func(context.Context)) mcp.Middleware {
	mw, _ := openOnInitialize(open)
	return mw
}

// openings are the sessions whose opening runs.
type openings struct {
	mu      sync.Mutex
	running map[mcp.Session]chan struct{} // closed when the opening ends
}

// sessions counts the sessions whose opening runs.
func (o *openings) sessions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.running)
}

// start runs open for sess in the background unless an opening of sess
// runs already.
func (o *openings) start(ctx context.Context, sess mcp.Session, open func(context.Context)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.running[sess]; ok {
		return
	}
	done := make(chan struct{})
	o.running[sess] = done
	go func() {
		defer func() {
			o.mu.Lock()
			delete(o.running, sess)
			o.mu.Unlock()
			close(done)
		}()
		open(ctx)
	}()
}

// wait waits for the opening of sess, if one runs, or for ctx; waited
// reports whether one ran.
func (o *openings) wait(ctx context.Context, sess mcp.Session) (waited bool, err error) {
	o.mu.Lock()
	done := o.running[sess]
	o.mu.Unlock()
	if done == nil {
		return false, nil
	}
	select {
	case <-done:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

func openOnInitialize(open func(context.Context)) (mcp.Middleware, *openings) {
	o := &openings{running: map[mcp.Session]chan struct{}{}}
	mw := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				// The opening starts before the initialize result goes out,
				// so the session's first tools/list finds it.
				res, err := next(ctx, method, req)
				if err == nil {
					o.start(context.WithoutCancel(ctx), req.GetSession(), open)
				}
				return res, err
			case "tools/list", "prompts/list", "resources/list", "resources/templates/list",
				// A downstream prompt or resource named before its server
				// connected (a client that sends at once what it knows).
				"prompts/get", "resources/read", "completion/complete":
				if !Sessionless(req) {
					waited, err := o.wait(ctx, req.GetSession())
					if err != nil {
						return nil, err
					}
					if waited || !mcpsession.Restored(ctx) {
						break
					}
				}
				// A sessionless request had no initialize before it (and
				// its session ends with it), and a session restored from
				// the store on this replica passed its initialize on
				// another: the request runs the opening itself (at once
				// over when the toolboxes are open, as
				// workbench.Manager.OpenAll is idempotent) and waits for
				// it, bounded by the request.
				open(ctx)
			}
			return next(ctx, method, req)
		}
	}
	return mw, o
}
