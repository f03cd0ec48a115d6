package mcpsession_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcpsession"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestSessionLifecycle: a saved session loads with what it discovered and
// its log level; saving it again (a replica re-creating it) keeps them; a
// session unseen for the ttl does not load and is pruned with its
// bindings; Delete removes it at once.
func TestSessionLifecycle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := mcpsession.New(st, time.Hour)
		params := json.RawMessage(`{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}`)
		if err := s.Save(ctx, mcpsession.Session{ID: "S1", Surface: "mcp-bounded-http", User: "u1", Params: params}); err != nil {
			t.Fatal(err)
		}
		if err := s.Discover(ctx, "S1", "substrate_belief_query", "belief_query"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetLogLevel(ctx, "S1", "debug"); err != nil {
			t.Fatal(err)
		}
		// A replica re-creating the session initializes it again.
		if err := s.Save(ctx, mcpsession.Session{ID: "S1", Surface: "mcp-bounded-http", User: "u1", Params: params}); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Load(ctx, "S1")
		if err != nil || !ok {
			t.Fatalf("load: %v %v", ok, err)
		}
		if got.User != "u1" || got.LogLevel != "debug" || got.Discovered["substrate_belief_query"] != "belief_query" || string(got.Params) != string(params) {
			t.Errorf("loaded %+v", got)
		}
		if _, ok, _ := s.Load(ctx, "nope"); ok {
			t.Error("an unknown session loaded")
		}

		// Bindings: the first replica to bind a transport's user and
		// workspace wins.
		tr := mcpsession.TransportKey("S1")
		b1, err := s.Bind(ctx, tr, pipeline.Bound{SessionID: "conv-a", Workspace: "default", User: "u1"})
		if err != nil || b1.SessionID != "conv-a" {
			t.Fatalf("bind: %+v %v", b1, err)
		}
		b2, err := s.Bind(ctx, tr, pipeline.Bound{SessionID: "conv-b", Workspace: "default", User: "u1"})
		if err != nil || b2.SessionID != "conv-a" {
			t.Fatalf("second bind got %+v %v, want conv-a", b2, err)
		}
		if bound, err := s.Bound(ctx, tr); err != nil || len(bound) != 1 {
			t.Fatalf("bound: %+v %v", bound, err)
		}

		// Unseen for longer than the ttl: gone.
		short := mcpsession.New(st, time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		if _, ok, _ := short.Load(ctx, "S1"); ok {
			t.Error("a session unseen for longer than the ttl loaded")
		}
		if n, err := short.Prune(ctx); err != nil || n != 1 {
			t.Fatalf("prune: %d %v", n, err)
		}
		if bound, _ := s.Bound(ctx, tr); len(bound) != 0 {
			t.Errorf("a pruned session's bindings remain: %+v", bound)
		}

		// Delete.
		s.Save(ctx, mcpsession.Session{ID: "S2", Surface: "mcp-flat-http", Params: params})
		if err := s.Delete(ctx, "S2"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Load(ctx, "S2"); ok {
			t.Error("a deleted session loaded")
		}
	})
}

// TestOpenedToolboxes (issue 21, item 13): the toolboxes a bounded session
// opened are kept with it, apart from its discovered tools, so that
// use_tool reaches them on every replica; saving the session again keeps
// them.
func TestOpenedToolboxes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := mcpsession.New(st, time.Hour)
		if err := s.Save(ctx, mcpsession.Session{ID: "S1", Surface: "mcp-bounded-http", Params: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		for _, tb := range []string{"dev", "prod", "dev"} {
			if err := s.Open(ctx, "S1", tb); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Discover(ctx, "S1", "hello_greet", "dev__hello__greet"); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, mcpsession.Session{ID: "S1", Surface: "mcp-bounded-http", Params: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Load(ctx, "S1")
		if err != nil || !ok {
			t.Fatalf("load: %v %v", ok, err)
		}
		if len(got.Opened) != 2 || got.Opened[0] != "dev" || got.Opened[1] != "prod" {
			t.Errorf("opened %v, want [dev prod]", got.Opened)
		}
		if len(got.Discovered) != 1 || got.Discovered["hello_greet"] != "dev__hello__greet" {
			t.Errorf("discovered %v", got.Discovered)
		}
	})
}
