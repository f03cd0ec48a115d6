// Package ws is the WebSocket chat surface (SPEC section 2, seed 004): GET
// /ws upgrades to a WebSocket on which the client sends
//
//	{"type":"message","conversation_id":"...","content":"..."}
//	{"type":"cancel","conversation_id":"..."}   (conversation_id optional: every turn)
//	{"type":"auth","token":"nxs_..."}           (first frame, when the upgrade carried no token)
//	{"type":"watch","conversation_id":"..."}    (receive the events of that conversation's turns, from any connection on any replica; see watch.go)
//	{"type":"approval","conversation_id":"...","tool_call_id":"...","approved":true}   (answer an approval_request; see approval.go)
//
// and the server streams each turn's events (internal/chat): token,
// tool_start, approval_request, tool_complete, complete and error, each with
// the conversation_id it belongs to. It only translates: the turn is the chat
// loop's, every tool call the pipeline's.
//
// Limits (issue 21; see limits.go): the connection's token is checked again
// before every frame and whenever a user changes on any replica, a
// connection's frames count against its user's request rate (--token-rate),
// a user runs at most Options.Turns' cap of turns at once over every
// replica, a connection runs one turn at a time with a few messages waiting
// behind it, an idle connection is closed, and a user holds at most
// MaxPerUser connections on a replica.
//
// The library is github.com/coder/websocket: maintained (the successor of
// nhooyr.io/websocket), context-aware, small, and it handles the protocol's
// control frames, compression and read limits.
package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Authenticator finds the user of a token sent in the first frame.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*users.User, error)
}

// Options configure the surface.
type Options struct {
	Chat *chat.Chat
	// Auth authenticates an auth frame; nil refuses them.
	Auth Authenticator
	// OriginPatterns are the origins (host patterns) whose pages may
	// connect besides the server's own; the HTTP front checked Origin
	// already, so the default accepts what reached the handler.
	OriginPatterns []string
	// MaxBuffered bounds the bytes of events waiting for a slow reader;
	// beyond it the connection is closed (default 4 MiB). Tokens waiting
	// are merged, so a slow reader costs no more than the text itself.
	MaxBuffered int
	// AuthTimeout bounds the wait for the auth frame (default 10 s).
	AuthTimeout time.Duration
	Logger      *slog.Logger
	// Events carries turns' events to the connections watching their
	// conversation on every replica (nil: none can watch).
	Events *events.Bus
	// Owner returns the owner of conversation id (ok false when there is
	// none), to check a watch; nil refuses watches.
	Owner func(ctx context.Context, id string) (owner string, ok bool, err error)
	// Drain, closed when the replica shuts down, drains every connection
	// (see drain.go); nil never drains.
	Drain <-chan struct{}

	// RateLimit, when set, counts every frame of a connection that
	// authenticated with a token (but cancel, which only stops work)
	// against its user's request rate, the HTTP front's limiter
	// (--token-rate): a frame over it is refused with RATE_LIMITED and
	// retry_after.
	RateLimit RateLimiter
	// Turns, when set, caps the turns a user runs at once over every
	// connection of every replica (quota.TurnSlots, --max-turns).
	Turns TurnLimiter
	// MaxQueued is how many messages may wait on a connection behind its
	// running turn (a connection runs one turn at a time); more is
	// RATE_LIMITED (default [DefaultMaxQueued]).
	MaxQueued int
	// IdleTimeout closes a connection (1001, going away) that sent no
	// frame, ran no turn and received no event for that long (default
	// [DefaultIdleTimeout]).
	IdleTimeout time.Duration
	// PingInterval is how often a ping checks that the client is there; a
	// pong missing for as long closes the connection (default
	// [DefaultPingInterval]).
	PingInterval time.Duration
	// MaxPerUser caps the open connections of one user on this replica;
	// one more is refused with RATE_LIMITED and closed with 1008 (default
	// [DefaultMaxPerUser]).
	MaxPerUser int
	// Recheck is how often a connection's token is checked again when no
	// frame comes (default users.CacheFor): a running turn of a revoked
	// token is cancelled within it, and at once after [Server.UsersChanged].
	Recheck time.Duration
}

