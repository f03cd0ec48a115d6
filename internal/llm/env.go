package llm

import (
	"fmt"
	"net/http"
)

// FromEnv is the server's model from the environment, for the simplest
// start: NEXUS_LLM_PROVIDER (openai or anthropic; empty: no model),
// NEXUS_LLM_MODEL (required with a provider), NEXUS_LLM_API_KEY and
// NEXUS_LLM_BASE_URL (an OpenAI-compatible server: Ollama, vLLM,
// llama.cpp, LM Studio). A nil Provider and nil error mean none is
// configured.
func FromEnv(getenv func(string) string, client *http.Client) (Provider, error) {
	provider, model := getenv("NEXUS_LLM_PROVIDER"), getenv("NEXUS_LLM_MODEL")
	key, base := getenv("NEXUS_LLM_API_KEY"), getenv("NEXUS_LLM_BASE_URL")
	switch provider {
	case "":
		if model != "" || key != "" || base != "" {
			return nil, fmt.Errorf("NEXUS_LLM_MODEL, NEXUS_LLM_API_KEY or NEXUS_LLM_BASE_URL is set but NEXUS_LLM_PROVIDER is not: set it to openai or anthropic")
		}
		return nil, nil
	case "openai", "anthropic":
	default:
		return nil, fmt.Errorf("NEXUS_LLM_PROVIDER %q: want openai (or any OpenAI-compatible server, with NEXUS_LLM_BASE_URL) or anthropic", provider)
	}
	if model == "" {
		return nil, fmt.Errorf("NEXUS_LLM_PROVIDER=%s needs NEXUS_LLM_MODEL: the model to use (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1)", provider)
	}
	if provider == "anthropic" && key == "" {
		return nil, fmt.Errorf("NEXUS_LLM_PROVIDER=anthropic needs NEXUS_LLM_API_KEY")
	}
	return New(Settings{Provider: provider, BaseURL: base, APIKey: key, Model: model}, client)
}

// Settings name a model: its provider (openai or anthropic), base URL
// (empty: the provider's), API key and model.
type Settings struct {
	Provider, BaseURL, APIKey, Model string
}

// New returns the provider settings name, reached through client (nil: the
// default client).
func New(s Settings, client *http.Client) (Provider, error) {
	switch s.Provider {
	case "anthropic":
		return NewAnthropic(AnthropicOptions{BaseURL: s.BaseURL, APIKey: s.APIKey, Model: s.Model, HTTPClient: client})
	case "openai":
		return NewOpenAI(OpenAIOptions{BaseURL: s.BaseURL, APIKey: s.APIKey, Model: s.Model, HTTPClient: client})
	}
	return nil, fmt.Errorf("model provider %q: want openai or anthropic", s.Provider)
}
