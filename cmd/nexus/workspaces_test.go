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
		// Personal workspace ids are reserved in any case (issue 21, item 10).
		{[]string{"add-member", "USER:BOB", "alice"}, 1, "", `workspace id "USER:BOB" is reserved`},
		{[]string{"set-owner", "User:dave2", "alice"}, 1, "", `workspace id "User:dave2" is reserved`},
		{[]string{"set-owner", "user:Bob", "alice"}, 1, "", `workspace id "user:Bob" is reserved`},
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
	// An import into a workspace that looks personal is refused before
	// anything is read.
	_, errOut, code := runNexus(t, "", "import", "beliefs", "no-such-file.jsonl", "--workspace", "USER:BOB", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, `workspace id "USER:BOB" is reserved`) {
		t.Errorf("import --workspace USER:BOB: exit %d, stderr %q", code, errOut)
	}
	out, _, _ := runNexus(t, "", "workspaces", "list", "--data-dir", dir)
	if strings.Contains(strings.ToLower(out), "user:") {
		t.Errorf("a workspace that looks personal was created:\n%s", out)
	}
}
