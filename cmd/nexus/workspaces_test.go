package main

import (
	"strings"
	"testing"
)

// TestWorkspacesCommand: nexus workspaces manages owners and members, and
// refuses bad input with a clear message and nothing written.
func TestWorkspacesCommand(t *testing.T) {
	t.Setenv("NEXUS_DB", "")
	dir := t.TempDir()
	for _, u := range []string{"alice", "bob"} {
		if _, errOut, code := runNexus(t, "", "users", "add", u, "--data-dir", dir); code != 0 {
			t.Fatalf("users add %s: %s", u, errOut)
		}
	}
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"set-owner", "team", "alice"}, 0, "workspace team: owned by alice", ""},
		{[]string{"add-member", "team", "bob"}, 0, "workspace team: bob is a member", ""},
		{[]string{"add-member", "team", "bob"}, 0, "workspace team: bob is a member", ""}, // twice is harmless
		{[]string{"list", "--user", "bob"}, 0, "team       alice  bob", ""},
		{[]string{"add-member", "team", "nobody"}, 1, "", `no user "nobody"`},
		{[]string{"add-member", "bad ws", "bob"}, 1, "", `workspace id "bad ws" must be`},
		{[]string{"add-member", "user:alice", "bob"}, 1, "", "is a personal workspace"},
		{[]string{"remove-member", "team", "alice"}, 1, "", `not a member of workspace "team"`},
		{[]string{"remove-member", "team", "bob"}, 0, "bob is no longer a member", ""},
		{[]string{"frob"}, 2, "", `unknown command "frob"`},
		{[]string{"add-member", "team"}, 2, "", "1 argument(s) given, 2 wanted"},
		{[]string{"set-owner", "team", "-"}, 0, "no owner (admins and its members only)", ""},
		{[]string{"list"}, 0, "team       (admins only)", ""},
	}
	for _, tc := range tests {
		out, errOut, code := runNexus(t, "", append(append([]string{"workspaces"}, tc.args...), "--data-dir", dir)...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("workspaces %v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", tc.args, code, out, errOut, tc.code, tc.out, tc.err)
		}
	}
}
