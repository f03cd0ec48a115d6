package workbench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/downstream"
	"github.com/nexus-mcp/nexus/internal/mcpwire"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/sdklog"
)

// errClosed is why a server is down once the manager is closed.
var errClosed = errors.New("the workbench is shutting down")

// errRemoved is why a server is down once a reload removed or replaced it
// ([Manager.Reload]); it is an errClosed too: nothing restarts it.
var errRemoved error = stoppedError("the server was removed from the configuration, or changed and replaced, by a reload")

// stoppedError is why a server stopped for good other than at Close.
type stoppedError string

func (e stoppedError) Error() string { return string(e) }

// Is makes a stopped server's cause errClosed to the checks that tell
// a server that stopped for good from one that ended on its own.
func (e stoppedError) Is(target error) bool { return target == errClosed }

// server is one downstream server of one toolbox and its connection.
//
// Its life: an attempt (dial, list tools, register them) runs in a goroutine
// of its own that [server.ensure] callers wait for; a successful attempt
// starts a monitor goroutine that follows the session (list_changed
// refreshes, the session's end) and, when the session ends on its own,
// reconnects with backoff until the manager closes.
type server struct {
	m *Manager
	// ctx ends when the manager closes or a reload stops the server
	// ([server.stop]); every connection of the server derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	// gmu guards halted and the start of goroutines counted in wg: every
	// goroutine of the server, which stop waits for.
	gmu    sync.Mutex
	halted bool
	wg     sync.WaitGroup

	toolbox string
	name    string
	// print is the fingerprint of its configuration, which never changes
	// (listings.go).
	print  string
	cfg    *config.Server
	client *mcp.Client
	// hc is the HTTP client of a Streamable HTTP server's connections,
	// shared by the SDK client and raw calls ([downstream.HTTPSession]);
	// nil for other transports.
	hc *http.Client
	// after, when a reload replaced a server of the same name, is closed
	// once that server has stopped and its tools left the registry: no
	// connection attempt starts before (nil: nothing to wait for).
	after   <-chan struct{}
	refresh chan struct{} // a list_changed notification arrived (capacity 1)
	breaker *breaker      // fails calls fast after repeated failures (breaker.go)
	relays  relays        // calls in flight for clients (relay.go)
	holds   holds         // calls held for clients of the sessionless protocol (hold.go)
	retries retryBudget   // retries of calls safe to repeat (retry.go)
	subs    subscriptions // resources clients subscribed to (subscribe.go)
	listMu  sync.Mutex    // one tool listing at a time

	mu         sync.Mutex
	sess       *session      // nil while down
	down       error         // why sess is nil (nil before the first attempt)
	attempt    *attempt      // the connection attempt in progress
	backoff    time.Duration // the next restart delay
	restarting bool          // the restart loop of an ended session runs ([server.ended])
	retryAt    time.Time     // after a failed attempt: when a client's connection may retry ([server.open])
	retryDelay time.Duration // the delay after the next failed attempt
	listed     bool          // the server's tools have been listed at least once
	tools      []registry.ID // registered tools, in the order listed
	problems   string        // tools not served at the last listing, and why
	restarts   uint64        // sessions that ended on their own and were restarted ([server.ended])
}

// session is a live connection to the server.
type session struct {
	cs *mcp.ClientSession
	// raw is the session for raw tools/call requests (a Streamable HTTP
	// session of the handshake protocol); nil: calls go through cs.
	raw   *downstream.HTTPSession
	stop  context.CancelFunc // ends the connection's context
	ended chan struct{}      // closed when the session has ended
	cause error              // why it ended, set before ended is closed
}

// live reports whether sess is a session that has not ended (nil: false).
func (sess *session) live() bool {
	if sess == nil {
		return false
	}
	select {
	case <-sess.ended:
		return false
	default:
		return true
	}
}

// attempt is one connection attempt; done is closed when it ends.
type attempt struct {
	done chan struct{}
	err  error
}

