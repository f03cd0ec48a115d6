package embed

import (
	"context"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openaiEmbedder speaks POST {base}/embeddings ({model, input: [...]} ->
// {data: [{embedding, index}]}) through the official SDK. Ollama serves the
// same at http://localhost:11434/v1, as do vLLM, llama.cpp server and LM
// Studio.
type openaiEmbedder struct {
	client openai.Client
	model  string
	dims   int
	label  string
}

func newOpenAI(s Settings) *openaiEmbedder {
	base := s.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	key := s.APIKey
	if key == "" {
		key = "none" // servers that need no key (Ollama) ignore it
	}
	// Retries are the client's (embedBatch), the same for every provider.
	opts := []option.RequestOption{option.WithBaseURL(base), option.WithMaxRetries(0), option.WithAPIKey(key)}
	if s.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(s.HTTPClient))
	}
	return &openaiEmbedder{client: openai.NewClient(opts...), model: s.Model, dims: s.Dims, label: "openai " + s.Model}
}

func (p *openaiEmbedder) name() string { return p.label }

func (p *openaiEmbedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Model:          openai.EmbeddingModel(p.model),
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if p.dims > 0 {
		params.Dimensions = openai.Int(int64(p.dims))
	}
	resp, err := p.client.Embeddings.New(ctx, params)
	if err != nil {
		var e *openai.Error
		if errors.As(err, &e) {
			return nil, &Error{Kind: kindOfStatus(e.StatusCode), Provider: p.label,
				Message: fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message), Err: err}
		}
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, &Error{Kind: BadResponse, Provider: p.label, Message: fmt.Sprintf("answer has an embedding of index %d for %d inputs", d.Index, len(texts))}
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	for i, v := range out {
		if v == nil {
			return nil, &Error{Kind: BadResponse, Provider: p.label, Message: fmt.Sprintf("answer has no embedding for input %d", i)}
		}
	}
	return out, nil
}
