package substrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

const entityCols = `e.id, e.workspace, e.name, e.type, e.aliases, e.created_at, e.updated_at`

func scanEntity(r rowScanner, extra ...any) (*Entity, error) {
	var e Entity
	var aliases string
	var created, updated int64
	if err := r.Scan(append([]any{&e.ID, &e.Workspace, &e.Name, &e.Type, &aliases, &created, &updated}, extra...)...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(aliases), &e.Aliases); err != nil {
		return nil, fmt.Errorf("entity %s aliases: %w", e.ID, err)
	}
	e.CreatedAt, e.UpdatedAt = store.FromMicros(created), store.FromMicros(updated)
	return &e, nil
}

func (s *Server) loadEntity(ctx context.Context, q querier, workspace, id string) (*Entity, error) {
	e, err := scanEntity(q.QueryRowContext(ctx, s.st.Q(`SELECT `+entityCols+` FROM entities e WHERE e.id = ? AND e.workspace = ?`), id, workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errs.Missing("entity", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load entity: %w", err)
	}
	return e, nil
}

// findEntity looks an entity up by name key, then by alias key (two index
// lookups; an OR of both would scan the table).
func (s *Server) findEntity(ctx context.Context, q querier, workspace, key string) (*Entity, error) {
	for _, query := range []string{
		`SELECT ` + entityCols + ` FROM entities e WHERE e.workspace = ? AND e.name_key = ?`,
		`SELECT ` + entityCols + ` FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
			WHERE a.workspace = ? AND a.alias_key = ? ORDER BY e.created_at LIMIT 1`,
	} {
		e, err := scanEntity(q.QueryRowContext(ctx, s.st.Q(query), workspace, key))
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("find entity: %w", err)
		}
	}
	return nil, nil
}

// txEntity is upsertEntity, answered from w when this transaction has
// upserted the entity already and ein brings no alias it lacks.
func (s *Server) txEntity(ctx context.Context, tx querier, w *txWrites, workspace string, ein EntityInput, field string) (*Entity, error) {
	key := normalizeKey(strings.Join(strings.Fields(ein.Name), " "))
	if w != nil && key != "" {
		if e := w.entities[key]; e != nil && !slices.ContainsFunc(ein.Aliases, func(a string) bool {
			ak := normalizeKey(strings.Join(strings.Fields(a), " "))
			return ak != "" && ak != normalizeKey(e.Name) && !slices.ContainsFunc(e.Aliases, func(x string) bool { return normalizeKey(x) == ak })
		}) {
			return e, nil
		}
	}
	e, err := s.upsertEntity(ctx, tx, workspace, ein, field)
	if err == nil && w != nil {
		w.entities[key] = e
	}
	return e, err
}

// upsertEntity returns the entity named (by name or alias) in ein, creating
// it when missing and adding any new aliases it brings.
func (s *Server) upsertEntity(ctx context.Context, tx querier, workspace string, ein EntityInput, field string) (*Entity, error) {
	name := strings.Join(strings.Fields(ein.Name), " ")
	key := normalizeKey(name)
	if key == "" {
		return nil, errs.Invalid(field+".name", "must not be blank")
	}
	typ := normalizeKey(ein.Type)
	if typ == "" {
		typ = defaultEntityType
	}
	e, err := s.findEntity(ctx, tx, workspace, key)
	if err != nil {
		return nil, err
	}
	now := store.Micros(s.now())
	if e == nil {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("new entity id: %w", err)
		}
		// ON CONFLICT covers a concurrent creator of the same name.
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO entities (id, workspace, name, name_key, type, aliases, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, '[]', ?, ?) ON CONFLICT (workspace, name_key) DO NOTHING`),
			id.String(), workspace, name, key, typ, now, now); err != nil {
			return nil, fmt.Errorf("create entity: %w", err)
		}
		if e, err = s.findEntity(ctx, tx, workspace, key); err != nil || e == nil {
			return nil, fmt.Errorf("create entity %q: %w", name, err)
		}
	}
	var added bool
	for _, a := range ein.Aliases {
		a = strings.Join(strings.Fields(a), " ")
		ak := normalizeKey(a)
		if ak == "" || ak == normalizeKey(e.Name) || slices.ContainsFunc(e.Aliases, func(x string) bool { return normalizeKey(x) == ak }) {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.st.Q(`INSERT INTO entity_aliases (entity_id, workspace, alias_key) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`), e.ID, workspace, ak); err != nil {
			return nil, fmt.Errorf("add alias: %w", err)
		}
		e.Aliases = append(e.Aliases, a)
		added = true
	}
	if added {
		if _, err := tx.ExecContext(ctx, s.st.Q(`UPDATE entities SET aliases = ?, updated_at = ? WHERE id = ?`),
			mustJSON(e.Aliases), now, e.ID); err != nil {
			return nil, fmt.Errorf("update aliases: %w", err)
		}
	}
	return e, nil
}

// --- entity_get --------------------------------------------------------------

type entityGetIn struct {
	EntityID       string `json:"entity_id"`
	IncludeBeliefs bool   `json:"include_beliefs"`
	BeliefLimit    int    `json:"belief_limit"`
}

type entityGetResult struct {
	Success bool      `json:"success"`
	Entity  *Entity   `json:"entity"`
	Beliefs []*Belief `json:"beliefs,omitempty"`
}

func (s *Server) entityGet(ctx context.Context, c *registry.Call, in entityGetIn) (*entityGetResult, error) {
	db := s.st.DB()
	e, err := s.loadEntity(ctx, db, c.Workspace, in.EntityID)
	if err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, s.st.Q(`SELECT COUNT(DISTINCT belief_id) FROM belief_entities WHERE entity_id = ?`), e.ID).Scan(&e.BeliefCount); err != nil {
		return nil, fmt.Errorf("count entity beliefs: %w", err)
	}
	res := &entityGetResult{Success: true, Entity: e}
	if in.IncludeBeliefs {
		rows, err := db.QueryContext(ctx, s.st.Q(`SELECT `+beliefCols+` FROM beliefs b
			WHERE b.workspace = ? AND b.id IN (SELECT belief_id FROM belief_entities WHERE entity_id = ?)
			ORDER BY CASE WHEN b.status = 'active' THEN 0 ELSE 1 END, b.created_at DESC, b.seq DESC LIMIT ?`),
			c.Workspace, e.ID, in.BeliefLimit)
		if err != nil {
			return nil, fmt.Errorf("entity beliefs: %w", err)
		}
		defer rows.Close()
		res.Beliefs = []*Belief{}
		for rows.Next() {
			b, err := scanBelief(rows)
			if err != nil {
				return nil, fmt.Errorf("entity beliefs: %w", err)
			}
			res.Beliefs = append(res.Beliefs, b)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("entity beliefs: %w", err)
		}
		if err := s.attachEntities(ctx, db, res.Beliefs); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// --- entity_search -----------------------------------------------------------

type entitySearchIn struct {
	Query string `json:"query"`
	Type  string `json:"type"`
	Limit int    `json:"limit"`
}

type entitySearchResult struct {
	Success    bool      `json:"success"`
	Entities   []*Entity `json:"entities"`
	TotalCount int       `json:"total_count"`
}

// entitySearch matches the query against names and aliases: exact matches
// first, then prefix matches, then substring matches, each by name.
func (s *Server) entitySearch(ctx context.Context, c *registry.Call, in entitySearchIn) (*entitySearchResult, error) {
	key := normalizeKey(in.Query)
	pattern := "%" + strings.TrimSuffix(likePrefix(key), "%") + "%"
	prefix := likePrefix(key)
	where := `e.workspace = ? AND (e.name_key LIKE ? ESCAPE '\' OR e.id IN
		(SELECT entity_id FROM entity_aliases WHERE workspace = ? AND alias_key LIKE ? ESCAPE '\'))`
	args := []any{c.Workspace, pattern, c.Workspace, pattern}
	if in.Type != "" {
		where += ` AND e.type = ?`
		args = append(args, in.Type)
	}
	rank := `CASE WHEN e.name_key = ? THEN 0 WHEN e.name_key LIKE ? ESCAPE '\' THEN 1 ELSE 2 END`
	q := `SELECT ` + entityCols + `, (SELECT COUNT(DISTINCT belief_id) FROM belief_entities be WHERE be.entity_id = e.id), COUNT(*) OVER ()
		FROM entities e WHERE ` + where + ` ORDER BY ` + rank + `, e.name_key, e.id LIMIT ?`
	args = append(args, key, prefix, in.Limit)
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("search entities: %w", err)
	}
	defer rows.Close()
	res := &entitySearchResult{Success: true, Entities: []*Entity{}}
	for rows.Next() {
		var count int
		e, err := scanEntity(rows, &count, &res.TotalCount)
		if err != nil {
			return nil, fmt.Errorf("search entities: %w", err)
		}
		e.BeliefCount = count
		res.Entities = append(res.Entities, e)
	}
	return res, rows.Err()
}
