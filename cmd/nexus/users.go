package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/users"
)

const usersSynopsis = `nexus users add NAME [--tier anonymous|free|paid] [--role admin|member] [--label TEXT]
       nexus users list [--json]
       nexus users set NAME [--tier T] [--role R] [--disabled true|false]`

const tokensSynopsis = `nexus tokens add NAME [--label TEXT]
       nexus tokens list NAME [--json]
       nexus tokens revoke TOKEN_ID`

// openUsers opens the database for a users or tokens command (no demo data,
// no downstream servers).
func openUsers(ctx context.Context, c *common, stderr io.Writer) (*users.Users, func(), error) {
	a, err := c.openAdmin(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	return a.Users, a.Close, nil
}

// subcommand splits the arguments of a command with subcommands (users
// add, ...): the subcommand, the flag set's name, and the arguments after
// the subcommand. When the first argument asks for help ("nexus users
// --help"), there is no subcommand and the command's name is the flag
// set's, which parses the request for help.
func subcommand(command string, args []string) (sub, name string, rest []string) {
	if isHelp(args[0]) {
		return "", command, args
	}
	return args[0], command + " " + args[0], args[1:]
}

// printToken shows a new token's text, once.
func printToken(w io.Writer, name, text string) {
	fmt.Fprintf(w, "token for %s (shown once; Nexus keeps only its hash):\n%s\n", name, text)
}

func cmdUsers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "list" && args[0] != "set" && !isHelp(args[0])) {
		fmt.Fprintf(stderr, "Usage: %s\n", usersSynopsis)
		return exitError{2}
	}
	sub, name, rest := subcommand("users", args)
	fs := newFlagSet(name, usersSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	tier := fs.String("tier", "", "tier: anonymous, free or paid (add: default free)")
	role := fs.String("role", "", "role: admin or member (add: default member)")
	label := fs.String("label", "", "a label for the first token (add)")
	disabled := fs.String("disabled", "", "true disables the user (their tokens stop working), false enables (set)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	want := map[string]int{"add": 1, "list": 0, "set": 1}[sub]
	if len(pos) != want {
		fmt.Fprintf(stderr, "nexus users %s: %d argument(s) given, %d wanted\nUsage: %s\n", sub, len(pos), want, usersSynopsis)
		return exitError{2}
	}
	u, done, err := openUsers(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "add":
		t, r := *tier, *role
		if t == "" {
			t = users.Free
		}
		if r == "" {
			r = principal.Member
		}
		usr, text, err := u.Add(ctx, pos[0], t, r, *label)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added user %s (tier %s, role %s)\n", usr.Name, usr.Tier, usr.Role)
		printToken(stdout, usr.Name, text)
	case "list":
		list, err := u.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if list == nil {
				list = []*users.User{}
			}
			return enc.Encode(list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTIER\tROLE\tDISABLED\tCREATED")
		for _, usr := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", usr.Name, usr.Tier, usr.Role, usr.Disabled, usr.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "set":
		var ch users.Change
		if *tier != "" {
			ch.Tier = tier
		}
		if *role != "" {
			ch.Role = role
		}
		switch *disabled {
		case "":
		case "true", "false":
			v := *disabled == "true"
			ch.Disabled = &v
		default:
			return fmt.Errorf("--disabled: %q is not true or false", *disabled)
		}
		if ch.Tier == nil && ch.Role == nil && ch.Disabled == nil {
			return fmt.Errorf("nexus users set %s: nothing to change; give --tier, --role or --disabled", pos[0])
		}
		usr, err := u.Set(ctx, pos[0], ch)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %s: tier %s, role %s, disabled %v\n", usr.Name, usr.Tier, usr.Role, usr.Disabled)
	}
	return nil
}

func cmdTokens(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "list" && args[0] != "revoke" && !isHelp(args[0])) {
		fmt.Fprintf(stderr, "Usage: %s\n", tokensSynopsis)
		return exitError{2}
	}
	sub, name, rest := subcommand("tokens", args)
	fs := newFlagSet(name, tokensSynopsis, stdout, stderr)
	var c common
	c.register(fs)
	label := fs.String("label", "", "a label for the token (add)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "nexus tokens %s: give one argument\nUsage: %s\n", sub, tokensSynopsis)
		return exitError{2}
	}
	u, done, err := openUsers(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "add":
		text, tok, err := u.AddToken(ctx, pos[0], *label)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added token %s\n", tok.ID)
		printToken(stdout, pos[0], text)
	case "list":
		toks, err := u.Tokens(ctx, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if toks == nil {
				toks = []*users.Token{}
			}
			return enc.Encode(toks)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tLABEL\tCREATED\tLAST USED\tREVOKED")
		for _, t := range toks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Label, t.CreatedAt.Format(time.RFC3339), when(t.LastUsedAt), when(t.RevokedAt))
		}
		return tw.Flush()
	case "revoke":
		if err := u.Revoke(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked token %s\n", pos[0])
	}
	return nil
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