// Server is the WebSocket endpoint: an http.Handler that also knows its
// open connections, so that a replica shutting down can wait for them
// ([Server.Wait]).
type Server struct {
	h http.Handler

	mu     sync.Mutex
	open   map[*conn]bool
	byUser map[string]int
	// conns counts the connections being served; ended, when set, is
	// closed when the count falls to zero (see Wait).
	conns int
	ended chan struct{}
}

// ServeHTTP serves one WebSocket connection.
func (sv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { sv.h.ServeHTTP(w, r) }

// Handler returns the WebSocket endpoint.
func Handler(o Options) *Server {
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 4 << 20
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.MaxPerUser <= 0 {
		o.MaxPerUser = DefaultMaxPerUser
	}
	if o.Recheck <= 0 {
		o.Recheck = users.CacheFor
	}
	h := newHub(o.Events)
	sv := &Server{open: map[*conn]bool{}, byUser: map[string]int{}}
	sv.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sv.enter()
		defer sv.exit()
		patterns := o.OriginPatterns
		if len(patterns) == 0 {
			patterns = []string{"*"} // the HTTP front's guard decided Origin
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: patterns})
		if err != nil {
			return // Accept answered the client
		}
		c.SetReadLimit(1 << 20)
		s := &conn{o: o, c: c, log: o.Logger, turns: map[string]*turn{}, id: newConnID(), hub: h, idle: make(chan struct{}, 1),
			sv: sv, changed: make(chan struct{}, 1), active: time.Now(), last: make(chan struct{})}
		close(s.last)
		defer h.leave(s)
		s.serve(r.Context(), r)
	})
	return sv
}

// inbound is a client's frame.
type inbound struct {
	Type           string `json:"type"`
	ConversationID string `json:"conversation_id"`
	Content        string `json:"content"`
	// Model chooses a message's model ([chat.Turn.Model]).
	Model string `json:"model"`
	// ReplaceLast makes a message replace the last one ([chat.Turn.ReplaceLast]).
	ReplaceLast bool   `json:"replace_last"`
	Token       string `json:"token"`
	// ToolCallID and Approved are an approval's.
	ToolCallID string          `json:"tool_call_id"`
	Approved   json.RawMessage `json:"approved"`
}

// conn is one WebSocket connection.
type conn struct {
	o   Options
	c   *websocket.Conn
	log *slog.Logger
	id  string // among every replica's connections
	hub *hub
	sv  *Server
	// token is what the connection authenticated with (the upgrade's
	// Authorization or the auth frame), checked again before every frame;
	// empty for a request that acted as a user without one (the local
	// user on a loopback listener).
	token string
	// changed is signalled when a user changed somewhere ([Server.UsersChanged]).
	changed chan struct{}

	mu sync.Mutex
	// user is the connection's user, once authenticated, as its token was
	// last checked.
	user *users.User
	// ended is set once the connection was refused (its token no longer
	// authenticates): no turn starts any more.
	ended bool
	// last is closed when the turn started last has ended: turns run one
	// after another, each waiting for the one before.
	last chan struct{}
	// active is when the connection last read a frame, sent an event or
	// ended a turn (for IdleTimeout).
	active   time.Time
	turns    map[string]*turn // running and waiting turns by conversation id
	outbox   []chat.Event
	buffered int
	wake     chan struct{}
	closed   bool
	// writing is set while the writer sends a batch taken from outbox.
	writing bool
	// flushed, when set, is closed once the writer has sent every queued
	// event or the connection closed (see flush).
	flushed chan struct{}
	// draining is set once the replica drains: no new turns start; idle
	// is signalled when the last running turn ends then.
	draining bool
	idle     chan struct{}
}

