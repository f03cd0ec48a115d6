package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// AnthropicOptions configure an Anthropic provider.
type AnthropicOptions struct {
	// BaseURL is the API's base (default https://api.anthropic.com).
	BaseURL string
	// APIKey and Model are required.
	APIKey string
	Model  string
	// MaxTokens bounds an answer (default 4096).
	MaxTokens int
	// HTTPClient reaches the API; Timeout is how long the stream may stall
	// (default 60 s).
	HTTPClient *http.Client
	Timeout    time.Duration
}

// Anthropic is an Anthropic Messages model (the official SDK,
// github.com/anthropics/anthropic-sdk-go).
type Anthropic struct {
	client    anthropic.Client
	model     string
	maxTokens int
	timeout   time.Duration
	name      string
}

// NewAnthropic returns an Anthropic provider.
func NewAnthropic(o AnthropicOptions) (*Anthropic, error) {
	if o.Model == "" {
		return nil, errors.New("anthropic: a model is required")
	}
	if o.APIKey == "" {
		return nil, errors.New("anthropic: an API key is required")
	}
	opts := []option.RequestOption{option.WithAPIKey(o.APIKey), option.WithMaxRetries(0)}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 4096
	}
	return &Anthropic{client: anthropic.NewClient(opts...), model: o.Model, maxTokens: o.MaxTokens,
		timeout: orDefault(o.Timeout, DefaultStall), name: "anthropic " + o.Model}, nil
}

// Name implements Provider.
func (p *Anthropic) Name() string { return p.name }

// Stream implements Provider.
func (p *Anthropic) Stream(ctx context.Context, req Request, emit func(Event) error) error {
	params := anthropic.MessageNewParams{Model: anthropic.Model(p.model), MaxTokens: int64(p.maxTokens), Messages: anthropicMessages(req)}
	if req.Model != "" {
		params.Model = anthropic.Model(req.Model)
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return &Error{Kind: BadRequest, Provider: p.name, Message: fmt.Sprintf("tool %s: schema is not a JSON object", t.Name), Err: err}
		}
		if schema.Properties == nil {
			schema.Properties = map[string]any{}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: t.Name, Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}}})
	}
	w := watch(ctx, p.timeout)
	defer w.stop()
	stream := p.client.Messages.NewStreaming(w.ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	stopped := false
	for stream.Next() {
		w.alive()
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return &Error{Kind: BadStream, Provider: p.name, Message: "the stream sent an event that does not follow the ones before: " + err.Error(), Err: err}
		}
		switch e := ev.AsAny().(type) {
		case anthropic.ContentBlockDeltaEvent:
			if d, ok := e.Delta.AsAny().(anthropic.TextDelta); ok && d.Text != "" {
				if err := emit(Event{Text: d.Text}); err != nil {
					return err
				}
			}
		case anthropic.MessageStopEvent:
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return w.fail(p.name, err)
	}
	if err := w.err(); err != nil {
		return w.fail(p.name, err)
	}
	if !stopped {
		return &Error{Kind: BadStream, Provider: p.name, Message: "the stream ended before the answer did (no message_stop)"}
	}
	for _, b := range msg.Content {
		if b.Type != "tool_use" {
			continue
		}
		args := b.Input
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if !json.Valid(args) {
			return &Error{Kind: BadStream, Provider: p.name, Message: fmt.Sprintf("the input of tool call %s is not JSON", b.ID)}
		}
		if err := emit(Event{Call: &ToolCall{ID: b.ID, Name: b.Name, Args: args}}); err != nil {
			return err
		}
	}
	return emit(Event{Done: true, StopReason: string(msg.StopReason)})
}

// anthropicMessages maps messages: tool results are user messages of
// tool_result blocks, consecutive results in one message.
func anthropicMessages(req Request) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, m := range req.Messages {
		switch m.Role {
		case User:
			out = append(out, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case Tool:
			block := anthropic.NewToolResultBlock(m.ToolCallID, m.Content, m.IsError)
			if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser && out[n-1].Content[0].OfToolResult != nil {
				out[n-1].Content = append(out[n-1].Content, block)
				continue
			}
			out = append(out, anthropic.NewUserMessage(block))
		case Assistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				var input any = json.RawMessage(c.Args)
				if len(c.Args) == 0 {
					input = map[string]any{}
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			if len(blocks) > 0 {
				out = append(out, anthropic.NewAssistantMessage(blocks...))
			}
		}
	}
	return out
}

// anthropicStatus reads an Anthropic API error's status and response.
func anthropicStatus(err error) (int, *http.Response, string, bool) {
	var e *anthropic.Error
	if errors.As(err, &e) {
		return e.StatusCode, e.Response, "", true
	}
	return 0, nil, "", false
}
