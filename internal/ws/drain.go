package ws

import (
	"context"
	"fmt"

	"github.com/coder/websocket"
)

// restarting is what a connection of a draining replica is told.
const restarting = "this replica is restarting: connect again (a load balancer sends you to another replica) and send the message again"

// drainWhen drains the connection once drain is closed: new messages are
// refused (SERVICE_UNAVAILABLE), turns already running finish (their
// events keep reaching the connections watching their conversation on
// every replica, over the event bus), their last events are written, and
// the connection is closed with 1012 (service restart), so that the client
// connects again, to another replica, and watches again there.
func (s *conn) drainWhen(ctx context.Context, drain <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-drain:
	}
	s.mu.Lock()
	s.draining = true
	busy := len(s.turns) > 0
	s.mu.Unlock()
	if busy {
		select {
		case <-s.idle:
		case <-ctx.Done():
			return
		}
	}
	s.flush(ctx)
	s.c.Close(websocket.StatusServiceRestart, "this replica is restarting: connect again")
}

// flush waits until the writer has sent every queued event (or the
// connection closed), or until ctx ends.
func (s *conn) flush(ctx context.Context) {
	s.mu.Lock()
	if s.sentAllLocked() {
		s.mu.Unlock()
		return
	}
	if s.flushed == nil {
		s.flushed = make(chan struct{})
	}
	flushed := s.flushed
	s.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-flushed:
	}
}

// sentAllLocked reports whether the writer has sent every queued event, or
// the connection closed. s.mu is held.
func (s *conn) sentAllLocked() bool {
	return (len(s.outbox) == 0 && !s.writing) || s.closed
}

// sentLocked wakes flush's wait once sentAllLocked holds; every change to
// outbox, writing or closed that can make it hold calls it. s.mu is held.
func (s *conn) sentLocked() {
	if s.flushed != nil && s.sentAllLocked() {
		close(s.flushed)
		s.flushed = nil
	}
}

// Wait waits until every connection has ended (after Options.Drain was
// closed, each ends once its turns have), or until ctx ends.
func (sv *Server) Wait(ctx context.Context) error {
	sv.mu.Lock()
	if sv.conns == 0 {
		sv.mu.Unlock()
		return nil
	}
	if sv.ended == nil {
		sv.ended = make(chan struct{})
	}
	ended := sv.ended
	sv.mu.Unlock()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("websocket connections still open: %w", ctx.Err())
	}
}

// enter counts a connection being served.
func (sv *Server) enter() {
	sv.mu.Lock()
	sv.conns++
	sv.mu.Unlock()
}

// exit uncounts a connection that has ended, waking Wait after the last.
func (sv *Server) exit() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.conns--; sv.conns == 0 && sv.ended != nil {
		close(sv.ended)
		sv.ended = nil
	}
}