func (s *conn) serve(reqCtx context.Context, r *http.Request) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(reqCtx))
	defer cancel()
	s.wake = make(chan struct{}, 1)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writer(ctx)
	}()
	defer func() {
		cancel()
		<-writerDone
		s.c.CloseNow()
	}()
	if s.o.Drain != nil {
		// From the start: a connection still waiting for its auth frame
		// is closed on drain too.
		go s.drainWhen(ctx, s.o.Drain)
	}
	u, ok := users.FromContext(ctx)
	if ok {
		// The HTTP front authenticated the upgrade's Authorization (none:
		// the local user of a loopback listener).
		s.token = bearer(r)
	} else {
		var err error
		if u, s.token, err = s.authenticate(ctx); err != nil {
			s.c.Close(websocket.StatusPolicyViolation, err.Error())
			return
		}
	}
	s.mu.Lock()
	s.user = u
	s.mu.Unlock()
	if !s.sv.join(s, u.ID) {
		s.refuse(ctx, chat.Event{Type: chat.Error, Code: string(errs.RateLimited), RetryAfter: 5,
			Message: fmt.Sprintf("too many WebSockets: a user may hold %d at once on this server; close one and connect again", s.o.MaxPerUser)},
			"too many WebSockets of this user")
		return
	}
	defer s.sv.leave(s, u.ID)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer s.cancelTurns("")
	kctx, stopKeep := context.WithCancel(ctx)
	defer stopKeep()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.keep(kctx)
	}()
	for {
		var in inbound
		_, data, err := s.c.Read(ctx)
		if err != nil {
			return // the client went away, or closed, or was refused
		}
		s.touch()
		decodeErr := json.Unmarshal(data, &in)
		bad := decodeErr != nil
		if bad {
			in = inbound{}
		}
		// Every frame: the token still authenticates, then the frame
		// counts against the user's request rate (a cancel only stops
		// work, and is free).
		if !s.vouch(ctx, in.ConversationID) {
			return
		}
		if in.Type != "cancel" && !s.allow(ctx, in.ConversationID) {
			continue
		}
		if bad {
			s.push(chat.Event{Type: chat.Error, Code: string(errs.BadRequest), Message: frameError(decodeErr)})
			continue
		}
		switch in.Type {
		case "message":
			s.startTurn(ctx, &wg, in)
		case "cancel":
			s.cancelTurns(in.ConversationID)
		case "watch":
			s.watch(ctx, in.ConversationID)
		case "approval":
			s.approval(in)
		case "auth":
			s.push(chat.Event{Type: chat.Error, Code: string(errs.BadRequest), Message: "already authenticated"})
		default:
			s.push(chat.Event{Type: chat.Error, Code: string(errs.BadRequest), Message: "unknown frame type " + quote(in.Type) + ": send message, cancel, watch, approval or auth"})
		}
	}
}

// bearer is the token of r's Authorization header, if any.
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authenticate waits for the auth frame of a connection whose upgrade
// carried no token, and returns its user and token.
func (s *conn) authenticate(ctx context.Context) (*users.User, string, error) {
	if s.o.Auth == nil {
		return nil, "", errors.New("authentication required")
	}
	actx, cancel := context.WithTimeout(ctx, s.o.AuthTimeout)
	defer cancel()
	_, data, err := s.c.Read(actx)
	if err != nil {
		return nil, "", errors.New("authentication required: send {\"type\":\"auth\",\"token\":\"TOKEN\"} first")
	}
	var in inbound
	if json.Unmarshal(data, &in) != nil || in.Type != "auth" || in.Token == "" {
		return nil, "", errors.New("authentication required: the first frame must be {\"type\":\"auth\",\"token\":\"TOKEN\"}")
	}
	u, err := s.o.Auth.Authenticate(ctx, in.Token)
	if err != nil {
		s.log.Info("websocket refused: token does not authenticate", "reason", err)
		return nil, "", errors.New("the token does not authenticate a user of this server")
	}
	return u, in.Token, nil
}

