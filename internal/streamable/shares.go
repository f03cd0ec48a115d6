package streamable

import (
	"net/http"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/users"
)

// SessionsPerUser is the default share of one user (Options.MaxSessionsPerUser
// zero) of maxSessions slots: a tenth of them, at least 10, but at most half
// of them (rounded up), so that one user never holds every slot of a small
// cap: 1,000 of the default 10,000, 10 of 50, 5 of 10.
func SessionsPerUser(maxSessions int) int {
	n := max(maxSessions/10, 10)
	return max(min(n, (maxSessions+1)/2), 1)
}

// RetryShare is the Retry-After (seconds) of a request refused for a share
// or cap of slots: a slot frees when a call ends.
const RetryShare = 5

// shares divides slots (MCP sessions, sessionless listening streams)
// between users: every share holds at most perUser of the max slots,
// except the local user's, bounded by max alone.
//
// A share is a user's (its id), with two exceptions, decided by [shareOf]:
// users of the anonymous tier have one share between them, since an
// anonymous identity costs nothing to make (a guest sign-up at the identity
// provider); the local user (no token on a loopback-only listener, or
// authentication off) is the operator of the machine, an admin, and as for
// the request rate limit its share is the whole cap.
type shares struct {
	max, perUser int
}

func newShares(maxSlots, perUser int) shares {
	if maxSlots <= 0 {
		maxSlots = DefaultMaxSessions
	}
	if perUser <= 0 {
		perUser = SessionsPerUser(maxSlots)
	}
	return shares{max: maxSlots, perUser: min(perUser, maxSlots)}
}

// The shares that are not one user's.
const (
	localShare     = "local"
	anonymousShare = "tier:anonymous"
)

// shareOf names the share of slots that r's session or stream takes.
func shareOf(r *http.Request) string {
	u, ok := users.FromContext(r.Context())
	switch {
	case !ok:
		return "" // none of the MCP routes: the guard names a user for all
	case u.ID == users.Local.ID:
		return localShare
	case u.Tier == users.Anonymous:
		return anonymousShare
	}
	return "user:" + u.ID
}

// full reports whether share, holding held slots, may hold no more of its
// own: false for a share bounded by the cap alone (the local user's, or
// every user's when the share is the whole cap), which the cap decides.
func (s shares) full(share string, held int) bool {
	return share != localShare && s.perUser < s.max && held >= s.perUser
}

// refuse answers a request refused a slot: 429 when its share is full (what
// slots stands for, "MCP sessions" or "listening streams", each of them
// busy), naming the per-user limit; 503 when the whole cap is.
func (s shares) refuse(w http.ResponseWriter, share, slots string, capFull bool) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryShare))
	if capFull {
		errs.Write(w, http.StatusServiceUnavailable, errs.E(errs.Unavailable,
			"all %d %s of this server are busy; try again shortly", s.max, slots))
		return
	}
	who := "this user has"
	if share == anonymousShare {
		who = "the users of the anonymous tier have, together,"
	}
	e := errs.E(errs.RateLimited, "%s %d %s on this server, each busy: at most %d per user (--max-sessions-per-user); end one or try again in %d s",
		who, s.perUser, slots, s.perUser, RetryShare)
	e.RetryAfter = RetryShare
	errs.Write(w, http.StatusTooManyRequests, e)
}
