package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BadLines are malformed messages and the error each must be answered
// with: its code and id (null when the message has no valid id).
var badLines = []struct {
	name, line string
	code       int
	id         string
}{
	{"not json", `hello`, CodeParseError, "null"},
	{"truncated", `{"jsonrpc":"2.0","id":5,"method":"ping"`, CodeParseError, "null"},
	{"bytes not utf-8", "\xff\xfe", CodeParseError, "null"},
	{"trailing data", `{"jsonrpc":"2.0","id":5,"method":"ping"} x`, CodeParseError, "null"},
	{"two values", `{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}`, CodeParseError, "null"},
	{"deep nesting", strings.Repeat("[", 100000), CodeParseError, "null"},
	{"deep balanced nesting", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`, CodeParseError, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, CodeInvalidRequest, "null"},
	{"empty batch", `[]`, CodeInvalidRequest, "null"},
	{"string", `"ping"`, CodeInvalidRequest, "null"},
	{"number", `42`, CodeInvalidRequest, "null"},
	{"null", `null`, CodeInvalidRequest, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, "null"},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "null"},
	{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, CodeInvalidRequest, "null"},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, CodeInvalidRequest, "7"},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":"seven","method":"ping"}`, CodeInvalidRequest, `"seven"`},
	{"no jsonrpc", `{"id":8,"method":"ping"}`, CodeInvalidRequest, "8"},
	{"notification with jsonrpc 1.0", `{"jsonrpc":"1.0","method":"notifications/initialized"}`, CodeInvalidRequest, "null"},
	{"method not a string", `{"jsonrpc":"2.0","id":9,"method":5}`, CodeInvalidRequest, "9"},
	{"params not an object", `{"jsonrpc":"2.0","id":10,"method":"ping","params":5}`, CodeInvalidRequest, "10"},
	{"params an array", `{"jsonrpc":"2.0","id":10,"method":"ping","params":[]}`, CodeInvalidRequest, "10"},
	{"method and result", `{"jsonrpc":"2.0","id":11,"method":"ping","result":{}}`, CodeInvalidRequest, "11"},
	{"neither method nor result", `{"jsonrpc":"2.0","id":12}`, CodeInvalidRequest, "12"},
	{"empty message", `{"jsonrpc":"2.0"}`, CodeInvalidRequest, "null"},
	{"empty object", `{}`, CodeInvalidRequest, "null"},
	{"response without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "null"},
	{"error not an object", `{"jsonrpc":"2.0","id":13,"error":"bad"}`, CodeInvalidRequest, "13"},
}

// peer is the client end of a connection: it writes lines and reads the
// messages answered.
type peer struct {
	t    *testing.T
	w    io.Writer
	msgs chan map[string]any
}

func newPeer(t *testing.T, w io.Writer, r io.Reader) *peer {
	p := &peer{t: t, w: w, msgs: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			p.msgs <- m
		}
		close(p.msgs)
	}()
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatalf("write %.60q: %v", line, err)
	}
}

// until returns the messages received up to and including the response
// with the given id (a JSON literal).
func (p *peer) until(id string) []map[string]any {
	p.t.Helper()
	var got []map[string]any
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("the connection ended before the response to %s; got %v", id, got)
			}
			got = append(got, m)
			if b, _ := json.Marshal(m["id"]); string(b) == id && m["method"] == nil {
				return got
			}
		case <-timeout:
			p.t.Fatalf("no response to %s; got %v", id, got)
		}
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// CheckBadLines sends each bad line then a ping, over a connection that
// has been initialized, and checks the answers.
func checkBadLines(t *testing.T, p *peer) {
	for i, tt := range badLines {
		pingID := fmt.Sprint(1000 + i)
		p.send(tt.line)
		p.send(`{"jsonrpc":"2.0","id":` + pingID + `,"method":"ping"}`)
		got := p.until(pingID)
		if len(got) != 2 {
			t.Errorf("%s: want one error then the ping's response, got %v", tt.name, got)
			continue
		}
		e, _ := got[0]["error"].(map[string]any)
		id, _ := json.Marshal(got[0]["id"])
		if e == nil || e["code"] != float64(tt.code) || string(id) != tt.id || got[0]["jsonrpc"] != "2.0" || e["message"] == "" {
			t.Errorf("%s: answer %v, want code %d and id %s", tt.name, got[0], tt.code, tt.id)
		}
		if got[1]["error"] != nil || got[1]["result"] == nil {
			t.Errorf("%s: ping after it: %v", tt.name, got[1])
		}
	}
}

