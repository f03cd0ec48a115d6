package workbench

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscriptions to a downstream server's resources (issue 26). The
// server's connection is shared: each URI is subscribed once, when the
// first client subscribes, and unsubscribed when the last one unsubscribes
// (a client whose session ends without unsubscribing keeps its count: the
// server then goes on sending updates that no session listens for, which
// the surfaces drop). A new session of the server subscribes again to every
// URI that has subscribers. The server's notifications/resources/updated
// reach the surfaces through the registry (registry.ResourceUpdated).

// subscriptions are a server's subscribed resources, counted.
type subscriptions struct {
	mu sync.Mutex
	n  map[string]int
	on *mcp.ClientSession // the session they were last made on
}

// subscribe subscribes a client to the server's resource uri.
func (s *server) subscribe(ctx context.Context, uri string) error {
	s.subs.mu.Lock()
	if s.subs.n == nil {
		s.subs.n = map[string]int{}
	}
	s.subs.n[uri]++
	first := s.subs.n[uri] == 1
	s.subs.mu.Unlock()
	if !first {
		return nil
	}
	err := s.extraCall(ctx, "a subscription to resource '"+uri+"'", func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		s.subs.mu.Lock()
		if s.subs.n[uri]--; s.subs.n[uri] <= 0 {
			delete(s.subs.n, uri)
		}
		s.subs.mu.Unlock()
	}
	return err
}

// unsubscribe ends a client's subscription to the server's resource uri.
func (s *server) unsubscribe(ctx context.Context, uri string) error {
	s.subs.mu.Lock()
	if s.subs.n[uri] == 0 {
		s.subs.mu.Unlock()
		return nil
	}
	s.subs.n[uri]--
	last := s.subs.n[uri] == 0
	if last {
		delete(s.subs.n, uri)
	}
	s.subs.mu.Unlock()
	if !last {
		return nil
	}
	return s.extraCall(ctx, "the end of a subscription to resource '"+uri+"'", func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// resubscribe subscribes a new session of the server to every resource
// that has subscribers.
func (s *server) resubscribe(ctx context.Context, cs *mcp.ClientSession) {
	s.subs.mu.Lock()
	if s.subs.on == cs {
		s.subs.mu.Unlock()
		return // a new listing of the same session
	}
	s.subs.on = cs
	uris := slices.Sorted(maps.Keys(s.subs.n))
	s.subs.mu.Unlock()
	for _, uri := range uris {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			s.m.log.Warn("subscribe again to a downstream resource", "toolbox", s.toolbox, "server", s.name, "uri", uri, "err", err)
		}
	}
}
