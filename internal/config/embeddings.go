package config

import "strconv"

// Embeddings names the server's embedding model, which makes belief_query
// (and exchange search) hybrid: lexical and vector rankings fused (issue
// 23, internal/embed).
type Embeddings struct {
	// Provider is openai (any OpenAI-compatible /v1/embeddings: OpenAI,
	// Ollama's /v1, vLLM, llama.cpp server, LM Studio) or ollama (Ollama's
	// own /api/embed).
	Provider string
	// BaseURL is the API's base (empty: the provider's); APIKey its key,
	// usually ${VAR}; Model the model's name.
	BaseURL, APIKey, Model string
	// Dims, when not zero, is asked of the model and checked in its
	// answers; Batch is how many texts one request carries (0: 64).
	Dims, Batch int
}

var embeddingsKeys = []string{"provider", "baseUrl", "apiKey", "model", "dims", "batch"}

// embeddings reads the embeddings section: provider (openai or ollama) and
// model are required; apiKey and baseUrl may come from ${VAR}.
func (l *loader) embeddings(f field) *Embeddings {
	fields, ok := l.mapping(f.val, "embeddings", "a mapping with provider, model, apiKey, baseUrl, dims and batch")
	if !ok {
		return nil
	}
	m := &Embeddings{}
	n := len(l.errs) + l.dropped
	whole := func(sf field, p string, lo, hi int) int {
		v, ok := l.str(sf, p)
		if !ok {
			return 0
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < lo || i > hi {
			l.fail(l.node(sf.val), p, "must be a whole number from %d to %d, not %q", lo, hi, v)
			return 0
		}
		return i
	}
	for _, sf := range fields {
		p := join("embeddings", sf.name)
		switch sf.name {
		case "provider":
			if v, ok := l.str(sf, p); ok {
				if v != "openai" && v != "ollama" {
					l.fail(l.node(sf.val), p, "%q is not an embeddings provider: openai (or any OpenAI-compatible server, with baseUrl) or ollama", v)
				}
				m.Provider = v
			}
		case "baseUrl":
			if v, ok := l.str(sf, p); ok {
				if reason := checkURL(v); reason != "" {
					l.fail(l.node(sf.val), p, "%s", reason)
				}
				m.BaseURL = v
			}
		case "apiKey":
			m.APIKey, _ = l.str(sf, p)
		case "model":
			m.Model, _ = l.str(sf, p)
		case "dims":
			m.Dims = whole(sf, p, 1, 65536)
		case "batch":
			m.Batch = whole(sf, p, 1, 2048)
		default:
			l.unknownKey(sf, "embeddings", embeddingsKeys, "")
		}
	}
	if len(l.errs)+l.dropped > n {
		return nil
	}
	if m.Provider == "" || m.Model == "" {
		l.fail(l.node(f.val), "embeddings", "needs provider (openai or ollama) and model (e.g. text-embedding-3-small, nomic-embed-text)")
		return nil
	}
	return m
}
