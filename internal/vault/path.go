package vault

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Paths. A client names a note by its path in the vault, with "/" between
// folders ("courses/MATH 100.md"). The original cleaned a path up before
// using it (contract section 0): a leading "/" and "\" separators are
// accepted, and in each folder or file name the characters <>:"|?* become
// "_" and trailing spaces and dots are trimmed; Nexus does the same, so
// that a client of the original finds its notes where it left them. What
// the original turned into something else silently, Nexus refuses with an
// error that names what is wrong:
//
//   - ".." (the original trimmed it away), a name starting with "." (a
//     hidden file or folder: the vault's trash and Obsidian's settings
//     are dot-folders, and the vault skips dot-paths);
//   - a drive letter ("C:\...") or a network path ("\\server\share");
//   - NUL and other control characters;
//   - the names Windows reserves (CON, PRN, AUX, NUL, COM1-9, LPT1-9,
//     with any extension and in any case);
//   - a name over 255 bytes, a path over 1,024.
//
// Names are put in Unicode normal form C, so that "é" typed as one code
// point or as "e" and an accent is the same note (macOS writes the second).
// Symbolic links are the file system's to check: every access goes through
// an os.Root, which refuses a link that leads out of the vault.

const (
	maxName = 255
	maxPath = 1024
)

// PathError is a path refused, with why.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("invalid path %q: %s", e.Path, e.Reason)
}

// Clean returns the vault path of p, as the vault stores it ("a/b.md"), or
// a *PathError. The vault's root is "" (given as "", "/" or "."); root
// says whether it is allowed here.
func Clean(p string, root bool) (string, error) {
	refuse := func(format string, args ...any) (string, error) {
		return "", &PathError{Path: p, Reason: fmt.Sprintf(format, args...)}
	}
	if !utf8.ValidString(p) {
		return refuse("it is not valid UTF-8")
	}
	if len(p) > maxPath {
		return refuse("it is longer than %d bytes", maxPath)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			if r == 0 {
				return refuse("it contains a NUL character")
			}
			return refuse("it contains a control character (%U)", r)
		}
	}
	s := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(s, "//") {
		return refuse("it is a network path; give a path inside the vault")
	}
	if len(s) >= 2 && s[1] == ':' && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') {
		return refuse("it has a drive letter; give a path inside the vault")
	}
	s = norm.NFC.String(strings.TrimPrefix(s, "/"))
	var out []string
	for seg := range strings.SplitSeq(s, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return refuse("it leaves the vault (..)")
		}
		seg = strings.Map(func(r rune) rune {
			if strings.ContainsRune(`<>:"|?*`, r) {
				return '_'
			}
			return r
		}, seg)
		seg = strings.TrimRight(strings.TrimLeft(seg, " "), " .")
		switch {
		case seg == "":
			return refuse("a name in it is only dots or spaces")
		case seg[0] == '.':
			return refuse("%q is hidden (it starts with a dot): the vault leaves dot-files and dot-folders alone", seg)
		case len(seg) > maxName:
			return refuse("a name in it is longer than %d bytes", maxName)
		case reserved(seg):
			return refuse("%q is a name Windows reserves for a device", seg)
		}
		out = append(out, seg)
	}
	if len(out) == 0 && !root {
		return refuse("it names the vault's root folder, not a file")
	}
	return strings.Join(out, "/"), nil
}

// reserved reports whether name is one of the device names Windows
// reserves, whatever its extension and case.
func reserved(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		return base[3] >= '0' && base[3] <= '9'
	}
	return false
}

// hidden reports whether a vault path has a segment starting with a dot.
func hidden(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}
