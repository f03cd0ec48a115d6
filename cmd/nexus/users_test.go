package main

import (
	"strings"
	"testing"
)

// TestUsersAndTokensCommands drives nexus users and nexus tokens through
// the binary: a token is printed once, never listed, and bad input is a
// clear error that writes nothing.
func TestUsersAndTokensCommands(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runNexus(t, "", "users", "add", "alice", "--tier", "paid", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "added user alice (tier paid, role member)") || !strings.Contains(out, "nxs_") {
		t.Fatalf("users add: %d %s %s", code, out, errOut)
	}
	token := out[strings.Index(out, "nxs_"):]
	token = strings.TrimSpace(token)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"users", "add", "alice"}, 1, `user "alice" exists already`},
		{[]string{"users", "add", "Bad Name"}, 1, "is not a user name"},
		{[]string{"users", "add", "bob", "--tier", "gold"}, 1, `unknown tier "gold"`},
		{[]string{"users", "set", "alice", "--disabled", "maybe"}, 1, `"maybe" is not true or false`},
		{[]string{"users", "set", "alice"}, 1, "nothing to change"},
		{[]string{"tokens", "revoke", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, 1, "no token"},
		{[]string{"users", "frobnicate"}, 2, "Usage: nexus users add"},
		{[]string{"users", "set", "alice", "--role", "admin"}, 0, "role admin"},
		{[]string{"tokens", "add", "alice", "--label", "ci"}, 0, "added token"},
	} {
		out, errOut, code := runNexus(t, "", append(tc.args, "--data-dir", dir)...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d, %s %s; want exit %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	out, _, code = runNexus(t, "", "users", "list", "--data-dir", dir)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "alice  paid  admin") {
		t.Fatalf("users list: %s", out)
	}
	out, _, code = runNexus(t, "", "tokens", "list", "alice", "--json", "--data-dir", dir)
	if code != 0 || strings.Contains(out, token) || strings.Count(out, `"id"`) != 2 {
		t.Fatalf("tokens list shows %s", out)
	}
}