func newServer(m *Manager, toolbox, name string, sc *config.Server, impl *mcp.Implementation) *server {
	c := *sc
	c.Name = name
	s := &server{m: m, toolbox: toolbox, name: name, cfg: &c, refresh: make(chan struct{}, 1), backoff: restartMin, retryDelay: restartMin,
		breaker: newBreaker(cmp.Or(c.BreakerFailures, m.breakerFailures), cmp.Or(c.BreakerCooldown, m.breakerCooldown))}
	s.ctx, s.cancel = context.WithCancel(m.ctx)
	s.print = fingerprint(&c)
	if c.TransportKind() == config.StreamableHTTP {
		s.hc = downstream.HTTPClient(&c)
	}
	o := &mcp.ClientOptions{
		Logger:                     sdklog.New(m.log.With("toolbox", toolbox, "server", name)),
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { s.listChanged() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { s.listChanged() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { s.listChanged() },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			s.m.reg.ResourceUpdated(s.toolbox, s.name, req.Params.URI)
		},
	}
	s.clientOptions(o)
	s.client = mcp.NewClient(impl, o)
	return s
}

// goroutine runs fn in a goroutine that [server.stop] and [Manager.Close]
// wait for; it reports false, and runs nothing, once either has begun.
func (s *server) goroutine(fn func()) bool {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if s.halted {
		return false
	}
	s.wg.Add(1)
	if !s.m.goroutine(func() {
		defer s.wg.Done()
		fn()
	}) {
		s.wg.Done()
		return false
	}
	return true
}

// stop ends the server for good (a reload removed or replaced it): its
// session is closed (a stdio server's process ends), nothing restarts it,
// and stop returns once every goroutine of the server has ended. Calls of
// its tools fail from then on with [errRemoved].
func (s *server) stop() {
	s.gmu.Lock()
	s.halted = true
	s.gmu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	s.sess, s.down = nil, errRemoved
	s.mu.Unlock()
}

// closedErr is why the server stopped: the manager closed ([errClosed]) or
// a reload stopped it ([errRemoved]).
func (s *server) closedErr() error {
	if s.m.ctx.Err() != nil {
		return errClosed
	}
	return errRemoved
}

func (s *server) timeout() time.Duration { return s.cfg.CallTimeout() }

func (s *server) connectTimeout() time.Duration { return s.cfg.DialTimeout() }

// ensure connects the server unless it is connected, waiting for the attempt
// (its own or one already in progress) or for ctx.
func (s *server) ensure(ctx context.Context) error {
	a := s.kick()
	if a == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sess.live() {
			return nil
		}
		if s.down == nil {
			return errors.New("not connected")
		}
		return s.down
	}
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return fmt.Errorf("gave up waiting for the connection: %w", ctx.Err())
	}
}

// kick starts a connection attempt unless the server is connected or one is
// in progress, and returns the attempt in progress (nil when connected or
// closed).
func (s *server) kick() *attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess.live() {
		return nil
	}
	if s.attempt != nil {
		return s.attempt
	}
	return s.startLocked()
}

// open is what a client's connection asks of the server ([Manager.OpenAll]):
// it starts the server's first connection attempt, and returns the attempt
// when it is the first one (under way or just started), which can still
// succeed within the connect timeout. A server that has been up or failed
// already is not waited for (nil): one whose session ended restarts on its
// own schedule ([server.ended]); one whose last attempt failed is retried
// in the background, once its retry delay has passed since that failure
// (doubling from restartMin to restartMax with each failure).
func (s *server) open() *attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.sess == nil && s.down == nil
	switch {
	case s.sess != nil, s.restarting: // up, or ended and restarting
		return nil
	case s.attempt != nil:
		if first {
			return s.attempt
		}
		return nil
	case first:
		return s.startLocked()
	case time.Now().Before(s.retryAt):
		return nil
	}
	s.startLocked()
	return nil
}

// startLocked starts a connection attempt (s.mu held) and returns it; nil
// once the manager is closed.
func (s *server) startLocked() *attempt {
	a := &attempt{done: make(chan struct{})}
	if !s.goroutine(func() { s.connect(a) }) {
		s.down = s.closedErr()
		return nil
	}
	s.attempt = a
	return a
}

