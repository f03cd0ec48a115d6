package config

// YAML library: go.yaml.in/yaml/v4.
//
//   - It is the YAML organization's maintained go-yaml (the successor of
//     gopkg.in/yaml.v3, which is unmaintained); its own README says v2 and v3
//     are frozen and get security fixes only, while v4 is the line under active
//     development.
//   - Its Node API keeps mappings in file order with the line and column of
//     every node, which is all Load needs: toolboxes and servers keep their
//     order, and every error points at a line.
//   - Parse errors are structured (*yaml.LoadError with line and column), and
//     the lines are right; yaml.v3 reported some parser errors one line off
//     and dropped the line on the first one.
//   - It reads JSON as YAML 1.2 (including JSON's \/ escape, which yaml.v3
//     rejected), so JSON and YAML files go through one parser and get the same
//     errors with line numbers.
//   - No dependencies of its own; it has built-in depth and alias limits.
//
// github.com/goccy/go-yaml was the alternative: maintained too, with nicer
// error snippets, but its AST has many node types (MappingValueNode,
// TagNode, AnchorNode, ...) that each walker must handle, where yaml's Node
// has five kinds.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// decode parses data as one YAML (or JSON) document. A nil node means the
// file holds no document (empty, or only comments).
func decode(data []byte) (root *yaml.Node, perr *Error) {
	// The parser is not ours: whatever it does, Parse returns an error, never
	// a panic.
	defer func() {
		if r := recover(); r != nil {
			root, perr = nil, &Error{Reason: fmt.Sprintf("syntax error: the YAML parser failed (%v)", r)}
		}
	}()
	data = jsonSurrogates(data)
	ld, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil, syntaxError(err)
	}
	var doc yaml.Node
	if err := ld.Load(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var next yaml.Node
	switch err := ld.Load(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, syntaxError(err)
	default:
		return nil, &Error{Line: next.Line, Reason: "a second YAML document (after ---): a configuration file holds one"}
	}
	n := &doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, nil
		}
		n = n.Content[0]
	}
	return n, nil
}

// syntaxError turns an error of the YAML parser into an *Error with its line
// and column when the parser gives them.
func syntaxError(err error) *Error {
	var le *yaml.LoadError
	if errors.As(err, &le) {
		reason := "syntax error: " + le.Message
		if le.ContextMsg != "" && le.ContextMark.Line > 0 && le.ContextMark != le.Mark {
			reason += fmt.Sprintf(" (%s that starts at line %d, column %d)", le.ContextMsg, le.ContextMark.Line, le.ContextMark.Column)
		} else if le.ContextMsg != "" {
			reason += " (" + le.ContextMsg + ")"
		}
		return &Error{Line: le.Mark.Line, Column: le.Mark.Column, Reason: reason}
	}
	return &Error{Reason: "syntax error: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// jsonSurrogates rewrites JSON's UTF-16 surrogate pair escapes
// ("\ud83d\ude00", as Python's json.dumps writes emoji) into YAML's
// "\U0001f600", which the YAML parser reads; it rejects the pairs. Only
// valid JSON is touched: there every backslash is inside a double-quoted
// string.
func jsonSurrogates(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\u`)) && !bytes.Contains(data, []byte(`\U`)) {
		return data
	}
	if !json.Valid(data) {
		return data
	}
	var out []byte
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		if i+12 <= len(data) && data[i+1] == 'u' && data[i+6] == '\\' && data[i+7] == 'u' {
			hi, err1 := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
			lo, err2 := strconv.ParseUint(string(data[i+8:i+12]), 16, 32)
			if err1 == nil && err2 == nil && hi >= 0xD800 && hi < 0xDC00 && lo >= 0xDC00 && lo < 0xE000 {
				r := (hi-0xD800)<<10 | (lo - 0xDC00) + 0x10000
				out = append(out, data[last:i]...)
				out = fmt.Appendf(out, `\U%08x`, r)
				i += 11
				last = i + 1
				continue
			}
		}
		i++ // skip the escaped character (it may be a backslash)
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
