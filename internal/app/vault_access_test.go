package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/users"
)

// TestVaultAccessRules: the configuration's access rules apply to the
// vault agents' modes as to every tool: a member refused the write modes
// reads but cannot write, a member allowed by name can; a refused call
// writes nothing.
func TestVaultAccessRules(t *testing.T) {
	notes := copyVault(t)
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	body := "vaults:\n  notes: {path: " + strconvQuote(notes) + "}\naccess:\n  tools:\n" +
		"    createContent: {roles: [admin], users: [alice]}\n    appendContent: {roles: [admin], users: [alice]}\n    deleteNote: {roles: [admin], users: [alice]}\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), ConfigPath: conf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := context.Background()
	as := func(name string) context.Context {
		u, _, err := a.Users.Add(ctx, name, "free", "member", "test")
		if err != nil {
			t.Fatal(err)
		}
		return users.WithUser(ctx, u)
	}
	bob, alice := as("bob"), as("alice")
	call := func(who context.Context, ws, tool, args string) *pipeline.Outcome {
		return a.Pipeline.Call(who, pipeline.Request{Tool: tool, Args: json.RawMessage(args), Surface: "test", Context: &pipeline.CallContext{WorkspaceID: ws}})
	}
	if o := call(bob, "bob-ws", "readContent", `{"filePath": "Home.md"}`); o.Err != nil {
		t.Fatalf("bob reads: %v", o.Err)
	}
	for tool, args := range map[string]string{
		"createContent": `{"filePath": "bob.md", "content": "x"}`,
		"appendContent": `{"filePath": "Home.md", "content": "x"}`,
		"deleteNote":    `{"path": "Home.md"}`,
	} {
		o := call(bob, "bob-ws", tool, args)
		if o.Err == nil || o.Err.Code != errs.Forbidden {
			t.Errorf("bob %s: %v, want FORBIDDEN", tool, o.Err)
		}
		if body, isErr := o.Body(); !isErr || !strings.Contains(string(body), `"success":false`) {
			t.Errorf("bob %s: the refusal in the original's shape? %s", tool, body)
		}
	}
	if _, err := os.Stat(filepath.Join(notes, "bob.md")); err == nil {
		t.Error("a refused create wrote the note")
	}
	if o := call(alice, "alice-ws", "createContent", `{"filePath": "alice.md", "content": "mine"}`); o.Err != nil {
		t.Errorf("alice, allowed by name: %v", o.Err)
	}
}
