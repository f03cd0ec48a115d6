package conversation

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Hybrid exchange search (issue 23; docs/vkb.md, "exchange_search"). With
// an embedding model configured ([Store.UseVectors]), Search fuses its
// lexical ranking (BM25 blended with the neighbours', as without one) with
// the workspace's exchanges ranked by cosine to the query, under the same
// session and validity filters, by reciprocal rank fusion (embed.Fuse,
// k = 60), as belief_query does beliefs. A hit's score is then the fused
// score over its maximum (first in both rankings). The vector side failing
// (the provider down) leaves the lexical ranking alone, logged.

// vectorK is how many exchanges the vector side ranks for a search of
// limit hits: more than limit, since the session and window filters apply
// after. It also bounds the lexical ranks fused.
func vectorK(limit int) int { return max(4*limit, 100) }

// UseVectors makes Search hybrid over ix's exchange vectors, and Append
// wake ix's embedding job. Call it before serving.
func (s *Store) UseVectors(ix *embed.Index) { s.vectors = ix }

// fuseVectors fuses the lexical ranking (keys best first, scored by
// score) with the vector ranking of q's query under q's filters. ok is
// false when there are no vectors to fuse (none configured, the vector
// side failed or found nothing): keys and score come back as they are.
func (s *Store) fuseVectors(ctx context.Context, q Search, keys []turnKey, score map[turnKey]float64) ([]turnKey, map[turnKey]float64, bool) {
	if s.vectors == nil || strings.TrimSpace(q.Query) == "" {
		return keys, score, false
	}
	vh, err := s.vectors.Search(ctx, embed.KindExchange, q.Workspace, q.Query, vectorK(q.Limit))
	var vec []turnKey
	if err == nil && len(vh) > 0 {
		vec, err = s.vectorKeys(ctx, q, vh)
	}
	if err != nil {
		s.vectors.LogSearchError(embed.KindExchange, err)
		return keys, score, false
	}
	if len(vec) == 0 {
		return keys, score, false
	}
	id := func(k turnKey) string { return k.conv + "\x00" + strconv.Itoa(k.seq) }
	byID := make(map[string]turnKey, len(keys)+len(vec))
	lexIDs := make([]string, 0, min(len(keys), vectorK(q.Limit)))
	for _, k := range keys[:min(len(keys), vectorK(q.Limit))] {
		byID[id(k)] = k
		lexIDs = append(lexIDs, id(k))
	}
	vecIDs := make([]string, len(vec))
	for i, k := range vec {
		byID[id(k)] = k
		vecIDs[i] = id(k)
	}
	fused := embed.Fuse(lexIDs, vecIDs)
	out := make([]turnKey, len(fused))
	fs := make(map[turnKey]float64, len(fused))
	for i, f := range fused {
		out[i] = byID[f.ID]
		fs[out[i]] = math.Round(f.Score/embed.MaxRRF*1e4) / 1e4
	}
	return out, fs, true
}

// vectorKeys reads the turns of the vector hits vh that pass q's filters
// (workspace, session, owner, window), in vh's order. The rows are sought
// by id alone and filtered here: with the workspace in SQL, SQLite walked
// the workspace's index (all of its exchanges) instead (20 ms at 100,000).
func (s *Store) vectorKeys(ctx context.Context, q Search, vh []embed.Hit) ([]turnKey, error) {
	args := make([]any, len(vh))
	for i, h := range vh {
		args[i] = h.ID
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, conversation_id, seq, workspace, created_at FROM exchanges
		WHERE id IN (?`+strings.Repeat(", ?", len(vh)-1)+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("vector hits: %w", err)
	}
	defer rows.Close()
	byID := make(map[string]turnKey, len(vh))
	for rows.Next() {
		var id, ws string
		var k turnKey
		var created int64
		if err := rows.Scan(&id, &k.conv, &k.seq, &ws, &created); err != nil {
			return nil, fmt.Errorf("vector hits: %w", err)
		}
		at := store.FromMicros(created)
		if ws != q.Workspace || q.SessionID != "" && k.conv != q.SessionID ||
			!q.After.IsZero() && at.Before(q.After) || !q.Before.IsZero() && !at.Before(q.Before) {
			continue
		}
		byID[id] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector hits: %w", err)
	}
	if q.Owner != "" {
		owners := map[string]bool{} // conversation -> the owner's
		for id, k := range byID {
			mine, seen := owners[k.conv]
			if !seen {
				_, owner, ok, err := s.Lookup(ctx, k.conv)
				if err != nil {
					return nil, fmt.Errorf("vector hits: %w", err)
				}
				mine = ok && owner == q.Owner
				owners[k.conv] = mine
			}
			if !mine {
				delete(byID, id)
			}
		}
	}
	out := make([]turnKey, 0, len(byID))
	for _, h := range vh {
		if k, ok := byID[h.ID]; ok {
			out = append(out, k)
		}
	}
	return out, nil
}
