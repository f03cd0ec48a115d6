package ids

import (
	"crypto/rand"
	"sync"
)

// MCPSessions hands out the ids of new MCP sessions over Streamable HTTP
// (the SDK asks [MCPSessions.New] through mcp.ServerOptions.GetSessionID),
// and lets a replica re-create a session another replica started under the
// id its client already holds ([MCPSessions.Hold]).
//
// The SDK asks for an id with nothing that tells one request from another,
// so every request that may start a session holds the source from before
// it reaches the SDK until the SDK has asked (or has answered without
// asking): while held, New returns the held id, if any, to that request
// alone. Holding it costs the few checks the SDK makes before it asks.
// Handlers that do not hold it get fresh ids, and must not run in the same
// process as ones that re-create sessions.
type MCPSessions struct {
	turn chan struct{} // capacity one: the holder's token

	mu  sync.Mutex
	cur *hold // the current holder, until the SDK asks
}

type hold struct {
	id    string
	asked bool
}

// NewMCPSessions returns an id source.
func NewMCPSessions() *MCPSessions { return &MCPSessions{turn: make(chan struct{}, 1)} }

// Hold waits for its turn and holds the source until the SDK asks for a
// session id (which is then id, or a fresh one when id is empty) or until
// release is called, whichever comes first. Release is idempotent.
func (m *MCPSessions) Hold(id string) (release func()) {
	m.turn <- struct{}{}
	h := &hold{id: id}
	m.mu.Lock()
	m.cur = h
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if h.asked {
			return
		}
		h.asked = true
		m.cur = nil
		<-m.turn
	}
}

// New returns the id of a new session: the held id when the holder has
// one, else a fresh random one (crypto/rand, 26 characters of base 32). It
// ends the current hold.
func (m *MCPSessions) New() string {
	m.mu.Lock()
	h := m.cur
	if h != nil {
		h.asked = true
		m.cur = nil
		<-m.turn
	}
	m.mu.Unlock()
	if h != nil && h.id != "" {
		return h.id
	}
	return rand.Text()
}
