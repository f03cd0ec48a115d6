package app_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// syncBuffer is a log destination safe for the app's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReloadConfig: a reload applies the toolboxes and the access rules,
// names the model section as needing a restart, refuses an invalid file
// whole (the error names the file, the place and the reason) and keeps the
// configuration in use; the event it publishes does not make this process
// reload again.
func TestReloadConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := openApp(t).ReloadConfig(ctx, true); !errors.Is(err, app.ErrNoConfig) {
		t.Fatalf("an app without a configuration: %v, want ErrNoConfig", err)
	}
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Lazy servers: nothing is started, whatever their command.
	write("toolboxes:\n  one:\n    mcpServers:\n      s: {command: nexus-test-no-such-command}\n")
	var logs syncBuffer
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	toolboxes := func() []string {
		var out []string
		for _, tb := range a.Workbench.Toolboxes() {
			out = append(out, tb.Name)
		}
		return out
	}

	write("toolboxes:\n  one:\n    mcpServers:\n      s: {args: [x]}\n")
	_, err = a.ReloadConfig(ctx, true)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "toolboxes.one.mcpServers.s") ||
		!strings.Contains(err.Error(), "the configuration in use stays") {
		t.Fatalf("an invalid file: %v", err)
	}
	if got := toolboxes(); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("after an invalid file: toolboxes %v", got)
	}

	write("toolboxes:\n  two:\n    mcpServers:\n      s: {command: nexus-test-no-such-command}\n" +
		"access:\n  toolboxes:\n    two: {roles: [admin]}\n" +
		"model:\n  provider: openai\n  model: gpt-4o-mini\n" +
		"chat:\n  toolApproval: writes\n")
	r, err := a.ReloadConfig(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Servers.Added, []string{"two/s"}) || !slices.Equal(r.Servers.Removed, []string{"one/s"}) ||
		!r.Access || !slices.Equal(r.NeedRestart, []string{"model", "chat"}) {
		t.Fatalf("reloaded %+v", r)
	}
	if got := toolboxes(); !slices.Equal(got, []string{"two"}) {
		t.Fatalf("toolboxes %v", got)
	}
	member := principal.Principal{ID: "u", Name: "u", Role: principal.Member}
	if a.Access.Tool(member, &registry.Tool{ID: registry.ID{Toolbox: "two", Server: "s", Tool: "x"}}) {
		t.Error("the reloaded access rule is not applied")
	}
	// Its own event (in process here) does not reload it again.
	time.Sleep(300 * time.Millisecond)
	if n := strings.Count(logs.String(), `msg="configuration reloaded"`); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, logs.String())
	}
}
