package app

import (
	"errors"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// ErrJudgeNoModel is why Open refuses tensions: {judge: model} without a
// chat model.
var ErrJudgeNoModel = errors.New("tensions.judge is model but no chat model is configured: add a model section " +
	"(provider, model, apiKey) or set NEXUS_LLM_PROVIDER and NEXUS_LLM_MODEL, or set tensions.judge to rules")

// tensionJudge returns the model judge's options when the configuration's
// tensions section asks for it (nil: the rules alone judge), and an error
// when it does without a server model (server: the environment's
// NEXUS_LLM_* model, else the file's model section). Users' own models
// never judge.
func tensionJudge(conf *config.Config, server llm.Provider) (*substrate.JudgeOptions, error) {
	if conf == nil || conf.Tensions == nil || conf.Tensions.Judge != config.JudgeModel {
		return nil, nil
	}
	if server == nil {
		return nil, fmt.Errorf("%s: %w", conf.Path, ErrJudgeNoModel)
	}
	return &substrate.JudgeOptions{Timeout: conf.Tensions.Timeout, MaxPairs: conf.Tensions.MaxPairs}, nil
}
