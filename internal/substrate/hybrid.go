package substrate

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// Hybrid search (issue 23; docs/substrate.md, "Hybrid search"). With an
// embedding model configured ([Server.UseVectors]), belief_query fuses its
// lexical ranking (relevance as without one) with the workspace's beliefs
// ranked by cosine to the query, by reciprocal rank fusion (embed.Fuse,
// k = 60). relevance_score is then the fused score over its maximum (first
// in both rankings): 1 at best, about 0.5 for a belief first in one ranking
// and absent from the other. The vector side failing (the provider down)
// leaves the lexical ranking alone, logged.

// vectorK is how many beliefs the vector side ranks for a query of limit
// results: more than limit, since belief_query's filters apply after.
func vectorK(limit int) int { return max(4*limit, 100) }

// UseVectors makes belief_query hybrid over ix's vectors, and the belief
// tools tell ix's background job when they wrote. Call it before serving.
func (s *Server) UseVectors(ix *embed.Index) { s.vectors = ix }

// notifying wraps a tool that writes beliefs: after it succeeds, the
// embedding job is told to look for beliefs without vectors.
func notifying[In, Out any](s *Server, fn func(context.Context, *registry.Call, In) (Out, error)) func(context.Context, *registry.Call, In) (Out, error) {
	return func(ctx context.Context, c *registry.Call, in In) (Out, error) {
		out, err := fn(ctx, c, in)
		if err == nil && s.vectors != nil {
			s.vectors.Notify()
		}
		return out, err
	}
}

// fuseVectors returns belief_query's hits (sorted by its lexical relevance)
// fused with the vector ranking under the same filters, their scores set to
// the fused relevance, and the total count with the beliefs only the vector
// side found. Without vectors, or when the vector side fails, it returns
// hits and total as they are.
func (s *Server) fuseVectors(ctx context.Context, workspace, query string, f searchFilter, hits []hit, limit, total int) ([]hit, int) {
	if s.vectors == nil || strings.TrimSpace(query) == "" {
		return hits, total
	}
	vh, err := s.vectors.Search(ctx, embed.KindBelief, workspace, query, vectorK(limit))
	if err == nil && len(vh) > 0 {
		var vec []hit
		if vec, err = s.vectorHits(ctx, workspace, vh, f); err == nil {
			return fuseHits(query, hits, vec, total)
		}
	}
	if err != nil {
		s.vectors.LogSearchError(embed.KindBelief, err)
	}
	return hits, total
}

// fuseHits fuses the lexical hits with the vector hits (both best first).
// A query without search terms (stop words only) has no lexical ranking:
// its hits are the newest beliefs, which are left out of the fusion.
func fuseHits(query string, lexical, vector []hit, total int) ([]hit, int) {
	bySeq := make(map[string]hit, len(lexical)+len(vector))
	key := func(h hit) string { return strconv.FormatInt(h.seq, 10) }
	var lexIDs, vecIDs []string
	if len(textsearch.Terms(query)) > 0 {
		for _, h := range lexical {
			bySeq[key(h)] = h
			lexIDs = append(lexIDs, key(h))
		}
	} else {
		total = 0
	}
	for _, h := range vector {
		if _, ok := bySeq[key(h)]; !ok {
			bySeq[key(h)] = h
			total++
		}
		vecIDs = append(vecIDs, key(h))
	}
	fused := embed.Fuse(lexIDs, vecIDs)
	out := make([]hit, len(fused))
	for i, fu := range fused {
		out[i] = bySeq[fu.ID]
		out[i].score = math.Round(fu.Score/embed.MaxRRF*1e4) / 1e4
	}
	return out, total
}

// vectorHits reads the beliefs of vh that pass belief_query's filters
// (status, domain prefix, entity), in vh's order.
func (s *Server) vectorHits(ctx context.Context, workspace string, vh []embed.Hit, f searchFilter) ([]hit, error) {
	where := []string{"b.workspace = ?", "b.id IN (" + placeholders(len(vh)) + ")"}
	args := []any{workspace}
	for _, h := range vh {
		args = append(args, h.ID)
	}
	if f.includeSuperseded {
		where = append(where, "b.status <> ?")
		args = append(args, StatusArchived)
	} else {
		where = append(where, "b.status = ?")
		args = append(args, StatusActive)
	}
	if f.domainPrefix != "" {
		where = append(where, `b.domain_key LIKE ? ESCAPE '\'`)
		args = append(args, likePrefix(f.domainPrefix))
	}
	if len(f.entityIDs) > 0 {
		where = append(where, "EXISTS (SELECT 1 FROM belief_entities be WHERE be.belief_id = b.id AND be.entity_id IN ("+placeholders(len(f.entityIDs))+"))")
		for _, id := range f.entityIDs {
			args = append(args, id)
		}
	}
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT b.id, b.seq, b.content, b.confidence_overall, b.created_at, b.valid_from
		FROM beliefs b WHERE `+strings.Join(where, " AND ")), args...)
	if err != nil {
		return nil, fmt.Errorf("vector hits: %w", err)
	}
	defer rows.Close()
	byID := make(map[string]hit, len(vh))
	for rows.Next() {
		var id string
		var h hit
		var created int64
		var validFrom sql.NullInt64
		if err := rows.Scan(&id, &h.seq, &h.content, &h.overall, &created, &validFrom); err != nil {
			return nil, fmt.Errorf("vector hits: %w", err)
		}
		h.createdAt = store.FromMicros(created)
		if validFrom.Valid {
			t := store.FromMicros(validFrom.Int64)
			h.validFrom = &t
		}
		byID[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector hits: %w", err)
	}
	out := make([]hit, 0, len(byID))
	for _, v := range vh {
		if h, ok := byID[v.ID]; ok {
			out = append(out, h)
		}
	}
	return out, nil
}
