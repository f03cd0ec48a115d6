package vault

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// linkedVault is a vault of notes that link to "projects/Plan.md" in every
// form, and a note that does not.
func linkedVault(t *testing.T) *Vault {
	return newVault(t, map[string]string{
		"projects/Plan.md": "# Plan\n\nSee [[Ideas]] and [local](../Ideas.md).\n",
		"Ideas.md":         "Ideas. [[Plan]], [[projects/Plan|the plan]], ![[Plan#Goals]], [md](projects/Plan.md)\n\n```\n[[Plan]] in code\n```\n",
		"daily/Monday.md":  "---\ntags: [daily]\n---\nWorked on [[Plan#^step1|step one]].\n",
		"Other.md":         "Nothing to see: [[Ideas]].\n",
	})
}

// snapshot is every file of a vault but its trash and journal, with its
// content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (d.Name() == ".trash" || d.Name() == ".nexus") {
			return filepath.SkipDir
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".tmp") {
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

// TestMoveRewritesLinks: moving a note rewrites every link to it in every
// other note, in each link's own form, and none in code; moving a folder
// too.
func TestMoveRewritesLinks(t *testing.T) {
	v := linkedVault(t)
	m, err := v.Move("projects/Plan.md", "archive/Old Plan.md", false, false)
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, v.Dir)
	want := map[string]string{
		"archive/Old Plan.md": "# Plan\n\nSee [[Ideas]] and [local](../Ideas.md).\n",
		"Ideas.md":            "Ideas. [[Old Plan]], [[archive/Old Plan|the plan]], ![[Old Plan#Goals]], [md](archive/Old%20Plan.md)\n\n```\n[[Plan]] in code\n```\n",
		"daily/Monday.md":     "---\ntags: [daily]\n---\nWorked on [[Old Plan#^step1|step one]].\n",
		"Other.md":            "Nothing to see: [[Ideas]].\n",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s:\n%s\nwant:\n%s", p, got[p], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("files %v", got)
	}
	if m.Links != 5 || len(m.Rewritten) != 2 {
		t.Errorf("moved %+v", m)
	}
	if _, err := v.Move("archive", "projects/archive", true, false); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, v.Dir)["Ideas.md"]; !strings.Contains(got, "[[projects/archive/Old Plan|the plan]]") || !strings.Contains(got, "(projects/archive/Old%20Plan.md)") {
		t.Errorf("after the folder move: %s", got)
	}
	if _, err := v.Move("Ideas.md", "Other.md", false, false); errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "Destination already exists: Other.md") {
		t.Errorf("move onto a note: %v", err)
	}
	if _, err := v.Move("projects", "projects/inner", true, false); err == nil {
		t.Error("a folder moved into itself")
	}
}

// TestMoveSurvivesKill: a move killed (SIGKILL) after any of its steps
// leaves the vault, once opened again, exactly as it was before the move
// or exactly as it is after it: never half of each.
func TestMoveSurvivesKill(t *testing.T) {
	if dir := os.Getenv("NEXUS_VAULT_KILL_DIR"); dir != "" {
		killedMove(dir) // the child: never returns
	}
	// The states before and after, from a move that runs whole.
	whole := linkedVault(t)
	before := snapshot(t, whole.Dir)
	if _, err := whole.Move("projects/Plan.md", "archive/Plan 2.md", false, false); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, whole.Dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sawOld, sawNew := false, false
	for step := 0; step <= 5; step++ {
		v := linkedVault(t)
		dir := v.Dir
		v.Close()
		cmd := exec.Command(exe, "-test.run=^TestMoveSurvivesKill$")
		cmd.Env = append(os.Environ(), "NEXUS_VAULT_KILL_DIR="+dir, "NEXUS_VAULT_KILL_AT="+strconv.Itoa(step))
		out, err := cmd.CombinedOutput()
		killed := false
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				killed = true
			}
		}
		if !killed && err != nil {
			t.Fatalf("step %d: the child failed: %v\n%s", step, err, out)
		}
		reopened, err := Open("test", dir, false)
		if err != nil {
			t.Fatalf("step %d: reopening: %v", step, err)
		}
		reopened.Close()
		got := snapshot(t, dir)
		switch {
		case equal(got, before):
			sawOld = true
		case equal(got, after) && !killed:
			sawNew = true
		default:
			t.Errorf("step %d (killed %v): the vault is neither before nor after the move:\n%s", step, killed, diff(got, before, after))
		}
		if _, err := os.Stat(filepath.Join(dir, journalPath)); err == nil {
			t.Errorf("step %d: the journal is still there", step)
		}
	}
	if !sawOld || !sawNew {
		t.Errorf("the steps tried never left the vault before (%v) or after (%v) the move: the test does not cover the move", sawOld, sawNew)
	}
}

// killedMove is the child of TestMoveSurvivesKill: it moves the note and
// kills itself after step NEXUS_VAULT_KILL_AT.
func killedMove(dir string) {
	at, _ := strconv.Atoi(os.Getenv("NEXUS_VAULT_KILL_AT"))
	v, err := Open("test", dir, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	v.crash = func(step int) {
		if step == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal ends the process
		}
	}
	if _, err := v.Move("projects/Plan.md", "archive/Plan 2.md", false, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func diff(got, before, after map[string]string) string {
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: before %v, after %v\n", k, got[k] == before[k], got[k] == after[k])
	}
	return b.String()
}
