// Package llmtest serves fake language models for tests: HTTP servers that
// speak a provider's real wire format (OpenAI's chat.completion.chunk
// server-sent events), scripted by the test. Nexus's own providers
// (internal/llm) talk to them exactly as to the real services.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Request is what the fake received: the decoded body of a chat completions
// request.
type Request struct {
	Model    string           `json:"model"`
	Stream   bool             `json:"stream"`
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// ToolNames are the names of the tools the request offers.
func (r *Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// LastToolResults are the tool messages at the end of the request (the
// results of the previous answer's tool calls), by tool_call_id.
func (r *Request) LastToolResults() map[string]string {
	out := map[string]string{}
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i]["role"] == "tool"; i-- {
		id, _ := r.Messages[i]["tool_call_id"].(string)
		content, _ := r.Messages[i]["content"].(string)
		out[id] = content
	}
	return out
}

// Call is a tool call of a scripted answer.
type Call struct {
	ID, Name, Args string
}

// Answer is what the fake answers one request with: text, in Chunks (one
// chunk each), then the tool calls (their arguments split in two chunks, as
// real servers stream them). Fail, when set, is an HTTP status answered
// instead (with RetryAfter seconds for 429); CutAfter cuts the stream after
// that many chunks; Delay waits before each chunk. Stamp, when set,
// prefixes each chunk's text with the time it is written (Unix nanoseconds
// and "|"), for measuring the relay from the model to a client. Linger
// holds the response open that long after "data: [DONE]" before ending it
// (the last chunk of its chunked encoding), as a loaded server may.
type Answer struct {
	Chunks     []string
	Calls      []Call
	Fail       int
	RetryAfter int
	CutAfter   int
	Delay      time.Duration
	Stamp      bool
	Linger     time.Duration
}

// Script answers each request; n counts from 1.
type Script func(n int, req *Request) Answer

// OpenAI is a fake OpenAI-compatible chat completions server.
type OpenAI struct {
	URL string // the base URL, ending in /v1

	mu       sync.Mutex
	requests []*Request
	conns    int
}

// Conns returns how many TCP connections clients opened to the server.
func (o *OpenAI) Conns() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conns
}

// Requests returns the requests received so far.
func (o *OpenAI) Requests() []*Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*Request(nil), o.requests...)
}

// NewOpenAI starts a fake OpenAI server answering by script; it stops when
// the test ends.
func NewOpenAI(tb testing.TB, script Script) *OpenAI {
	o := &OpenAI{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := &Request{}
		if err := json.Unmarshal(body, req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		o.requests = append(o.requests, req)
		n := len(o.requests)
		o.mu.Unlock()
		a := script(n, req)
		if a.Fail != 0 {
			if a.RetryAfter > 0 {
				w.Header().Set("Retry-After", fmt.Sprint(a.RetryAfter))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.Fail)
			fmt.Fprintf(w, `{"error":{"message":"fake failure %d","type":"fake","code":null}}`, a.Fail)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush := func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		sent := 0
		pause := func() bool {
			if a.Delay > 0 {
				select {
				case <-time.After(a.Delay):
				case <-r.Context().Done():
					return false
				}
			}
			return true
		}
		write := func(delta map[string]any, finish any) bool {
			if a.CutAfter > 0 && sent >= a.CutAfter {
				return false
			}
			if delta["content"] == nil && !pause() {
				return false
			}
			chunk := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1700000000,
				"model": req.Model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			b, _ := json.Marshal(chunk)
			fmt.Fprintf(w, "data: %s\n\n", b)
			flush()
			sent++
			return true
		}
		if !write(map[string]any{"role": "assistant", "content": ""}, nil) {
			return
		}
		for _, c := range a.Chunks {
			if !pause() {
				return
			}
			if a.Stamp {
				c = fmt.Sprintf("%d|%s", time.Now().UnixNano(), c)
			}
			if !write(map[string]any{"content": c}, nil) {
				return
			}
		}
		for i, c := range a.Calls {
			half := len(c.Args) / 2
			if !write(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args[:half]}}}}, nil) {
				return
			}
			if !write(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.Args[half:]}}}}, nil) {
				return
			}
		}
		finish := "stop"
		if len(a.Calls) > 0 {
			finish = "tool_calls"
		}
		if !write(map[string]any{}, finish) {
			return
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		flush()
		if a.Linger > 0 {
			select {
			case <-time.After(a.Linger):
			case <-r.Context().Done():
			}
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			o.mu.Lock()
			o.conns++
			o.mu.Unlock()
		}
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	o.URL = srv.URL + "/v1"
	return o
}
