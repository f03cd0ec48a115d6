package main

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
)

// TestEmbeddingsCommand: with NEXUS_EMBEDDINGS_*, "nexus embeddings
// backfill" embeds the beliefs through the fake provider's wire, and
// belief_query finds one by meaning.
func TestEmbeddingsCommand(t *testing.T) {
	fake := embedtest.New(t)
	t.Setenv("NEXUS_EMBEDDINGS_PROVIDER", "openai")
	t.Setenv("NEXUS_EMBEDDINGS_MODEL", "fake-embed")
	t.Setenv("NEXUS_EMBEDDINGS_BASE_URL", fake.OpenAIURL())
	dir := t.TempDir()
	if _, errOut, code := runNexus(t, "", "call", "belief_create", `{"content": "Maria bought an automobile"}`, "--data-dir", dir, "--no-demo"); code != 0 {
		t.Fatalf("belief_create: %s", errOut)
	}
	out, errOut, code := runNexus(t, "", "embeddings", "status", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "beliefs   0 of 1 embedded by fake-embed, 1 pending") {
		t.Fatalf("status: %q %s", out, errOut)
	}
	out, errOut, code = runNexus(t, "", "embeddings", "backfill", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "beliefs   1 of 1 embedded by fake-embed, 0 pending") {
		t.Fatalf("backfill: %q %s", out, errOut)
	}
	out, errOut, code = runNexus(t, "", "call", "belief_query", `{"query": "vehicle purchase"}`, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "automobile") {
		t.Fatalf("belief_query by meaning: %q %s", out, errOut)
	}
	t.Setenv("NEXUS_EMBEDDINGS_PROVIDER", "")
	t.Setenv("NEXUS_EMBEDDINGS_MODEL", "")
	t.Setenv("NEXUS_EMBEDDINGS_BASE_URL", "")
	if _, errOut, code := runNexus(t, "", "embeddings", "status", "--data-dir", dir); code == 0 || !strings.Contains(errOut, "no embedding model") {
		t.Fatalf("without a model: %d %s", code, errOut)
	}
}
