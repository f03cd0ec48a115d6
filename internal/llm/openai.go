package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIOptions configure an OpenAI-compatible provider.
type OpenAIOptions struct {
	// BaseURL is the API's base (default https://api.openai.com/v1; for
	// Ollama http://localhost:11434/v1, and likewise vLLM, llama.cpp server,
	// LM Studio).
	BaseURL string
	// APIKey may be empty for servers that need none (Ollama).
	APIKey string
	// Model is required.
	Model string
	// HTTPClient reaches the API (default: http.DefaultClient's transport);
	// pass one that refuses internal addresses for users' base URLs.
	HTTPClient *http.Client
	// Timeout is how long the stream may stall (no chunk) before the turn
	// fails with Timeout (default 60 s).
	Timeout time.Duration
}

// OpenAI is an OpenAI-compatible chat completions model (the official SDK,
// github.com/openai/openai-go).
type OpenAI struct {
	client  openai.Client
	model   string
	timeout time.Duration
	name    string
}

// NewOpenAI returns an OpenAI-compatible provider.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.Model == "" {
		return nil, errors.New("openai: a model is required")
	}
	if o.BaseURL == "" {
		o.BaseURL = "https://api.openai.com/v1"
	}
	opts := []option.RequestOption{option.WithBaseURL(o.BaseURL), option.WithMaxRetries(0), option.WithMiddleware(readToEnd)}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	} else {
		opts = append(opts, option.WithAPIKey("none"))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &OpenAI{client: openai.NewClient(opts...), model: o.Model, timeout: orDefault(o.Timeout, DefaultStall), name: "openai " + o.Model}, nil
}

// Name implements Provider.
func (p *OpenAI) Name() string { return p.name }

// Stream implements Provider.
func (p *OpenAI) Stream(ctx context.Context, req Request, emit func(Event) error) error {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(p.model), Messages: p.messages(req)}
	if req.Model != "" {
		params.Model = shared.ChatModel(req.Model)
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return &Error{Kind: BadRequest, Provider: p.name, Message: fmt.Sprintf("tool %s: schema is not a JSON object", t.Name), Err: err}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(schema)}))
	}
	w := watch(ctx, p.timeout)
	stream := p.client.Chat.Completions.NewStreaming(w.ctx, params)
	defer stream.Close()
	defer w.stop() // first: a stream left midway is cut, not read to its end (readToEnd)
	var acc openai.ChatCompletionAccumulator
	finish := ""
	for stream.Next() {
		w.alive()
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return &Error{Kind: BadStream, Provider: p.name, Message: "the stream sent a chunk that does not follow the ones before"}
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				if err := emit(Event{Text: c.Delta.Content}); err != nil {
					return err
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return w.fail(p.name, err)
	}
	if err := w.err(); err != nil {
		return w.fail(p.name, err)
	}
	if finish == "" {
		return &Error{Kind: BadStream, Provider: p.name, Message: "the stream ended before the answer did (no finish_reason)"}
	}
	if len(acc.Choices) > 0 {
		for _, tc := range acc.Choices[0].Message.ToolCalls {
			args := tc.Function.Arguments
			if args == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				return &Error{Kind: BadStream, Provider: p.name, Message: fmt.Sprintf("the arguments of tool call %s are not JSON", tc.ID)}
			}
			if err := emit(Event{Call: &ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(args)}}); err != nil {
				return err
			}
		}
	}
	return emit(Event{Done: true, StopReason: finish})
}

// messages maps a request's system prompt and messages to chat messages.
func (p *OpenAI) messages(req Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case User:
			out = append(out, openai.UserMessage(m.Content))
		case Tool:
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case Assistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Args)}}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// statusOf reads an OpenAI API error's status and response.
func openaiStatus(err error) (int, *http.Response, string, bool) {
	var e *openai.Error
	if errors.As(err, &e) {
		return e.StatusCode, e.Response, e.Message, true
	}
	return 0, nil, "", false
}

// readToEnd makes closing a response's body read what is left of it first
// (at most drainBytes, for at most drainWait), so that its connection goes
// back to the pool. The SDK closes a stream's body as soon as it reads
// "data: [DONE]", often before the end of the HTTP response (the last chunk
// of its chunked encoding) has arrived; net/http then closes the connection
// rather than reuse it, and the next turn opens another (a TCP and TLS
// handshake). A body whose request was canceled is closed at once: a stream
// left midway is cut, not read to its end.
func readToEnd(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := next(req.WithContext(ctx))
	if err != nil {
		cancel()
		return resp, err
	}
	resp.Body = &drainOnClose{ReadCloser: resp.Body, parent: req.Context(), cancel: cancel}
	return resp, nil
}

const (
	drainBytes = 4 << 10
	drainWait  = time.Second
)

type drainOnClose struct {
	io.ReadCloser
	parent context.Context
	cancel context.CancelFunc // cancels the request, ending a read
}

func (b *drainOnClose) Close() error {
	if b.parent.Err() == nil {
		t := time.AfterFunc(drainWait, b.cancel)
		io.CopyN(io.Discard, b.ReadCloser, drainBytes)
		t.Stop()
	}
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
