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
	// An event larger than its engine carries (PostgreSQL's NOTIFY takes
	// under 8,000 bytes) travels in parts: part Part (from 1) of Parts,
	// each with a piece of the data's bytes, put together again before
	// subscribers see it.
	Part  int    `json:"part,omitempty"`
	Parts int    `json:"parts,omitempty"`
	Piece []byte `json:"piece,omitempty"`
}

// engine moves encoded events between replicas.
type engine interface {
	// name says which engine it is ("local", "postgres", "nats").
	name() string
	// publish sends one encoded event to every replica (this one too).
	publish(ctx context.Context, payload []byte) error
	// max is the largest payload the engine carries (0: no limit).
	max() int
	// run receives events until ctx ends, handing each to deliver, and
	// calls connected after each connection to the engine, the first one
	// (again false) and every reconnection (again true): ready may have
	// changed then. An engine always ready need not call it.
	run(ctx context.Context, deliver func(payload []byte), connected func(again bool))
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
	// up is signalled after each connection to the engine, for Open's wait.
	up chan struct{}

	mu     sync.Mutex
	subs   map[string][]*subscription
	resync []func(context.Context)
	seen   *recent
	// partial holds the parts of events arriving in parts, by id.
	partial map[string]*partial
}

// partial is an event whose parts are arriving.
type partial struct {
	pieces [][]byte
	got    int
	since  time.Time
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
	b := &Bus{origin: opts.Origin, eng: eng, log: log, cancel: cancel, done: make(chan struct{}), up: make(chan struct{}, 1),
		subs: map[string][]*subscription{}, seen: newRecent(4096), partial: map[string]*partial{}}
	go func() {
		defer close(b.done)
		eng.run(rctx, b.deliver, b.connected)
	}()
	// Receiving before Open returns: an event published next reaches this
	// replica too. An engine down at start is left to reconnect (Ready
	// says so meanwhile): Open waits 5 s at most, and not once the engine
	// has stopped trying.
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
	for eng.ready(ctx) != nil {
		select {
		case <-b.up:
		case <-b.done:
			return b, nil
		case <-timeout.C:
			return b, nil
		case <-ctx.Done():
			return b, nil
		}
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
	ev := Event{ID: ulid.Make().String(), Topic: topic, Origin: b.origin, Data: raw}
	payload, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("events: %s: %w", topic, err)
	}
	max := b.eng.max()
	if max == 0 || len(payload) <= max {
		if err := b.eng.publish(ctx, payload); err != nil {
			return fmt.Errorf("events: publish %s over %s: %w", topic, b.eng.name(), err)
		}
		return nil
	}
	// In parts: each piece base64-encoded (4/3 of its size) beside an
	// envelope of well under 512 bytes.
	size := (max - 512) * 3 / 4
	parts := (len(raw) + size - 1) / size
	for i := range parts {
		piece := raw[i*size : min((i+1)*size, len(raw))]
		p, err := json.Marshal(Event{ID: ev.ID, Topic: topic, Origin: b.origin, Part: i + 1, Parts: parts, Piece: piece})
		if err != nil {
			return fmt.Errorf("events: %s: %w", topic, err)
		}
		if err := b.eng.publish(ctx, p); err != nil {
			return fmt.Errorf("events: publish %s (part %d of %d) over %s: %w", topic, i+1, parts, b.eng.name(), err)
		}
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
	if ev.Parts > 1 {
		var whole bool
		if ev, whole = b.assemble(ev); !whole {
			return
		}
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

// assemble keeps a part of an event and returns the whole event once every
// part has come. Parts of events that never complete (a publisher died
// between parts) are dropped after a minute.
func (b *Bus) assemble(part Event) (Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	for id, p := range b.partial {
		if now.Sub(p.since) > time.Minute {
			delete(b.partial, id)
		}
	}
	if part.Part < 1 || part.Part > part.Parts || part.Parts > 10000 {
		return Event{}, false
	}
	p := b.partial[part.ID]
	if p == nil {
		if b.seen.has(part.ID) {
			return Event{}, false // delivered already: a repeated part
		}
		p = &partial{pieces: make([][]byte, part.Parts), since: now}
		b.partial[part.ID] = p
	}
	if len(p.pieces) != part.Parts || p.pieces[part.Part-1] != nil {
		return Event{}, false
	}
	p.pieces[part.Part-1] = part.Piece
	p.got++
	if p.got < part.Parts {
		return Event{}, false
	}
	delete(b.partial, part.ID)
	var data []byte
	for _, piece := range p.pieces {
		data = append(data, piece...)
	}
	return Event{ID: part.ID, Topic: part.Topic, Origin: part.Origin, Data: data}, true
}

// connected is the engine's word that it connected (again: reconnected):
// Open's wait is woken, and after a reconnection the resync functions run.
func (b *Bus) connected(again bool) {
	select {
	case b.up <- struct{}{}:
	default: // a signal is pending already
	}
	if again {
		b.reconnected()
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

// has reports whether id was seen.
func (r *recent) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

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