// startTurn queues a message's turn: turns of a connection run one after
// another (one turn at a time per connection, at most MaxQueued waiting),
// and one at a time per conversation.
func (s *conn) startTurn(ctx context.Context, wg *sync.WaitGroup, in inbound) {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		s.push(chat.Event{Type: chat.Error, Code: string(errs.Unavailable), ConversationID: in.ConversationID, Message: restarting})
		return
	}
	if in.ConversationID != "" && s.turns[in.ConversationID] != nil {
		s.mu.Unlock()
		s.push(chat.Event{Type: chat.Error, Code: string(errs.Conflict), ConversationID: in.ConversationID,
			Message: "this conversation is answering a message already; wait for complete, or send cancel"})
		return
	}
	if len(s.turns) > s.o.MaxQueued {
		s.mu.Unlock()
		s.push(chat.Event{Type: chat.Error, Code: string(errs.RateLimited), ConversationID: in.ConversationID, RetryAfter: quota.RetrySeconds(quota.TurnRetry),
			Message: fmt.Sprintf("this connection runs a turn and has %d messages waiting already (at most %d): wait for complete, or send cancel", s.o.MaxQueued, s.o.MaxQueued)})
		return
	}
	tctx, cancel := context.WithCancel(ctx)
	if in.ConversationID == "" {
		// A new conversation's id, given out before it is stored (the
		// turn stores it once accepted): every event of the turn names
		// it, and a cancel naming it reaches the turn.
		in.ConversationID = conversation.NewID()
	}
	key, tu := in.ConversationID, &turn{cancel: cancel}
	s.turns[key] = tu
	prev, done := s.last, make(chan struct{})
	s.last = done
	s.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			<-prev // the next turn waits for this one and every one before
			close(done)
			s.mu.Lock()
			if s.turns[key] == tu {
				delete(s.turns, key)
			}
			s.active = time.Now()
			if s.draining && len(s.turns) == 0 {
				select {
				case s.idle <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
			cancel()
		}()
		select {
		case <-prev:
		case <-tctx.Done():
			s.push(chat.Event{Type: chat.Error, Code: chat.Cancelled, ConversationID: in.ConversationID, Message: "cancelled before it started"})
			return
		}
		s.runTurn(tctx, in, func() { s.release(key, tu) })
	}()
}

// turn is a running or waiting turn of a connection.
type turn struct {
	cancel context.CancelFunc
}

// release frees conversation key of turn tu for the connection's next
// message: at the turn's last event, before the client reads it, so that a
// message sent as soon as complete arrives is not refused as CONFLICT.
func (s *conn) release(key string, tu *turn) {
	s.mu.Lock()
	if s.turns[key] == tu {
		delete(s.turns, key)
	}
	s.mu.Unlock()
}

// runTurn runs a turn whose connection's previous turns have ended: as the
// connection's user now, within the user's cap of turns at once. release is
// called before the turn's last event (complete, or its error) is sent.
func (s *conn) runTurn(ctx context.Context, in inbound, release func()) {
	refuse := func(e *errs.Error) {
		s.push(chat.Event{Type: chat.Error, Code: string(e.Code), ConversationID: in.ConversationID, Message: e.Message, RetryAfter: e.RetryAfter})
	}
	s.mu.Lock()
	draining, ended, u := s.draining, s.ended, s.user
	s.mu.Unlock()
	switch {
	case ended:
		return
	case draining:
		refuse(errs.E(errs.Unavailable, "%s", restarting))
		return
	}
	if s.o.Turns != nil {
		end, err := s.o.Turns.Begin(ctx, u.ID)
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) {
				e = errs.E(errs.Unavailable, "the running turns could not be counted: try again")
			}
			refuse(e)
			return
		}
		defer end()
	}
	conv := in.ConversationID
	pub := &relay{h: s.hub, c: s}
	s.o.Chat.Run(users.WithUser(ctx, u), chat.Turn{ConversationID: in.ConversationID, Content: in.Content, Approvable: true, Model: in.Model, ReplaceLast: in.ReplaceLast}, func(e chat.Event) {
		if e.ConversationID != "" {
			conv = e.ConversationID
		}
		e.ConversationID = conv
		if e.Type == chat.Complete || e.Type == chat.Error {
			release()
		}
		s.push(e)
		pub.send(ctx, conv, e)
	})
	pub.flush(ctx)
}