// connect makes attempt a: dial, list and register the tools, then follow
// the session in a monitor goroutine.
func (s *server) connect(a *attempt) {
	if s.after != nil {
		// A reload replaced the server of this name: the old one's tools
		// leave the registry before this one registers its own.
		select {
		case <-s.after:
		case <-s.ctx.Done():
		}
	}
	start := time.Now()
	deadline := start.Add(s.connectTimeout())
	var cs *mcp.ClientSession
	var stop context.CancelFunc
	err := s.ctx.Err()
	if err != nil {
		err = s.closedErr()
	} else {
		cs, stop, err = s.dial(deadline)
	}
	if err == nil {
		ctx, cancel := context.WithDeadline(s.ctx, deadline)
		err = s.list(ctx, cs)
		if err == nil {
			followLogs(ctx, cs)
		}
		cancel()
		if err != nil {
			err = s.connectError("list tools", err)
			s.discard(cs, stop)
		}
	}
	s.mu.Lock()
	s.attempt = nil
	orphan := false // connected, but the manager closed before the monitor started
	if err == nil {
		sess := &session{cs: cs, stop: stop, ended: make(chan struct{}), raw: s.rawSession(cs)}
		s.sess, s.down = sess, nil
		if !s.goroutine(func() { s.monitor(sess) }) {
			s.sess, s.down = nil, s.closedErr()
			err, orphan = s.closedErr(), true
		}
	} else {
		s.down = err
	}
	if err == nil {
		s.retryDelay, s.retryAt = restartMin, time.Time{}
		// A new session: the failures of the old one are not its own.
		s.breaker.reset()
	} else {
		s.retryAt = time.Now().Add(s.retryDelay)
		s.retryDelay = min(2*s.retryDelay, restartMax)
	}
	ntools := len(s.tools)
	s.mu.Unlock()
	if orphan {
		s.discard(cs, stop)
	}
	a.err = err
	close(a.done)
	if err != nil {
		s.m.log.Warn("downstream server not connected", "toolbox", s.toolbox, "server", s.name, "err", err)
		return
	}
	s.m.log.Info("downstream server connected", "toolbox", s.toolbox, "server", s.name,
		"transport", s.cfg.Transport, "tools", ntools, "duration", time.Since(start))
}

// discard closes a session nobody uses, in the background unless the
// manager is closing: closing can take seconds (a stdio server is given time
// to exit, an HTTP session is deleted).
func (s *server) discard(cs *mcp.ClientSession, stop context.CancelFunc) {
	end := func() {
		_ = cs.Close()
		stop()
	}
	if !s.goroutine(end) {
		end()
	}
}

