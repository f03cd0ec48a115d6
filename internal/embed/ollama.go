package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ollamaEmbedder speaks Ollama's own POST {base}/api/embed ({model, input:
// [...]} -> {embeddings: [[...]]}). Ollama serves the OpenAI-compatible
// /v1/embeddings too: provider openai with baseUrl
// http://localhost:11434/v1 reaches the same model.
type ollamaEmbedder struct {
	http  *http.Client
	url   string
	model string
	dims  int
	key   string
	label string
}

// maxOllamaAnswer bounds an answer read (a batch of 64 vectors of 4,096
// floats written as JSON is about 5 MB).
const maxOllamaAnswer = 64 << 20

func newOllama(s Settings) *ollamaEmbedder {
	base := strings.TrimSuffix(s.BaseURL, "/")
	if base == "" {
		base = "http://localhost:11434"
	}
	c := s.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	return &ollamaEmbedder{http: c, url: base + "/api/embed", model: s.Model, dims: s.Dims, key: s.APIKey, label: "ollama " + s.Model}
}

func (p *ollamaEmbedder) name() string { return p.label }

type ollamaRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type ollamaResponse struct {
	Model      string      `json:"model"`
	Embeddings [][]float32 `json:"embeddings"`
}

func (p *ollamaEmbedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(ollamaRequest{Model: p.model, Input: texts, Dimensions: p.dims})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: BadRequest, Provider: p.label, Message: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if p.key != "" { // Ollama behind a proxy that wants one
		req.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxOllamaAnswer))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return nil, &Error{Kind: kindOfStatus(resp.StatusCode), Provider: p.label, Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg)}
	}
	var out ollamaResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &Error{Kind: BadResponse, Provider: p.label, Message: "answer is not JSON of embeddings: " + err.Error(), Err: err}
	}
	return out.Embeddings, nil
}
