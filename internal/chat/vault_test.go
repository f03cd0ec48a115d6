package chat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
)

// TestChatUsesTheVault: in the chat loop the vault agents' modes are tools
// like any other: the model discovers contentManager_readContent, reads a
// note and edits it, and a path out of the vault comes back as the
// original's error, for the model to read.
func TestChatUsesTheVault(t *testing.T) {
	notes := t.TempDir()
	if err := os.WriteFile(filepath.Join(notes, "Home.md"), []byte("Welcome home."), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(conf, []byte("vaults:\n  notes: {path: "+notes+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		switch n {
		case 1:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "g", Name: "get_tools", Args: `{"tools":["contentManager_readContent","contentManager_appendContent"]}`}}}
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{
				{ID: "r", Name: "contentManager_readContent", Args: `{"filePath":"Home.md"}`},
				{ID: "x", Name: "contentManager_readContent", Args: `{"filePath":"../outside.md"}`},
			}}
		case 3:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "a", Name: "contentManager_appendContent", Args: `{"filePath":"Home.md","content":" Edited by the chat."}`}}}
		default:
			return llmtest.Answer{Chunks: []string{"done"}}
		}
	})
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), ConfigPath: conf, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ev, res, err := collect(t, context.Background(), a.Chat, chat.Turn{Content: "read my home note and sign it"})
	if err != nil || res.Text != "done" {
		t.Fatalf("turn: %v %+v %v", err, res, types(ev))
	}
	results := map[string]string{}
	for _, u := range res.ToolUses {
		results[u.ID] = u.Result
	}
	if r := results["r"]; !strings.Contains(r, "Welcome home.") || !strings.Contains(r, `"success":true`) {
		t.Errorf("readContent in the chat: %q (uses %v)", r, res.ToolUses)
	}
	if r := results["x"]; !strings.Contains(r, "leaves the vault") || !strings.Contains(r, `"success":false`) {
		t.Errorf("a path out of the vault in the chat: %q", r)
	}
	if b, _ := os.ReadFile(filepath.Join(notes, "Home.md")); string(b) != "Welcome home. Edited by the chat." {
		t.Errorf("the note after the chat: %q", b)
	}
}
