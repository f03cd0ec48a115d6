package workbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// alive reports whether process pid runs (a zombie, which nobody reaps in
// some containers, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// TestStdioProcessTreeReaped: a stdio server that started processes of its
// own (as npx or a shell wrapper does) leaves none of them behind when
// Nexus stops it: its whole process group ends with its session.
func TestStdioProcessTreeReaped(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// A wrapper that starts a long-lived child, then becomes the server.
	srv := &config.Server{Transport: config.Stdio, Command: "/bin/sh",
		Args: []string{"-c", "sleep 300 & echo $! > " + pidFile + "; exec " + examples["hello"]}}
	m, reg := newManager(t, toolboxConfig("tb", named{"wrapped", srv}))
	open(t, m, "tb")
	if len(toolNames(reg, "tb")) == 0 {
		t.Fatal("the wrapped server lists no tools")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !alive(child) {
		t.Fatalf("the server's child %q is not running: %v", b, err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			p.Kill() // never left behind by a failing test
		}
	})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	testtools.EventuallyErr(t, 10*time.Second, "the server's child to end", func() error {
		if alive(child) {
			return fmt.Errorf("pid %d still runs", child)
		}
		return nil
	})
}
