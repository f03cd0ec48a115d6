package vault

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClean: every path trick is refused with a reason that names it, and
// what the original cleaned up is cleaned up the same way.
func TestClean(t *testing.T) {
	for _, c := range []struct {
		in, want, reason string
	}{
		{in: "notes/a.md", want: "notes/a.md"},
		{in: "/notes/a.md", want: "notes/a.md"},        // the original's leading slash
		{in: `notes\sub\a.md`, want: "notes/sub/a.md"}, // and backslashes
		{in: "notes//./a.md", want: "notes/a.md"},
		{in: "Meeting: notes?.md", want: "Meeting_ notes_.md"}, // <>:"|?* become _, as in the original
		{in: "notes/a.md ", want: "notes/a.md"},
		{in: "notes./a.md", want: "notes/a.md"},             // Windows drops trailing dots: so does the vault
		{in: "e\u0301t\u00e9.md", want: "\u00e9t\u00e9.md"}, // NFC
		{in: "../secret.md", reason: "leaves the vault"},
		{in: "notes/../../secret.md", reason: "leaves the vault"},
		{in: `notes\..\..\secret.md`, reason: "leaves the vault"},
		{in: ".trash/a.md", reason: "hidden"},
		{in: "notes/.obsidian/app.json", reason: "hidden"},
		{in: ".TRASH/a.md", reason: "hidden"},
		{in: "C:/Windows/a.md", reason: "drive letter"},
		{in: `c:\a.md`, reason: "drive letter"},
		{in: `\\server\share\a.md`, reason: "network path"},
		{in: "//server/share/a.md", reason: "network path"},
		{in: "a\x00.md", reason: "NUL"},
		{in: "a\nb.md", reason: "control character"},
		{in: "CON", reason: "reserves"},
		{in: "notes/nul.md", reason: "reserves"},
		{in: "notes/Com1.txt", reason: "reserves"},
		{in: "lpt9", reason: "reserves"},
		{in: "...", reason: "only dots"},
		{in: " . ", reason: "only dots"},
		{in: strings.Repeat("a", 256) + ".md", reason: "longer than 255"},
		{in: strings.Repeat("a/", 600), reason: "longer than 1024"},
		{in: "a\xff.md", reason: "UTF-8"},
		{in: "", reason: "root folder"},
		{in: "/", reason: "root folder"},
	} {
		got, err := Clean(c.in, false)
		if c.reason == "" {
			if err != nil || got != c.want {
				t.Errorf("Clean(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("Clean(%q) = %q, %v; want an error saying %q", c.in, got, err, c.reason)
		}
	}
	for _, root := range []string{"", "/", ".", "./"} {
		if got, err := Clean(root, true); err != nil || got != "" {
			t.Errorf("Clean(%q, root) = %q, %v; want the root", root, got, err)
		}
	}
}

// FuzzClean: whatever a client sends, a path Clean accepts stays inside
// the vault: no "..", no dot-name, no absolute or drive form, no control
// character, valid UTF-8, and cleaning it again changes nothing.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"notes/a.md", "../x", `a\..\..\b`, ".trash/x", "C:/x", "a\x00b", "CON.txt", "é/ü.md", "a/./b/../c", " . /x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Clean(in, true)
		if err != nil {
			return
		}
		if !utf8.ValidString(got) || strings.HasPrefix(got, "/") || strings.Contains(got, `\`) || strings.Contains(got, "//") {
			t.Fatalf("Clean(%q) = %q", in, got)
		}
		for seg := range strings.SplitSeq(got, "/") {
			if got != "" && (seg == "" || seg == ".." || strings.HasPrefix(seg, ".") || reserved(seg)) {
				t.Fatalf("Clean(%q) = %q: segment %q", in, got, seg)
			}
			for _, r := range seg {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("Clean(%q) = %q: control character", in, got)
				}
			}
		}
		if again, err := Clean(got, true); err != nil || again != got {
			t.Fatalf("Clean(Clean(%q)) = %q, %v; want %q", in, again, err, got)
		}
	})
}
