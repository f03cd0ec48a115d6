package ws

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/users"
)

// Defaults of the connection limits (Options).
const (
	// DefaultMaxQueued: messages waiting behind a connection's running turn.
	DefaultMaxQueued = 4
	// DefaultIdleTimeout: a connection with no frame, turn or event for
	// this long is closed.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultPingInterval: how often the client is pinged.
	DefaultPingInterval = 30 * time.Second
	// DefaultMaxPerUser: open connections of one user on one replica.
	DefaultMaxPerUser = 16
)

// RateLimiter bounds the requests a second of each user: the HTTP front's
// (httpapi.RateLimiter; quota.SharedLimiter holds across replicas).
type RateLimiter interface {
	// Allow admits one request of key now, or refuses it and says how
	// long until one would be admitted.
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
	// Rate is the sustained requests a second a key may make.
	Rate() float64
}

// TurnLimiter caps the turns a user runs at once (quota.TurnSlots).
type TurnLimiter interface {
	// Begin admits one turn of user and returns end, called once it has
	// ended; a refusal is an *errs.Error (RATE_LIMITED with RetryAfter).
	Begin(ctx context.Context, user string) (end func(), err error)
}

// UsersChanged tells every connection of this replica that a user or a
// token changed (on this replica or another: app wires the users.changed
// event, after the users cache was forgotten): each checks its token again
// at once, and one that no longer authenticates, or lost the admin role,
// is refused and closed.
func (sv *Server) UsersChanged() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	for c := range sv.open {
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// join counts an authenticated connection of user, unless the user holds
// MaxPerUser already.
func (sv *Server) join(c *conn, user string) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.byUser[user] >= c.o.MaxPerUser {
		return false
	}
	sv.byUser[user]++
	sv.open[c] = true
	return true
}

// leave uncounts a connection that join counted.
func (sv *Server) leave(c *conn, user string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	delete(sv.open, c)
	if sv.byUser[user]--; sv.byUser[user] <= 0 {
		delete(sv.byUser, user)
	}
}

// current is the connection's user as last checked.
func (s *conn) current() *users.User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user
}

// touch records activity (IdleTimeout).
func (s *conn) touch() {
	s.mu.Lock()
	s.active = time.Now()
	s.mu.Unlock()
}

// vouch checks the connection's token again, through the same cache the
// HTTP front uses (users.CacheFor, forgotten at once on a change): a token
// that no longer authenticates (revoked, its user disabled) is refused
// with UNAUTHORIZED, a user who lost the admin role with FORBIDDEN; either
// way the running turns are cancelled and the connection closed with
// 1008, and vouch returns false. Otherwise the connection goes on as the
// user read now (a changed tier applies to the next turn). conv is the
// conversation of the frame being answered, if any.
func (s *conn) vouch(ctx context.Context, conv string) bool {
	s.mu.Lock()
	old, ended := s.user, s.ended
	s.mu.Unlock()
	if ended {
		return false
	}
	if s.token == "" || s.o.Auth == nil {
		return true // the local user, with no token to revoke
	}
	u, err := s.o.Auth.Authenticate(ctx, s.token)
	if ctx.Err() != nil {
		return false
	}
	switch {
	case err != nil && !errors.Is(err, users.ErrUnknownToken) && !errors.Is(err, users.ErrRevoked) && !errors.Is(err, users.ErrDisabled):
		// The store did not answer: that refuses no token. The
		// connection goes on as the user last checked, and its next frame
		// checks again, rather than being closed by an outage.
		s.log.Warn("websocket: its token could not be checked again", "user", old.ID, "err", err)
		return true
	case err != nil:
		s.log.Info("websocket closed: its token no longer authenticates", "user", old.ID, "reason", err)
		s.refuse(ctx, chat.Event{Type: chat.Error, Code: string(errs.Unauthorized), ConversationID: conv,
			Message: "the token of this connection no longer authenticates a user of this server (revoked, or the user was disabled)"},
			"the token no longer authenticates")
		return false
	case u.ID != old.ID || (old.Principal().Admin() && !u.Principal().Admin()):
		s.log.Info("websocket closed: its user's role changed", "user", old.ID, "role", u.Role)
		s.refuse(ctx, chat.Event{Type: chat.Error, Code: string(errs.Forbidden), ConversationID: conv,
			Message: "this connection's user is no longer " + old.Role + ": connect again"},
			"the user's role changed")
		return false
	}
	s.mu.Lock()
	s.user = u
	s.mu.Unlock()
	return true
}

// refuse ends the connection: no turn starts any more, the running ones
// are cancelled, e is sent, then the connection is closed with 1008.
func (s *conn) refuse(ctx context.Context, e chat.Event, reason string) {
	s.mu.Lock()
	already := s.ended
	s.ended = true
	s.mu.Unlock()
	if already {
		return
	}
	s.cancelTurns("")
	s.push(e)
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	s.flush(fctx)
	cancel()
	s.c.Close(websocket.StatusPolicyViolation, reason)
}

// allow counts a frame against its user's request rate; a frame over it
// is answered RATE_LIMITED and allow returns false.
func (s *conn) allow(ctx context.Context, conv string) bool {
	if s.o.RateLimit == nil || s.token == "" {
		return true // as on HTTP, the local user is not limited
	}
	ok, wait := s.o.RateLimit.Allow(ctx, s.current().ID)
	if ok {
		return true
	}
	secs := quota.RetrySeconds(wait)
	s.push(chat.Event{Type: chat.Error, Code: string(errs.RateLimited), ConversationID: conv, RetryAfter: secs,
		Message: fmt.Sprintf("too many requests for this user: at most %s a second; retry in %d s", strconv.FormatFloat(s.o.RateLimit.Rate(), 'g', -1, 64), secs)})
	return false
}

// keep watches an authenticated connection until ctx ends: it checks the
// token again every Recheck and when a user changed, pings the client
// every PingInterval (a missing pong closes the connection), and closes
// the connection once it has been idle for IdleTimeout.
func (s *conn) keep(ctx context.Context) {
	recheck := time.NewTicker(s.o.Recheck)
	defer recheck.Stop()
	ping := time.NewTicker(s.o.PingInterval)
	defer ping.Stop()
	idle := time.NewTimer(s.o.IdleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
			if !s.vouch(ctx, "") {
				return
			}
		case <-recheck.C:
			if !s.vouch(ctx, "") {
				return
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, s.o.PingInterval)
			err := s.c.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.log.Info("websocket closed: the client does not answer pings", "err", err)
				s.cancelTurns("")
				s.c.CloseNow()
				return
			}
		case <-idle.C:
			s.mu.Lock()
			left := s.o.IdleTimeout - time.Since(s.active)
			if len(s.turns) > 0 {
				left = s.o.IdleTimeout
			}
			s.mu.Unlock()
			if left <= 0 {
				s.log.Debug("websocket closed: idle", "idle_timeout", s.o.IdleTimeout)
				s.c.Close(websocket.StatusGoingAway, "idle for "+s.o.IdleTimeout.String()+": connect again when needed")
				return
			}
			idle.Reset(left)
		}
	}
}
