package config

import (
	"strings"
	"testing"
)

func TestEmbeddingsSection(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("toolboxes: {}\nembeddings:\n  provider: ollama\n  model: nomic-embed-text\n  baseUrl: http://localhost:11434\n  apiKey: ${K}\n  dims: 768\n  batch: 32\n"),
		envOf(map[string]string{"K": "secret"}))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Embeddings
	if e == nil || e.Provider != "ollama" || e.Model != "nomic-embed-text" || e.APIKey != "secret" || e.Dims != 768 || e.Batch != 32 {
		t.Fatalf("embeddings: %+v", e)
	}
	for _, c := range []struct{ yaml, want string }{
		{"embeddings: {provider: cohere, model: m}", `"cohere" is not an embeddings provider`},
		{"embeddings: {provider: openai}", "needs provider (openai or ollama) and model"},
		{"embeddings: {provider: openai, model: m, dims: 0}", "embeddings.dims: must be a whole number from 1 to 65536"},
		{"embeddings: {provider: openai, model: m, batch: x}", "embeddings.batch: must be a whole number"},
		{"embeddings: {provider: openai, model: m, baseUrl: ftp://x}", "embeddings.baseUrl"},
		{"embeddings: {provider: openai, model: m, size: 3}", "size"},
	} {
		_, err := Parse("c.yaml", []byte("toolboxes: {}\n"+c.yaml+"\n"), envOf(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err = Parse("c.yaml", []byte("toolboxes: {}\n"), envOf(nil))
	if err != nil || cfg.Embeddings != nil {
		t.Errorf("no section: %+v %v", cfg.Embeddings, err)
	}
}