// dial opens a session. The connection's context lives until stop is called
// (the legacy SSE transport ties its event stream to it); the deadline only
// bounds the handshake, which dial stops waiting for when it passes (an
// abandoned handshake is cleaned up in the background).
func (s *server) dial(deadline time.Time) (_ *mcp.ClientSession, stop context.CancelFunc, _ error) {
	t, err := downstream.TransportVia(s.cfg, s.m.stderr, s.hc)
	if err != nil {
		return nil, nil, err
	}
	// A server is asked for the handshake protocol: a Streamable HTTP
	// server's sessions then take raw tools/call requests (rawSession),
	// and any server may ask its client for input during a call
	// (relay.go), which the sessionless protocol forbids.
	opts := &mcp.ClientSessionOptions{ProtocolVersion: mcpwire.LatestHandshake()}
	ctx, cancel := context.WithCancel(s.ctx)
	type result struct {
		cs  *mcp.ClientSession
		err error
		t   mcp.Transport // the transport cs is on, when it is not t
	}
	var (
		mu        sync.Mutex
		abandoned bool
		done      = make(chan result, 1)
	)
	started := s.goroutine(func() {
		cs, err := s.client.Connect(ctx, s.relaying(t), opts)
		var t2 mcp.Transport
		if err != nil && ctx.Err() == nil {
			// A server that refuses the handshake protocol (one of the
			// sessionless protocol only) is connected as the SDK
			// chooses, and called through the SDK client, on a
			// transport of its own (a command is started once).
			if tt, terr := downstream.TransportVia(s.cfg, s.m.stderr, s.hc); terr == nil {
				downstream.Reap(t)
				if cs2, err2 := s.client.Connect(ctx, s.relaying(tt), nil); err2 == nil {
					cs, err, t2 = cs2, nil, tt
				} else {
					downstream.Reap(tt)
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if cs != nil {
				_ = cs.Close()
			}
			if t2 != nil {
				downstream.Reap(t2)
			}
			return
		}
		done <- result{cs, err, t2}
	})
	if !started {
		cancel()
		return nil, nil, s.closedErr()
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
	case <-s.ctx.Done():
	}
	if r.cs == nil && r.err == nil { // gave up waiting, unless the result just arrived
		mu.Lock()
		abandoned = true
		select {
		case r = <-done:
		default:
		}
		mu.Unlock()
	}
	switch {
	case r.err != nil:
		cancel()
		downstream.Reap(t)
		return nil, nil, s.connectError("connect", r.err)
	case r.cs == nil:
		cancel()
		downstream.Reap(t)
		if s.ctx.Err() != nil {
			return nil, nil, s.closedErr()
		}
		return nil, nil, fmt.Errorf("connect: no answer within %s", formatDuration(s.connectTimeout()))
	}
	if r.t != nil {
		t = r.t
	}
	// Stopped after its session is closed: a stdio server's leftover
	// processes end with it.
	return r.cs, func() { cancel(); downstream.Reap(t) }, nil
}

func (s *server) connectError(step string, err error) error {
	if s.ctx.Err() != nil {
		return s.closedErr()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s", step, formatDuration(s.connectTimeout()))
	}
	return fmt.Errorf("%s: %w", step, err)
}

// monitor follows a connected session until it ends or the manager closes:
// it refreshes the tools on list_changed and, when the session ends on its
// own, restarts the server.
func (s *server) monitor(sess *session) {
	cs := sess.cs
	go func() { // ends when cs is closed, which monitor guarantees
		err := cs.Wait()
		sess.cause = s.endCause(err)
		close(sess.ended)
	}()
	up := time.Now()
	for {
		select {
		case <-sess.ended:
			_ = cs.Close() // reaps a stdio server's process
			sess.stop()
			s.ended(sess, time.Since(up))
			return
		case <-s.refresh:
			ctx, cancel := context.WithTimeout(s.ctx, s.connectTimeout())
			if err := s.list(ctx, cs); err != nil && s.ctx.Err() == nil {
				s.m.log.Warn("refresh downstream tools", "toolbox", s.toolbox, "server", s.name, "err", err)
			}
			cancel()
		case <-s.ctx.Done():
			_ = cs.Close()
			sess.stop()
			<-sess.ended
			s.mu.Lock()
			if s.sess == sess {
				s.sess, s.down = nil, s.closedErr()
			}
			s.mu.Unlock()
			return
		}
	}
}

// endCause says why a session ended, given what its Wait returned.
func (s *server) endCause(err error) error {
	if s.ctx.Err() != nil {
		return s.closedErr()
	}
	what := "its session ended"
	if s.cfg.TransportKind() == config.Stdio {
		what = "its process exited"
	}
	if err != nil {
		what += " (" + err.Error() + ")"
	}
	return errors.New(what)
}

// restarting is the state of a server whose session ended for cause.
func restarting(cause error) error {
	if errors.Is(cause, errClosed) {
		return cause
	}
	return fmt.Errorf("%w; restarting", cause)
}

// ended marks the server down after its session ended on its own and
// reconnects it with backoff until it is up again or the manager closes.
// Calls meanwhile fail fast; the server's tools stay registered.
func (s *server) ended(sess *session, uptime time.Duration) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
		s.down = restarting(sess.cause)
	}
	if uptime >= healthyAfter {
		s.backoff = restartMin
	}
	if !errors.Is(sess.cause, errClosed) {
		s.restarts++
	}
	s.restarting = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.restarting = false
		s.mu.Unlock()
	}()
	s.m.log.Warn("downstream server down", "toolbox", s.toolbox, "server", s.name, "cause", sess.cause, "uptime", uptime)

	for {
		s.mu.Lock()
		delay := s.backoff
		s.backoff = min(2*s.backoff, restartMax)
		s.mu.Unlock()
		timer := time.NewTimer(delay)
		select {
		case <-s.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		a := s.kick()
		if a == nil {
			return // connected meanwhile (an Open), or closed
		}
		select {
		case <-s.ctx.Done():
			return
		case <-a.done:
		}
		if a.err == nil {
			return
		}
		s.mu.Lock()
		if s.sess == nil {
			s.down = fmt.Errorf("%v; restart failed: %v; retrying", sess.cause, a.err)
		}
		s.mu.Unlock()
	}
}

// toolsKnown reports whether the server's tools have been listed and are
// current or kept while it restarts: connected now, or restarting after its
// session ended.
func (s *server) toolsKnown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed && (s.sess != nil || s.restarting)
}

// status is a snapshot of a server for [Manager.Open].
type status struct {
	connected bool
	down      error
	problems  string
	tools     []registry.ID
}

