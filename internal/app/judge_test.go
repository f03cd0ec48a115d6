package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// createPorts creates two contradicting beliefs through a's substrate and
// returns the second one's tensions.
func createPorts(t *testing.T, a *app.App) []substrate.Tension {
	t.Helper()
	ctx := context.Background()
	ents := []substrate.EntityInput{{Name: "Nexus", Type: "project"}}
	var res *substrate.CreateResult
	for _, port := range []string{"7777", "8080"} {
		var err error
		if res, err = a.Substrate.Create(ctx, pipeline.DefaultWorkspace, substrate.CreateInput{Content: "The default port of Nexus is " + port, Entities: ents}); err != nil {
			t.Fatal(err)
		}
	}
	return res.Tensions
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(path, []byte("toolboxes: {}\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTensionJudge: tensions: {judge: model} without a chat model refuses
// to start; with the file's model (or the environment's, passed as
// Config.Model) the model judges; without the section it is never asked.
func TestTensionJudge(t *testing.T) {
	ctx := context.Background()
	_, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, "tensions: {judge: model}\n")})
	if !errors.Is(err, app.ErrJudgeNoModel) || !strings.Contains(err.Error(), "nexus.yaml") {
		t.Fatalf("judge: model without a model: %v", err)
	}

	fake := llmtest.NewOpenAI(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{`{"conflict": true, "type": "contradiction", "reason": "One default port."}`}}
	})
	model := "model: {provider: openai, model: judge-model, apiKey: k, baseUrl: " + fake.URL + "}\n"

	// The default: a chat model, no tensions section: the rules alone.
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, model)})
	if err != nil {
		t.Fatal(err)
	}
	if ts := createPorts(t, a); len(ts) != 1 || ts[0].Judge != nil {
		t.Fatalf("rules alone: %+v", ts)
	}
	a.Close()
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("no judge configured, but the model got %d requests", n)
	}

	// The file's model judges.
	a, err = app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, model+"tensions: {judge: model, maxPairs: 1}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if ts := createPorts(t, a); len(ts) != 1 || ts[0].Judge == nil || ts[0].Judge.Model != "openai judge-model" {
		t.Fatalf("judged by the file's model: %+v", ts)
	}
	a.Close()

	// The environment's model (cmd/nexus passes llm.FromEnv's as
	// Config.Model) judges when the file has no model section.
	env, err := llm.FromEnv(func(k string) string {
		return map[string]string{"NEXUS_LLM_PROVIDER": "openai", "NEXUS_LLM_MODEL": "env-model", "NEXUS_LLM_BASE_URL": fake.URL}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err = app.Open(ctx, app.Config{DataDir: t.TempDir(), Model: env, ConfigPath: writeConfig(t, "tensions: {judge: model}\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if ts := createPorts(t, a); len(ts) != 1 || ts[0].Judge == nil || ts[0].Judge.Model != "openai env-model" {
		t.Fatalf("judged by the environment's model: %+v", ts)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
}
