package principal

import "testing"

// TestMayUse: the one rule for who may use a conversation: its owner and
// admins; a conversation of no owner (older than owners) is admins' only.
func TestMayUse(t *testing.T) {
	alice := Principal{ID: "u-alice", Name: "alice", Role: Member}
	root := Principal{ID: "u-root", Name: "root", Role: Admin}
	for _, tc := range []struct {
		who   Principal
		owner string
		want  bool
	}{
		{alice, "u-alice", true},
		{alice, "u-bob", false},
		{alice, "", false},
		{Principal{Role: Member}, "", false}, // no id is nobody's owner
		{root, "u-alice", true},
		{root, "", true},
		{Local, "u-alice", true},
	} {
		if got := tc.who.MayUse(tc.owner); got != tc.want {
			t.Errorf("%s (%s) may use a conversation of %q: %v, want %v", tc.who.Name, tc.who.Role, tc.owner, got, tc.want)
		}
	}
	if !ValidRole(Admin) || !ValidRole(Member) || ValidRole("Admin") || ValidRole("") {
		t.Error("ValidRole accepts other than admin and member")
	}
}
