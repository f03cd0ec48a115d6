package mcpwire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAccepts: the SDK's rule for a Streamable HTTP POST's Accept header,
// which the passthrough and the HTTP front's fast path both follow.
func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		values           []string
		jsonOK, streamOK bool
	}{
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json", "text/event-stream"}, true, true},
		{[]string{"Application/JSON;q=0.9 , TEXT/EVENT-STREAM;charset=utf-8"}, true, true},
		{[]string{"*/*"}, true, true},
		{[]string{"application/*, text/*"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"text/event-stream"}, false, true},
		{[]string{"text/html", ""}, false, false},
		{nil, false, false},
	} {
		j, s := Accepts(c.values)
		if j != c.jsonOK || s != c.streamOK {
			t.Errorf("Accepts(%q) = %v, %v; want %v, %v", c.values, j, s, c.jsonOK, c.streamOK)
		}
	}
}

// TestVersions: the handshake versions are the SDK's before the
// sessionless protocol, the one the proxy and the fast path accept.
func TestVersions(t *testing.T) {
	hs := HandshakeVersions()
	if len(hs) == 0 || !slices.Contains(hs, "2025-11-25") || slices.Contains(hs, Sessionless) {
		t.Fatalf("handshake versions %v: want 2025-11-25 and nothing from %s on", hs, Sessionless)
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), Sessionless) {
		t.Errorf("the SDK does not speak %s: Sessionless is stale", Sessionless)
	}
	if LatestHandshake() != slices.Max(hs) || LatestHandshake() >= Sessionless {
		t.Errorf("latest handshake %s of %v", LatestHandshake(), hs)
	}
	for v, want := range map[string]bool{"": true, "2025-11-25": true, "2024-11-05": true, "2026-07-28": false, "2025-01-01": false, "bogus": false} {
		if IsHandshake(v) != want {
			t.Errorf("IsHandshake(%q) = %v, want %v", v, !want, want)
		}
	}
}

// TestEventRoundTrip: an event AppendEvent writes is the one event
// NextEvent and EventData read back, with an error message as its data.
func TestEventRoundTrip(t *testing.T) {
	msg := ErrorMessage(json.RawMessage(`7`), -32603, "tool call timed out after 1s")
	var e struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &e); err != nil || e.ID != 7 || e.Error.Code != -32603 || e.Error.Message != "tool call timed out after 1s" {
		t.Fatalf("error message %s", msg)
	}
	if got := string(ErrorMessage(nil, -32600, "x")); !strings.Contains(got, `"id":null`) {
		t.Errorf("an error without id: %s", got)
	}
	stream := AppendEvent(AppendEvent(nil, msg), []byte(`{"jsonrpc":"2.0","method":"m"}`))
	end, lines, ok := NextEvent(stream, false)
	if !ok || !bytes.Equal(EventData(lines), msg) {
		t.Fatalf("first event: %v %q", ok, lines)
	}
	if _, lines, ok = NextEvent(stream[end:], false); !ok || string(EventData(lines)) != `{"jsonrpc":"2.0","method":"m"}` {
		t.Fatalf("second event: %v %q", ok, lines)
	}
}

// FuzzNextEvent: reading SSE events (a downstream server's stream) never
// panics, never reads past its input, and an event's data is made of its
// input's bytes.
func FuzzNextEvent(f *testing.F) {
	f.Add([]byte("event: message\ndata: {}\n\n"), true)
	f.Add([]byte("data: a\r\ndata: b\r\n\r\nid: 1\r"), false)
	f.Add([]byte(": comment\n\nevent: other\ndata: x\n\n"), true)
	f.Fuzz(func(t *testing.T, in []byte, eof bool) {
		for len(in) > 0 {
			end, lines, ok := NextEvent(in, eof)
			if !ok {
				return
			}
			if end <= 0 || end > len(in) {
				t.Fatalf("event end %d of %d bytes", end, len(in))
			}
			if data := EventData(lines); len(data) > end {
				t.Fatalf("%d bytes of data from a %d-byte event", len(data), end)
			}
			in = in[end:]
		}
	})
}

// TestCheckRequest: the transport's rules for a request of the session
// protocol, each refusal naming what is wrong, with its status.
func TestCheckRequest(t *testing.T) {
	req := func(method, version, accept, contentType string) *http.Request {
		r := httptest.NewRequest(method, "/mcp", nil)
		if version != "" {
			r.Header.Set(VersionHeader, version)
		}
		r.Header.Set("Accept", accept)
		r.Header.Set("Content-Type", contentType)
		return r
	}
	const both, body = "application/json, text/event-stream", `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tt := range []struct {
		name   string
		r      *http.Request
		body   string
		status int
		want   string
	}{
		{"a good POST", req("POST", "2025-06-18", both, "application/json"), body, 0, ""},
		{"no version header", req("POST", "", both, "application/json; charset=utf-8"), body, 0, ""},
		{"a good GET", req("GET", "2025-11-25", "text/event-stream", ""), "", 0, ""},
		{"unknown version", req("POST", "2020-01-01", both, "application/json"), body, 400, `Unsupported protocol version "2020-01-01"`},
		{"sessionless version", req("POST", Sessionless, both, "application/json"), body, 0, ""},
		{"GET without event stream", req("GET", "", "application/json", ""), "", 400, "text/event-stream' for GET"},
		{"empty POST", req("POST", "", both, "application/json"), " \n", 400, "non-empty body"},
		{"text POST", req("POST", "", both, "text/plain"), body, 415, "Content-Type must be 'application/json'"},
		{"POST accepting JSON only", req("POST", "", "application/json", "application/json"), body, 400, "Accept must contain both"},
		{"POST accepting anything", req("POST", "", "*/*", "application/json"), body, 0, ""},
	} {
		status, msg := CheckRequest(tt.r, []byte(tt.body))
		if status != tt.status || !strings.Contains(msg, tt.want) || (tt.want == "") != (msg == "") {
			t.Errorf("%s: %d %q, want %d naming %q", tt.name, status, msg, tt.status, tt.want)
		}
	}
}