// watch makes the connection receive the events of conversation id's turns,
// when its user may use the conversation: the pipeline's one rule
// (principal.MayUse: its owner, and admins).
func (s *conn) watch(ctx context.Context, id string) {
	refuse := func(code errs.Code, msg string) {
		s.push(chat.Event{Type: chat.Error, Code: string(code), ConversationID: id, Message: msg})
	}
	if s.o.Owner == nil || s.o.Events == nil {
		refuse(errs.BadRequest, "this server does not offer watching conversations")
		return
	}
	if id == "" {
		refuse(errs.BadRequest, "watch needs a conversation_id")
		return
	}
	owner, ok, err := s.o.Owner(ctx, id)
	switch {
	case err != nil:
		refuse(errs.Unavailable, "the conversation could not be read; try again")
		return
	case !ok || s.current() == nil || !s.current().Principal().MayUse(owner):
		// Another user's conversation looks like none at all.
		refuse(errs.NotFound, "conversation "+quote(id)+" not found")
		return
	}
	s.hub.watch(id, s)
}

// cancelTurns cancels the turn of conversation id, or every turn.
func (s *conn) cancelTurns(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, tu := range s.turns {
		if id == "" || k == id {
			tu.cancel()
		}
	}
}

// push queues an event for the writer without blocking: a token following a
// queued token of the same conversation is merged into it; past MaxBuffered
// bytes the connection is closed.
func (s *conn) push(e chat.Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	n := len(e.Content) + len(e.ToolInput) + len(e.ToolResult) + len(e.Message) + 128
	s.active = time.Now()
	if k := len(s.outbox) - 1; e.Type == chat.Token && k >= 0 && s.outbox[k].Type == chat.Token && s.outbox[k].ConversationID == e.ConversationID {
		s.outbox[k].Content += e.Content
		n = len(e.Content)
	} else {
		s.outbox = append(s.outbox, e)
	}
	s.buffered += n
	over := s.buffered > s.o.MaxBuffered
	if over {
		s.closed = true
		s.outbox = nil
		s.sentLocked()
	}
	s.mu.Unlock()
	if over {
		s.log.Warn("websocket closed: the client reads too slowly", "buffered_max", s.o.MaxBuffered)
		s.cancelTurns("")
		go s.c.Close(websocket.StatusPolicyViolation, "the client reads too slowly")
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writer sends queued events in order until ctx ends.
func (s *conn) writer(ctx context.Context) {
	for {
		s.mu.Lock()
		batch := s.outbox
		s.outbox, s.buffered = nil, 0
		s.writing = len(batch) > 0
		s.sentLocked()
		s.mu.Unlock()
		for _, e := range batch {
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = s.c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return
			}
		}
		if len(batch) > 0 {
			s.mu.Lock()
			s.writing = false
			s.sentLocked()
			s.mu.Unlock()
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// frameError says what is wrong with a frame that did not decode: the
// field of the wrong type, when that is it.
func frameError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("frame field %q must be %s, not %s", te.Field, jsonKind(te.Type.Kind()), te.Value)
	}
	return "a frame must be a JSON object with a type: message, cancel, watch, approval or auth"
}

// jsonKind names the JSON a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "JSON of another kind"
}