// serve runs an MCP server over the transport until the test ends.
func serve(t *testing.T, tr *Transport) <-chan error {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done, ended := make(chan error, 1), make(chan struct{})
	go func() {
		done <- srv.Run(ctx, tr)
		close(ended)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return done
}

func TestMalformedMessagesAreAnsweredAndTheConnectionGoesOn(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var logs syncBuffer
	serve(t, &Transport{Reader: inR, Writer: outW, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	p := newPeer(t, inW, outR)
	p.send(initialize)
	if got := p.until("1"); got[0]["result"] == nil {
		t.Fatalf("initialize: %v", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	checkBadLines(t, p)

	// Valid messages the server does not expect are handled by the SDK.
	p.send("")
	p.send("   ")
	p.send(`{"jsonrpc":"2.0","id":99,"result":{}}`) // a response to nothing: ignored
	p.send(`{"jsonrpc":"2.0","id":"a","method":"no/such/method"}`)
	if got := p.until(`"a"`); len(got) != 1 || got[0]["error"].(map[string]any)["code"] != float64(-32601) {
		t.Errorf("unknown method: %v", got)
	}
	p.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}` + "\r")
	if got := p.until(`"b"`); len(got) != 1 || !strings.Contains(fmt.Sprint(got[0]["result"]), "still here") {
		t.Errorf("tool call after the bad lines (CRLF line ending): %v", got)
	}
	if !strings.Contains(logs.String(), "refused a malformed JSON-RPC message") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

func TestMessageOverTheLimitEndsTheConnection(t *testing.T) {
	const limit = 1 << 10
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var logs syncBuffer
	done := serve(t, &Transport{Reader: inR, Writer: outW, MaxMessage: limit, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	p := newPeer(t, inW, outR)
	p.send(initialize)
	p.until("1")
	// A message of exactly the limit (with either line ending) is served.
	for i, end := range []string{"", "\r"} {
		id := fmt.Sprint(2 + i)
		msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"_meta":{"x":"`
		msg += strings.Repeat("a", limit-len(msg)-4) + `"}}}`
		if len(msg) != limit {
			t.Fatalf("message of %d bytes", len(msg))
		}
		p.send(msg + end)
		if got := p.until(id); got[0]["result"] == nil {
			t.Fatalf("message at the limit: %v", got)
		}
	}
	// Written from a goroutine (the server reads it while the test reads
	// the answer); t.Fatal must not be called there, so the error comes
	// back to the test.
	sent := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.w, `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"x":"`+strings.Repeat("a", limit)+`"}}}`+"\n")
		sent <- err
	}()
	defer func() {
		if err := <-sent; err != nil {
			t.Errorf("write the large message: %v", err)
		}
	}()
	got := p.until("null")
	if e, _ := got[0]["error"].(map[string]any); e == nil || e["code"] != float64(CodeInvalidRequest) || !strings.Contains(e["message"].(string), "1024-byte limit") {
		t.Errorf("answer to the large message: %v", got)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrMessageTooLarge) {
			t.Errorf("Run returned %v, want ErrMessageTooLarge", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the connection did not end")
	}
	if s := logs.String(); !strings.Contains(s, "level=ERROR") || !strings.Contains(s, "longer than the limit") || !strings.Contains(s, "limit_bytes=1024") {
		t.Errorf("log: %s", s)
	}
}

// TestSDKClient connects the SDK's own client (its IOTransport) to a
// server on this transport.
func TestSDKClient(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	serve(t, &Transport{Reader: inR, Writer: outW})
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 { // concurrent calls: responses must not interleave
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat(fmt.Sprint(i), 10000)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
				t.Errorf("call %d: %v %v", i, err, res)
			}
		}()
	}
	wg.Wait()
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a\r\nbb\n\nccc\ndddd\neeeee\r\nf"), 16)
	var got []string
	for {
		line, err := readLine(r, 4)
		if err != nil {
			got = append(got, fmt.Sprintf("%q %v", line, err))
			break
		}
		got = append(got, fmt.Sprintf("%q", line))
	}
	want := `"a" "bb" "" "ccc" "dddd" "" message longer than the 4-byte limit`
	if s := strings.Join(got, " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	// The last line needs no newline.
	line, err := readLine(bufio.NewReader(strings.NewReader("xy")), 4)
	if string(line) != "xy" || err != io.EOF {
		t.Errorf("last line: %q %v", line, err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEndOfInputAnswersRequestsReadBeforeIt: "nexus stdio < requests" gets
// every answer, even when the input ends while the calls still run (before,
// the server stopped at the end of the input and the answers were lost).
func TestEndOfInputAnswersRequestsReadBeforeIt(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		time.Sleep(200 * time.Millisecond) // behaviour: the call outlives the input, not synchronisation
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	}, "\n") + "\n"
	var out syncBuffer
	if err := srv.Run(context.Background(), &Transport{Reader: strings.NewReader(in), Writer: &out}); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	for _, id := range []string{`"id":1,`, `"id":2,`, `"id":3,`} {
		if !strings.Contains(out.String(), id) {
			t.Errorf("no answer with %s in:\n%s", id, out.String())
		}
	}
}
