package ws_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// serve starts the WebSocket surface over a real app whose model is a fake
// speaking the OpenAI wire format, as the local user.
func serve(tb testing.TB, script llmtest.Script, maxBuffered int) string {
	tb.Helper()
	url, _ := serveWith(tb, script, ws.Options{MaxBuffered: maxBuffered})
	return url
}

// openApp opens an app on a new SQLite database whose model is a fake
// OpenAI-compatible server answering with script.
func openApp(tb testing.TB, script llmtest.Script) *app.App {
	tb.Helper()
	fake := llmtest.NewOpenAI(tb, script)
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, Model: "fake"})
	if err != nil {
		tb.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: tb.TempDir(), Model: model})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	return a
}

// serveWith is serve with options o (its Chat set here).
func serveWith(tb testing.TB, script llmtest.Script, o ws.Options) (string, *ws.Server) {
	tb.Helper()
	a := openApp(tb, script)
	o.Chat = a.Chat
	h := ws.Handler(o)
	srv := httptest.NewServer(localUser(h))
	tb.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), h
}

// TestSlowReaderIsBounded: a client that does not read while a long answer
// streams neither blocks the turn nor grows memory without bound: its
// connection is closed once the waiting events pass MaxBuffered.
func TestSlowReaderIsBounded(t *testing.T) {
	// 16 MB of answer: more than the kernel's socket buffers hold, so an
	// unread connection backs up into the server's queue.
	chunks := make([]string, 40000)
	for i := range chunks {
		chunks[i] = strings.Repeat("x", 400) + strconv.Itoa(i)
	}
	url := serve(t, func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: chunks} }, 64<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"go"}`))
	// Read nothing for a while: the server must give up on us, not wait.
	time.Sleep(2 * time.Second) // the slow reader itself (not synchronisation)
	c.SetReadLimit(64 << 20)
	var closed error
	complete := false
	for closed == nil {
		var data []byte
		_, data, closed = c.Read(ctx)
		complete = complete || strings.Contains(string(data), `"type":"complete"`)
	}
	if ctx.Err() != nil || complete {
		t.Fatalf("the slow reader was not cut off: %v (complete %v)", closed, complete)
	}
}

// TestTokensInOrder: a fast reader gets every token, in order, then
// complete.
func TestTokensInOrder(t *testing.T) {
	chunks := make([]string, 500)
	for i := range chunks {
		chunks[i] = strconv.Itoa(i) + ","
	}
	url := serve(t, func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Chunks: chunks} }, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"go"}`))
	var text strings.Builder
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]any
		json.Unmarshal(data, &e)
		if e["type"] == "token" {
			text.WriteString(e["content"].(string))
		}
		if e["type"] == "complete" || e["type"] == "error" {
			break
		}
	}
	if text.String() != strings.Join(chunks, "") {
		t.Fatalf("tokens lost or reordered: %.200s", text.String())
	}
}

// BenchmarkRelay measures the relay from a model's chunk (written by the
// fake server, stamped with the time) to the WebSocket frame the client
// reads: p50 and p99 per token.
func BenchmarkRelay(b *testing.B) {
	chunks := make([]string, 200)
	url := serve(b, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: chunks, Stamp: true, Delay: 2 * time.Millisecond}
	}, 0)
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"go"}`))
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			var e struct{ Type, Content string }
			json.Unmarshal(data, &e)
			if e.Type == "token" {
				for _, part := range strings.Split(e.Content, "|") {
					if ns, err := strconv.ParseInt(part, 10, 64); err == nil {
						lat = append(lat, now.Sub(time.Unix(0, ns)))
					}
				}
			}
			if e.Type == "complete" {
				break
			}
			if e.Type == "error" {
				b.Fatal(string(data))
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no tokens")
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(len(lat))/float64(b.N), "tokens/turn")
}
