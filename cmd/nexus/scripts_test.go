package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

// TestScriptsTestPrintsProgress runs scripts/test with stand-ins for go,
// pg_isready and the tool installer: before go builds anything it says
// that the first build downloads modules and takes minutes, it keeps
// printing while a step runs long, and it still runs
// "go test -count=1 -timeout 20m ARGS ./..." with NEXUS_TEST_POSTGRES_URL.
func TestScriptsTestPrintsProgress(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	for dir, files := range map[string]map[string]string{
		filepath.Join(root, "scripts"): {
			"test":                  string(src),
			"install-test-tools.sh": "echo STUB install-test-tools\n",
		},
		bin: {
			"pg_isready": "#!/bin/sh\nexit 0\n",
			// go test sleeps so that the heartbeat shows.
			"go": "#!/bin/sh\necho \"STUB go $* NEXUS_TEST_POSTGRES_URL=$NEXUS_TEST_POSTGRES_URL\"\n" +
				"if [ \"$1\" = test ]; then sleep 3; echo 'ok  	fake/pkg	0.1s'; fi\n",
		},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "test"), "-run", "TestX", "-v")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "NEXUS_TEST_HEARTBEAT=1", "NEXUS_TEST_POSTGRES_URL=postgres://x@y/z")
	testtools.OwnGroup(cmd) // its heartbeat and its stubs with it
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		testtools.EndGroup(t, cmd)
	case <-time.After(60 * time.Second):
		testtools.SignalGroup(cmd, syscall.SIGKILL)
		<-done
		testtools.EndGroup(t, cmd)
		t.Fatalf("scripts/test did not end:\n%s", out)
	}
	if err != nil {
		t.Fatalf("scripts/test: %v\n%s", err, out)
	}
	text := string(out)
	firstGo := strings.Index(text, "STUB go ")
	if firstGo < 0 {
		t.Fatalf("go never ran:\n%s", text)
	}
	before := strings.ToLower(text[:firstGo])
	if !strings.Contains(before, "download") || !strings.Contains(before, "minutes") {
		t.Errorf("nothing says, before the first go command, that the first build downloads modules and takes minutes:\n%s", text)
	}
	if !strings.Contains(text, "STUB go test -count=1 -timeout 20m -run TestX -v ./... NEXUS_TEST_POSTGRES_URL=postgres://x@y/z") {
		t.Errorf("go test was not run as before:\n%s", text)
	}
	for _, want := range []string{"STUB go vet ./...", "STUB go mod tidy -diff", "STUB go run honnef.co/go/tools/cmd/staticcheck@", "STUB install-test-tools", "still running", "ok  \tfake/pkg"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestScriptsTestWithoutPostgreSQL: with no PostgreSQL to reach or start and
// NEXUS_TEST_POSTGRES_URL unset, scripts/test says loudly that the
// PostgreSQL tests are skipped and runs the rest; CI sets the variable.
func TestScriptsTestWithoutPostgreSQL(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.MkdirAll(filepath.Join(root, "scripts"), 0o755)
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(root, "scripts", "test"), src, 0o755)
	os.WriteFile(filepath.Join(root, "scripts", "install-test-tools.sh"), []byte("echo STUB install\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "pg_isready"), []byte("#!/bin/sh\nexit 2\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\necho \"STUB go $1 url=[$NEXUS_TEST_POSTGRES_URL]\"\n"), 0o755)
	// Only what the script needs: no pg_ctlcluster to start a server with.
	for _, tool := range []string{"sleep", "seq", "ls", "dirname", "bash"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(path, filepath.Join(bin, tool))
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "NEXUS_TEST_POSTGRES_URL=") {
			env = append(env, kv)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, filepath.Join(root, "scripts", "test"))
	cmd.Env = append(env, "PATH="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "PostgreSQL tests will be SKIPPED") || !strings.Contains(text, "STUB go test url=[]") {
		t.Fatalf("no loud skip line, or go test got a PostgreSQL URL:\n%s", text)
	}
}
