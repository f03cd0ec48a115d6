package markdown

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// movedVault returns the vault paths after applying moved.
func movedVault(paths []string, moved map[string]string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if to, ok := moved[p]; ok {
			p = to
		}
		out[i] = p
	}
	return out
}

func TestRewrite(t *testing.T) {
	vault := []string{"notes/Index.md", "notes/Note.md", "other/Note2.md", "img/pic one.png", "dup/Target.md", "Top.md"}
	rename := func(to string) map[string]string { return map[string]string{"notes/Note.md": to} }
	tests := []struct {
		name    string
		note    string // the note's path after the move
		moved   map[string]string
		src     string
		want    string
		changed int
	}{
		{"bare name", "notes/Index.md", rename("notes/Renamed.md"), "See [[Note]].", "See [[Renamed]].", 1},
		{"bare name from another folder", "other/Note2.md", rename("notes/Renamed.md"), "[[note]]", "[[Renamed]]", 1},
		{"path", "notes/Index.md", rename("notes/Renamed.md"), "[[notes/Note]]", "[[notes/Renamed]]", 1},
		{"alias and heading", "notes/Index.md", rename("notes/Renamed.md"), "[[Note#Sec|the note]] [[Note#^b1]]", "[[Renamed#Sec|the note]] [[Renamed#^b1]]", 2},
		{"table pipe", "notes/Index.md", rename("notes/Renamed.md"), "| [[Note\\|n]] |", "| [[Renamed\\|n]] |", 1},
		{"extension kept", "notes/Index.md", rename("notes/Renamed.md"), "[[Note.md]]", "[[Renamed.md]]", 1},
		{"embed", "notes/Index.md", rename("notes/Renamed.md"), "![[Note#Sec]]", "![[Renamed#Sec]]", 1},
		{"embed image", "notes/Index.md", map[string]string{"img/pic one.png": "img/pic two.png"}, "![[pic one.png|100]]", "![[pic two.png|100]]", 1},
		{"moved, same name", "notes/Index.md", rename("archive/Note.md"), "[[Note]] ![[Note]]", "[[Note]] ![[Note]]", 0},
		{"moved, by path", "notes/Index.md", rename("archive/Note.md"), "[[notes/Note|n]]", "[[archive/Note|n]]", 1},
		{"ambiguous new name", "notes/Index.md", rename("notes/Target.md"), "[[Note]] [[Note|alias]]", "[[notes/Target]] [[notes/Target|alias]]", 2},
		{"name a wikilink cannot hold", "notes/Index.md", rename("notes/a`b.md"), "`x` [[Note]] `y`", "`x` [[Note]] `y`", 0},
		{"markdown relative with spaces", "notes/Index.md", rename("notes/My Note.md"), "[n](Note.md)", "[n](My%20Note.md)", 1},
		{"markdown root", "notes/Index.md", rename("archive/Old Note.md"), "[n](notes/Note.md)", "[n](archive/Old%20Note.md)", 1},
		{"markdown up", "other/Note2.md", rename("archive/Note.md"), "[n](../notes/Note.md#h)", "[n](../archive/Note.md#h)", 1},
		{"markdown dot", "notes/Index.md", rename("notes/sub/Note.md"), "[n](./Note.md)", "[n](./sub/Note.md)", 1},
		{"markdown slash", "notes/Index.md", rename("a b/Note.md"), "[n](/notes/Note.md)", "[n](/a%20b/Note.md)", 1},
		{"markdown angle", "notes/Index.md", rename("notes/My Note.md"), "[n](<Note.md> \"t\")", "[n](<My Note.md> \"t\")", 1},
		{"markdown colon", "notes/Index.md", rename("notes/a:b.md"), "[n](Note.md)", "[n](a%3Ab.md)", 1},
		{"markdown without extension", "notes/Index.md", rename("notes/Renamed.md"), "[n](Note)", "[n](Renamed)", 1},
		{"markdown image", "notes/Index.md", map[string]string{"img/pic one.png": "assets/pic.png"}, "![p](../img/pic%20one.png)", "![p](../assets/pic.png)", 1},
		{"code untouched", "notes/Index.md", rename("notes/Renamed.md"),
			"`[[Note]]`\n\n```\n[[Note]] [n](Note.md)\n```\n\n    [[Note]]\n\n[[Note]]\n",
			"`[[Note]]`\n\n```\n[[Note]] [n](Note.md)\n```\n\n    [[Note]]\n\n[[Renamed]]\n", 1},
		{"unresolved untouched", "notes/Index.md", rename("notes/Renamed.md"), "[[Missing]] [[#Sec]] [x](https://a/Note.md)", "[[Missing]] [[#Sec]] [x](https://a/Note.md)", 0},
		{"note itself moved", "archive/Index.md", map[string]string{"notes/Index.md": "archive/Index.md"},
			"[n](Note.md) [[Note]] [[#Sec]] [t](../Top.md)", "[n](../notes/Note.md) [[Note]] [[#Sec]] [t](../Top.md)", 1},
		{"note and target moved together", "archive/Index.md", map[string]string{"notes/Index.md": "archive/Index.md", "notes/Note.md": "archive/Note.md"},
			"[n](Note.md) [[notes/Note]]", "[n](Note.md) [[archive/Note]]", 1},
		{"frontmatter kept", "notes/Index.md", rename("notes/Renamed.md"), "---\ntitle: '[[Note]]'\n---\n[[Note]]", "---\ntitle: '[[Note]]'\n---\n[[Renamed]]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := NewResolver(vault)
			after := NewResolver(movedVault(vault, tt.moved))
			out, changed := Rewrite([]byte(tt.src), tt.note, before, after, tt.moved)
			if string(out) != tt.want || changed != tt.changed {
				t.Errorf("Rewrite(%q) =\n %q, %d\nwant\n %q, %d", tt.src, out, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestRewriteNoMoves(t *testing.T) {
	src := []byte("[[a]] [b](b.md) ![[c.png]]")
	r := NewResolver([]string{"a.md", "b.md", "c.png"})
	for _, moved := range []map[string]string{nil, {}} {
		out, changed := Rewrite(src, "x.md", r, r, moved)
		if !bytes.Equal(out, src) || changed != 0 {
			t.Errorf("Rewrite with no moves = %q, %d", out, changed)
		}
	}
}

// TestRewriteFolderMove moves the folder Projects of testdata/vault to
// Work/Projects and rewrites every note.
func TestRewriteFolderMove(t *testing.T) {
	root := filepath.Join("testdata", "vault")
	files := map[string][]byte{}
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		paths = append(paths, rel)
		files[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "Projects/"); ok {
			moved[p] = "Work/Projects/" + rest
		}
	}
	if len(moved) != 2 {
		t.Fatalf("moved = %v", moved)
	}
	before, after := NewResolver(paths), NewResolver(movedVault(paths, moved))

	wantChanged := map[string]int{"Home.md": 1, "Work/Projects/Alpha.md": 1, "archive/Beta.md": 1}
	wantEdits := map[string][2]string{
		"Home.md":                {"[[Projects/Beta|the beta]]", "[[Work/Projects/Beta|the beta]]"},
		"Work/Projects/Alpha.md": {"[home](../Home.md)", "[home](../../Home.md)"},
		"archive/Beta.md":        {"[[Projects/Beta]]", "[[Work/Projects/Beta]]"},
	}
	for _, old := range paths {
		if !strings.HasSuffix(old, ".md") {
			continue
		}
		note := old
		if to, ok := moved[old]; ok {
			note = to
		}
		out, changed := Rewrite(files[old], note, before, after, moved)
		want := string(files[old])
		if e, ok := wantEdits[note]; ok {
			want = strings.Replace(want, e[0], e[1], 1)
		}
		if string(out) != want || changed != wantChanged[note] {
			t.Errorf("%s: changed %d, want %d; got\n%s", note, changed, wantChanged[note], out)
		}
		// Every link of the rewritten note resolves after the move as the
		// original did before it.
		oldLinks, newLinks := Parse(files[old]).Links, Parse(out).Links
		if len(oldLinks) != len(newLinks) {
			t.Fatalf("%s: %d links became %d", note, len(oldLinks), len(newLinks))
		}
		for i := range oldLinks {
			p, ok := before.Resolve(old, oldLinks[i])
			if !ok {
				continue
			}
			if to, ok := moved[p]; ok {
				p = to
			}
			if q, ok := after.Resolve(note, newLinks[i]); !ok || q != p {
				t.Errorf("%s: link %q resolves to %q after the move, want %q", note, newLinks[i].Target, q, p)
			}
		}
	}
	if !slices.Contains(paths, "assets/diagram.png") {
		t.Errorf("vault paths = %v", paths)
	}
}
