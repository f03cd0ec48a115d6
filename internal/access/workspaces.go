package access

// Managing workspaces: their owners and members (nexus workspaces).

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Workspace is a workspace's record: its owner (a user id; empty when only
// admins hold it) and its members' user ids.
type Workspace struct {
	ID      string   `json:"id"`
	Owner   string   `json:"owner,omitempty"`
	Members []string `json:"members"`
}

// List returns the workspaces, by id; with user set, only those user owns or
// is a member of.
func (a *Authorizer) List(ctx context.Context, user string) ([]*Workspace, error) {
	q := `SELECT w.id, w.owner_id, m.user_id FROM workspaces w LEFT JOIN workspace_members m ON m.workspace_id = w.id`
	var args []any
	if user != "" {
		q += ` WHERE w.owner_id = ? OR w.id IN (SELECT workspace_id FROM workspace_members WHERE user_id = ?)`
		args = append(args, user, user)
	}
	rows, err := a.st.DB().QueryContext(ctx, a.st.Q(q+` ORDER BY w.id, m.user_id`), args...)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	defer rows.Close()
	out := []*Workspace{}
	for rows.Next() {
		var id string
		var owner, member sql.NullString
		if err := rows.Scan(&id, &owner, &member); err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != id {
			out = append(out, &Workspace{ID: id, Owner: owner.String, Members: []string{}})
		}
		if member.Valid {
			w := out[len(out)-1]
			w.Members = append(w.Members, member.String)
		}
	}
	return out, rows.Err()
}

// AddMember makes user a member of ws, creating ws (without an owner) when
// it does not exist. Adding a member twice is harmless.
func (a *Authorizer) AddMember(ctx context.Context, ws, user string) error {
	if err := CheckWorkspace(ws); err != nil {
		return err
	}
	err := a.st.Tx(ctx, func(tx *sql.Tx) error {
		now := store.Micros(a.now())
		if _, err := tx.ExecContext(ctx, a.st.Q(`INSERT INTO workspaces (id, owner_id, created_at) VALUES (?, NULL, ?) ON CONFLICT (id) DO NOTHING`), ws, now); err != nil {
			return fmt.Errorf("add workspace %q: %w", ws, err)
		}
		if _, err := tx.ExecContext(ctx, a.st.Q(`INSERT INTO workspace_members (workspace_id, user_id, created_at) VALUES (?, ?, ?)
			ON CONFLICT (workspace_id, user_id) DO NOTHING`), ws, user, now); err != nil {
			return fmt.Errorf("add member to workspace %q: %w", ws, err)
		}
		return nil
	})
	a.forget(ctx)
	return err
}

// RemoveMember ends user's membership of ws; NOT_FOUND when user is not a
// member.
func (a *Authorizer) RemoveMember(ctx context.Context, ws, user string) error {
	res, err := a.st.DB().ExecContext(ctx, a.st.Q(`DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?`), ws, user)
	if err != nil {
		return fmt.Errorf("remove member of workspace %q: %w", ws, err)
	}
	a.forget(ctx)
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.E(errs.NotFound, "that user is not a member of workspace %q", ws)
	}
	return nil
}

// SetOwner makes user the owner of ws (creating it when it does not
// exist); an empty user leaves ws to admins alone.
func (a *Authorizer) SetOwner(ctx context.Context, ws, user string) error {
	if err := CheckWorkspace(ws); err != nil {
		return err
	}
	var owner any
	if user != "" {
		owner = user
	}
	_, err := a.st.DB().ExecContext(ctx, a.st.Q(`INSERT INTO workspaces (id, owner_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id`), ws, owner, store.Micros(a.now()))
	a.forget(ctx)
	if err != nil {
		return fmt.Errorf("set owner of workspace %q: %w", ws, err)
	}
	return nil
}
