package jsonrpcmsg

import (
	"strings"
	"testing"
)

// The transports' own tests (internal/stdio, internal/httpapi) cover Check
// message by message; this table pins the codes and the ids answered.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in, id string
		code   int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", 0},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, "", 0},
		{`hello`, "", CodeParseError},
		{strings.Repeat("[", 600), "", CodeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "", CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, "3", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":4}`, "4", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}`, "5", CodeInvalidRequest},
	} {
		msg, id, code, reason := Check([]byte(tc.in), 512)
		if code != tc.code || string(id) != tc.id || (code == 0) != (msg != nil) || (code != 0 && reason == "") {
			t.Errorf("Check(%.40s) = %v, id %q, code %d, %q; want id %q, code %d", tc.in, msg, id, code, reason, tc.id, tc.code)
		}
	}
}
