package substrate

import (
	"context"
	"slices"
	"sync"

	"github.com/nexus-mcp/nexus/internal/tension"
)

// memo holds what one create call would otherwise compute or read from the
// store more than once. The items of a batch are judged against one state of
// the store (step 2 of create.go) and share much: the same terms, the same
// entities ("UBC" in thousands of transfer rules), the same candidates (a
// record restated year after year). Safe for concurrent use by the call's
// workers; two workers missing the same key both read it, harmlessly.
type memo struct {
	// cache, when set, is the server's: stored beliefs' rows and analyses
	// across calls. The memo's own maps hold what the call read, so that a
	// call sees one state of the store even if the cache drops an entry.
	cache    *beliefCache
	analyzed sync.Map // belief id -> *tension.Analyzed (drafts, and all without a cache)

	mu       sync.Mutex
	df       map[string]int     // term -> document frequency
	entities map[string]*Entity // name or alias key -> entity (nil: none)
	beliefs  map[int64]*Belief  // seq -> candidate, with its entities
	matches  map[int64]*matchRow
	// unchecked are the match rows taken from the server's cache whose
	// status this call has not read again.
	unchecked map[int64]bool
}

func newMemo(cache *beliefCache) *memo {
	return &memo{cache: cache, df: map[string]int{}, entities: map[string]*Entity{}, beliefs: map[int64]*Belief{},
		matches: map[int64]*matchRow{}, unchecked: map[int64]bool{}}
}

// of returns the detector's analysis of b, made once per call. Beliefs do
// not change, and a draft is analysed as the belief it will be (finish
// analyses the stored one again if it differs). A stored belief's analysis
// is the server's cache's, made once while the cache holds it.
func (m *memo) of(b *Belief) *tension.Analyzed {
	if m.cache != nil && b.seq > 0 {
		return m.cache.analysis(b)
	}
	if v, ok := m.analyzed.Load(b.ID); ok {
		return v.(*tension.Analyzed)
	}
	v, _ := m.analyzed.LoadOrStore(b.ID, tension.Analyze(tensionInput(b)))
	return v.(*tension.Analyzed)
}

// docFreq is [Server.docFreq], once per term and call (a term new to the
// store is not cached by the server's statistics, and a batch's items
// repeat their rare terms).
func (m *memo) docFreq(ctx context.Context, s *Server, q querier, term string) (int, error) {
	m.mu.Lock()
	n, ok := m.df[term]
	m.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := s.docFreq(ctx, q, term)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.df[term] = n
	m.mu.Unlock()
	return n, nil
}

// findEntity is [Server.findEntity], once per key and call.
func (m *memo) findEntity(ctx context.Context, s *Server, q querier, workspace, key string) (*Entity, error) {
	m.mu.Lock()
	e, ok := m.entities[key]
	m.mu.Unlock()
	if ok {
		return e, nil
	}
	e, err := s.findEntity(ctx, q, workspace, key)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.entities[key] = e
	m.mu.Unlock()
	return e, nil
}

// loadBeliefsBySeq is [Server.loadBeliefsBySeq], reading only the beliefs
// neither the call nor the server's cache holds. The beliefs returned are
// shared, read only; their status is the one they had when first read, so
// callers pass sequence numbers of beliefs a search just found active.
func (m *memo) loadBeliefsBySeq(ctx context.Context, s *Server, q querier, seqs []int64) ([]*Belief, error) {
	m.mu.Lock()
	var missing []int64
	for _, v := range seqs {
		if _, ok := m.beliefs[v]; !ok {
			missing = append(missing, v)
		}
	}
	m.mu.Unlock()
	if len(missing) > 0 && m.cache != nil {
		var rest []int64
		cached := m.cache.beliefs(missing)
		m.mu.Lock()
		for i, b := range cached {
			if b == nil {
				rest = append(rest, missing[i])
			} else {
				m.beliefs[b.seq] = b
			}
		}
		m.mu.Unlock()
		missing = rest
	}
	if len(missing) > 0 {
		loaded, err := s.loadBeliefsBySeq(ctx, q, missing)
		if err != nil {
			return nil, err
		}
		if m.cache != nil {
			m.cache.putBeliefs(loaded)
		}
		m.mu.Lock()
		for _, b := range loaded {
			m.beliefs[b.seq] = b
		}
		m.mu.Unlock()
	}
	out := make([]*Belief, 0, len(seqs))
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range seqs {
		if b := m.beliefs[v]; b != nil {
			out = append(out, b)
		}
	}
	return slices.Clip(out), nil
}

// matchRows returns the match rows of seqs, in that order, reading only
// those neither the call nor the server's cache holds. A cached row's
// status may have changed since the server read it, so it is read again (a
// seek each, much less than a row), but only for the rows relevant reports
// true of (those the caller's other filters keep: most matches of a tension
// window are in another scope, and their status does not matter). The rows
// returned are shared: read only.
func (m *memo) matchRows(ctx context.Context, s *Server, q querier, seqs []int64, relevant func(*matchRow) bool) ([]*matchRow, error) {
	m.mu.Lock()
	var missing []int64
	for _, v := range seqs {
		if _, ok := m.matches[v]; !ok {
			missing = append(missing, v)
		}
	}
	m.mu.Unlock()
	if len(missing) > 0 && m.cache != nil {
		var rest []int64
		cached := m.cache.matchRows(missing)
		m.mu.Lock()
		for i, r := range cached {
			if r == nil {
				rest = append(rest, missing[i])
				continue
			}
			m.matches[r.seq] = r
			m.unchecked[r.seq] = true
		}
		m.mu.Unlock()
		missing = rest
	}
	if len(missing) > 0 {
		loaded, err := s.loadMatchRows(ctx, q, missing)
		if err != nil {
			return nil, err
		}
		if m.cache != nil {
			m.cache.putMatchRows(loaded)
		}
		m.mu.Lock()
		for _, r := range loaded {
			m.matches[r.seq] = r
		}
		m.mu.Unlock()
	}
	var check []int64
	m.mu.Lock()
	for _, v := range seqs {
		if r := m.matches[v]; r != nil && m.unchecked[v] && relevant(r) {
			check = append(check, v)
		}
	}
	m.mu.Unlock()
	if len(check) > 0 {
		status, err := s.statuses(ctx, q, check)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		for _, v := range check {
			r := m.matches[v]
			if st, ok := status[v]; ok && st != r.status {
				fresh := *r
				fresh.status = st
				m.matches[v] = &fresh
			}
			delete(m.unchecked, v)
		}
		m.mu.Unlock()
	}
	out := make([]*matchRow, 0, len(seqs))
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range seqs {
		if r := m.matches[v]; r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
