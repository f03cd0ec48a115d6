package markdown

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/text"
)

// tagSet is a list of unique tags, compared case-insensitively as Obsidian
// does, in order of first appearance.
type tagSet struct {
	list []string
	seen map[string]struct{}
}

// newTagSet starts a tag set with the frontmatter's "tags" and "tag": each
// a YAML list or a string of tags separated by commas or spaces, with or
// without '#'.
func newTagSet(fm map[string]any) *tagSet {
	t := &tagSet{}
	for _, key := range []string{"tags", "tag"} {
		switch v := fm[key].(type) {
		case []any:
			for _, item := range v {
				t.addField(item)
			}
		default:
			t.addField(v)
		}
	}
	return t
}

// addField adds the tags of a scalar frontmatter value; lists and maps
// within are ignored.
func (t *tagSet) addField(v any) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case int, int64, uint64, float64, bool:
		s = fmt.Sprint(v)
	default:
		return
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		f = strings.TrimPrefix(f, "#")
		if n, ok := scanTag([]byte(f)); ok && n == len(f) {
			t.add(f)
		}
	}
}

func (t *tagSet) add(tag string) {
	key := strings.ToLower(tag)
	if _, dup := t.seen[key]; dup {
		return
	}
	if t.seen == nil {
		t.seen = map[string]struct{}{}
	}
	t.seen[key] = struct{}{}
	t.list = append(t.list, tag)
}

// textTags adds the #tags of a text segment of the body's chunk. What
// precedes and follows the '#' is read in the whole note, so that a chunk's
// edges make no difference.
func (w *walker) textTags(seg text.Segment) {
	stop := min(seg.Stop, len(w.body))
	for i := max(seg.Start, 0); i < stop; i++ {
		if w.body[i] != '#' || !tagBoundary(w.src, w.off+i) {
			continue
		}
		if n, ok := scanTag(w.src[w.off+i+1:]); ok {
			w.tags.add(string(w.src[w.off+i+1 : w.off+i+1+n]))
			i += n
		}
	}
}

// tagBoundary reports whether a '#' at src[i] may start a tag: it is at the
// start of a line (possibly after blockquote markers) or after whitespace.
func tagBoundary(src []byte, i int) bool {
	if i == 0 {
		return true
	}
	if r, _ := utf8.DecodeLastRune(src[:i]); unicode.IsSpace(r) {
		return true
	}
	j := i - 1
	for j >= 0 && (src[j] == '>' || src[j] == ' ' || src[j] == '\t') {
		j--
	}
	return j < 0 || src[j] == '\n'
}

// scanTag returns the length of the tag at the start of b (after the '#'):
// Unicode letters (with their combining marks), digits, '_', '-' and '/',
// at least one of them not a digit.
func scanTag(b []byte) (n int, ok bool) {
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		switch {
		case unicode.IsDigit(r):
		case unicode.IsLetter(r), unicode.IsMark(r), r == '_', r == '-', r == '/':
			ok = true
		default:
			return n, ok
		}
		n += size
	}
	return n, ok
}
