package catalog

import "testing"

// TestDirectoryAddMatchesKeyAndCodeOnly: an extra institution replaces a
// known one only by the same key or code, not because its key is another
// institution's alias.
func TestDirectoryAddMatchesKeyAndCodeOnly(t *testing.T) {
	n := len(NewDirectory().All())
	d := NewDirectory(Institution{Key: "ubc", Code: "UBCX", Name: "Another Place"})
	if in, ok := d.Lookup("ubcv"); !ok || in.Code != "UBCV" {
		t.Errorf("UBC Vancouver was replaced: %+v, %v", in, ok)
	}
	if in, ok := d.Lookup("ubc"); !ok || in.Code != "UBCX" {
		t.Errorf(`Lookup("ubc") = %+v, %v: a key is found before another's alias`, in, ok)
	}
	if in, ok := d.Lookup("UBC Vancouver"); !ok || in.Code != "UBCV" {
		t.Errorf("Lookup(UBC Vancouver) = %+v, %v", in, ok)
	}
	if len(d.All()) != n+1 {
		t.Errorf("%d institutions, want %d", len(d.All()), n+1)
	}
	d = NewDirectory(Institution{Key: "sfu", Code: "SFU", Name: "Simon Fraser University (renamed)"})
	if in, _ := d.Lookup("sfu"); in.Name != "Simon Fraser University (renamed)" || len(d.All()) != n {
		t.Errorf("same key did not replace: %+v, %d institutions", in, len(d.All()))
	}
	d = NewDirectory(Institution{Key: "simon", Code: "sfu", Name: "SFU by code"})
	if in, _ := d.Lookup("SFU"); in.Key != "simon" || len(d.All()) != n {
		t.Errorf("same code did not replace: %+v, %d institutions", in, len(d.All()))
	}
}
