package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// BenchmarkConcurrentConversations holds NEXUS_LOAD_CONNS (default 1,000)
// WebSocket conversations against nexus serve for NEXUS_LOAD_SECONDS
// (default 60), each turn a tool call (get_tools) and 20 streamed tokens from
// a fake model speaking the OpenAI wire format (the user's own key, so the
// daily quota does not end the run). Every turn's tokens are checked: none
// lost, none reordered. It reports turns a second, errors and the server's
// peak RSS. Run it alone: go test ./cmd/nexus -run '^$' -bench
// ConcurrentConversations -benchtime 1x
func BenchmarkConcurrentConversations(b *testing.B) {
	conns, _ := strconv.Atoi(os.Getenv("NEXUS_LOAD_CONNS"))
	if conns <= 0 {
		conns = 1000
	}
	secs, _ := strconv.Atoi(os.Getenv("NEXUS_LOAD_SECONDS"))
	if secs <= 0 {
		secs = 60
	}
	chunks := make([]string, 20)
	want := ""
	for i := range chunks {
		chunks[i] = strconv.Itoa(i) + ","
		want += chunks[i]
	}
	fake := llmtest.NewOpenAI(b, func(n int, req *llmtest.Request) llmtest.Answer {
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "c" + strconv.Itoa(n), Name: "get_tools", Args: `{}`}}}
		}
		return llmtest.Answer{Chunks: chunks, Delay: 5 * time.Millisecond}
	})
	b.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	b.Setenv("NEXUS_DB", "")
	// Every connection is the local user: lift the per-user caps.
	b.Setenv("NEXUS_MAX_TURNS", "100000")
	b.Setenv("NEXUS_WS_MAX_PER_USER", "100000")
	dir := b.TempDir()
	if out, errOut, code := runNexus(b, "", "call", "tn_user_byok_add", `{"provider":"openai","label":"load","apiKey":"sk-load-0123456789","baseUrl":"`+fake.URL+`"}`, "--data-dir", dir); code != 0 {
		b.Fatalf("byok add: %s %s", out, errOut)
	}
	p := startNexusServe(b, dir)
	url := "ws" + strings.TrimPrefix(p.base, "http") + "/ws"

	var turns, errs, lost atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(30*time.Second))
			defer cancel()
			c, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			defer c.CloseNow()
			conv := ""
			for time.Now().Before(deadline) {
				msg, _ := json.Marshal(map[string]any{"type": "message", "conversation_id": conv, "content": "go"})
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					return
				}
				var text strings.Builder
				for {
					_, data, err := c.Read(ctx)
					if err != nil {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						return
					}
					var e struct{ Type, Content, Message, Code, ConversationID string }
					json.Unmarshal(data, &e)
					if e.Type == "token" {
						text.WriteString(e.Content)
					}
					if e.Type == "error" {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, e.Code+": "+e.Message)
						return
					}
					if e.Type == "complete" {
						conv = e.ConversationID
						break
					}
				}
				if text.String() != want {
					lost.Add(1)
				}
				turns.Add(1)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	_, hwm, err := procMemory(p.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(turns.Load())/float64(secs), "turns/s")
	b.ReportMetric(float64(errs.Load()), "errors")
	b.ReportMetric(float64(lost.Load()), "lost-or-reordered")
	b.ReportMetric(hwm, "peak-RSS-MB")
	if errs.Load() > 0 || lost.Load() > 0 {
		b.Errorf("%d errors (first: %v), %d turns with lost or reordered tokens", errs.Load(), firstErr.Load(), lost.Load())
	}
	fmt.Fprintf(os.Stderr, "%d conversations, %d s: %d turns\n", conns, secs, turns.Load())
}
