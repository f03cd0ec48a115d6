// Package llm reaches language models that stream text and call tools
// (SPEC section 6): OpenAI-compatible chat completions (OpenAI, Ollama,
// vLLM, llama.cpp server, LM Studio) and Anthropic Messages, through their
// official Go SDKs. The chat loop (internal/chat) speaks only [Provider]; it
// never sees a provider's wire format.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Roles of a [Message].
const (
	User      = "user"
	Assistant = "assistant"
	// Tool is the role of a tool's result, answering one ToolCall of the
	// assistant message before it.
	Tool = "tool"
)

// Message is one message of a conversation as a model sees it.
type Message struct {
	Role string
	// Content is the text (of a user or assistant message, or a tool's
	// result).
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID names the call a Tool message answers; IsError marks a
	// failed call's result.
	ToolCallID string
	IsError    bool
}

// ToolSpec is a tool offered to the model: its name, description and JSON
// Schema of its input (an object schema).
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// ToolCall is a call the model asks for: its id (the provider's), the tool's
// name and its arguments (a JSON object).
type ToolCall struct {
	ID   string
	Name string
	Args json.RawMessage
}

// Request is one turn asked of a model.
type Request struct {
	// Model overrides the provider's default model when set.
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the answer; zero means the provider's default.
	MaxTokens int
}

// Event is what a streaming turn reports, in order: any number of Text
// deltas and ToolCalls (a tool call is reported whole, once its arguments
// are complete), then exactly one Done as the last event of a turn that did
// not fail.
type Event struct {
	// Text is a delta of the assistant's text.
	Text string
	// Call is a complete tool call.
	Call *ToolCall
	// Done ends the turn; StopReason says why ("end_turn", "tool_use",
	// "max_tokens", ... as the provider says it).
	Done       bool
	StopReason string
}

// Provider is a model that streams. Stream calls emit for each event, in
// order, and returns when the turn ends; an error from emit stops the
// stream and is returned. A failure is an *Error.
type Provider interface {
	Stream(ctx context.Context, req Request, emit func(Event) error) error
	// Name says which provider and model it is ("openai gpt-4o-mini"), for
	// logs and errors; never a key.
	Name() string
}

// Kinds of provider failure.
const (
	// Auth: the key is missing, wrong or revoked (HTTP 401/403).
	Auth = "auth"
	// RateLimited: the provider refused for now (HTTP 429); RetryAfter says
	// when to try again when the provider said.
	RateLimited = "rate_limited"
	// Timeout: no answer, or the stream stalled, within the time allowed.
	Timeout = "timeout"
	// BadStream: the stream was cut or did not parse.
	BadStream = "bad_stream"
	// Unavailable: the provider failed (HTTP 5xx, unreachable).
	Unavailable = "unavailable"
	// BadRequest: the provider refused the request (HTTP 400, 404: an
	// unknown model, a context too long).
	BadRequest = "bad_request"
)

// Error is a provider's failure: its kind, what the provider said (never a
// key), and the retry hint of a rate limit.
type Error struct {
	Kind       string
	Provider   string
	Message    string
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Provider, e.Message)
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry in %s)", e.RetryAfter.Round(time.Second))
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf is err's kind when it is an *Error, else "".
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
