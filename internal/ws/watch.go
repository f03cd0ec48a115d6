package ws

import (
	"context"
	"encoding/json"
	"sync"

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
// already.

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
