package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"

	"github.com/nexus-mcp/nexus/internal/mcpwire"
)

// The SDK's Streamable HTTP client connection cannot be wrapped like the
// others (see tapTransport): it must see the session state to open its
// standalone stream. Its HTTP client is tapped instead: the bodies of the
// responses are filtered as the SDK reads them, so that the proxy forwards
// the server's notifications upstream in stream order, before the SDK reads
// what follows, and keeps the raw result of forwarded calls.

// tapHTTPClient returns a copy of c (nil: the default client) whose
// responses are tapped for l.
func tapHTTPClient(c *http.Client, l *link) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	nc := *c
	next := nc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	nc.Transport = &httpTap{next: next, l: l}
	return &nc
}

type httpTap struct {
	next http.RoundTripper
	l    *link
}

func (t *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	// A POST of a forwarded call carries the call's context.
	slot, _ := req.Context().Value(slotKey{}).(*rawSlot)
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "text/event-stream":
		resp.Body = &sseTap{body: resp.Body, notify: t.l.notifyUp, slot: slot}
	case "application/json":
		if slot != nil {
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			slot.capture(b)
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
	}
	return resp, nil
}

// capture keeps the result of a JSON-RPC success response.
func (s *rawSlot) capture(data []byte) {
	if s == nil || s.result() != nil {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(data, &m) != nil || m.Method != "" || m.ID == nil || m.Result == nil {
		return
	}
	raw := slices.Clone(m.Result)
	s.raw.Store((*json.RawMessage)(&raw))
}

// sseTap filters an SSE body: an event carrying a notification that the
// proxy forwards is forwarded when it is read and replaced by an event with
// only its id (and retry), which keeps stream resumption working; every
// other event passes unchanged.
type sseTap struct {
	body   io.ReadCloser
	notify func(method string, params json.RawMessage)
	slot   *rawSlot // of the call this POST sent, if forwarded

	buf [32 << 10]byte
	in  []byte // read, not yet complete events
	out []byte // filtered, to be returned
	err error  // of the body
}

func (s *sseTap) Close() error { return s.body.Close() }

func (s *sseTap) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.in) == 0 {
				return 0, s.err
			}
			s.out, s.in = s.in, nil // an incomplete last event, as it is
			break
		}
		n, err := s.body.Read(s.buf[:])
		s.in = append(s.in, s.buf[:n]...)
		s.err = err
		s.filter()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// filter moves the complete events of s.in to s.out, filtered.
func (s *sseTap) filter() {
	for {
		end, lines, ok := mcpwire.NextEvent(s.in, s.err != nil)
		if !ok {
			return
		}
		s.out = append(s.out, s.event(s.in[:end], lines)...)
		s.in = s.in[end:]
	}
}

// event returns the bytes that replace one event (raw, with its lines).
func (s *sseTap) event(raw []byte, lines [][]byte) []byte {
	var name, id, retry string
	var data []byte
	hasData := false
	for _, line := range lines {
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "id":
			id = string(value)
		case "retry":
			retry = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
	if len(data) == 0 || (name != "" && name != "message") {
		return raw
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil {
		return raw
	}
	switch {
	case m.Method != "" && m.ID == nil && forwardedUp(m.Method):
		s.notify(m.Method, m.Params)
		var b []byte
		if id != "" {
			b = append(b, "id: "+id+"\n"...)
		}
		if retry != "" {
			b = append(b, "retry: "+retry+"\n"...)
		}
		if b != nil {
			b = append(b, '\n')
		}
		return b
	case m.Method == "" && m.ID != nil:
		s.slot.capture(data)
	}
	return raw
}
