package mcpsession_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/events"
	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestChangesReachTheOtherReplicas: a log level set and a tool discovered
// through one replica's store reach the other replica's OnChange (over
// PostgreSQL LISTEN/NOTIFY), once each; storing what is already stored,
// and a replica's own changes, tell no one.
func TestChangesReachTheOtherReplicas(t *testing.T) {
	st := storetest.OpenTestPostgres(t)
	ctx := context.Background()
	replica := func(i int) (*mcpsession.Store, chan mcpsession.Change) {
		b, err := events.Open(ctx, events.Options{Store: st, Origin: fmt.Sprintf("replica-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		s := mcpsession.New(st, time.Hour)
		s.Follow(b)
		got := make(chan mcpsession.Change, 16)
		s.OnChange(func(c mcpsession.Change) { got <- c })
		return s, got
	}
	a, fromA := replica(1)
	_, atB := replica(2)
	params := json.RawMessage(`{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}`)
	if err := a.Save(ctx, mcpsession.Session{ID: "S1", Surface: "mcp-bounded-http", User: "u1", Params: params}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		do   func() error
		want *mcpsession.Change
	}{
		{func() error { return a.SetLogLevel(ctx, "S1", "debug") }, &mcpsession.Change{ID: "S1", LogLevel: "debug"}},
		{func() error { return a.SetLogLevel(ctx, "S1", "debug") }, nil},
		{func() error { return a.Discover(ctx, "S1", "substrate_belief_query", "belief_query") }, &mcpsession.Change{ID: "S1", Discovered: true}},
		{func() error { return a.Discover(ctx, "S1", "substrate_belief_query", "belief_query") }, nil},
		{func() error { return a.SetLogLevel(ctx, "S1", "error") }, &mcpsession.Change{ID: "S1", LogLevel: "error"}},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if s.want == nil {
			continue
		}
		select {
		case c := <-atB:
			if c != *s.want {
				t.Fatalf("step %d: the other replica got %+v, want %+v", i, c, *s.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("step %d: the other replica got no change", i)
		}
	}
	// Nothing more: no event for the unchanged steps, none to the replica
	// that made the changes.
	select {
	case c := <-atB:
		t.Errorf("an extra change at the other replica: %+v", c)
	case c := <-fromA:
		t.Errorf("the replica that made a change was told of it: %+v", c)
	case <-time.After(300 * time.Millisecond):
	}
}