func (s *server) status() status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := status{connected: s.sess.live(), down: s.down, problems: s.problems, tools: s.tools}
	if s.sess != nil && !st.connected {
		st.down = restarting(s.sess.cause) // ended; the monitor has not caught up yet
	}
	return st
}

// list reads the server's tools (every page), applies its filters and
// replaces its tools in the registry.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) error {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		listed = append(listed, t)
	}
	var tools []registry.Tool
	var badNames []string
	served := make([]*mcp.Tool, 0, len(listed))
	for _, t := range listed {
		if !s.cfg.Serves(t.Name) {
			continue
		}
		served = append(served, t)
		id := registry.ID{Toolbox: s.toolbox, Server: s.name, Tool: t.Name}
		if !registry.ValidName(id.Name()) {
			badNames = append(badNames, fmt.Sprintf("%q", t.Name))
			continue
		}
		rt, err := s.registryTool(id, t)
		if err != nil {
			badNames = append(badNames, fmt.Sprintf("%q (%v)", t.Name, err))
			continue
		}
		tools = append(tools, rt)
	}
	var problems []string
	if len(badNames) > 0 {
		problems = append(problems, fmt.Sprintf("%d tool(s) not served because %s__%s__<tool> breaks the MCP tool name rules (1-128 of A-Z a-z 0-9 _ . -): %s",
			len(badNames), s.toolbox, s.name, strings.Join(badNames, ", ")))
	}
	for _, err := range s.m.reg.ReplaceServer(s.toolbox, s.name, tools) {
		problems = append(problems, err.Error())
	}
	// The tools served are those the registry took (it rejects, say, a
	// schema that is not an object, or a name another server of the toolbox
	// already has).
	ids := make([]registry.ID, 0, len(tools))
	for _, t := range tools {
		if got, ok := s.m.reg.LookupID(t.ID); ok && got.ID == t.ID {
			ids = append(ids, t.ID)
		}
	}
	if p := s.listExtras(ctx, cs); p != "" {
		problems = append(problems, p)
	}
	msg := strings.Join(problems, "; ")
	if msg != "" {
		s.m.log.Warn("downstream tools not served", "toolbox", s.toolbox, "server", s.name, "problems", msg)
	}
	s.mu.Lock()
	s.tools, s.problems, s.listed = ids, msg, true
	s.mu.Unlock()
	s.m.keepListing(ctx, s, served)
	return nil
}

// registryTool is the registry entry of the downstream tool t.
func (s *server) registryTool(id registry.ID, t *mcp.Tool) (registry.Tool, error) {
	in := json.RawMessage(`{"type":"object"}`)
	if t.InputSchema != nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return registry.Tool{}, fmt.Errorf("input schema: %w", err)
		}
		in = b
	}
	var out json.RawMessage
	if t.OutputSchema != nil {
		b, err := json.Marshal(t.OutputSchema)
		if err != nil {
			return registry.Tool{}, fmt.Errorf("output schema: %w", err)
		}
		out = b
	}
	name := t.Name
	// A call that is safe to repeat may be retried (retry.go).
	safe := t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
	return registry.Tool{
		ID: id, Description: t.Description, Title: t.Title, Annotations: t.Annotations, Icons: t.Icons, ToolMeta: t.Meta,
		InputSchema: in, OutputSchema: out,
		Source: registry.MCP, Family: registry.Workbench, Plain: s.cfg.Plain,
		ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
		Handler: func(ctx context.Context, c *registry.Call) (any, error) {
			return s.call(withUser(ctx, c.User.ID), name, c.Args, safe)
		},
	}, nil
}

// connectingFirst reports whether the server's first connection is under
// way.
func (s *server) connectingFirst() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess == nil && s.down == nil && s.attempt != nil
}

// session returns the live session, or why there is none.
func (s *server) session() (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		return s.sess, nil
	}
	if s.down != nil {
		return nil, s.down
	}
	return nil, errors.New("not connected")
}

// endGrace is how long a call whose connection failed waits to learn
// whether the session ended, to report why.
const endGrace = 250 * time.Millisecond

// formatDuration writes whole seconds as "60s" rather than "1m0s".
func formatDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// same reports whether sc configures the server as it is configured now
// (a reload keeps it, connected or not).
func (s *server) same(sc *config.Server) bool {
	c := *sc
	c.Name = s.name
	return reflect.DeepEqual(*s.cfg, c)
}
