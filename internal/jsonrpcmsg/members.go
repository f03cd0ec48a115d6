package jsonrpcmsg

import (
	"bytes"
	"encoding/json"
)

// members are the members of a message's object that the check reads, each
// the raw value as written (empty when absent, "null" when null).
//
// They are read by one walk over the top-level members of a valid JSON
// object, in place of json.Unmarshal into a struct of json.RawMessage fields,
// which cost a reflective second pass over every message. The walk keeps
// what that decoding did: names match case-insensitively (the fold of
// strings.EqualFold, as encoding/json), escapes in names are decoded, and
// the last of duplicate members wins.
type members struct {
	JSONRPC, ID, Method, Params, Result, Error []byte
}

// read fills m from obj, a valid JSON object (json.Valid) trimmed of white
// space.
func (m *members) read(obj []byte) {
	i := 1 // past '{'
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return // '}': the end
		}
		kEnd := skipString(obj, i)
		key := obj[i+1 : kEnd-1]
		i = skipSpace(obj, kEnd) + 1 // past ':'
		i = skipSpace(obj, i)
		vEnd := skipValue(obj, i)
		if f := m.field(key); f != nil {
			*f = obj[i:vEnd]
		}
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
}

// field is the member key names, nil for any other.
func (m *members) field(key []byte) *[]byte {
	if bytes.IndexByte(key, '\\') >= 0 {
		var name string
		if err := json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name); err != nil {
			return nil
		}
		key = []byte(name)
	}
	for _, f := range [...]struct {
		name string
		p    *[]byte
	}{{"jsonrpc", &m.JSONRPC}, {"id", &m.ID}, {"method", &m.Method}, {"params", &m.Params}, {"result", &m.Result}, {"error", &m.Error}} {
		if bytes.EqualFold(key, []byte(f.name)) {
			return f.p
		}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(b); i++ { // a number, true, false or null
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// unquote decodes a JSON string.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}
