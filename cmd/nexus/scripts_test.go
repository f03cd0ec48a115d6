package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
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
	for _, want := range []string{"STUB go vet ./...", "STUB install-test-tools", "still running", "ok  \tfake/pkg"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
