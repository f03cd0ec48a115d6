package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestWebUIInBrowser drives the web UI in Debian's Chromium (playwright-core,
// test/browser/chat.mjs) against nexus serve and a fake model speaking the
// OpenAI wire format: a message streams, a tool card shows its source, the
// answer renders, a reload shows the stored turn, and a phone-sized screen
// works, with no console errors. Screenshots go to NEXUS_SCREENSHOTS (or the
// test's temporary directory).
func TestWebUIInBrowser(t *testing.T) {
	node, modules, chromium := testtools.Browser(t)
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Chunks: []string{"Let me look. "}, Calls: []llmtest.Call{{ID: "c1", Name: "get_tools", Args: `{}`}}}
		}
		return llmtest.Answer{Chunks: []string{"Nexus ", "has ", "**three** ", "agents."}, Delay: 150 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	base := startServe(t)
	shots := os.Getenv("NEXUS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testtools.RepoRoot(t), "test", "browser", "chat.mjs"), base, shots, chromium)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Dir = filepath.Dir(modules)
	testtools.OwnGroup(cmd) // Chromium and its helpers with it
	out, err := cmd.CombinedOutput()
	testtools.EndGroup(t, cmd)
	if err != nil {
		t.Fatalf("the browser test failed: %v\n%s", err, out)
	}
	t.Logf("browser: %s (screenshots in %s)", out, shots)
}
