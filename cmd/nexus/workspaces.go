package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nexus-mcp/nexus/internal/access"
	"github.com/nexus-mcp/nexus/internal/users"
)

const workspacesSynopsis = `nexus workspaces list [--user NAME] [--json]
       nexus workspaces add-member WORKSPACE USER
       nexus workspaces remove-member WORKSPACE USER
       nexus workspaces set-owner WORKSPACE USER|-`

// cmdWorkspaces manages workspaces' owners and members: who, besides
// admins, may act in a workspace.
func cmdWorkspaces(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	want := map[string]int{"list": 0, "add-member": 2, "remove-member": 2, "set-owner": 2}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: %s\n", workspacesSynopsis)
		return exitError{2}
	}
	sub, name, rest := subcommand("workspaces", args)
	n, known := want[sub]
	if !known && sub != "" {
		fmt.Fprintf(stderr, "nexus workspaces: unknown command %q\nUsage: %s\n", sub, workspacesSynopsis)
		return exitError{2}
	}
	fs := newFlagSet(name, workspacesSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	user := fs.String("user", "", "only the workspaces this user owns or is a member of (list)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if len(pos) != n {
		fmt.Fprintf(stderr, "nexus workspaces %s: %d argument(s) given, %d wanted\nUsage: %s\n", sub, len(pos), n, workspacesSynopsis)
		return exitError{2}
	}
	a, err := c.openAdmin(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	accounts := a.Users
	// Users are named on the command line and stored by id.
	byName := func(name string) (*users.User, error) {
		u, err := accounts.Get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("user %s: %w", name, err)
		}
		return u, nil
	}
	names := map[string]string{}
	nameOf := func(id string) string {
		if id == "" {
			return "-"
		}
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	switch sub {
	case "list":
		only := ""
		if *user != "" {
			u, err := byName(*user)
			if err != nil {
				return err
			}
			only = u.ID
		}
		list, err := a.Access.List(ctx, only)
		if err != nil {
			return err
		}
		all, err := accounts.List(ctx)
		if err != nil {
			return err
		}
		for _, u := range all {
			names[u.ID] = u.Name
		}
		names[users.Local.ID] = users.Local.Name
		for _, w := range list {
			w.Owner = strings.TrimPrefix(nameOf(w.Owner), "-")
			for i, m := range w.Members {
				w.Members[i] = nameOf(m)
			}
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKSPACE\tOWNER\tMEMBERS")
		for _, w := range list {
			owner := w.Owner
			if owner == "" {
				owner = "(admins only)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", w.ID, owner, strings.Join(w.Members, ","))
		}
		return tw.Flush()
	case "set-owner":
		id := ""
		if pos[1] != "-" {
			u, err := byName(pos[1])
			if err != nil {
				return err
			}
			id = u.ID
		}
		if err := a.Access.SetOwner(ctx, pos[0], id); err != nil {
			return err
		}
		if id == "" {
			fmt.Fprintf(stdout, "workspace %s: no owner (admins and its members only)\n", pos[0])
		} else {
			fmt.Fprintf(stdout, "workspace %s: owned by %s\n", pos[0], pos[1])
		}
	case "add-member", "remove-member":
		if sub == "add-member" {
			if err := access.CheckWorkspace(pos[0]); err != nil {
				return err
			}
		}
		if access.IsPersonal(pos[0]) && sub == "add-member" {
			return fmt.Errorf("workspace %s is a personal workspace: only its user (and admins) use it; give the members a shared workspace", pos[0])
		}
		u, err := byName(pos[1])
		if err != nil {
			return err
		}
		if sub == "add-member" {
			if err := a.Access.AddMember(ctx, pos[0], u.ID); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "workspace %s: %s is a member\n", pos[0], u.Name)
			return nil
		}
		if err := a.Access.RemoveMember(ctx, pos[0], u.ID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "workspace %s: %s is no longer a member\n", pos[0], u.Name)
	}
	return nil
}
