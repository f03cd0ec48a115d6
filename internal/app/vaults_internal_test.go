package app

import "testing"

// TestVaultNameOf: a folder given with --vault is named after it, as a
// vault name may be.
func TestVaultNameOf(t *testing.T) {
	for dir, want := range map[string]string{"/home/me/Notes": "Notes", "/x/My Notes": "My-Notes", "/x/Crème": "Cr-me", "/x/.hidden": "hidden", "/": "notes"} {
		if got := vaultNameOf(dir); got != want {
			t.Errorf("vaultNameOf(%q) = %q, want %q", dir, got, want)
		}
	}
}
