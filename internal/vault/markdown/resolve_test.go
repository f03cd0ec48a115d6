package markdown

import "testing"

func TestResolve(t *testing.T) {
	r := NewResolver([]string{
		"Home.md", "b/Note.md", "a/Note.md", "b/c/Note.md", "Note.png",
		"z/Only.md", "img/x.png", "a/sub/Deep.md", "v1.2 notes.md",
	})
	wiki := func(target string) Link { return Link{Target: target} }
	md := func(target string) Link { return Link{Target: target, Markdown: true} }
	tests := []struct {
		name   string
		from   string
		link   Link
		want   string
		wantOK bool
	}{
		{"same folder preferred", "b/c/x.md", wiki("Note"), "b/c/Note.md", true},
		{"same folder preferred at depth 1", "b/x.md", wiki("Note"), "b/Note.md", true},
		{"shortest path, ties by path order", "Home.md", wiki("Note"), "a/Note.md", true},
		{"shortest path from elsewhere", "z/Only.md", wiki("Note"), "a/Note.md", true},
		{"case-insensitive name", "Home.md", wiki("nOTE"), "a/Note.md", true},
		{"case-insensitive path", "Home.md", wiki("B/C/NOTE"), "b/c/Note.md", true},
		{"extension given", "Home.md", wiki("Note.png"), "Note.png", true},
		{"md extension given", "Home.md", wiki("Note.md"), "a/Note.md", true},
		{"path from root", "b/c/x.md", wiki("b/Note"), "b/Note.md", true},
		{"path with extension", "Home.md", wiki("a/sub/Deep.md"), "a/sub/Deep.md", true},
		{"path is not a name", "Home.md", wiki("sub/Deep"), "", false},
		{"leading slash", "a/x.md", wiki("/b/Note"), "b/Note.md", true},
		{"dotted name", "Home.md", wiki("v1.2 notes"), "v1.2 notes.md", true},
		{"image by name", "a/x.md", wiki("x.png"), "img/x.png", true},
		{"missing", "Home.md", wiki("Nope"), "", false},
		{"same note", "a/Note.md", wiki(""), "a/Note.md", true},
		{"markdown relative", "a/sub/Deep.md", md("../Note.md"), "a/Note.md", true},
		{"markdown dot relative", "a/sub/x.md", md("./Deep.md"), "a/sub/Deep.md", true},
		{"markdown plain relative", "a/sub/x.md", md("Deep.md"), "a/sub/Deep.md", true},
		{"markdown relative folder", "a/x.md", md("sub/Deep.md"), "a/sub/Deep.md", true},
		{"markdown root fallback", "a/x.md", md("b/c/Note.md"), "b/c/Note.md", true},
		{"markdown name fallback", "Home.md", md("Only.md"), "z/Only.md", true},
		{"markdown without extension", "a/x.md", md("Note"), "a/Note.md", true},
		{"markdown relative missing", "a/x.md", md("./Only.md"), "", false},
		{"markdown out of the vault", "a/x.md", md("../../Home.md"), "", false},
		{"markdown root", "a/sub/x.md", md("/Home.md"), "Home.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := r.Resolve(tt.from, tt.link)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Resolve(%q, %+v) = %q, %v; want %q, %v", tt.from, tt.link, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestResolveNil(t *testing.T) {
	var r *Resolver
	if p, ok := r.Resolve("a.md", Link{Target: "a"}); ok || p != "" {
		t.Errorf("nil resolver resolved to %q", p)
	}
	if _, ok := NewResolver(nil).Resolve("", Link{}); ok {
		t.Error("empty target without a note resolved")
	}
}
