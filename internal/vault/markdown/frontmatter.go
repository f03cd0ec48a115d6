package markdown

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v4"
)

// bom is the UTF-8 byte order mark some editors put at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// readFrontmatter finds and decodes the frontmatter: a first line "---", a
// later line "---" or "..." closing it, and YAML between them. Without
// frontmatter, bodyStart is 0 and fm is nil.
func readFrontmatter(src []byte) (bodyStart int, fm map[string]any, errText string) {
	yamlText, bodyStart, ok := splitFrontmatter(src)
	if !ok {
		return 0, nil, ""
	}
	fm, err := decodeFrontmatter(yamlText)
	if err != nil {
		return bodyStart, nil, err.Error()
	}
	return bodyStart, fm, ""
}

// splitFrontmatter returns the YAML between the fences and the offset just
// past the closing fence's line. Lines may end with "\n" or "\r\n".
func splitFrontmatter(src []byte) (yamlText []byte, bodyStart int, ok bool) {
	start := 0
	if bytes.HasPrefix(src, bom) {
		start = len(bom)
	}
	first, next := lineAt(src, start)
	if next == len(src) || !isFence(first, "---") {
		return nil, 0, false
	}
	for pos := next; pos < len(src); {
		l, after := lineAt(src, pos)
		if isFence(l, "---") || isFence(l, "...") {
			return src[next:pos], after, true
		}
		pos = after
	}
	return nil, 0, false
}

// lineAt returns the line starting at pos, without its line ending, and
// where the next line starts.
func lineAt(src []byte, pos int) (line []byte, next int) {
	i := bytes.IndexByte(src[pos:], '\n')
	if i < 0 {
		return src[pos:], len(src)
	}
	line = src[pos : pos+i]
	return bytes.TrimSuffix(line, []byte{'\r'}), pos + i + 1
}

func isFence(line []byte, fence string) bool {
	return string(bytes.TrimRight(line, " \t")) == fence
}

// decodeFrontmatter decodes YAML that must be a mapping. Empty YAML (or only
// comments, or null) is an empty mapping.
func decodeFrontmatter(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Load(b, &v); err != nil {
		if isBlankYAML(b) {
			return map[string]any{}, nil
		}
		return nil, err
	}
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return m, nil
	default:
		return nil, fmt.Errorf("frontmatter is a YAML %T, not a mapping", v)
	}
}

// isBlankYAML reports whether YAML text has nothing but blank lines and
// comments, which the YAML decoder reports as an error (no document).
func isBlankYAML(b []byte) bool {
	for len(b) > 0 {
		var l []byte
		l, b, _ = bytes.Cut(b, []byte{'\n'})
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}
