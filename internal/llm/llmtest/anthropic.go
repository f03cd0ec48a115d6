package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// AnthropicRequest is what the fake Anthropic server received.
type AnthropicRequest struct {
	Model     string           `json:"model"`
	MaxTokens int              `json:"max_tokens"`
	Stream    bool             `json:"stream"`
	System    []map[string]any `json:"system"`
	Messages  []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	APIKey string `json:"-"`
}

// AnthropicScript answers each request; n counts from 1.
type AnthropicScript func(n int, req *AnthropicRequest) Answer

// Anthropic is a fake Anthropic Messages server.
type Anthropic struct {
	URL string

	mu       sync.Mutex
	requests []*AnthropicRequest
}

// Requests returns the requests received so far.
func (a *Anthropic) Requests() []*AnthropicRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*AnthropicRequest(nil), a.requests...)
}

// NewAnthropic starts a fake Anthropic server speaking the Messages
// streaming events (message_start, content_block_start/delta/stop with
// text_delta and input_json_delta, message_delta, message_stop).
func NewAnthropic(tb testing.TB, script AnthropicScript) *Anthropic {
	a := &Anthropic{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := &AnthropicRequest{APIKey: r.Header.Get("X-Api-Key")}
		if err := json.Unmarshal(body, req); err != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.requests = append(a.requests, req)
		n := len(a.requests)
		a.mu.Unlock()
		ans := script(n, req)
		if ans.Fail != 0 {
			if ans.RetryAfter > 0 {
				w.Header().Set("Retry-After", fmt.Sprint(ans.RetryAfter))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(ans.Fail)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"fake_error","message":"fake failure %d"}}`, ans.Fail)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		sent := 0
		send := func(event string, data map[string]any) bool {
			if ans.CutAfter > 0 && sent >= ans.CutAfter {
				return false
			}
			if ans.Delay > 0 {
				select {
				case <-time.After(ans.Delay):
				case <-r.Context().Done():
					return false
				}
			}
			data["type"] = event
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			sent++
			return true
		}
		if !send("message_start", map[string]any{"message": map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant",
			"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}) {
			return
		}
		idx := 0
		if len(ans.Chunks) > 0 {
			if !send("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}}) {
				return
			}
			for _, c := range ans.Chunks {
				if !send("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": c}}) {
					return
				}
			}
			if !send("content_block_stop", map[string]any{"index": idx}) {
				return
			}
			idx++
		}
		for _, c := range ans.Calls {
			if !send("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}) {
				return
			}
			half := len(c.Args) / 2
			for _, part := range []string{c.Args[:half], c.Args[half:]} {
				if !send("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}}) {
					return
				}
			}
			if !send("content_block_stop", map[string]any{"index": idx}) {
				return
			}
			idx++
		}
		stop := "end_turn"
		if len(ans.Calls) > 0 {
			stop = "tool_use"
		}
		if !send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}}) {
			return
		}
		send("message_stop", map[string]any{})
	}))
	tb.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}
