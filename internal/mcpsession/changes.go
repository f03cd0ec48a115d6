package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/nexus-mcp/nexus/internal/events"
)

// TopicChanged is the event of a session whose stored state changed on one
// replica (the session sync status of SPEC section 7): the other replicas
// holding a copy of it bring their copy up to date. Its data is a [Change].
const TopicChanged = "mcp.session.changed"

// Change is what changed in a session.
type Change struct {
	// ID is the session's id.
	ID string `json:"id"`
	// LogLevel is the log level it set, when that changed.
	LogLevel string `json:"log_level,omitempty"`
	// Discovered is set when it discovered a tool (the tools are in the
	// store: [Store.Load]).
	Discovered bool `json:"discovered,omitempty"`
}

// Follow makes the store tell the replicas sharing bus of the changes it
// stores, and hand their changes to the functions given to [Store.OnChange].
// Call it once, before sessions are served.
func (s *Store) Follow(bus *events.Bus) {
	if bus == nil {
		return
	}
	s.mu.Lock()
	s.bus = bus
	s.mu.Unlock()
	bus.Subscribe(TopicChanged, func(e events.Event) {
		var c Change
		if e.Origin == bus.Origin() || json.Unmarshal(e.Data, &c) != nil || c.ID == "" {
			return // this replica's own change is in place already
		}
		s.mu.Lock()
		fns := s.changed
		s.mu.Unlock()
		for _, fn := range fns {
			fn(c)
		}
	})
}

// SyncHeader marks a request that applies another replica's change to this
// replica's copy of a session (the HTTP front sends it to the session's
// endpoint in process, and strips it from requests from outside): what
// handles it must not store or tell the change again, or the replicas would
// echo it back and forth, and an older change could overwrite a newer one
// in the store. A header, not a context value: the MCP SDK hands a
// session's later requests the context of its first, and the request's
// header in [mcp.RequestExtra].
const SyncHeader = "Nexus-Session-Sync"

// IsSyncing reports whether header marks a request as applying another
// replica's change ([SyncHeader]).
func IsSyncing(header http.Header) bool { return header.Get(SyncHeader) != "" }

// OnChange calls fn with each change another replica made to a session.
// fn runs on the event bus's goroutine: it must not block for long.
func (s *Store) OnChange(fn func(Change)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = append(s.changed, fn)
}

// publish tells the other replicas of change c; an error means the change
// is stored but their copies stay as they were until the session is
// re-created there.
func (s *Store) publish(ctx context.Context, c Change) error {
	s.mu.Lock()
	bus := s.bus
	s.mu.Unlock()
	if bus == nil {
		return nil
	}
	if err := bus.Publish(context.WithoutCancel(ctx), TopicChanged, c); err != nil {
		return fmt.Errorf("mcpsession: stored, but the other replicas were not told of the change to %s: %w", c.ID, err)
	}
	return nil
}

// restoredKey marks the context of a session restored from the store.
type restoredKey struct{}

// Restoring returns ctx marked as the context a session restored from the
// store on this replica is connected with: the SDK hands its values on to
// every request of the session, so that the surfaces know the session
// passed its initialize on another replica (or before a restart), not
// here ([Restored]).
func Restoring(ctx context.Context) context.Context {
	return context.WithValue(ctx, restoredKey{}, true)
}

// Restored reports whether ctx is of a request of a session restored from
// the store on this replica ([Restoring]).
func Restored(ctx context.Context) bool {
	v, _ := ctx.Value(restoredKey{}).(bool)
	return v
}
