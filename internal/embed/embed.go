// Package embed is the semantic side of Nexus's hybrid search (issue 23):
// embedding models reached over their real wire formats (OpenAI-compatible
// POST /v1/embeddings through the official SDK, Ollama's POST /api/embed),
// the vectors of beliefs and exchanges kept in the store (table embeddings,
// migration 025), exact cosine ranking in Go per workspace ([Index]), the
// background job that embeds what has no vector yet ([Index.Run]), and
// reciprocal rank fusion of a lexical and a vector ranking ([Fuse]).
//
// Nothing here is needed: without an embedding model configured, Nexus
// searches lexically as before.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Embed returns one vector per text, in order. A failure is an *Error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model ("text-embedding-3-small"); vectors of another
	// model are never compared with its vectors.
	Model() string
	// Dims is the vectors' length when it is known (configured), else 0:
	// then the first vectors returned fix it.
	Dims() int
}

// Kinds of provider failure.
const (
	// Auth: the key is missing, wrong or revoked (HTTP 401/403).
	Auth = "auth"
	// RateLimited: HTTP 429 (retried).
	RateLimited = "rate_limited"
	// Unavailable: HTTP 5xx, unreachable, timed out (retried).
	Unavailable = "unavailable"
	// BadRequest: the provider refused the request (HTTP 400, 404: an
	// unknown model, a text too long).
	BadRequest = "bad_request"
	// BadResponse: the answer did not parse, had the wrong number of
	// vectors, or vectors of the wrong length.
	BadResponse = "bad_response"
)

// Error is a provider's failure: its kind and what the provider said (never
// a key).
type Error struct {
	Kind     string
	Provider string
	Message  string
	Err      error
}

func (e *Error) Error() string { return fmt.Sprintf("embeddings %s: %s", e.Provider, e.Message) }

func (e *Error) Unwrap() error { return e.Err }

// KindOf is err's kind when it is an *Error, else "".
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// retryable reports whether a failure may pass when tried again.
func retryable(err error) bool {
	k := KindOf(err)
	return k == RateLimited || k == Unavailable
}

// kindOfStatus is the kind of an HTTP status.
func kindOfStatus(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Auth
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status >= 500:
		return Unavailable
	default:
		return BadRequest
	}
}

// Settings name an embedding model.
type Settings struct {
	// Provider is "openai" (any OpenAI-compatible /v1/embeddings: OpenAI,
	// Ollama at http://localhost:11434/v1, vLLM, llama.cpp server, LM
	// Studio) or "ollama" (Ollama's own POST /api/embed).
	Provider string
	// BaseURL is the API's base: for openai what the chat model's baseUrl
	// is (default https://api.openai.com/v1), for ollama the server
	// (default http://localhost:11434).
	BaseURL string
	APIKey  string
	Model   string
	// Dims, when set, is asked of the provider (OpenAI's dimensions,
	// Ollama's dimensions) and checked in every answer.
	Dims int
	// Batch is how many texts one request carries (default 64).
	Batch int
	// Timeout bounds one request (default 30 s); MaxRetries is how many
	// times a rate-limited or failed request is tried again (default 3;
	// negative: never), waiting Backoff (default 500 ms) doubled each time,
	// with jitter.
	Timeout    time.Duration
	MaxRetries int
	Backoff    time.Duration
	// HTTPClient reaches the provider (nil: http.DefaultClient).
	HTTPClient *http.Client
}

// Defaults of [Settings].
const (
	DefaultBatch   = 64
	DefaultTimeout = 30 * time.Second
	DefaultRetries = 3
	DefaultBackoff = 500 * time.Millisecond
)

// New returns the embedder s names: batching, a timeout per request and
// retries with backoff around the provider's client.
func New(s Settings) (Embedder, error) {
	if s.Model == "" {
		return nil, errors.New("embeddings: a model is required")
	}
	if s.Dims < 0 {
		return nil, fmt.Errorf("embeddings: dims %d: want a positive number or none", s.Dims)
	}
	var raw rawEmbedder
	switch s.Provider {
	case "openai":
		raw = newOpenAI(s)
	case "ollama":
		raw = newOllama(s)
	default:
		return nil, fmt.Errorf("embeddings provider %q: want openai (or any OpenAI-compatible server) or ollama", s.Provider)
	}
	if s.Batch <= 0 {
		s.Batch = DefaultBatch
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxRetries == 0 {
		s.MaxRetries = DefaultRetries
	}
	if s.Backoff <= 0 {
		s.Backoff = DefaultBackoff
	}
	return &client{raw: raw, s: s}, nil
}

// rawEmbedder is one provider's wire: one request, no retries.
type rawEmbedder interface {
	embed(ctx context.Context, texts []string) ([][]float32, error)
	name() string
}

// client is an Embedder over a provider's wire.
type client struct {
	raw rawEmbedder
	s   Settings
}

func (c *client) Model() string { return c.s.Model }
func (c *client) Dims() int     { return c.s.Dims }

// Embed implements Embedder: the texts go in batches of s.Batch, each
// request bounded by s.Timeout and retried on 429, 5xx and network errors.
func (c *client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.s.Batch {
		batch := texts[start:min(len(texts), start+c.s.Batch)]
		vs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (c *client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	wait := c.s.Backoff
	for attempt := 0; ; attempt++ {
		vs, err := c.once(ctx, texts)
		if err == nil {
			return vs, nil
		}
		if !retryable(err) || attempt >= c.s.MaxRetries || ctx.Err() != nil {
			return nil, err
		}
		// Full jitter on top of half the wait: replicas retrying together
		// spread out.
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(d):
		}
		wait *= 2
	}
}

func (c *client) once(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	vs, err := c.raw.embed(ctx, texts)
	if err != nil {
		if KindOf(err) == "" {
			msg := err.Error()
			if errors.Is(err, context.DeadlineExceeded) {
				msg = fmt.Sprintf("no answer within %s", c.s.Timeout)
			}
			err = &Error{Kind: Unavailable, Provider: c.raw.name(), Message: msg, Err: err}
		}
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, &Error{Kind: BadResponse, Provider: c.raw.name(), Message: fmt.Sprintf("%d vectors for %d texts", len(vs), len(texts))}
	}
	for i, v := range vs {
		if len(v) == 0 || c.s.Dims > 0 && len(v) != c.s.Dims {
			return nil, &Error{Kind: BadResponse, Provider: c.raw.name(),
				Message: fmt.Sprintf("vector %d has %d dimensions, want %d (embeddings.dims)", i, len(v), c.s.Dims)}
		}
	}
	return vs, nil
}
