package ws

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/events"
)

// Watching a conversation: {"type":"watch","conversation_id":"..."} makes a
// connection receive the events of every turn of that conversation, whichever
// connection runs the turn and on whichever replica (SPEC section 7): a
// browser that reconnected to another replica, or a second tab. The events
// of a turn are published on the event bus as the turn runs
// ([TopicChatEvent]); each replica hands them to its connections watching
// the conversation, except the one running the turn, which has them
// already. Tokens are gathered for up to 25 ms into one event on the bus
// ([relay]): each event is a round trip (a NOTIFY on PostgreSQL).

// TopicChatEvent is the event bus topic of chat turns' events.
const TopicChatEvent = "chat.event"

// chatEvent is a turn's event on the bus.
type chatEvent struct {
	Conversation string     `json:"conversation"`
	Conn         string     `json:"conn"` // the connection running the turn
	Event        chat.Event `json:"event"`
}

// hub holds a process's connections by the conversations they watch.
type hub struct {
	bus *events.Bus

	mu       sync.Mutex
	watchers map[string]map[*conn]bool
}

func newHub(bus *events.Bus) *hub {
	h := &hub{bus: bus, watchers: map[string]map[*conn]bool{}}
	if bus != nil {
		bus.Subscribe(TopicChatEvent, h.deliver)
	}
	return h
}

// watch makes c receive the events of conversation id.
func (h *hub) watch(id string, c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watchers[id] == nil {
		h.watchers[id] = map[*conn]bool{}
	}
	h.watchers[id][c] = true
}

// leave stops every watch of c (its connection closed).
func (h *hub) leave(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, set := range h.watchers {
		delete(set, c)
		if len(set) == 0 {
			delete(h.watchers, id)
		}
	}
}

// publish puts an event of a turn run by connection c on the bus.
func (h *hub) publish(ctx context.Context, c *conn, conversation string, e chat.Event) {
	if h.bus == nil || conversation == "" {
		return
	}
	if err := h.bus.Publish(context.WithoutCancel(ctx), TopicChatEvent, chatEvent{Conversation: conversation, Conn: c.id, Event: e}); err != nil {
		c.log.Warn("publish a chat event for watchers", "conversation", conversation, "err", err)
	}
}

// coalesce is how long a turn's tokens gather before they are published
// as one event: a model streams tens of tokens a second, and each event on
// the bus is a round trip (a NOTIFY on PostgreSQL).
const coalesce = 25 * time.Millisecond

// relay publishes one turn's events in order, its tokens gathered for up to
// [coalesce] into one token event (watchers may get tokens merged, as a
// slow reader does).
type relay struct {
	h *hub
	c *conn

	mu      sync.Mutex
	pending *chat.Event // tokens not yet published
	conv    string
	timer   *time.Timer
}

// send publishes e of conversation conv: a token waits (merged with the
// tokens before it) at most coalesce; any other event first publishes the
// tokens waiting.
func (r *relay) send(ctx context.Context, conv string, e chat.Event) {
	if r.h.bus == nil || conv == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending != nil && (e.Type != chat.Token || r.conv != conv) {
		r.flushLocked(ctx)
	}
	if e.Type != chat.Token {
		r.h.publish(ctx, r.c, conv, e)
		return
	}
	if r.pending != nil {
		r.pending.Content += e.Content
		return
	}
	r.pending, r.conv = &e, conv
	r.timer = time.AfterFunc(coalesce, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.flushLocked(ctx)
	})
}

// flush publishes the tokens waiting, if any.
func (r *relay) flush(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked(ctx)
}

func (r *relay) flushLocked(ctx context.Context) {
	if r.pending == nil {
		return
	}
	r.timer.Stop()
	r.h.publish(ctx, r.c, r.conv, *r.pending)
	r.pending = nil
}

// deliver hands a bus event to this process's watchers of its conversation.
func (h *hub) deliver(ev events.Event) {
	var ce chatEvent
	if err := json.Unmarshal(ev.Data, &ce); err != nil {
		return
	}
	h.mu.Lock()
	var to []*conn
	for c := range h.watchers[ce.Conversation] {
		if c.id != ce.Conn {
			to = append(to, c)
		}
	}
	h.mu.Unlock()
	for _, c := range to {
		c.push(ce.Event)
	}
}

// newConnID names a connection among every replica's.
func newConnID() string { return ulid.Make().String() }
