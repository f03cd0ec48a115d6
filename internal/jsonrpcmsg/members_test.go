package jsonrpcmsg

import (
	"encoding/json"
	"testing"
)

// TestMembersAsUnmarshal checks the one-walk reading of a message's members
// against what json.Unmarshal into RawMessage fields read before it: case
// folding, escaped names, duplicates, nesting, white space, null.
func TestMembersAsUnmarshal(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{ "jsonrpc" : "2.0" , "id" : "a\"}" , "method" : "tools/call" , "params" : {"name":"x","arguments":{"a":[1,{"b":"}"}]}} }`,
		`{"JSONRPC":"2.0","ID":7,"Method":"x","PARAMS":null}`,
		`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
		`{"\u006aSONrpc":"2.0","i\u0064":3,"error":{"code":1},"paramſ":[]}`,
		`{"other":{"id":9,"method":"no"},"list":[{"jsonrpc":"x"}],"id":null,"result":[],"n":-1.5e3,"t":true,"f":false}`,
		`{}`,
		"{\n\t\"method\"\r\n:\"m\",\"id\":12345678901234567890}",
		`{"ſ":1,"K":2,"method":"a\\b"}`,
	} {
		if !json.Valid([]byte(in)) {
			t.Fatalf("not valid JSON: %s", in)
		}
		var want struct {
			JSONRPC json.RawMessage `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  json.RawMessage `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		var got members
		got.read([]byte(in))
		for _, f := range []struct {
			name      string
			got, want []byte
		}{{"jsonrpc", got.JSONRPC, want.JSONRPC}, {"id", got.ID, want.ID}, {"method", got.Method, want.Method},
			{"params", got.Params, want.Params}, {"result", got.Result, want.Result}, {"error", got.Error, want.Error}} {
			if string(f.got) != string(f.want) {
				t.Errorf("%s: %s = %q, json.Unmarshal read %q", in, f.name, f.got, f.want)
			}
		}
	}
}

// TestInspect checks what Inspect says of valid messages.
func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		in     string
		method string
		hasID  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "initialize", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", false},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, "", true},
		{`{"jsonrpc":"2.0","id":2,"method":"in\u0069tialize"}`, "initialize", true},
	} {
		_, info, _, code, reason := Inspect([]byte(tc.in), 512)
		if code != 0 || info.Method != tc.method || info.HasID != tc.hasID {
			t.Errorf("Inspect(%s) = %+v, code %d %s; want method %q, id %v", tc.in, info, code, reason, tc.method, tc.hasID)
		}
	}
}
