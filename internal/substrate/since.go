package substrate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/store"
)

// The beliefs committed since a create's mark (step 3 of create.go): which
// of them could be a candidate of the items being written, and reading
// those.

// storedKeys are the relation keys of d stored as b: the draft's and the
// ids of the entities b links (found or created in the write), sorted.
func storedKeys(d *draft, b *Belief) []string {
	keys := slices.Clone(d.keys)
	for _, e := range b.Entities {
		keys = append(keys, "e:"+e.ID)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// relevance says which beliefs committed since a mark can be a candidate
// of the items being written: those related to one of them (see related),
// or any when one of the items has neither domain nor entities.
type relevance struct {
	any  bool
	keys []string // the items' relation keys, sorted
}

// sinceScope is the relevance of the drafts written, whose relation keys
// as stored are keys.
func sinceScope(written []*draft, keys [][]string) relevance {
	var r relevance
	for i, d := range written {
		r.any = r.any || !d.scoped
		r.keys = append(r.keys, keys[i]...)
	}
	slices.Sort(r.keys)
	r.keys = slices.Compact(r.keys)
	return r
}

// holds reports whether b could be a candidate of one of the items.
func (r relevance) holds(b *Belief) bool { return r.any || related(true, b.keys(), r.keys) }

// scopeKeys are r's keys as PostgreSQL's scope column holds them (scope_pg.go)
// for workspace: a stored belief's relation keys are domains and entities.
func (r relevance) scopeKeys(workspace string) []string {
	var out []string
	for _, k := range r.keys {
		switch {
		case strings.HasPrefix(k, "d:"):
			out = append(out, scopeKeys(workspace, k[2:], nil)...)
		case strings.HasPrefix(k, "e:"):
			out = append(out, scopeKeys(workspace, "", []string{k[2:]})...)
		}
	}
	return out
}

// committedSince returns the active beliefs of workspace committed after
// mark, with their entities: on SQLite the sequence numbers above it (one
// writer, so sequence numbers follow commits), their rows then read
// through an (this server stored most of them, so they are in its cache;
// the query keeps only active ones, the one field of a cached belief that
// changes); on PostgreSQL the rows whose creating transaction the marked
// snapshot did not see, read whole (there, reading the sequence numbers
// first made the bulk import twice as slow: see docs/benchmarks.md). Only
// the beliefs rel holds are returned: with creates committing hundreds of
// times a second, most of those committed meanwhile are in other scopes,
// and reading and indexing them was a tenth of a create's CPU on
// PostgreSQL (issue 23).
func (s *Server) committedSince(ctx context.Context, q querier, an *memo, workspace, mark string, g *txGroup, rel relevance) ([]*Belief, error) {
	if s.st.Dialect() == store.Postgres {
		query, args := sincePostgres, []any{mark, mark, workspace, StatusActive}
		if !rel.any {
			query += ` AND b.scope && ?::text[]`
			args = append(args, rel.scopeKeys(workspace))
		}
		rows, err := q.QueryContext(ctx, s.st.Q(query), args...)
		if err != nil {
			return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
		}
		var out []*Belief
		for rows.Next() {
			b, err := scanBelief(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
			}
			out = append(out, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
		}
		// Oldest first, as on SQLite: a memIndex's newest are its last.
		slices.SortFunc(out, func(a, b *Belief) int { return cmp.Compare(a.seq, b.seq) })
		return out, s.attachEntities(ctx, q, out)
	}
	n, err := strconv.ParseInt(mark, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("belief mark %q: %w", mark, err)
	}
	top := int64(math.MaxInt64)
	var earlier []*Belief
	if g != nil {
		// The group's own beliefs are known: read only those committed.
		top = g.top
		for _, b := range g.earlier {
			if b.Workspace == workspace && b.Status == StatusActive && rel.holds(b) {
				earlier = append(earlier, b)
			}
		}
	}
	rows, err := q.QueryContext(ctx, sinceSQLite, n, top, workspace, StatusActive)
	if err != nil {
		return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
	}
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
		}
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("beliefs committed meanwhile: %w", err)
	}
	if len(seqs) == 0 {
		return earlier, nil
	}
	slices.Sort(seqs) // oldest first
	out, err := an.loadBeliefsBySeq(ctx, s, q, seqs)
	if err != nil {
		return nil, err
	}
	out = slices.DeleteFunc(out, func(b *Belief) bool { return !rel.holds(b) })
	return append(out, earlier...), nil
}

// The beliefs committed since a mark (SQLite: their sequence numbers). On
// SQLite, NOT INDEXED keeps the planner on the sequence number's range (the
// rowid) instead of the (workspace, status) index, which would read every
// active belief of the workspace; on PostgreSQL beliefs_created_xid holds
// only rows of recent transactions in range. TestWritePathPlans checks
// both plans.
const (
	sinceSQLite   = `SELECT b.seq FROM beliefs b NOT INDEXED WHERE b.seq > ? AND b.seq <= ? AND b.workspace = ? AND b.status = ?`
	sincePostgres = `SELECT ` + beliefCols + ` FROM beliefs b WHERE b.created_xid >= pg_snapshot_xmin(CAST(? AS pg_snapshot))
		AND NOT pg_visible_in_snapshot(b.created_xid, CAST(? AS pg_snapshot)) AND b.workspace = ? AND b.status = ?`
)
