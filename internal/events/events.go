// Package events carries events between the replicas of one Nexus
// deployment (SPEC section 7) over an existing engine: PostgreSQL
// LISTEN/NOTIFY when the store is PostgreSQL, NATS when configured
// (nats://...), or within the process for a single replica. An event has an
// id, and each replica hands an event to its subscribers once, however
// often the engine delivers it. A replica that lost its connection to the
// engine may have missed events: once reconnected it calls the resync
// functions ([Bus.OnResync]), which rebuild what events would have told it
// from the store.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/store"
)

// Event is one event: its id, topic, the replica that published it and its
// data.
type Event struct {
	ID     string          `json:"id"`
	Topic  string          `json:"topic"`
	Origin string          `json:"origin"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// engine moves encoded events between replicas.
type engine interface {
	// name says which engine it is ("local", "postgres", "nats").
	name() string
	// publish sends one encoded event to every replica (this one too).
	publish(ctx context.Context, payload []byte) error
	// run receives events until ctx ends, handing each to deliver, and
	// calls reconnected after each reconnection (not the first connection).
	run(ctx context.Context, deliver func(payload []byte), reconnected func())
	// ready reports whether the engine is reachable.
	ready(ctx context.Context) error
	close()
}

// Bus is this replica's end of the deployment's events.
type Bus struct {
	origin string
	eng    engine
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	subs   map[string][]*subscription
	resync []func(context.Context)
	seen   *recent
}

type subscription struct{ fn func(Event) }

// Options configure a Bus.
type Options struct {
	// URL names the engine: "" for PostgreSQL LISTEN/NOTIFY when Store is
	// PostgreSQL and within the process otherwise; "local"; or a nats://
	// (tls://) URL of a NATS server, whose subject prefix may be given as
	// the URL's path, e.g. nats://127.0.0.1:4222/nexus.prod (default
	// "nexus").
	URL string
	// Store is the deployment's store.
	Store *store.Store
	// Origin names this replica in the events it publishes.
	Origin string
	Logger *slog.Logger
}

// Open connects to the engine opts name and starts receiving.
func Open(ctx context.Context, opts Options) (*Bus, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var eng engine
	var err error
	switch u := opts.URL; {
	case u == "" && opts.Store != nil && opts.Store.Dialect() == store.Postgres:
		eng, err = newPostgres(ctx, opts.Store, log)
	case u == "" || u == "local":
		eng = newLocal()
	case strings.HasPrefix(u, "nats://") || strings.HasPrefix(u, "tls://"):
		eng, err = newNATS(u, log)
	default:
		return nil, fmt.Errorf("events: %q is not an event engine: give nats://HOST:PORT, or nothing for PostgreSQL LISTEN/NOTIFY (with a PostgreSQL store) or in-process events", u)
	}
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &Bus{origin: opts.Origin, eng: eng, log: log, cancel: cancel, done: make(chan struct{}),
		subs: map[string][]*subscription{}, seen: newRecent(4096)}
	go func() {
		defer close(b.done)
		eng.run(rctx, b.deliver, b.reconnected)
	}()
	// Receiving before Open returns: an event published next reaches this
	// replica too. An engine down at start is left to reconnect (Ready
	// says so meanwhile).
	deadline := time.Now().Add(5 * time.Second)
	for eng.ready(ctx) != nil && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return b, nil
}

// Engine names the engine in use: "local", "postgres" or "nats".
func (b *Bus) Engine() string { return b.eng.name() }

// Origin is the name this replica publishes under.
func (b *Bus) Origin() string { return b.origin }

// Publish sends an event of topic with data (encoded as JSON) to every
// replica, this one included.
func (b *Bus) Publish(ctx context.Context, topic string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("events: %s: %w", topic, err)
	}
	payload, err := json.Marshal(Event{ID: ulid.Make().String(), Topic: topic, Origin: b.origin, Data: raw})
	if err != nil {
		return fmt.Errorf("events: %s: %w", topic, err)
	}
	if err := b.eng.publish(ctx, payload); err != nil {
		return fmt.Errorf("events: publish %s over %s: %w", topic, b.eng.name(), err)
	}
	return nil
}

// Subscribe calls fn with every event of topic, once per event id, on the
// bus's receiving goroutine (fn must not block for long); the returned
// function ends the subscription.
func (b *Bus) Subscribe(topic string, fn func(Event)) (cancel func()) {
	s := &subscription{fn: fn}
	b.mu.Lock()
	b.subs[topic] = append(b.subs[topic], s)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.subs[topic]
		for i, x := range list {
			if x == s {
				b.subs[topic] = append(list[:i:i], list[i+1:]...)
				return
			}
		}
	}
}

// OnResync registers fn, called after the bus reconnects to its engine:
// events may have been missed meanwhile, and fn rebuilds from the store
// what they would have said.
func (b *Bus) OnResync(fn func(context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.resync = append(b.resync, fn)
}

// Ready reports whether the engine is reachable.
func (b *Bus) Ready(ctx context.Context) error { return b.eng.ready(ctx) }

// Close stops receiving and disconnects.
func (b *Bus) Close() {
	b.cancel()
	b.eng.close()
	<-b.done
}

func (b *Bus) deliver(payload []byte) {
	var ev Event
	if err := json.Unmarshal(payload, &ev); err != nil || ev.ID == "" || ev.Topic == "" {
		b.log.Warn("events: a message that is not an event", "payload", string(payload))
		return
	}
	if !b.seen.add(ev.ID) {
		return // delivered already
	}
	b.mu.Lock()
	subs := append([]*subscription(nil), b.subs[ev.Topic]...)
	b.mu.Unlock()
	for _, s := range subs {
		s.fn(ev)
	}
}

func (b *Bus) reconnected() {
	b.mu.Lock()
	fns := append([]func(context.Context){}, b.resync...)
	b.mu.Unlock()
	b.log.Info("events: reconnected; resynchronizing from the store", "engine", b.eng.name())
	for _, fn := range fns {
		fn(context.Background())
	}
}

// recent remembers the last n event ids.
type recent struct {
	mu   sync.Mutex
	ids  map[string]bool
	ring []string
	next int
}

func newRecent(n int) *recent { return &recent{ids: map[string]bool{}, ring: make([]string, n)} }

// add reports whether id is new, and remembers it.
func (r *recent) add(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[id] {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.ids, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
	r.ids[id] = true
	return true
}
