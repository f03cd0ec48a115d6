package substrate

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unique"
)

// scopeCacheSize bounds the beliefs whose scope a server keeps (about 100
// bytes each: a 100,000-belief store is about 10 MB).
const scopeCacheSize = 400_000

// scopeRow is what a tension window filters a full-text match by before
// anything else, and what never changes once a belief is stored (SQLite's
// sequence numbers are never reused and beliefs are never deleted): its
// workspace, domain and linked entities. Strings are interned: a store
// holds few distinct workspaces, domains and entities.
type scopeRow struct {
	workspace, domainKey unique.Handle[string]
	entityIDs            []unique.Handle[string]
}

// scopeCache keeps the scope rows of stored beliefs across calls (issue 23).
// Most of a tension window's matches are in another scope than the draft's:
// the window is the newest matches of its terms in the whole workspace, and a
// domain holds a small share of it. Reading each match's whole row (its
// content for scoring, its entity links) to drop it was a fifth of a
// create's CPU with the 100,000-belief store, and the rows cached whole
// (beliefCache, a few KiB each with their analyses) cannot cover such a
// store. A scope row is small enough to keep for every belief a window has
// met; only the matches in scope are then read whole, through the memo.
//
// Bounded by two generations, like beliefCache. Safe for concurrent use.
type scopeCache struct {
	mu       sync.Mutex
	cur, old map[int64]scopeRow
	gen      int
}

func newScopeCache(size int) *scopeCache {
	gen := max(size/2, 1)
	return &scopeCache{cur: map[int64]scopeRow{}, old: map[int64]scopeRow{}, gen: gen}
}

// put caches r as seq's scope; c.mu is held.
func (c *scopeCache) put(seq int64, r scopeRow) {
	if len(c.cur) >= c.gen {
		c.old, c.cur = c.cur, make(map[int64]scopeRow, len(c.cur))
	}
	c.cur[seq] = r
}

// get returns the cached scope rows of seqs, in that order, and whether
// each was cached.
func (c *scopeCache) get(seqs []int64) ([]scopeRow, []bool) {
	rows, ok := make([]scopeRow, len(seqs)), make([]bool, len(seqs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, seq := range seqs {
		if r, found := c.cur[seq]; found {
			rows[i], ok[i] = r, true
		} else if r, found := c.old[seq]; found {
			rows[i], ok[i] = r, true
			c.put(seq, r)
		}
	}
	return rows, ok
}

// putStored caches the scope of a belief this server has just stored.
func (c *scopeCache) putStored(b *Belief) {
	dk, _ := domainKey(b.DomainPath)
	r := scopeRow{workspace: unique.Make(b.Workspace), domainKey: unique.Make(dk)}
	for _, e := range b.Entities {
		if e.ID != "" {
			r.entityIDs = append(r.entityIDs, unique.Make(e.ID))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(b.seq, r)
}

// scopeRows returns the scope rows of seqs, in that order, from the cache
// or else the store; ok is false for a sequence number the store does not
// hold.
func (s *Server) scopeRows(ctx context.Context, q querier, seqs []int64) ([]scopeRow, []bool, error) {
	rows, ok := s.scopes.get(seqs)
	var missing []int64
	for i, seq := range seqs {
		if !ok[i] {
			missing = append(missing, seq)
		}
	}
	if len(missing) == 0 {
		return rows, ok, nil
	}
	loaded, err := s.loadScopeRows(ctx, q, missing)
	if err != nil {
		return nil, nil, err
	}
	s.scopes.mu.Lock()
	for seq, r := range loaded {
		s.scopes.put(seq, r)
	}
	s.scopes.mu.Unlock()
	for i, seq := range seqs {
		if !ok[i] {
			rows[i], ok[i] = loaded[seq]
		}
	}
	return rows, ok, nil
}

// loadScopeRows reads the scope rows of seqs (those that exist).
func (s *Server) loadScopeRows(ctx context.Context, q querier, seqs []int64) (map[int64]scopeRow, error) {
	out := make(map[int64]scopeRow, len(seqs))
	for len(seqs) > 0 {
		chunk := seqs[:min(len(seqs), 6*matchRowBatch)]
		seqs = seqs[len(chunk):]
		rows, err := q.QueryContext(ctx, `SELECT b.seq, b.workspace, b.domain_key,
			(SELECT group_concat(be.entity_id, ' ') FROM belief_entities be WHERE be.belief_id = b.id)
			FROM beliefs b WHERE b.seq IN (`+placeholders(padded(len(chunk)))+`)`, paddedSeqs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read scopes: %w", err)
		}
		for rows.Next() {
			var seq int64
			var ws, dk string
			var entities sql.NullString
			if err := rows.Scan(&seq, &ws, &dk, &entities); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read scopes: %w", err)
			}
			r := scopeRow{workspace: unique.Make(ws), domainKey: unique.Make(dk)}
			for e := range strings.FieldsSeq(entities.String) {
				r.entityIDs = append(r.entityIDs, unique.Make(e))
			}
			out[seq] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read scopes: %w", err)
		}
	}
	return out, nil
}

// inScope is [searchFilter.scoped] on a scope row (all but excludeIDs,
// which needs the belief's id: the match row checks it).
func (f *searchFilter) inScope(r scopeRow, ws, dk unique.Handle[string], entities []unique.Handle[string]) bool {
	if r.workspace != ws {
		return false
	}
	if f.domainExact == "" && len(f.entityIDs) == 0 {
		return true
	}
	if f.domainExact != "" && r.domainKey == dk {
		return true
	}
	for _, e := range r.entityIDs {
		if slices.Contains(entities, e) {
			return true
		}
	}
	return false
}

// forgetAfter drops the rows of sequence numbers above top (a rolled back
// transaction's, which will be used again).
func (c *scopeCache) forgetAfter(top int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[int64]scopeRow{c.cur, c.old} {
		maps.DeleteFunc(m, func(seq int64, _ scopeRow) bool { return seq > top })
	}
}
