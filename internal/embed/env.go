package embed

import (
	"fmt"
	"strconv"
)

// FromEnv is the server's embedding model from the environment:
// NEXUS_EMBEDDINGS_PROVIDER (openai or ollama; empty: none from the
// environment), NEXUS_EMBEDDINGS_MODEL (required with a provider),
// NEXUS_EMBEDDINGS_API_KEY, NEXUS_EMBEDDINGS_BASE_URL and
// NEXUS_EMBEDDINGS_DIMS. ok is false when none is set.
func FromEnv(getenv func(string) string) (s Settings, ok bool, err error) {
	s = Settings{Provider: getenv("NEXUS_EMBEDDINGS_PROVIDER"), Model: getenv("NEXUS_EMBEDDINGS_MODEL"),
		APIKey: getenv("NEXUS_EMBEDDINGS_API_KEY"), BaseURL: getenv("NEXUS_EMBEDDINGS_BASE_URL")}
	dims := getenv("NEXUS_EMBEDDINGS_DIMS")
	if s.Provider == "" {
		if s.Model != "" || s.APIKey != "" || s.BaseURL != "" || dims != "" {
			return s, false, fmt.Errorf("NEXUS_EMBEDDINGS_* is set but NEXUS_EMBEDDINGS_PROVIDER is not: set it to openai or ollama")
		}
		return s, false, nil
	}
	if s.Provider != "openai" && s.Provider != "ollama" {
		return s, false, fmt.Errorf("NEXUS_EMBEDDINGS_PROVIDER %q: want openai (or any OpenAI-compatible server, with NEXUS_EMBEDDINGS_BASE_URL) or ollama", s.Provider)
	}
	if s.Model == "" {
		return s, false, fmt.Errorf("NEXUS_EMBEDDINGS_PROVIDER=%s needs NEXUS_EMBEDDINGS_MODEL (e.g. text-embedding-3-small, nomic-embed-text)", s.Provider)
	}
	if dims != "" {
		if s.Dims, err = strconv.Atoi(dims); err != nil || s.Dims < 1 {
			return s, false, fmt.Errorf("NEXUS_EMBEDDINGS_DIMS %q: want a positive whole number", dims)
		}
	}
	return s, true, nil
}
