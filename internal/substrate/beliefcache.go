package substrate

import (
	"maps"
	"slices"
	"sync"

	"github.com/nexus-mcp/nexus/internal/tension"
)

// beliefCacheSize bounds the stored beliefs a server keeps in its
// beliefCache (about 2-4 KiB each with the detector's analysis).
const beliefCacheSize = 20_000

// beliefCache keeps, across calls, what the write path reads and computes
// about stored beliefs that never changes once a belief is stored: its match
// row and its row with entity links (content, domain, confidence, validity,
// entities) and the detector's analysis of it (issue 23: reading the
// candidates' rows and analysing them again on every create was a third of
// belief_create's CPU). A belief's status is the one thing that changes
// (superseded, archived), so the status of a cached row is not to be
// trusted: every search reads it from the store (windowCandidates,
// candidatesSQL), and the write transaction checks the findings' candidates
// again (inactive). Beliefs are keyed by sequence number, and only rows read
// from the store (so committed) are put here.
//
// Bounded by two generations: lookups promote an entry from the old
// generation to the current one, and a full current generation becomes the
// old one, dropping the previous old one. Safe for concurrent use.
type beliefCache struct {
	mu       sync.Mutex
	cur, old map[int64]*cachedBelief
	gen      int // the size of a generation
}

// cachedBelief is what the cache holds of one stored belief; any field may
// be nil until read or computed. Read only once set.
type cachedBelief struct {
	match    *matchRow
	belief   *Belief
	analysis *tension.Analyzed
}

func newBeliefCache(size int) *beliefCache {
	gen := max(size/2, 1)
	return &beliefCache{cur: make(map[int64]*cachedBelief, gen), old: map[int64]*cachedBelief{}, gen: gen}
}

// entry returns seq's entry, creating it when create is set; c.mu is held.
func (c *beliefCache) entry(seq int64, create bool) *cachedBelief {
	if e, ok := c.cur[seq]; ok {
		return e
	}
	e, ok := c.old[seq]
	if !ok && !create {
		return nil
	}
	if !ok {
		e = &cachedBelief{}
	}
	if len(c.cur) >= c.gen {
		c.old, c.cur = c.cur, make(map[int64]*cachedBelief, c.gen)
	}
	c.cur[seq] = e
	return e
}

// matchRows returns the cached match rows of seqs (nil for those not
// cached), in that order.
func (c *beliefCache) matchRows(seqs []int64) []*matchRow {
	out := make([]*matchRow, len(seqs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, seq := range seqs {
		if e := c.entry(seq, false); e != nil {
			out[i] = e.match
		}
	}
	return out
}

// putMatchRows caches rows read from the store.
func (c *beliefCache) putMatchRows(rows []*matchRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range rows {
		c.entry(m.seq, true).match = m
	}
}

// beliefs returns the cached beliefs of seqs (nil for those not cached),
// in that order.
func (c *beliefCache) beliefs(seqs []int64) []*Belief {
	out := make([]*Belief, len(seqs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, seq := range seqs {
		if e := c.entry(seq, false); e != nil {
			out[i] = e.belief
		}
	}
	return out
}

// putBeliefs caches beliefs read from the store, with their entities.
func (c *beliefCache) putBeliefs(bs []*Belief) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bs {
		c.entry(b.seq, true).belief = b
	}
}

// analysis returns the detector's analysis of b, a belief read from the
// store (b.seq set), made once while the cache holds it.
func (c *beliefCache) analysis(b *Belief) *tension.Analyzed {
	c.mu.Lock()
	e := c.entry(b.seq, true)
	a := e.analysis
	owner := e.belief
	c.mu.Unlock()
	if a != nil && (owner == nil || owner.ID == b.ID) {
		return a
	}
	a = tension.Analyze(tensionInput(b))
	c.mu.Lock()
	if owner == nil || owner.ID == b.ID {
		e.analysis = a
	}
	c.mu.Unlock()
	return a
}

// putStored caches a belief this server has just stored and committed
// (stored.seq set), with its analysis when known (a may be nil): the newest
// beliefs are the ones the next creates' candidate windows read first.
func (c *beliefCache) putStored(stored *Belief, a *tension.Analyzed) {
	// A copy: the caller returns stored to its own caller.
	cp := *stored
	cp.DomainPath, cp.Entities = slices.Clone(stored.DomainPath), slices.Clone(stored.Entities)
	b := &cp
	dk, _ := domainKey(b.DomainPath)
	m := &matchRow{hit: hit{seq: b.seq, content: b.Content, overall: b.Confidence.Overall, createdAt: b.CreatedAt,
		validFrom: b.ValidFrom}, id: b.ID, workspace: b.Workspace, status: b.Status, domainKey: dk}
	for _, e := range b.Entities {
		m.entityIDs = append(m.entityIDs, e.ID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(b.seq, true)
	e.match, e.belief = m, b
	if a != nil {
		e.analysis = a
	}
}

// forgetAfter drops the entries of sequence numbers above top (a rolled
// back transaction's, which will be used again).
func (c *beliefCache) forgetAfter(top int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[int64]*cachedBelief{c.cur, c.old} {
		maps.DeleteFunc(m, func(seq int64, _ *cachedBelief) bool { return seq > top })
	}
}
